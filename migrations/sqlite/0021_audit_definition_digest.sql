-- The digest of the tool definition a call was served, in its audit row
-- (host/audit/src/event.rs `AuditEvent::definition_digest`): the SHA-256
-- `tools/list` names in the tool's `_meta["toolhost/definition"]`, as 64
-- lowercase hex characters. Same number, same meaning as
-- migrations/postgres/0021_audit_definition_digest.sql.
--
-- NULL when a call named no tool the host serves, on rows written outside
-- a tool call (a decision from the command line, a run's attempt, a prompt
-- got), and on every row written before this migration.
-- Chained: hashed only when set, after a tag of its own, so older rows keep
-- their hashes (host/audit/src/chain.rs).
ALTER TABLE audit ADD COLUMN definition_digest TEXT
    CONSTRAINT audit_definition_digest_hex
    CHECK (length(definition_digest) = 64 AND definition_digest NOT GLOB '*[^0-9a-f]*');
