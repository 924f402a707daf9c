//! The bounded upload: bytes in, a server-issued handle out. It is the one
//! way a component, a manifest or a signature reaches a proposal, so no
//! path, URL or digest a caller writes ever stands for bytes.
//!
//! The HTTP edge (`POST /workspace/uploads`) admits an upload with
//! [`Toolhost::begin_upload`] before it reads a byte of the body: the
//! authoring permission first, then the kind's bound against the declared
//! length, then the principal's [`UploadQuota`] (the count, and the bytes
//! held plus those declared). Only then does it feed the body, frame by
//! frame, to the [`Arriving`] upload, which hashes it as it comes and
//! stores it in parts of [`UPLOAD_PART_BYTES`], checking the kind's bound
//! and the quota's bytes again as they arrive; so an upload holds at most
//! one part and the frame being read in memory. An upload refused or
//! failed at any step leaves no row behind.

use std::time::Duration;

use toolhost_catalog::intake::{MAX_COMPONENT_BYTES, MAX_MANIFEST_BYTES};
use toolhost_policy::{Use, decide};
use toolhost_types::{Principal, Risk};
use toolhost_workspace::{ArrivingUpload, QuotaExceeded, UploadHandle, UploadKind};

use super::AUTHORING_PERMISSION;
use super::arriving::Arriving;
use crate::{InvokeError, Toolhost, millis};

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

/// The most bytes an upload of `kind` may hold.
pub fn upload_limit(kind: UploadKind) -> usize {
    match kind {
        UploadKind::Component => MAX_COMPONENT_BYTES,
        UploadKind::Manifest => MAX_MANIFEST_BYTES,
        UploadKind::Signature => MAX_SIGNATURE_BYTES,
    }
}

impl Toolhost {
    /// Admits an upload of `kind` by `who`, whose body declares
    /// `declared` bytes (if it says): `who` needs the authoring
    /// permission, the kind's bound must hold the declared length, and the
    /// principal's quota the upload and its declared bytes. Then the
    /// upload begins, arriving; nothing of the body has been read.
    pub async fn begin_upload(
        &self,
        who: &Principal,
        kind: UploadKind,
        declared: Option<u64>,
    ) -> Result<Arriving, UploadError> {
        self.may_upload(who).await?;
        let limit = upload_limit(kind);
        let declared = declared.unwrap_or(0);
        if declared > limit as u64 {
            return Err(UploadError::TooLarge {
                kind,
                size: declared,
                limit,
            });
        }
        let ws = self.workspace()?;
        let quota = ws.upload_quota;
        let now = self.gate_policy.now_ms();
        let store = ws.store.clone();
        let held = store
            .held_uploads(&who.tenant, &who.subject, now)
            .await
            .map_err(InvokeError::Workspace)?;
        quota.admits_another(held, declared)?;
        let upload = ArrivingUpload {
            handle: UploadHandle::new(),
            tenant: who.tenant.clone(),
            owner: who.subject.clone(),
            kind,
            created_at_ms: now,
        };
        let until = now.saturating_add(millis_of(ARRIVING_UPLOAD_TTL));
        let begun = store
            .begin_upload(&upload, declared, quota, until)
            .await
            .map_err(InvokeError::Workspace)?;
        if !begun {
            // Another upload of theirs was admitted meanwhile.
            let held = store
                .held_uploads(&who.tenant, &who.subject, now)
                .await
                .map_err(InvokeError::Workspace)?;
            return Err(quota
                .admits_another(held, declared)
                .err()
                .unwrap_or(QuotaExceeded::Uploads {
                    limit: quota.uploads,
                })
                .into());
        }
        Ok(Arriving::new(
            store,
            upload,
            limit,
            quota,
            millis_of(ws.upload_ttl),
            self.gate_policy.clock.clone(),
        ))
    }

    /// Refuses `who` unless it holds the authoring permission.
    async fn may_upload(&self, who: &Principal) -> Result<(), InvokeError> {
        let grants = self.grants(who).await?;
        let permission = AUTHORING_PERMISSION
            .parse()
            .expect("a valid permission literal");
        if decide(who, &grants, &permission, Risk::Low, Use::Call).permits() {
            return Ok(());
        }
        Err(InvokeError::PermissionDenied {
            tool: "workspace uploads".into(),
        })
    }
}

/// `d` in milliseconds, saturating.
pub(super) fn millis_of(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Now by `clock`, in unix milliseconds.
pub(super) fn now_by(clock: &crate::Clock) -> i64 {
    millis(clock())
}
