//! What bounds an upload, shared by its admission (`uploads.rs`) and its
//! arrival (`arriving.rs`): each kind's size, a part's size, how long an
//! upload is kept, and why one is refused.

use std::time::Duration;

use toolhost_catalog::intake::{MAX_COMPONENT_BYTES, MAX_MANIFEST_BYTES};
use toolhost_workspace::{QuotaExceeded, UploadKind};

use serde_json::json;
use toolhost_invoke::{InvokeError, Refusal, millis};

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

/// The most bytes one chunk of an upload over MCP (`upload_chunk`)
/// carries, decoded: its base64 (some 683 KiB) stays under a call's
/// string bound (`max_string_bytes`, 1 MiB by default) and its arguments'
/// bound (2 MiB), and a 32 MiB component is 64 calls.
pub const MAX_CHUNK_BYTES: usize = 512 * 1024;

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
    /// The upload holds no bytes.
    #[error("the upload is empty")]
    Empty,
    /// Over the principal's quota, before its body was read or as it
    /// arrived.
    #[error(transparent)]
    Quota(#[from] QuotaExceeded),
    /// A chunk over MCP that is not where the upload is: it holds
    /// `received` bytes, and the next chunk goes there (a chunk sent
    /// twice, or one skipped). Nothing of the chunk was stored; the upload
    /// goes on.
    #[error("the upload holds {received} bytes: send the chunk at offset {received}")]
    OffsetMismatch {
        /// The bytes the upload holds.
        received: u64,
    },
    /// The bytes that arrived are not the ones the caller said it sent
    /// (`sha256` on the last chunk): the upload was dropped.
    #[error(
        "the upload's bytes have SHA-256 {actual}, not the {expected} given: it was dropped; upload it again"
    )]
    DigestMismatch {
        /// What the caller gave.
        expected: String,
        /// What the host computed.
        actual: String,
    },
    /// Anything the call path refuses (permission, store).
    #[error(transparent)]
    Invoke(#[from] InvokeError),
}

impl UploadError {
    /// The stable code a caller sees (over MCP; the HTTP route answers
    /// the same codes with its statuses).
    pub fn code(&self) -> &'static str {
        match self {
            UploadError::TooLarge { .. } => "LIMIT_EXCEEDED",
            UploadError::Empty => "INVALID_ARGUMENTS",
            UploadError::Quota(_) => "QUOTA_EXCEEDED",
            UploadError::OffsetMismatch { .. } => "UPLOAD_OFFSET_MISMATCH",
            UploadError::DigestMismatch { .. } => "UPLOAD_DIGEST_MISMATCH",
            UploadError::Invoke(e) => e.code(),
        }
    }
}

impl From<UploadError> for InvokeError {
    fn from(e: UploadError) -> Self {
        if let UploadError::Invoke(inner) = e {
            return inner;
        }
        let details = match &e {
            UploadError::TooLarge { kind, limit, .. } => json!({"kind": kind, "limit": limit}),
            UploadError::Quota(q) => json!({"quota": q.key(), "limit": q.limit()}),
            UploadError::OffsetMismatch { received } => json!({"received": received}),
            UploadError::DigestMismatch { expected, actual } => {
                json!({"expected_sha256": expected, "sha256": actual})
            }
            UploadError::Empty | UploadError::Invoke(_) => {
                return Refusal::new(e.code(), e.to_string()).into();
            }
        };
        Refusal::new(e.code(), e.to_string())
            .with_details(details)
            .into()
    }
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
