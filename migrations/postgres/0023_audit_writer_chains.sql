-- Each writer appends to a hash chain of its own. Same number, same
-- meaning as migrations/sqlite/0023_audit_writer_chains.sql, which says why.
--
-- Here the change removes the cluster-wide advisory lock every append
-- took: replicas on one PostgreSQL commit their audit rows side by side,
-- and the server's group commit combines their flushes.
--
-- The legacy chain keeps a guard: a replica of an older build, still
-- running during an upgrade, appends to the legacy chain after reading a
-- head across every chain; the trigger, now fired only for legacy rows,
-- refuses such a row instead of letting it break the legacy chain.
-- Writer-chain rows never run it.
ALTER TABLE audit ADD COLUMN chain_id TEXT NOT NULL DEFAULT '';

DROP TRIGGER audit_chain_head ON audit;
DROP INDEX audit_chain_seq_unique;
CREATE UNIQUE INDEX audit_chain_place ON audit (chain_id, chain_seq);

CREATE OR REPLACE FUNCTION audit_chain_head() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    head_seq  BIGINT;
    head_hash TEXT;
BEGIN
    IF NEW.prev_hash IS NULL THEN
        RETURN NEW;
    END IF;
    SELECT chain_seq, row_hash INTO head_seq, head_hash
    FROM audit WHERE chain_id = '' AND chain_seq IS NOT NULL
    ORDER BY chain_seq DESC LIMIT 1;
    IF NEW.chain_seq IS DISTINCT FROM coalesce(head_seq, 0) + 1
       OR NEW.prev_hash IS DISTINCT FROM coalesce(head_hash, repeat('0', 64)) THEN
        RAISE EXCEPTION 'audit_chain_head: a chained row''s prev_hash and chain_seq must follow the chain''s head'
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER audit_chain_head BEFORE INSERT ON audit
    FOR EACH ROW WHEN (NEW.chain_id = '') EXECUTE FUNCTION audit_chain_head();

CREATE TABLE audit_chains (
    chain_id  TEXT PRIMARY KEY,
    writer    TEXT NOT NULL,
    opened_at BIGINT NOT NULL
);

CREATE TABLE audit_anchors (
    seq         BIGINT PRIMARY KEY,
    at          BIGINT NOT NULL,
    chain_id    TEXT NOT NULL,
    chain_seq   BIGINT NOT NULL,
    head_hash   TEXT NOT NULL,
    prev_hash   TEXT NOT NULL,
    anchor_hash TEXT NOT NULL
);
CREATE INDEX audit_anchors_chain ON audit_anchors (chain_id, chain_seq);
