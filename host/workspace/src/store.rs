//! [`WorkspaceStore`]: what the workspace reads, and the uploads it keeps.
//! Mutations of sessions are not methods here: they are
//! [`WorkspaceEffect`](crate::WorkspaceEffect)s written with their audit
//! row. `storage` implements this for SQLite and PostgreSQL.

use std::future::Future;
use std::pin::Pin;

use crate::{
    ArrivingUpload, HeldUploads, Mutation, Proposal, ProposalId, Session, SessionId, SessionView,
    SessionsFrom, Upload, UploadHandle, UploadQuota,
};

/// A boxed future, so stores can be used as trait objects.
pub type WorkspaceFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, WorkspaceStoreError>> + Send + 'a>>;

/// One part of an arriving upload, at most a part's size of bytes.
#[derive(Debug, Clone, Copy)]
pub struct UploadPart<'a> {
    /// The upload.
    pub handle: &'a UploadHandle,
    /// Its place: 0 for the first part, one more for each next.
    pub seq: u32,
    /// Its bytes.
    pub bytes: &'a [u8],
    /// The most bytes the upload's owner may hold, this part included.
    pub max_bytes: u64,
    /// Now (unix milliseconds): what has expired counts no more.
    pub now_ms: i64,
    /// The upload's new short expiry, should no more parts arrive.
    pub arriving_until_ms: i64,
}

/// What became of a part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartKept {
    /// Stored.
    Kept,
    /// Not stored: the owner would hold more than its quota's bytes.
    OverQuota,
    /// Not stored: the upload is no longer arriving (dropped, or purged
    /// after its short expiry).
    Gone,
}

/// A chunk of an upload that arrives over several requests (the MCP
/// upload tools): appended at `offset`, the bytes its upload holds so far,
/// as its next part.
#[derive(Debug, Clone, Copy)]
pub struct UploadChunk<'a> {
    /// The upload's tenant.
    pub tenant: &'a str,
    /// The one uploading it: nobody else may add to it.
    pub owner: &'a str,
    /// The upload.
    pub handle: &'a UploadHandle,
    /// Where the chunk goes: the bytes the upload holds so far.
    pub offset: u64,
    /// Its bytes.
    pub bytes: &'a [u8],
    /// The most bytes the upload's owner may hold, this chunk included.
    pub max_bytes: u64,
    /// Now (unix milliseconds): what has expired counts no more.
    pub now_ms: i64,
    /// The upload's new short expiry, should no more chunks arrive.
    pub arriving_until_ms: i64,
}

/// What became of a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkKept {
    /// Stored as the upload's next part.
    Kept,
    /// Not stored: the owner would hold more than its quota's bytes.
    OverQuota,
    /// Not stored: the upload holds `received` bytes, not the chunk's
    /// offset (a chunk sent twice, or one skipped).
    Moved {
        /// The bytes it holds: where the next chunk goes.
        received: u64,
    },
    /// Not stored: no such upload of this owner is arriving (never begun,
    /// another's, finished, dropped, or purged after its short expiry).
    Gone,
}

/// An upload arriving over several requests, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrivingState {
    /// The upload.
    pub upload: ArrivingUpload,
    /// The bytes its parts hold so far.
    pub size: u64,
    /// How many parts it has (numbered from 0).
    pub parts: u32,
}

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

    /// `tenant`'s sessions, newest first, at most `limit` of them from
    /// `from` (by keyset); only `owner`'s if given.
    fn sessions<'a>(
        &'a self,
        tenant: &'a str,
        owner: Option<&'a str>,
        from: &'a SessionsFrom,
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

    /// What `owner` of `tenant` holds at `now_ms` against its
    /// [`UploadQuota`]: unexpired uploads no proposal names, arriving ones
    /// with the bytes in so far.
    fn held_uploads<'a>(
        &'a self,
        tenant: &'a str,
        owner: &'a str,
        now_ms: i64,
    ) -> WorkspaceFuture<'a, HeldUploads>;

    /// Starts `upload` arriving, kept until `arriving_until_ms` unless a
    /// part moves that on, if its owner then holds no more than `quota`
    /// with `declared` bytes still to come; `false`, storing nothing, if
    /// not. Drops expired uploads first (finished ones past their day,
    /// arriving ones abandoned by a crash).
    fn begin_upload<'a>(
        &'a self,
        upload: &'a ArrivingUpload,
        declared: u64,
        quota: UploadQuota,
        arriving_until_ms: i64,
    ) -> WorkspaceFuture<'a, bool>;

    /// Appends a part to an arriving upload, in one transaction with its
    /// size and expiry; nothing if it would put its owner over `max_bytes`
    /// or the upload is no longer arriving.
    fn put_upload_part<'a>(&'a self, part: UploadPart<'a>) -> WorkspaceFuture<'a, PartKept>;

    /// Finishes arriving `upload` with its size, digest and expiry, if
    /// its parts hold exactly `upload.size` bytes; `false` if it is no
    /// longer arriving (purged meanwhile) or its parts do not add up.
    fn finish_upload<'a>(&'a self, upload: &'a Upload) -> WorkspaceFuture<'a, bool>;

    /// Drops upload `handle` of `tenant` and its parts, whatever its state:
    /// a refused or failed upload leaves no row.
    fn drop_upload<'a>(
        &'a self,
        tenant: &'a str,
        handle: &'a UploadHandle,
    ) -> WorkspaceFuture<'a, ()>;

    /// Appends `chunk` to its arriving upload as the next part, in one
    /// transaction with the quota's bytes and the offset: see
    /// [`ChunkKept`].
    fn append_upload_chunk<'a>(&'a self, chunk: UploadChunk<'a>) -> WorkspaceFuture<'a, ChunkKept>;

    /// Upload `handle` of `tenant` and `owner`, if it is still arriving
    /// and its short expiry has not passed at `now_ms`.
    fn arriving_upload<'a>(
        &'a self,
        tenant: &'a str,
        owner: &'a str,
        handle: &'a UploadHandle,
        now_ms: i64,
    ) -> WorkspaceFuture<'a, Option<ArrivingState>>;

    /// Part `seq` of upload `handle` of `tenant`, whatever its state.
    fn upload_part<'a>(
        &'a self,
        tenant: &'a str,
        handle: &'a UploadHandle,
        seq: u32,
    ) -> WorkspaceFuture<'a, Option<Vec<u8>>>;

    /// Finished upload `handle` of `tenant` and its bytes (its parts in
    /// order, whole: a component must be whole to compile), if it is there
    /// and has not expired at `now_ms`.
    fn upload<'a>(
        &'a self,
        tenant: &'a str,
        handle: &'a UploadHandle,
        now_ms: i64,
    ) -> WorkspaceFuture<'a, Option<(Upload, Vec<u8>)>>;
}
