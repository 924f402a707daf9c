//! [`WorkspaceStore`] for [`Store`]: the authoring workspace's reads and
//! its uploads, each one statement from `sql.rs` on either engine, rows
//! read back by `rows.rs`. Sessions are opened and moved on only as
//! [`toolhost_audit::Effect::Workspace`]s, with their call's audit row
//! (`apply_workspace!` in `src/effects.rs`): the version's compare-and-set,
//! what the step adds and the answer under the caller's key are one
//! transaction, so a lost race leaves no row of it behind.
//!
//! # Uploads arrive in parts
//!
//! An upload is never held whole on its way in. [`WorkspaceStore::begin_upload`]
//! writes its row `arriving` (size 0, no digest, a short expiry); each part
//! of at most a part's size (`invoke` cuts them, 1 MiB) is one row of
//! `workspace_upload_parts`, written in one transaction with the upload's
//! new size and expiry; [`WorkspaceStore::finish_upload`] makes it
//! `finished` with its size and digest once its parts hold exactly that
//! many bytes. Only a finished upload is read, its parts joined in order.
//! A refused or failed upload is dropped with its parts (a cascade); one
//! abandoned by a crash is purged by the next upload after its short
//! expiry. Uploads from before 0020 are finished, their body their part 0.
//!
//! # The quota, and the race it leaves
//!
//! A principal's quota (`UploadQuota`) counts its unexpired uploads no
//! proposal names. The statement that begins an upload inserts it only if
//! the count stays under the quota and the bytes held plus those declared
//! stay within it; the statement that grows an upload by a part does so
//! only if the bytes held, that part included, stay within it. On SQLite
//! one writer at a time makes both checks exact. On PostgreSQL (READ
//! COMMITTED) each statement sees only what other transactions committed
//! before it began: uploads of one principal arriving at the same moment,
//! on one replica or several, can each pass on a total that misses the
//! part stored beside it. So the bytes held can end above the quota by at
//! most one part (1 MiB) for each upload of that principal arriving at
//! once beyond the first, and the count by the begins that race; every
//! later part of theirs is then refused, and the arriving uploads are
//! themselves bounded by the count and by `rate_limit_uploads`. Closing it
//! would take a per-principal lock (an advisory lock, or `FOR UPDATE` on
//! the principal's rows) that SQLite's statements cannot share.

mod rows;
pub(crate) mod sql;

use toolhost_workspace::{
    ArrivingState, ArrivingUpload, ChunkKept, HeldUploads, Mutation, PartKept, Proposal,
    ProposalId, Session, SessionId, SessionView, SessionsFrom, Upload, UploadChunk, UploadHandle,
    UploadPart, UploadQuota, WorkspaceFuture, WorkspaceStore, WorkspaceStoreError,
};

use crate::Store;
use crate::connect::{execute, fetch_all, fetch_optional, on_pool};

fn failed(operation: &'static str) -> impl FnOnce(sqlx::Error) -> WorkspaceStoreError {
    move |e| match crate::error::unreachable(operation, &e) {
        Some(down) => WorkspaceStoreError::Unavailable(down),
        None => WorkspaceStoreError::Failed(format!("{operation}: {e}")),
    }
}

impl WorkspaceStore for Store {
    fn session<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a SessionId,
    ) -> WorkspaceFuture<'a, Option<Session>> {
        Box::pin(async move {
            fetch_optional!(
                &self.pools,
                rows::session,
                sql::SESSION,
                tenant,
                id.as_str()
            )
            .map_err(failed("read a session"))
        })
    }

    fn view<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a SessionId,
    ) -> WorkspaceFuture<'a, Option<SessionView>> {
        Box::pin(async move {
            let Some(session) = self.session(tenant, id).await? else {
                return Ok(None);
            };
            let (t, s) = (tenant, id.as_str());
            let proposals = fetch_all!(&self.pools, rows::proposal, sql::PROPOSALS, t, s)
                .map_err(failed("read proposals"))?;
            let runs = fetch_all!(&self.pools, rows::run_link, sql::RUNS, t, s)
                .map_err(failed("read a session's runs"))?;
            let promotions = fetch_all!(&self.pools, rows::promotion, sql::PROMOTIONS, t, s)
                .map_err(failed("read promotions"))?;
            Ok(Some(SessionView {
                session,
                proposals,
                runs,
                promotions,
            }))
        })
    }

    fn sessions<'a>(
        &'a self,
        tenant: &'a str,
        owner: Option<&'a str>,
        from: &'a SessionsFrom,
        limit: u32,
    ) -> WorkspaceFuture<'a, Vec<Session>> {
        Box::pin(async move {
            // The newest are those older than a key past every session.
            let (older, at, id) = match from {
                SessionsFrom::Newest => (true, i64::MAX, ""),
                SessionsFrom::OlderThan(k) => (true, k.created_at_ms, k.id.as_str()),
                SessionsFrom::NewerThan(k) => (false, k.created_at_ms, k.id.as_str()),
            };
            let limit = i64::from(limit);
            let mut page = match (owner, older) {
                (None, true) => fetch_all!(
                    &self.pools,
                    rows::session,
                    sql::SESSIONS_OLDER,
                    tenant,
                    at,
                    id,
                    limit
                ),
                (None, false) => fetch_all!(
                    &self.pools,
                    rows::session,
                    sql::SESSIONS_NEWER,
                    tenant,
                    at,
                    id,
                    limit
                ),
                (Some(o), true) => fetch_all!(
                    &self.pools,
                    rows::session,
                    sql::OWN_SESSIONS_OLDER,
                    tenant,
                    o,
                    at,
                    id,
                    limit
                ),
                (Some(o), false) => fetch_all!(
                    &self.pools,
                    rows::session,
                    sql::OWN_SESSIONS_NEWER,
                    tenant,
                    o,
                    at,
                    id,
                    limit
                ),
            }
            .map_err(failed("list sessions"))?;
            if !older {
                // Read oldest first from the key: shown newest first.
                page.reverse();
            }
            Ok(page)
        })
    }

    fn proposal<'a>(
        &'a self,
        tenant: &'a str,
        session: &'a SessionId,
        id: &'a ProposalId,
    ) -> WorkspaceFuture<'a, Option<Proposal>> {
        Box::pin(async move {
            fetch_optional!(
                &self.pools,
                rows::proposal,
                sql::PROPOSAL,
                tenant,
                session.as_str(),
                id.as_str()
            )
            .map_err(failed("read a proposal"))
        })
    }

    fn mutation<'a>(
        &'a self,
        tenant: &'a str,
        principal: &'a str,
        key: &'a str,
    ) -> WorkspaceFuture<'a, Option<Mutation>> {
        Box::pin(async move {
            fetch_optional!(
                &self.pools,
                rows::mutation,
                sql::MUTATION,
                tenant,
                principal,
                key
            )
            .map_err(failed("read a mutation"))
        })
    }

    fn held_uploads<'a>(
        &'a self,
        tenant: &'a str,
        owner: &'a str,
        now_ms: i64,
    ) -> WorkspaceFuture<'a, HeldUploads> {
        Box::pin(async move {
            fetch_optional!(
                &self.pools,
                rows::held,
                sql::HELD_UPLOADS,
                tenant,
                owner,
                now_ms,
                KEPT
            )
            .map_err(failed("count a principal's uploads"))
            .map(Option::unwrap_or_default)
        })
    }

    fn begin_upload<'a>(
        &'a self,
        upload: &'a ArrivingUpload,
        declared: u64,
        quota: UploadQuota,
        arriving_until_ms: i64,
    ) -> WorkspaceFuture<'a, bool> {
        Box::pin(async move {
            let u = upload;
            execute!(&self.pools, sql::PURGE_UPLOADS, u.created_at_ms)
                .map_err(failed("drop expired uploads"))?;
            let begun = execute!(
                &self.pools,
                sql::BEGIN_UPLOAD,
                u.tenant.as_str(),
                u.owner.as_str(),
                u.created_at_ms,
                KEPT,
                u.handle.as_str(),
                u.kind.as_str(),
                u.created_at_ms,
                arriving_until_ms,
                signed(quota.uploads),
                signed(declared),
                signed(quota.bytes)
            )
            .map_err(failed("begin an upload"))?;
            Ok(begun == 1)
        })
    }

    fn put_upload_part<'a>(&'a self, part: UploadPart<'a>) -> WorkspaceFuture<'a, PartKept> {
        Box::pin(async move {
            let p = part;
            let size = signed(p.bytes.len() as u64);
            on_pool!(&self.pools, pool => async {
                let _turn = crate::connect::transaction_turn(&self.pools).await;
                let mut tx = pool.begin().await?;
                let grown = sqlx::query(sql::GROW_UPLOAD)
                    .bind(p.handle.as_str())
                    .bind(size)
                    .bind(p.arriving_until_ms)
                    .bind(p.now_ms)
                    .bind(KEPT)
                    .bind(signed(p.max_bytes))
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                if grown == 0 {
                    let arriving = sqlx::query(sql::UPLOAD_ARRIVING)
                        .bind(p.handle.as_str())
                        .fetch_optional(&mut *tx)
                        .await?;
                    tx.rollback().await?;
                    return Ok(if arriving.is_some() { PartKept::OverQuota } else { PartKept::Gone });
                }
                sqlx::query(sql::INSERT_UPLOAD_PART)
                    .bind(p.handle.as_str())
                    .bind(i64::from(p.seq))
                    .bind(p.bytes)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(PartKept::Kept)
            }
            .await)
            .map_err(failed("keep a part of an upload"))
        })
    }

    fn append_upload_chunk<'a>(&'a self, chunk: UploadChunk<'a>) -> WorkspaceFuture<'a, ChunkKept> {
        Box::pin(async move {
            let c = chunk;
            on_pool!(&self.pools, pool => async {
                let _turn = crate::connect::transaction_turn(&self.pools).await;
                let mut tx = pool.begin().await?;
                let grown = sqlx::query(sql::GROW_UPLOAD_AT)
                    .bind(c.handle.as_str())
                    .bind(signed(c.bytes.len() as u64))
                    .bind(c.arriving_until_ms)
                    .bind(c.now_ms)
                    .bind(KEPT)
                    .bind(signed(c.max_bytes))
                    .bind(c.tenant)
                    .bind(c.owner)
                    .bind(signed(c.offset))
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                if grown == 0 {
                    let arriving = sqlx::query(sql::ARRIVING_UPLOAD)
                        .bind(c.tenant)
                        .bind(c.owner)
                        .bind(c.handle.as_str())
                        .bind(c.now_ms)
                        .fetch_optional(&mut *tx)
                        .await?;
                    tx.rollback().await?;
                    let Some(row) = arriving else {
                        return Ok(ChunkKept::Gone);
                    };
                    let held = rows::arriving(&row)?;
                    return Ok(if held.size == c.offset {
                        ChunkKept::OverQuota
                    } else {
                        ChunkKept::Moved { received: held.size }
                    });
                }
                sqlx::query(sql::INSERT_NEXT_PART)
                    .bind(c.handle.as_str())
                    .bind(c.bytes)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(ChunkKept::Kept)
            }
            .await)
            .map_err(failed("keep a chunk of an upload"))
        })
    }

    fn arriving_upload<'a>(
        &'a self,
        tenant: &'a str,
        owner: &'a str,
        handle: &'a UploadHandle,
        now_ms: i64,
    ) -> WorkspaceFuture<'a, Option<ArrivingState>> {
        Box::pin(async move {
            fetch_optional!(
                &self.pools,
                rows::arriving,
                sql::ARRIVING_UPLOAD,
                tenant,
                owner,
                handle.as_str(),
                now_ms
            )
            .map_err(failed("read an arriving upload"))
        })
    }

    fn upload_part<'a>(
        &'a self,
        tenant: &'a str,
        handle: &'a UploadHandle,
        seq: u32,
    ) -> WorkspaceFuture<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            fetch_optional!(
                &self.pools,
                rows::part,
                sql::UPLOAD_PART_AT,
                tenant,
                handle.as_str(),
                i64::from(seq)
            )
            .map_err(failed("read a part of an upload"))
        })
    }

    fn finish_upload<'a>(&'a self, upload: &'a Upload) -> WorkspaceFuture<'a, bool> {
        Box::pin(async move {
            let u = upload;
            let finished = execute!(
                &self.pools,
                sql::FINISH_UPLOAD,
                u.tenant.as_str(),
                u.handle.as_str(),
                signed(u.size),
                u.sha256.as_str(),
                u.expires_at_ms
            )
            .map_err(failed("finish an upload"))?;
            Ok(finished == 1)
        })
    }

    fn drop_upload<'a>(
        &'a self,
        tenant: &'a str,
        handle: &'a UploadHandle,
    ) -> WorkspaceFuture<'a, ()> {
        Box::pin(async move {
            execute!(&self.pools, sql::DROP_UPLOAD, tenant, handle.as_str())
                .map(drop)
                .map_err(failed("drop an upload"))
        })
    }

    fn upload<'a>(
        &'a self,
        tenant: &'a str,
        handle: &'a UploadHandle,
        now_ms: i64,
    ) -> WorkspaceFuture<'a, Option<(Upload, Vec<u8>)>> {
        Box::pin(async move {
            let found = fetch_optional!(
                &self.pools,
                rows::upload,
                sql::UPLOAD,
                tenant,
                handle.as_str(),
                now_ms
            )
            .map_err(failed("read an upload"))?;
            let Some(upload) = found else {
                return Ok(None);
            };
            let parts = fetch_all!(&self.pools, rows::part, sql::UPLOAD_PARTS, handle.as_str())
                .map_err(failed("read an upload's parts"))?;
            let bytes = parts.concat();
            if bytes.len() as u64 != upload.size {
                return Err(WorkspaceStoreError::Failed(format!(
                    "upload {handle}: its parts hold {} bytes, not its {}",
                    bytes.len(),
                    upload.size
                )));
            }
            Ok(Some((upload, bytes)))
        })
    }
}

/// The expiry of an upload a proposal names (`KEEP_UPLOAD`): it counts
/// against no quota.
pub(crate) const KEPT: i64 = i64::MAX;

/// A count or size as the store's signed integers (past `i64::MAX`, which
/// no bound here reaches, it saturates).
fn signed(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
