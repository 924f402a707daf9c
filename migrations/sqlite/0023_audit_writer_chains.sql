-- Each writer appends to a hash chain of its own. Same number, same
-- meaning as migrations/postgres/0023_audit_writer_chains.sql.
--
-- Until now every row joined one chain, so every append had to read the
-- chain's head under a lock all writers share (on PostgreSQL an advisory
-- lock held through the commit's flush: one audit commit in the whole
-- cluster at a time; design note 0006). Now a writer (each store, on
-- first append) opens a chain of its own, named in `audit_chains`, and
-- knows its head without reading it: an append is one INSERT with no lock
-- shared with anyone. `chain_id` names a row's chain; `chain_seq` is its
-- place in that chain. Rows written before this migration keep the empty
-- chain id: the legacy chain, walked in id order as before.
--
-- The writer owns its head, so the head trigger of 0019 goes: the unique
-- index on (chain_id, chain_seq) still refuses a second row at a place,
-- and `toolhost audit verify` finds a gap or a broken link.
--
-- `audit_anchors` is the one serialized record: about once a second each
-- writer records its chains' moved heads, hash-chained
-- (toolhost_audit::anchor), so a chain cut short, rewritten or removed is
-- found by the walk.
ALTER TABLE audit ADD COLUMN chain_id TEXT NOT NULL DEFAULT '';

DROP TRIGGER audit_chain_head;
DROP INDEX audit_chain_seq_unique;
CREATE UNIQUE INDEX audit_chain_place ON audit (chain_id, chain_seq);

CREATE TABLE audit_chains (
    chain_id  TEXT PRIMARY KEY,
    -- Who opened it: the process, for an operator reading a walk's report.
    writer    TEXT NOT NULL,
    opened_at INTEGER NOT NULL
);

CREATE TABLE audit_anchors (
    seq         INTEGER PRIMARY KEY,
    at          INTEGER NOT NULL,
    chain_id    TEXT NOT NULL,
    chain_seq   INTEGER NOT NULL,
    head_hash   TEXT NOT NULL,
    prev_hash   TEXT NOT NULL,
    anchor_hash TEXT NOT NULL
);
CREATE INDEX audit_anchors_chain ON audit_anchors (chain_id, chain_seq);
