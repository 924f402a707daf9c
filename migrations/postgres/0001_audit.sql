-- The audit trail: one row per tool call, written before the call's reply is
-- sent. Same number, same meaning as migrations/sqlite/0001_audit.sql.
--
-- `at` is when the call started, in unix milliseconds (UTC), an integer in
-- both engines so rows compare and move between them unchanged
-- (to_timestamp(at / 1000.0) reads it as a timestamptz).
-- `duration_us` is the time spent in the host, in microseconds.
-- Digests are SHA-256 as 64 lowercase hex characters.
CREATE TABLE audit (
    id              BIGSERIAL PRIMARY KEY,
    call_id         TEXT    NOT NULL,
    at              BIGINT  NOT NULL,
    principal       TEXT    NOT NULL,
    tenant          TEXT    NOT NULL,
    tool            TEXT    NOT NULL,
    plugin          TEXT,
    plugin_digest   TEXT,
    argument_digest TEXT    NOT NULL,
    outcome         TEXT    NOT NULL,
    error_code      TEXT,
    duration_us     BIGINT  NOT NULL,
    CONSTRAINT audit_call_id_unique UNIQUE (call_id),
    -- The six names of toolhost_audit::Outcome::as_str.
    CONSTRAINT audit_outcome_known CHECK (outcome IN (
        'executed', 'needs_clarification', 'approval_required',
        'denied', 'limit_rejected', 'error'
    )),
    CONSTRAINT audit_duration_not_negative CHECK (duration_us >= 0)
);

-- "What did this tenant do lately" and "who called this tool lately".
CREATE INDEX audit_tenant_at ON audit (tenant, at);
CREATE INDEX audit_tool_at ON audit (tool, at);
