-- The chain's fork guard, moved from `prev_hash` to a position that only
-- grows. Same number, same meaning as migrations/sqlite/0019_audit_chain_seq.sql,
-- which says why.
--
-- Here two writers that skip the append lock could both read the same
-- head; the unique index on `chain_seq` fails the second, as the one on
-- `prev_hash` did.
ALTER TABLE audit ADD COLUMN chain_seq BIGINT;

UPDATE audit SET chain_seq = numbered.seq
FROM (SELECT id, row_number() OVER (ORDER BY id) AS seq
      FROM audit WHERE row_hash IS NOT NULL) AS numbered
WHERE audit.id = numbered.id;

CREATE UNIQUE INDEX audit_chain_seq_unique ON audit (chain_seq);
DROP INDEX audit_prev_hash_unique;

CREATE FUNCTION audit_chain_head() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    head_seq  BIGINT;
    head_hash TEXT;
BEGIN
    IF NEW.prev_hash IS NULL THEN
        RETURN NEW;
    END IF;
    SELECT chain_seq, row_hash INTO head_seq, head_hash
    FROM audit WHERE chain_seq IS NOT NULL ORDER BY chain_seq DESC LIMIT 1;
    IF NEW.chain_seq IS DISTINCT FROM coalesce(head_seq, 0) + 1
       OR NEW.prev_hash IS DISTINCT FROM coalesce(head_hash, repeat('0', 64)) THEN
        RAISE EXCEPTION 'audit_chain_head: a chained row''s prev_hash and chain_seq must follow the chain''s head'
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER audit_chain_head BEFORE INSERT ON audit
    FOR EACH ROW EXECUTE FUNCTION audit_chain_head();
