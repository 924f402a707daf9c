-- Sessions that end, and proposals that say what they were made against
-- (host/authoring/src/session_end.rs, issue 45). Same number, same meaning
-- as migrations/sqlite/0027_session_ends.sql.
--
-- A session may now be `closed` (its work done) or `abandoned` (given up,
-- its runs cancelled) besides `open` and `promoted`, and rebound to the
-- subject as it is now: `bound_to` and `subject_version` move with the
-- step that rebinds it. A proposal keeps the subject version its diff is
-- against (`subject_version`); one made before a rebinding is not
-- promoted. Existing proposals are against their session's binding, the
-- only one it ever had. The sessions' indexes serve the console's keyset
-- pages (newest first, by tenant and by owner).
ALTER TABLE workspace_sessions DROP CONSTRAINT workspace_sessions_state_check;
-- The names of toolhost_workspace::SessionState::as_str.
ALTER TABLE workspace_sessions ADD CONSTRAINT workspace_sessions_state_check
    CHECK (state IN ('open', 'promoted', 'closed', 'abandoned'));
DROP INDEX workspace_sessions_by_tenant;
CREATE INDEX workspace_sessions_by_tenant ON workspace_sessions (tenant, created_at, id);
CREATE INDEX workspace_sessions_by_owner ON workspace_sessions (tenant, owner, created_at, id);

ALTER TABLE workspace_proposals ADD COLUMN subject_version TEXT;
UPDATE workspace_proposals p SET subject_version = s.subject_version
    FROM workspace_sessions s WHERE s.id = p.session_id;
ALTER TABLE workspace_proposals ALTER COLUMN subject_version SET NOT NULL;
