//! [`WorkspaceStore`]: what the workspace reads, and the uploads it keeps.
//! Mutations of sessions are not methods here: they are
//! [`WorkspaceEffect`](crate::WorkspaceEffect)s written with their audit
//! row. `storage` implements this for SQLite and PostgreSQL.

use std::future::Future;
use std::pin::Pin;

use crate::{
    Mutation, NewUpload, Proposal, ProposalId, Session, SessionId, SessionView, Upload,
    UploadHandle,
};

/// A boxed future, so stores can be used as trait objects.
pub type WorkspaceFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, WorkspaceStoreError>> + Send + 'a>>;

/// Why the store did not answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum WorkspaceStoreError {
    /// The database failed.
    #[error("workspace store: {0}")]
    Failed(String),
    /// The database could not be reached: the request may be tried again.
    #[error(transparent)]
    Unavailable(#[from] toolhost_types::StoreUnavailable),
}

impl WorkspaceStoreError {
    /// The unreachable store, if that is why.
    pub fn unavailable(&self) -> Option<&toolhost_types::StoreUnavailable> {
        match self {
            WorkspaceStoreError::Unavailable(u) => Some(u),
            WorkspaceStoreError::Failed(_) => None,
        }
    }
}

/// The workspace's rows. Every read is scoped to a tenant: another
/// tenant's session is not there.
pub trait WorkspaceStore: Send + Sync {
    /// Session `id` of `tenant`.
    fn session<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a SessionId,
    ) -> WorkspaceFuture<'a, Option<Session>>;

    /// Session `id` of `tenant` with its proposals, runs and promotions.
    fn view<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a SessionId,
    ) -> WorkspaceFuture<'a, Option<SessionView>>;

    /// `tenant`'s sessions, newest first, at most `limit`; only `owner`'s
    /// if given.
    fn sessions<'a>(
        &'a self,
        tenant: &'a str,
        owner: Option<&'a str>,
        limit: u32,
    ) -> WorkspaceFuture<'a, Vec<Session>>;

    /// Proposal `id` of session `session` of `tenant`.
    fn proposal<'a>(
        &'a self,
        tenant: &'a str,
        session: &'a SessionId,
        id: &'a ProposalId,
    ) -> WorkspaceFuture<'a, Option<Proposal>>;

    /// The mutation `principal` of `tenant` made under `key`, if any.
    fn mutation<'a>(
        &'a self,
        tenant: &'a str,
        principal: &'a str,
        key: &'a str,
    ) -> WorkspaceFuture<'a, Option<Mutation>>;

    /// Keeps an upload (and drops expired uploads no proposal names).
    fn put_upload(&self, new: NewUpload) -> WorkspaceFuture<'_, ()>;

    /// Upload `handle` of `tenant` and its bytes, if it is there and has
    /// not expired at `now_ms`.
    fn upload<'a>(
        &'a self,
        tenant: &'a str,
        handle: &'a UploadHandle,
        now_ms: i64,
    ) -> WorkspaceFuture<'a, Option<(Upload, Vec<u8>)>>;
}
