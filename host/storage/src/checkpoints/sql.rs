//! The checkpoint store's SQL: one text per operation, valid on both
//! engines (SQLite reads `$n` as PostgreSQL does, a repeated `$n` being one
//! value; `ON CONFLICT (columns) DO NOTHING` and `RETURNING` mean the same
//! in both).

/// Every column of a `checkpoints` row, as `rows::checkpoint` reads them.
macro_rules! checkpoint_columns {
    () => {
        "id, tenant, plugin, subject, title, evidence, opened_by, created_at, version, \
         disposition, decided_by, reason, decided_at"
    };
}

// No row when the subject already has a checkpoint (`checkpoints_one_per_subject`);
// a missing tenant is a foreign-key violation, a reused id a primary-key one.
pub(super) const OPEN: &str = concat!(
    "INSERT INTO checkpoints (id, tenant, plugin, subject, title, evidence, opened_by, \
     created_at, version) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1) \
     ON CONFLICT (tenant, plugin, subject) DO NOTHING RETURNING ",
    checkpoint_columns!()
);

// `open`, when the insert was skipped: the checkpoint holding the subject.
pub(super) const BY_SUBJECT: &str = concat!(
    "SELECT ",
    checkpoint_columns!(),
    " FROM checkpoints WHERE tenant = $1 AND plugin = $2 AND subject = $3"
);

pub(super) const BY_ID: &str = concat!(
    "SELECT ",
    checkpoint_columns!(),
    " FROM checkpoints WHERE tenant = $1 AND id = $2"
);

// Both lists are served by `checkpoints_tenant_created`; `id` breaks ties
// between checkpoints opened in the same millisecond.
pub(super) const LIST_ALL: &str = concat!(
    "SELECT ",
    checkpoint_columns!(),
    " FROM checkpoints WHERE tenant = $1 ORDER BY created_at DESC, id DESC LIMIT $2"
);
pub(super) const LIST_WAITING: &str = concat!(
    "SELECT ",
    checkpoint_columns!(),
    " FROM checkpoints WHERE tenant = $1 AND disposition IS NULL \
     ORDER BY created_at DESC, id DESC LIMIT $2"
);

// The compare-and-set is the whole decision: of concurrent deciders at the
// same version, one changes the row.
pub(super) const DECIDE: &str = concat!(
    "UPDATE checkpoints SET disposition = $1, decided_by = $2, reason = $3, \
     decided_at = $4, version = version + 1 \
     WHERE tenant = $5 AND id = $6 AND version = $7 AND disposition IS NULL RETURNING ",
    checkpoint_columns!()
);
