//! What bounds an upload, shared by its admission (`uploads.rs`) and its
//! arrival (`arriving.rs`): each kind's size, a part's size, how long an
//! upload is kept, and why one is refused.

use std::time::Duration;

use toolhost_catalog::intake::{MAX_COMPONENT_BYTES, MAX_MANIFEST_BYTES};
use toolhost_workspace::{QuotaExceeded, UploadKind};

use toolhost_invoke::{InvokeError, millis};

/// How long an upload no proposal names is kept: long enough to sign and
/// propose, short enough that abandoned bytes do not pile up.
pub const DEFAULT_UPLOAD_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// How long an arriving upload is kept after its last part was stored,
/// should no more come (the host that took it crashed): far longer than a
/// body may take to arrive (`body_read_timeout`, 30 s by default), short
/// enough that a crash's leftovers soon stop counting against the quota.
/// Each stored part moves it on, so a slow body is not cut by it.
pub const ARRIVING_UPLOAD_TTL: Duration = Duration::from_secs(5 * 60);

/// The most bytes of an upload stored as one part, and so held in memory
/// while it arrives (besides the frame being read): large enough that a
/// 32 MiB component is 32 rows, small enough that many uploads at once
/// hold little.
pub const UPLOAD_PART_BYTES: usize = 1024 * 1024;

/// Largest signature accepted: a DSSE envelope is a few KiB; a Sigstore
/// bundle with its certificate chain and log entry stays well under this.
pub const MAX_SIGNATURE_BYTES: usize = 256 * 1024;

/// Why an upload was refused. Nothing of it is stored.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// Over the kind's bound: by its declared length before a byte is
    /// read, or by the bytes arrived so far.
    #[error("a {kind} upload is at most {limit} bytes; this one is {size} or more")]
    TooLarge {
        /// What it was.
        kind: UploadKind,
        /// Its declared size, or the bytes arrived when it went over.
        size: u64,
        /// The bound.
        limit: usize,
    },
    /// Empty.
    #[error("the upload is empty")]
    Empty,
    /// Over the principal's quota, before its body was read or as it
    /// arrived.
    #[error(transparent)]
    Quota(#[from] QuotaExceeded),
    /// Anything the call path refuses (permission, store).
    #[error(transparent)]
    Invoke(#[from] InvokeError),
}

impl From<super::WorkspaceError> for UploadError {
    fn from(e: super::WorkspaceError) -> Self {
        UploadError::Invoke(e.into())
    }
}

/// The most bytes an upload of `kind` may hold.
pub fn upload_limit(kind: UploadKind) -> usize {
    match kind {
        UploadKind::Component => MAX_COMPONENT_BYTES,
        UploadKind::Manifest => MAX_MANIFEST_BYTES,
        UploadKind::Signature => MAX_SIGNATURE_BYTES,
    }
}

/// `d` in milliseconds, saturating.
pub(super) fn millis_of(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Now by `clock`, in unix milliseconds.
pub(super) fn now_by(clock: &toolhost_invoke::Clock) -> i64 {
    millis(clock())
}
