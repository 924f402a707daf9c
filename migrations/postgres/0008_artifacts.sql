-- Artifacts (host/storage/src/artifacts.rs): tool results too large to send
-- inline, kept by the host and read back with MCP `resources/read`. Same
-- number, same meaning as migrations/sqlite/0008_artifacts.sql.
--
-- A row is written in the same transaction as the audit row of the call
-- that produced it (`call_id`), so a result the caller was told about is
-- always there, and one nobody was told about never is. `tenant` scopes
-- every read; `tool` is how a reader's permission is checked (the same
-- permission that tool needs). `sha256` is lower-case hex of `body`,
-- `size` its length in bytes. Times are unix milliseconds (UTC); a row is
-- unreadable once `expires_at` has passed and deleted by the host's purge.
CREATE TABLE artifacts (
    id         TEXT    NOT NULL PRIMARY KEY,
    tenant     TEXT    NOT NULL,
    principal  TEXT    NOT NULL,
    client_id  TEXT,
    tool       TEXT    NOT NULL,
    call_id    TEXT    NOT NULL,
    mime_type  TEXT    NOT NULL,
    size       BIGINT  NOT NULL,
    sha256     TEXT    NOT NULL,
    body       BYTEA   NOT NULL,
    created_at BIGINT  NOT NULL,
    expires_at BIGINT  NOT NULL,
    CONSTRAINT artifacts_size_matches CHECK (size = octet_length(body)),
    CONSTRAINT artifacts_expire_after_creation CHECK (expires_at > created_at)
);

-- The purge: "every artifact that has expired".
CREATE INDEX artifacts_expires ON artifacts (expires_at);
