-- Uploads stream into the store in parts (host/storage/src/workspace.rs,
-- issue 38). Same number, same meaning as
-- migrations/postgres/0020_upload_parts.sql.
--
-- 0012 kept an upload as one row holding its whole body, so the host read
-- the whole body into memory before it stored a byte. Now an upload's row
-- is written first, `arriving`, with no digest and the bytes in so far as
-- its `size`; each part (at most 1 MiB, `seq` from 0) is a row of
-- `workspace_upload_parts`, and moves the upload's `size` and its short
-- `expires_at` on in the same transaction. Once the last part is in, the
-- upload is `finished` with its size, its SHA-256 and its day-long expiry;
-- only a finished upload is ever read. A refused or failed upload is
-- deleted with its parts (ON DELETE CASCADE); one abandoned by a crash is
-- purged with the expired uploads when its short expiry passes.
--
-- Existing uploads are kept: each is finished, and its body is its part 0.
-- SQLite cannot drop a column's constraint, so the table is rebuilt.
DROP INDEX workspace_uploads_by_expiry;
ALTER TABLE workspace_uploads RENAME TO workspace_uploads_0012;

CREATE TABLE workspace_uploads (
    handle     TEXT    NOT NULL PRIMARY KEY,
    tenant     TEXT    NOT NULL,
    owner      TEXT    NOT NULL,
    -- The names of toolhost_workspace::UploadKind::as_str.
    kind       TEXT    NOT NULL CHECK (kind IN ('component', 'manifest', 'signature')),
    state      TEXT    NOT NULL CHECK (state IN ('arriving', 'finished')),
    -- The bytes in so far while arriving; all of them once finished.
    size       INTEGER NOT NULL CHECK (size >= 0),
    -- NULL while arriving.
    sha256     TEXT    CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    CONSTRAINT workspace_uploads_finished_has_digest
        CHECK (state = 'arriving' OR sha256 IS NOT NULL)
);
INSERT INTO workspace_uploads (handle, tenant, owner, kind, state, size, sha256, created_at,
    expires_at)
    SELECT handle, tenant, owner, kind, 'finished', size, sha256, created_at, expires_at
    FROM workspace_uploads_0012;

CREATE TABLE workspace_upload_parts (
    handle TEXT    NOT NULL REFERENCES workspace_uploads (handle) ON DELETE CASCADE,
    seq    INTEGER NOT NULL CHECK (seq >= 0),
    bytes  BLOB    NOT NULL,
    PRIMARY KEY (handle, seq)
);
INSERT INTO workspace_upload_parts (handle, seq, bytes)
    SELECT handle, 0, body FROM workspace_uploads_0012;

DROP TABLE workspace_uploads_0012;
CREATE INDEX workspace_uploads_by_expiry ON workspace_uploads (expires_at);
-- What a principal holds, for its quota.
CREATE INDEX workspace_uploads_by_owner ON workspace_uploads (tenant, owner, expires_at);
