-- 0017's constraint on `audit.client_rounds` was `json_valid(client_rounds)
-- AND …`. SQLite 3.45 and later read json_valid(NULL) as NULL, which a
-- CHECK lets pass; earlier versions (Debian 12's sqlite3 and Python's
-- sqlite3, 3.40) read it as 0, so to them every row of a call that asked
-- its client nothing broke the constraint: `PRAGMA integrity_check` failed
-- and they could write no such row. The constraint now says what it meant:
-- NULL, or a JSON array. SQLite cannot change a constraint in place, so the
-- table is rebuilt with its rows, ids and indexes unchanged. Same number as
-- migrations/postgres/0018_audit_client_rounds_null.sql, which has nothing
-- to change (PostgreSQL's json_typeof(NULL) is NULL).
CREATE TABLE audit_rebuilt (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    call_id         TEXT    NOT NULL,
    at              INTEGER NOT NULL,
    principal       TEXT    NOT NULL,
    tenant          TEXT    NOT NULL,
    tool            TEXT    NOT NULL,
    plugin          TEXT,
    plugin_digest   TEXT,
    argument_digest TEXT    NOT NULL,
    outcome         TEXT    NOT NULL,
    error_code      TEXT,
    duration_us     INTEGER NOT NULL,
    client_id       TEXT,
    catalog_version TEXT,
    gate_id         TEXT,
    prev_hash       TEXT
        CONSTRAINT audit_prev_hash_hex
        CHECK (length(prev_hash) = 64 AND prev_hash NOT GLOB '*[^0-9a-f]*'),
    row_hash        TEXT
        CONSTRAINT audit_row_hash_hex
        CHECK (length(row_hash) = 64 AND row_hash NOT GLOB '*[^0-9a-f]*'),
    receipt_sha256  TEXT
        CONSTRAINT audit_receipt_sha256_hex
        CHECK (length(receipt_sha256) = 64 AND receipt_sha256 NOT GLOB '*[^0-9a-f]*'),
    client_rounds   TEXT
        CONSTRAINT audit_client_rounds_array
        CHECK (client_rounds IS NULL
               OR (json_valid(client_rounds) AND json_type(client_rounds) = 'array')),
    CONSTRAINT audit_call_id_unique UNIQUE (call_id),
    -- The six names of toolhost_audit::Outcome::as_str.
    CONSTRAINT audit_outcome_known CHECK (outcome IN (
        'executed', 'needs_clarification', 'approval_required',
        'denied', 'limit_rejected', 'error'
    )),
    CONSTRAINT audit_duration_not_negative CHECK (duration_us >= 0)
) STRICT;

INSERT INTO audit_rebuilt (id, call_id, at, principal, tenant, tool, plugin, plugin_digest,
    argument_digest, outcome, error_code, duration_us, client_id, catalog_version, gate_id,
    prev_hash, row_hash, receipt_sha256, client_rounds)
SELECT id, call_id, at, principal, tenant, tool, plugin, plugin_digest,
    argument_digest, outcome, error_code, duration_us, client_id, catalog_version, gate_id,
    prev_hash, row_hash, receipt_sha256, client_rounds
FROM audit ORDER BY id;

DROP TABLE audit;
ALTER TABLE audit_rebuilt RENAME TO audit;

CREATE INDEX audit_tenant_at ON audit (tenant, at);
CREATE INDEX audit_tool_at ON audit (tool, at);
CREATE UNIQUE INDEX audit_prev_hash_unique ON audit (prev_hash);
