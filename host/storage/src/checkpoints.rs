//! [`CheckpointStore`] for [`Store`]: human checkpoints, each operation one
//! statement from `sql.rs` on either engine (two for an `open` that finds
//! the subject taken, or a refused decision), its rows read back by `rows.rs`.
//!
//! The database decides every race, never a read followed by a write:
//!
//! - `open_checkpoint` is an `INSERT … ON CONFLICT (tenant, plugin, subject)
//!   DO NOTHING RETURNING`. When it inserts nothing, the subject's row
//!   exists and is committed (PostgreSQL's insert waits for a concurrent
//!   insert of the same subject to commit; SQLite writes one at a time), so
//!   the read that follows finds it. Twenty concurrent opens of one subject
//!   thus share one checkpoint, on one host or many.
//! - `decide_checkpoint` is a conditional `UPDATE … RETURNING` on the
//!   version and an empty disposition; the one caller that changes the row
//!   wins, and the others read the row only to say *why* they lost
//!   (`rows::refused_decision`).
//!
//! A checkpoint's tenant must exist (a foreign key); checkpoints are never
//! deleted.

mod rows;
mod sql;

use toolhost_gates::{
    Checkpoint, CheckpointError, CheckpointStore, Disposition, GateFuture, GateStoreError,
    NewCheckpoint,
};

use crate::Store;
use crate::connect::{fetch_all, fetch_optional};
use crate::gates::{failed, in_tenant};

impl Store {
    /// The checkpoint `id` of `tenant`, as the store's own reads need it.
    async fn checkpoint(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Checkpoint>, GateStoreError> {
        fetch_optional!(&self.pools, rows::checkpoint, sql::BY_ID, tenant, id)
            .map_err(failed("select checkpoint"))
    }

    /// The checkpoint holding `c`'s subject, which an `open` that inserted
    /// nothing met.
    async fn held_checkpoint(&self, c: &NewCheckpoint) -> Result<Checkpoint, GateStoreError> {
        let (tenant, plugin, subject) = (&c.tenant, &c.plugin, &c.subject);
        let held = fetch_optional!(
            &self.pools,
            rows::checkpoint,
            sql::BY_SUBJECT,
            tenant.as_str(),
            plugin.as_str(),
            subject.as_str()
        )
        .map_err(failed("select checkpoint"))?;
        // Rows are never deleted, so only a hand-edited database gets here.
        held.ok_or_else(|| {
            GateStoreError::Failed(format!(
                "open checkpoint {}: subject {subject:?} was taken, then its checkpoint vanished",
                c.id
            ))
        })
    }
}

impl CheckpointStore for Store {
    fn open_checkpoint(&self, c: NewCheckpoint) -> GateFuture<'_, Checkpoint> {
        Box::pin(async move {
            let opened = fetch_optional!(
                &self.pools,
                rows::checkpoint,
                sql::OPEN,
                c.id.as_str(),
                c.tenant.as_str(),
                c.plugin.as_str(),
                c.subject.as_str(),
                c.title.as_str(),
                c.evidence.as_str(),
                c.opened_by.as_str(),
                c.created_at
            )
            .map_err(in_tenant("open checkpoint", &c.tenant))?;
            match opened {
                Some(opened) => Ok(opened),
                None => self.held_checkpoint(&c).await,
            }
        })
    }

    fn list_checkpoints<'a>(
        &'a self,
        tenant: &'a str,
        waiting_only: bool,
        limit: u32,
    ) -> GateFuture<'a, Vec<Checkpoint>> {
        Box::pin(async move {
            let sql = if waiting_only {
                sql::LIST_WAITING
            } else {
                sql::LIST_ALL
            };
            let limit = i64::from(limit);
            fetch_all!(&self.pools, rows::checkpoint, sql, tenant, limit)
                .map_err(failed("list checkpoints"))
        })
    }

    fn decide_checkpoint<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        expected_version: u32,
        disposition: Disposition,
        by: &'a str,
        reason: &'a str,
        now: i64,
    ) -> GateFuture<'a, Checkpoint, CheckpointError> {
        Box::pin(async move {
            // No reason given is no reason stored, not an empty one.
            let reason = Some(reason).filter(|r| !r.is_empty());
            let decided = fetch_optional!(
                &self.pools,
                rows::checkpoint,
                sql::DECIDE,
                disposition.as_str(),
                by,
                reason,
                now,
                tenant,
                id,
                i64::from(expected_version)
            )
            .map_err(failed("decide checkpoint"))?;
            match decided {
                Some(decided) => Ok(decided),
                None => {
                    let found = self.checkpoint(tenant, id).await?;
                    Err(rows::refused_decision(id, expected_version, found))
                }
            }
        })
    }
}
