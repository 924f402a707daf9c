//! [`WorkspaceStore`] for [`Store`]: the authoring workspace's reads and
//! its uploads, each one statement from `sql.rs` on either engine, rows
//! read back by `rows.rs`. Sessions are opened and moved on only as
//! [`toolhost_audit::Effect::Workspace`]s, with their call's audit row
//! (`apply_workspace!` in `src/effects.rs`): the version's compare-and-set,
//! what the step adds and the answer under the caller's key are one
//! transaction, so a lost race leaves no row of it behind.

mod rows;
pub(crate) mod sql;

use toolhost_workspace::{
    Mutation, NewUpload, Proposal, ProposalId, Session, SessionId, SessionView, Upload,
    UploadHandle, WorkspaceFuture, WorkspaceStore, WorkspaceStoreError,
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
        limit: u32,
    ) -> WorkspaceFuture<'a, Vec<Session>> {
        Box::pin(async move {
            let owner = owner.unwrap_or("");
            fetch_all!(
                &self.pools,
                rows::session,
                sql::SESSIONS,
                tenant,
                owner,
                i64::from(limit)
            )
            .map_err(failed("list sessions"))
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

    fn put_upload(&self, new: NewUpload) -> WorkspaceFuture<'_, ()> {
        Box::pin(async move {
            let u = &new.upload;
            execute!(&self.pools, sql::PURGE_UPLOADS, u.created_at_ms)
                .map_err(failed("drop expired uploads"))?;
            let size = i64::try_from(u.size).unwrap_or(i64::MAX);
            on_pool!(&self.pools, pool => sqlx::query(sql::INSERT_UPLOAD)
                .bind(u.handle.as_str())
                .bind(u.tenant.as_str())
                .bind(u.owner.as_str())
                .bind(u.kind.as_str())
                .bind(size)
                .bind(u.sha256.as_str())
                .bind(&new.bytes[..])
                .bind(u.created_at_ms)
                .bind(u.expires_at_ms)
                .execute(pool)
                .await
                .map(drop))
            .map_err(failed("keep an upload"))
        })
    }

    fn upload<'a>(
        &'a self,
        tenant: &'a str,
        handle: &'a UploadHandle,
        now_ms: i64,
    ) -> WorkspaceFuture<'a, Option<(Upload, Vec<u8>)>> {
        Box::pin(async move {
            fetch_optional!(
                &self.pools,
                rows::upload,
                sql::UPLOAD,
                tenant,
                handle.as_str(),
                now_ms
            )
            .map_err(failed("read an upload"))
        })
    }
}
