-- Uploads stream into the store in parts (host/storage/src/workspace.rs,
-- issue 38). Same number, same meaning as
-- migrations/sqlite/0020_upload_parts.sql.
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
ALTER TABLE workspace_uploads DROP CONSTRAINT workspace_uploads_size_matches;
ALTER TABLE workspace_uploads
    ADD COLUMN state TEXT NOT NULL DEFAULT 'finished'
        CHECK (state IN ('arriving', 'finished'));
ALTER TABLE workspace_uploads ALTER COLUMN state DROP DEFAULT;
-- NULL while arriving.
ALTER TABLE workspace_uploads ALTER COLUMN sha256 DROP NOT NULL;
ALTER TABLE workspace_uploads
    ADD CONSTRAINT workspace_uploads_finished_has_digest
        CHECK (state = 'arriving' OR sha256 IS NOT NULL),
    ADD CONSTRAINT workspace_uploads_size_not_negative CHECK (size >= 0);

CREATE TABLE workspace_upload_parts (
    handle TEXT    NOT NULL REFERENCES workspace_uploads (handle) ON DELETE CASCADE,
    seq    INTEGER NOT NULL CHECK (seq >= 0),
    bytes  BYTEA   NOT NULL,
    PRIMARY KEY (handle, seq)
);
INSERT INTO workspace_upload_parts (handle, seq, bytes)
    SELECT handle, 0, body FROM workspace_uploads;
ALTER TABLE workspace_uploads DROP COLUMN body;
-- What a principal holds, for its quota.
CREATE INDEX workspace_uploads_by_owner ON workspace_uploads (tenant, owner, expires_at);
