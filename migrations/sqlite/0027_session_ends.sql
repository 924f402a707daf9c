-- no-transaction
-- Sessions that end, and proposals that say what they were made against
-- (host/authoring/src/session_end.rs, issue 45). Same number, same meaning
-- as migrations/postgres/0027_session_ends.sql.
--
-- A session may now be `closed` (its work done) or `abandoned` (given up,
-- its runs cancelled) besides `open` and `promoted`, and rebound to the
-- subject as it is now: `bound_to` and `subject_version` move with the
-- step that rebinds it. A proposal keeps the subject version its diff is
-- against (`subject_version`); one made before a rebinding is not
-- promoted. Existing proposals are against their session's binding, the
-- only one it ever had.
--
-- SQLite cannot change a CHECK in place, and `workspace_sessions` is the
-- parent of four tables' foreign keys, so it is rebuilt the way SQLite
-- documents for such a table: foreign keys off (which is why this file
-- runs outside the migrator's transaction and opens its own), the new
-- table made, filled and renamed into place, then on again (the
-- migration's test checks every key still holds). The rebuilt table is STRICT, and its indexes serve the console's
-- keyset pages (newest first, by tenant and by owner).
PRAGMA foreign_keys = OFF;
BEGIN;

CREATE TABLE workspace_sessions_next (
    id              TEXT    NOT NULL PRIMARY KEY,
    tenant          TEXT    NOT NULL,
    owner           TEXT    NOT NULL,
    subject         TEXT    NOT NULL,
    bound_to        TEXT,
    subject_version TEXT    NOT NULL,
    version         INTEGER NOT NULL CHECK (version >= 1),
    -- The names of toolhost_workspace::SessionState::as_str.
    state           TEXT    NOT NULL
        CHECK (state IN ('open', 'promoted', 'closed', 'abandoned')),
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;
INSERT INTO workspace_sessions_next (id, tenant, owner, subject, bound_to, subject_version,
    version, state, created_at, updated_at)
    SELECT id, tenant, owner, subject, bound_to, subject_version, version, state, created_at,
        updated_at
    FROM workspace_sessions;
DROP TABLE workspace_sessions;
ALTER TABLE workspace_sessions_next RENAME TO workspace_sessions;
CREATE INDEX workspace_sessions_by_tenant ON workspace_sessions (tenant, created_at, id);
CREATE INDEX workspace_sessions_by_owner ON workspace_sessions (tenant, owner, created_at, id);

ALTER TABLE workspace_proposals ADD COLUMN subject_version TEXT;
UPDATE workspace_proposals SET subject_version = (
    SELECT s.subject_version FROM workspace_sessions s
    WHERE s.id = workspace_proposals.session_id);

COMMIT;
PRAGMA foreign_keys = ON;
