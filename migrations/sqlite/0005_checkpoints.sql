-- Human checkpoints (toolhost_gates::CheckpointStore). Same number, same
-- meaning as migrations/postgres/0005_checkpoints.sql.
--
-- A checkpoint is a plugin's run waiting for a person's judgement. A plugin
-- opens it for a subject (its name for the run); a person decides it once,
-- by a conditional UPDATE on its `version` in
-- host/storage/src/checkpoints.rs. Checkpoints are never deleted: opening
-- the same subject again returns the row, decided or not, which is how the
-- plugin reads the decision.
-- Times are unix milliseconds (UTC), integers in both engines.
-- `disposition` is the `as_str()` name of `toolhost_gates::Disposition`;
-- NULL while waiting.
--
-- One checkpoint per (tenant, plugin, subject): the unique constraint
-- `checkpoints_one_per_subject` makes two concurrent opens of one subject
-- share one row (the store's insert names it in ON CONFLICT).
--
-- STRICT makes SQLite refuse a value of the wrong type, as PostgreSQL does.
-- SQLite enforces the tenant's foreign key because the store turns foreign
-- keys on for every connection (host/storage/src/connect.rs).
CREATE TABLE checkpoints (
    id          TEXT    NOT NULL PRIMARY KEY,
    tenant      TEXT    NOT NULL REFERENCES tenants (id),
    plugin      TEXT    NOT NULL,
    subject     TEXT    NOT NULL,
    title       TEXT    NOT NULL,
    evidence    TEXT    NOT NULL,
    opened_by   TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    -- 1 when opened; every change adds one, and a decider names the
    -- version it saw.
    version     INTEGER NOT NULL,
    disposition TEXT,
    decided_by  TEXT,
    reason      TEXT,
    decided_at  INTEGER,
    CONSTRAINT checkpoints_one_per_subject UNIQUE (tenant, plugin, subject),
    CONSTRAINT checkpoints_version_positive CHECK (version >= 1),
    CONSTRAINT checkpoints_disposition_known CHECK (
        disposition IN ('confirm', 'false_positive', 'inconclusive')
    ),
    -- Who decided, and when, exactly once there is a disposition (each of
    -- the two on its own: a decision without either is refused).
    CONSTRAINT checkpoints_decided_iff_disposition CHECK (
        (disposition IS NULL) = (decided_by IS NULL)
        AND (disposition IS NULL) = (decided_at IS NULL)
    )
) STRICT;

-- "This tenant's (waiting) checkpoints, newest first".
CREATE INDEX checkpoints_tenant_created ON checkpoints (tenant, created_at);
