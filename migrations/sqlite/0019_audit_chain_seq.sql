-- The chain's fork guard, moved from `prev_hash` to a position that only
-- grows. Same number, same meaning as migrations/postgres/0019_audit_chain_seq.sql.
--
-- 0006 made `prev_hash` unique so that two rows could never follow the
-- same one. That index was keyed by a hash, so each row landed on a page
-- of it at random, and each commit wrote one more page per row to the log
-- than the rest of the row and its other indexes together: the audit
-- commit's biggest cost (BENCHMARKS.md part 12).
--
-- `chain_seq` is a chained row's place in the chain: 1 for the first, one
-- more than its predecessor's for every other. Its unique index grows at
-- its end, like the table's own. A trigger refuses a chained row that does
-- not follow the head (the row with the greatest `chain_seq`): its
-- `chain_seq` one more than the head's and its `prev_hash` the head's
-- `row_hash` (the genesis, 64 zeros, and 1 on an empty chain). So a row
-- written by hand cannot fork the chain or join it anywhere but at its
-- end, which the old index did not refuse either, and a writer that read
-- a head another has since moved fails on the unique index. `chain_seq`
-- is not hashed: it guards appends, and `toolhost audit verify` still
-- walks the rows by id and checks their hashes.
--
-- Rows chained before this migration are numbered in id order, the order
-- the chain was written in. Rows from before the chain keep NULL.
ALTER TABLE audit ADD COLUMN chain_seq INTEGER;

UPDATE audit SET chain_seq = numbered.seq
FROM (SELECT id, row_number() OVER (ORDER BY id) AS seq
      FROM audit WHERE row_hash IS NOT NULL) AS numbered
WHERE audit.id = numbered.id;

CREATE UNIQUE INDEX audit_chain_seq_unique ON audit (chain_seq);
DROP INDEX audit_prev_hash_unique;

CREATE TRIGGER audit_chain_head BEFORE INSERT ON audit
WHEN NEW.prev_hash IS NOT NULL AND (NEW.chain_seq, NEW.prev_hash) IS NOT (
    SELECT coalesce(max(chain_seq), 0) + 1,
           coalesce((SELECT row_hash FROM audit
                     WHERE chain_seq = (SELECT max(chain_seq) FROM audit)),
                    '0000000000000000000000000000000000000000000000000000000000000000')
    FROM audit)
BEGIN
    SELECT RAISE(ABORT, 'audit_chain_head: a chained row''s prev_hash and chain_seq must follow the chain''s head');
END;
