//! The workspace's statements, the same text on both engines.

/// A session's columns.
macro_rules! session_columns {
    () => {
        "id, tenant, owner, subject, bound_to, subject_version, version, state, \
         created_at, updated_at"
    };
}

pub(crate) const SESSION: &str = concat!(
    "SELECT ",
    session_columns!(),
    " FROM workspace_sessions WHERE tenant = $1 AND id = $2"
);
/// A page of sessions by keyset (`toolhost_workspace::SessionsFrom`):
/// tenant $1's (and, with `AND owner = $2`, one owner's) sessions past the
/// key (`$k` created at, `$k+1` id) in `$order`, at most `$limit`. The
/// indexes `workspace_sessions_by_tenant` and `_by_owner` (0027) serve
/// them.
macro_rules! sessions_page {
    ($owner:literal, $cmp:literal, $order:literal, $at:literal, $id:literal, $limit:literal) => {
        concat!(
            "SELECT ",
            session_columns!(),
            " FROM workspace_sessions WHERE tenant = $1",
            $owner,
            " AND (created_at ",
            $cmp,
            " ",
            $at,
            " OR (created_at = ",
            $at,
            " AND id ",
            $cmp,
            " ",
            $id,
            ")) ORDER BY created_at ",
            $order,
            ", id ",
            $order,
            " LIMIT ",
            $limit
        )
    };
}
/// The tenant's sessions older than a key ($2, $3), newest first.
pub(crate) const SESSIONS_OLDER: &str = sessions_page!("", "<", "DESC", "$2", "$3", "$4");
/// The tenant's sessions newer than a key ($2, $3), oldest first.
pub(crate) const SESSIONS_NEWER: &str = sessions_page!("", ">", "ASC", "$2", "$3", "$4");
/// Owner $2's sessions older than a key ($3, $4), newest first.
pub(crate) const OWN_SESSIONS_OLDER: &str =
    sessions_page!(" AND owner = $2", "<", "DESC", "$3", "$4", "$5");
/// Owner $2's sessions newer than a key ($3, $4), oldest first.
pub(crate) const OWN_SESSIONS_NEWER: &str =
    sessions_page!(" AND owner = $2", ">", "ASC", "$3", "$4", "$5");

pub(crate) const PROPOSALS: &str = "SELECT p.id, p.session_id, p.number, p.author, p.body, \
     p.digest, p.validation, p.diff, p.subject_version, p.created_at FROM workspace_proposals p \
     JOIN workspace_sessions s ON s.id = p.session_id \
     WHERE s.tenant = $1 AND p.session_id = $2 ORDER BY p.number";
pub(crate) const PROPOSAL: &str = "SELECT p.id, p.session_id, p.number, p.author, p.body, \
     p.digest, p.validation, p.diff, p.subject_version, p.created_at FROM workspace_proposals p \
     JOIN workspace_sessions s ON s.id = p.session_id \
     WHERE s.tenant = $1 AND p.session_id = $2 AND p.id = $3";
pub(crate) const RUNS: &str = "SELECT r.session_id, r.run_id, r.proposal_id, r.linked_at \
     FROM workspace_runs r JOIN workspace_sessions s ON s.id = r.session_id \
     WHERE s.tenant = $1 AND r.session_id = $2 ORDER BY r.linked_at, r.run_id";
pub(crate) const PROMOTIONS: &str = "SELECT p.id, p.session_id, p.proposal_id, p.promoted_by, \
     p.state, p.revision_id, p.gate_id, p.result, p.created_at, p.updated_at \
     FROM workspace_promotions p JOIN workspace_sessions s ON s.id = p.session_id \
     WHERE s.tenant = $1 AND p.session_id = $2 ORDER BY p.created_at, p.id";
pub(crate) const MUTATION: &str = "SELECT tenant, principal, key, tool, request_digest, \
     session_id, result, created_at FROM workspace_mutations \
     WHERE tenant = $1 AND principal = $2 AND key = $3";

/// A finished upload; its bytes are [`UPLOAD_PARTS`].
pub(crate) const UPLOAD: &str = "SELECT handle, tenant, owner, kind, size, sha256, \
     created_at, expires_at FROM workspace_uploads \
     WHERE tenant = $1 AND handle = $2 AND expires_at > $3 AND state = 'finished'";
/// An upload's parts, in order.
pub(crate) const UPLOAD_PARTS: &str =
    "SELECT bytes FROM workspace_upload_parts WHERE handle = $1 ORDER BY seq";

/// The uploads a principal's quota counts, by tenant ($1), owner ($2), now
/// ($3) and the expiry of a kept upload ($4): unexpired, no proposal names.
macro_rules! held_by {
    ($what:literal) => {
        concat!(
            "SELECT ",
            $what,
            " FROM workspace_uploads WHERE tenant = $1 AND owner = $2 \
             AND expires_at > $3 AND expires_at < $4"
        )
    };
}

/// What a principal holds: `uploads`, `bytes`.
pub(crate) const HELD_UPLOADS: &str =
    held_by!("COUNT(*) AS uploads, CAST(COALESCE(SUM(size), 0) AS BIGINT) AS bytes");
/// An arriving upload ($5 handle, $6 kind, $7 created, $8 expiry), if its
/// owner ($1, $2) holds (at $3, kept at $4) fewer than $9 uploads and,
/// with $10 bytes declared, at most $11 bytes.
pub(crate) const BEGIN_UPLOAD: &str = concat!(
    "INSERT INTO workspace_uploads (handle, tenant, owner, kind, state, size, sha256, \
     created_at, expires_at) \
     SELECT $5, $1, $2, $6, 'arriving', 0, NULL, $7, $8 \
     WHERE (",
    held_by!("COUNT(*)"),
    ") < $9 AND (",
    held_by!("COALESCE(SUM(size), 0)"),
    ") + $10 <= $11"
);
/// Moves an arriving upload ($1) on by $2 bytes and to expiry $3, if its
/// owner then holds (at $4, kept at $5) at most $6 bytes. One row or none.
pub(crate) const GROW_UPLOAD: &str = "UPDATE workspace_uploads SET size = size + $2, \
     expires_at = $3 WHERE handle = $1 AND state = 'arriving' AND ( \
     SELECT COALESCE(SUM(o.size), 0) FROM workspace_uploads o \
     WHERE o.tenant = workspace_uploads.tenant AND o.owner = workspace_uploads.owner \
     AND o.expires_at > $4 AND o.expires_at < $5) + $2 <= $6";
pub(crate) const INSERT_UPLOAD_PART: &str =
    "INSERT INTO workspace_upload_parts (handle, seq, bytes) VALUES ($1, $2, $3)";
/// [`GROW_UPLOAD`] for a chunk: only an unexpired upload of tenant $7 and
/// owner $8 that holds exactly $9 bytes (the chunk's offset).
pub(crate) const GROW_UPLOAD_AT: &str = "UPDATE workspace_uploads SET size = size + $2, \
     expires_at = $3 WHERE handle = $1 AND state = 'arriving' AND expires_at > $4 \
     AND tenant = $7 AND owner = $8 AND size = $9 AND ( \
     SELECT COALESCE(SUM(o.size), 0) FROM workspace_uploads o \
     WHERE o.tenant = workspace_uploads.tenant AND o.owner = workspace_uploads.owner \
     AND o.expires_at > $4 AND o.expires_at < $5) + $2 <= $6";
/// Upload $1's next part ($2), numbered after its last.
pub(crate) const INSERT_NEXT_PART: &str = "INSERT INTO workspace_upload_parts (handle, seq, bytes) \
     SELECT $1, COALESCE(MAX(seq) + 1, 0), $2 FROM workspace_upload_parts WHERE handle = $1";
/// An upload of tenant $1 and owner $2 ($3) still arriving at $4, with
/// how many parts it has.
pub(crate) const ARRIVING_UPLOAD: &str = "SELECT u.handle, u.tenant, u.owner, u.kind, u.size, \
     u.created_at, (SELECT COUNT(*) FROM workspace_upload_parts p WHERE p.handle = u.handle) \
     AS parts FROM workspace_uploads u WHERE u.tenant = $1 AND u.owner = $2 AND u.handle = $3 \
     AND u.state = 'arriving' AND u.expires_at > $4";
/// Part $3 of upload $2 of tenant $1, whatever the upload's state.
pub(crate) const UPLOAD_PART_AT: &str = "SELECT p.bytes FROM workspace_upload_parts p \
     JOIN workspace_uploads u ON u.handle = p.handle \
     WHERE u.tenant = $1 AND p.handle = $2 AND p.seq = $3";
/// Whether upload $1 is still arriving (why a part was not kept).
pub(crate) const UPLOAD_ARRIVING: &str =
    "SELECT handle FROM workspace_uploads WHERE handle = $1 AND state = 'arriving'";
/// An arriving upload ($1, $2) whose parts hold $3 bytes, finished.
pub(crate) const FINISH_UPLOAD: &str = "UPDATE workspace_uploads SET state = 'finished', \
     sha256 = $4, expires_at = $5 \
     WHERE tenant = $1 AND handle = $2 AND state = 'arriving' AND size = $3";
/// An upload and (by cascade) its parts.
pub(crate) const DROP_UPLOAD: &str =
    "DELETE FROM workspace_uploads WHERE tenant = $1 AND handle = $2";
/// Expired uploads go when the next one comes, their parts with them:
/// finished ones past their day, arriving ones abandoned (kept uploads
/// never expire).
pub(crate) const PURGE_UPLOADS: &str = "DELETE FROM workspace_uploads WHERE expires_at <= $1";
/// An upload a proposal names is kept as long as the session ($4), the
/// last to name it.
pub(crate) const KEEP_UPLOAD: &str = "UPDATE workspace_uploads SET expires_at = $3, kept_by = $4 \
     WHERE tenant = $1 AND handle = $2 AND state = 'finished'";
/// A session's end: the uploads it keeps go (their parts with them); its
/// proposals keep their validation and diff, a promoted revision its own
/// copy of the component, and nothing reads the bytes again (only an open
/// session promotes).
pub(crate) const DROP_KEPT_UPLOADS: &str =
    "DELETE FROM workspace_uploads WHERE tenant = $1 AND kept_by = $2";

pub(crate) const INSERT_SESSION: &str = concat!(
    "INSERT INTO workspace_sessions (",
    session_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
);
/// The compare-and-set every later mutation makes: one row, or the
/// mutation loses.
pub(crate) const STEP_SESSION: &str = "UPDATE workspace_sessions SET version = version + 1, \
     updated_at = $3, state = COALESCE($4, state) \
     WHERE tenant = $1 AND id = $2 AND version = $5 AND state = 'open'";
pub(crate) const INSERT_PROPOSAL: &str = "INSERT INTO workspace_proposals (id, session_id, \
     number, author, body, digest, validation, diff, subject_version, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
/// A session ($1, $2) bound anew, to entity $3 at version $4 (in the
/// step that moved its version).
pub(crate) const REBIND_SESSION: &str = "UPDATE workspace_sessions SET bound_to = $3, \
     subject_version = $4 WHERE tenant = $1 AND id = $2";
/// The runs of session $2 (tenant $1) not yet over, asked to stop at $3,
/// as `cancel_exploration` asks one (runs/sql.rs `REQUEST_CANCEL`): a
/// running one is `cancelling` (its worker hears it within a second), a
/// queued or waiting one keeps its state with the request noted (the
/// worker that claims it settles it `cancelled`).
pub(crate) const CANCEL_SESSION_RUNS: &str = "UPDATE runs SET state = CASE \
     WHEN state IN ('queued', 'input_required') THEN state ELSE 'cancelling' END, \
     cancel_requested_at = COALESCE(cancel_requested_at, $3) \
     WHERE tenant = $1 AND state IN ('queued', 'running', 'cancelling', 'input_required') \
     AND id IN (SELECT run_id FROM workspace_runs WHERE session_id = $2)";
pub(crate) const INSERT_RUN: &str = "INSERT INTO workspace_runs (session_id, run_id, \
     proposal_id, linked_at) VALUES ($1, $2, $3, $4)";
pub(crate) const UPSERT_PROMOTION: &str = "INSERT INTO workspace_promotions (id, session_id, \
     proposal_id, promoted_by, state, revision_id, gate_id, result, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
     ON CONFLICT (id) DO UPDATE SET state = excluded.state, revision_id = excluded.revision_id, \
     gate_id = excluded.gate_id, result = excluded.result, updated_at = excluded.updated_at";
pub(crate) const INSERT_MUTATION: &str = "INSERT INTO workspace_mutations (tenant, principal, \
     key, tool, request_digest, session_id, result, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
