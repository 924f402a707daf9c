//! The bounded upload: bytes in, a server-issued handle out. It is the one
//! way a component, a manifest or a signature reaches a proposal, so no
//! path, URL or digest a caller writes ever stands for bytes.
//!
//! The HTTP edge (`POST /workspace/uploads`) admits an upload with
//! [`Authoring::begin_upload`](crate::Authoring::begin_upload) before it reads a byte of the body: the
//! authoring permission first, then the kind's bound against the declared
//! length, then the principal's [`UploadQuota`] (the count, and the bytes
//! held plus those declared). Only then does it feed the body, frame by
//! frame, to the [`Arriving`] upload, which hashes it as it comes and
//! stores it in parts of [`UPLOAD_PART_BYTES`], checking the kind's bound
//! and the quota's bytes again as they arrive; so an upload holds at most
//! one part and the frame being read in memory. An upload refused or
//! failed at any step leaves no row behind.

use toolhost_policy::{Use, decide};
use toolhost_types::{Principal, Risk};
use toolhost_workspace::{ArrivingUpload, QuotaExceeded, UploadHandle, UploadKind};

use super::AUTHORING_PERMISSION;
use super::arriving::{Arriving, ArrivingBounds};
use super::upload_bounds::{ARRIVING_UPLOAD_TTL, UploadError, millis_of, upload_limit};
use crate::Work;
use crate::WorkspaceError;
use toolhost_invoke::InvokeError;

impl crate::Authoring {
    /// Admits an upload of `kind` by `who`, whose body declares
    /// `declared` bytes (if it says), on `host`: `who` needs the authoring
    /// permission, the kind's bound must hold the declared length, and the
    /// principal's quota the upload and its declared bytes. Then the
    /// upload begins, arriving; nothing of the body has been read.
    pub async fn begin_upload(
        &self,
        host: toolhost_invoke::Host<'_>,
        who: &Principal,
        kind: UploadKind,
        declared: Option<u64>,
    ) -> Result<Arriving, UploadError> {
        self.on(host).begin_upload(who, kind, declared).await
    }
}

impl Work<'_> {
    async fn begin_upload(
        &self,
        who: &Principal,
        kind: UploadKind,
        declared: Option<u64>,
    ) -> Result<Arriving, UploadError> {
        let (upload, bounds, _) = self.admit_upload(who, kind, declared).await?;
        let store = self.workspace()?.store.clone();
        Ok(Arriving::new(store, upload, bounds, self.host.clock()))
    }

    /// Admits an upload of `kind` by `who` declaring `declared` bytes (see
    /// [`crate::Authoring::begin_upload`]) and writes its row, arriving:
    /// the upload, what bounds it, and when it expires unless a part
    /// comes.
    pub(crate) async fn admit_upload(
        &self,
        who: &Principal,
        kind: UploadKind,
        declared: Option<u64>,
    ) -> Result<(ArrivingUpload, ArrivingBounds, i64), UploadError> {
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
        let now = self.host.now_ms();
        let store = ws.store.clone();
        let held = store
            .held_uploads(&who.tenant, &who.subject, now)
            .await
            .map_err(WorkspaceError::Store)?;
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
            .map_err(WorkspaceError::Store)?;
        if !begun {
            // Another upload of theirs was admitted meanwhile.
            let held = store
                .held_uploads(&who.tenant, &who.subject, now)
                .await
                .map_err(WorkspaceError::Store)?;
            return Err(quota
                .admits_another(held, declared)
                .err()
                .unwrap_or(QuotaExceeded::Uploads {
                    limit: quota.uploads,
                })
                .into());
        }
        let bounds = ArrivingBounds {
            limit,
            quota,
            ttl_ms: millis_of(ws.upload_ttl),
        };
        Ok((upload, bounds, until))
    }

    /// Refuses `who` unless it holds the authoring permission.
    async fn may_upload(&self, who: &Principal) -> Result<(), InvokeError> {
        let grants = self.host.grants(who).await?;
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
