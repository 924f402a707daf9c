//! [`Arriving`]: an admitted upload whose body is being read. Each frame
//! is hashed as it comes and gathered into a part of at most
//! [`UPLOAD_PART_BYTES`]; a full part is stored (with the quota checked in
//! the same statement) and its buffer reused. So an upload holds one part
//! and the caller's current frame in memory, whatever its size.
//!
//! An upload either finishes, or leaves no row: a step that fails drops
//! the upload's rows before it answers, [`Arriving::abort`] drops them
//! when the body fails, and an upload let go of unfinished (its request
//! cancelled mid-body) drops them from a task of its own. Should the host
//! die first, the short expiry of an arriving upload purges it.

use std::sync::Arc;

use toolhost_types::{Digest, Hasher};
use toolhost_workspace::{
    ArrivingUpload, PartKept, QuotaExceeded, Upload, UploadPart, UploadQuota, WorkspaceStore,
    WorkspaceStoreError,
};

use super::upload_bounds::{
    ARRIVING_UPLOAD_TTL, UPLOAD_PART_BYTES, UploadError, millis_of, now_by,
};
use crate::WorkspaceError;
use toolhost_invoke::Clock;

/// An upload whose bytes are arriving; see the module docs. Made by
/// [`crate::Authoring::begin_upload`].
pub struct Arriving {
    store: Arc<dyn WorkspaceStore>,
    upload: ArrivingUpload,
    bounds: ArrivingBounds,
    clock: Clock,
    hasher: Hasher,
    /// The part being gathered: never more than a part's size.
    part: Vec<u8>,
    /// The next part's place.
    seq: u32,
    /// Bytes arrived so far.
    size: u64,
    /// Stored bytes (the parts before `part`).
    stored: u64,
    /// Finished or dropped: nothing left to clean up.
    settled: bool,
}

/// What bounds an arriving upload, and how long it is kept once finished.
pub(crate) struct ArrivingBounds {
    /// The kind's bound.
    pub limit: usize,
    /// What its principal may hold.
    pub quota: UploadQuota,
    /// How long the finished upload is kept, in milliseconds.
    pub ttl_ms: i64,
}

impl Arriving {
    pub(super) fn new(
        store: Arc<dyn WorkspaceStore>,
        upload: ArrivingUpload,
        bounds: ArrivingBounds,
        clock: Clock,
    ) -> Self {
        Arriving {
            store,
            upload,
            bounds,
            clock,
            hasher: Digest::hasher(),
            part: Vec::new(),
            seq: 0,
            size: 0,
            stored: 0,
            settled: false,
        }
    }

    /// Takes the next `frame` of the body. Over the kind's bound or the
    /// quota's bytes, or when the store fails, the upload is dropped
    /// (nothing of it stays) and the error answered.
    pub async fn push(&mut self, frame: &[u8]) -> Result<(), UploadError> {
        let pushed = self.gather(frame).await;
        if pushed.is_err() {
            self.drop_rows().await;
        }
        pushed
    }

    /// Stores what is left as the last part and finishes the upload with
    /// its size and digest: its handle may now be named. An empty upload,
    /// or one the store lost, is dropped and refused.
    pub async fn finish(mut self) -> Result<Upload, UploadError> {
        let finished = self.seal().await;
        match finished {
            Ok(upload) => {
                self.settled = true;
                Ok(upload)
            }
            Err(e) => {
                self.drop_rows().await;
                Err(e)
            }
        }
    }

    /// Drops the upload and every part stored so far: its body failed
    /// (cut off, too slow).
    pub async fn abort(mut self) {
        self.drop_rows().await;
    }

    async fn gather(&mut self, mut frame: &[u8]) -> Result<(), UploadError> {
        self.size = self.size.saturating_add(frame.len() as u64);
        if self.size > self.bounds.limit as u64 {
            return Err(UploadError::TooLarge {
                kind: self.upload.kind,
                size: self.size,
                limit: self.bounds.limit,
            });
        }
        self.hasher.update(frame);
        while !frame.is_empty() {
            let room = UPLOAD_PART_BYTES - self.part.len();
            let (now, rest) = frame.split_at(room.min(frame.len()));
            self.part.extend_from_slice(now);
            frame = rest;
            if self.part.len() == UPLOAD_PART_BYTES {
                self.store_part().await?;
            }
        }
        Ok(())
    }

    /// Stores the gathered part, if it holds anything, and empties it.
    async fn store_part(&mut self) -> Result<(), UploadError> {
        if self.part.is_empty() {
            return Ok(());
        }
        let now_ms = now_by(&self.clock);
        let part = UploadPart {
            handle: &self.upload.handle,
            seq: self.seq,
            bytes: &self.part,
            max_bytes: self.bounds.quota.bytes,
            now_ms,
            arriving_until_ms: now_ms.saturating_add(millis_of(ARRIVING_UPLOAD_TTL)),
        };
        match self.store.put_upload_part(part).await.map_err(store)? {
            PartKept::Kept => {
                self.stored += self.part.len() as u64;
                self.seq += 1;
                self.part.clear();
                Ok(())
            }
            PartKept::OverQuota => Err(self.over_quota(now_ms).await),
            PartKept::Gone => Err(store(WorkspaceStoreError::Failed(format!(
                "upload {} was purged while it arrived",
                self.upload.handle
            )))),
        }
    }

    /// The quota a part would have broken, with what the principal held
    /// besides this upload.
    async fn over_quota(&self, now_ms: i64) -> UploadError {
        let u = &self.upload;
        match self.store.held_uploads(&u.tenant, &u.owner, now_ms).await {
            Ok(held) => UploadError::Quota(QuotaExceeded::Bytes {
                limit: self.bounds.quota.bytes,
                held: held.bytes.saturating_sub(self.stored),
            }),
            Err(e) => store(e),
        }
    }

    async fn seal(&mut self) -> Result<Upload, UploadError> {
        if self.size == 0 {
            return Err(UploadError::Empty);
        }
        self.store_part().await?;
        let now = now_by(&self.clock);
        let u = &self.upload;
        let upload = Upload {
            handle: u.handle.clone(),
            tenant: u.tenant.clone(),
            owner: u.owner.clone(),
            kind: u.kind,
            size: self.size,
            sha256: std::mem::take(&mut self.hasher).finish().to_string(),
            created_at_ms: u.created_at_ms,
            expires_at_ms: now.saturating_add(self.bounds.ttl_ms),
        };
        if self.store.finish_upload(&upload).await.map_err(store)? {
            return Ok(upload);
        }
        Err(store(WorkspaceStoreError::Failed(format!(
            "upload {} was purged before it finished",
            upload.handle
        ))))
    }

    /// Drops the upload's rows now; a failure is logged (its short expiry
    /// purges it then).
    async fn drop_rows(&mut self) {
        self.settled = true;
        let u = &self.upload;
        if let Err(e) = self.store.drop_upload(&u.tenant, &u.handle).await {
            tracing::warn!(error = %e, handle = %u.handle, "an unfinished upload was not dropped");
        }
    }
}

impl Drop for Arriving {
    /// An upload let go of unfinished (its request was cancelled while
    /// the body arrived) drops its rows from a task of its own.
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (store, u) = (self.store.clone(), self.upload.clone());
        runtime.spawn(async move {
            if let Err(e) = store.drop_upload(&u.tenant, &u.handle).await {
                tracing::warn!(error = %e, handle = %u.handle, "an abandoned upload was not dropped");
            }
        });
    }
}

fn store(e: WorkspaceStoreError) -> UploadError {
    UploadError::Invoke(WorkspaceError::Store(e).into())
}
