-- The audit trail's hash chain, and three more facts per call. Same number,
-- same meaning as migrations/sqlite/0006_audit_chain.sql.
--
-- `client_id`: the OAuth client the caller's token was issued to.
-- `catalog_version`: the plugin's own version (its manifest's
-- `plugin.version`), NULL for unknown tools and host tools.
-- `gate_id`: the approval gate the call raised or presented, if any.
--
-- `prev_hash` and `row_hash` chain the rows: each row's `row_hash` is the
-- SHA-256 of its `prev_hash` and every other stored column except `id`
-- (the encoding is in host/audit/src/chain.rs), and its `prev_hash` is the
-- previous row's `row_hash`, or 64 zeros for the first chained row. The
-- host computes them as it appends, inside a write transaction that reads
-- the newest `row_hash` (host/storage/src/chain.rs); `toolhost audit verify`
-- walks the rows in id order and recomputes them.
--
-- Rows written before this migration keep NULL in all five columns: SQL
-- cannot compute the hashes in SQLite (no SHA-256), the engines must agree,
-- and hashing them now
-- would only prove they were not changed after today. The chain starts at
-- the first row that has a `row_hash`; `verify` counts the rows before it
-- as unverifiable and says so, and refuses a row without a hash after it.
--
-- The unique index on `prev_hash` makes a fork impossible even if two
-- writers ever read the same head: the second insert fails instead of
-- branching the chain (NULLs, the pre-chain rows, are distinct).
ALTER TABLE audit ADD COLUMN client_id TEXT;
ALTER TABLE audit ADD COLUMN catalog_version TEXT;
ALTER TABLE audit ADD COLUMN gate_id TEXT;
ALTER TABLE audit ADD COLUMN prev_hash TEXT
    CONSTRAINT audit_prev_hash_hex
    CHECK (prev_hash ~ '^[0-9a-f]{64}$');
ALTER TABLE audit ADD COLUMN row_hash TEXT
    CONSTRAINT audit_row_hash_hex
    CHECK (row_hash ~ '^[0-9a-f]{64}$');

CREATE UNIQUE INDEX audit_prev_hash_unique ON audit (prev_hash);
