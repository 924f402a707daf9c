-- Which session keeps an upload (host/storage/src/effects/workspace.rs).
-- Same number, same meaning as migrations/sqlite/0031_uploads_kept_by.sql.
--
-- An upload a proposal names is kept (it never expires) for its session's
-- promotion to read again. Before, it stayed kept after the session ended,
-- so every closed or abandoned session's drafts were held for ever. Now a
-- kept upload names the session that kept it last, and a session's end
-- drops the uploads it keeps.
ALTER TABLE workspace_uploads ADD COLUMN kept_by TEXT;
CREATE INDEX workspace_uploads_kept_by ON workspace_uploads (kept_by) WHERE kept_by IS NOT NULL;
