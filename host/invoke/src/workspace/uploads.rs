//! The bounded upload: bytes in, a server-issued handle out. It is the one
//! way a component, a manifest or a signature reaches a proposal, so no
//! path, URL or digest a caller writes ever stands for bytes. The HTTP
//! edge (`POST /workspace/uploads`) calls [`Toolhost::upload`] with the
//! caller's principal and a body it has already bounded by these limits.

use std::time::Duration;

use toolhost_catalog::intake::{MAX_COMPONENT_BYTES, MAX_MANIFEST_BYTES};
use toolhost_policy::{Use, decide};
use toolhost_types::{Digest, Principal, Risk};
use toolhost_workspace::{NewUpload, Upload, UploadHandle, UploadKind};

use super::AUTHORING_PERMISSION;
use crate::{InvokeError, Toolhost};

/// How long an upload no proposal names is kept: long enough to sign and
/// propose, short enough that abandoned bytes do not pile up.
pub const DEFAULT_UPLOAD_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// Largest signature accepted: a DSSE envelope is a few KiB; a Sigstore
/// bundle with its certificate chain and log entry stays well under this.
pub const MAX_SIGNATURE_BYTES: usize = 256 * 1024;

/// Why an upload was refused. Nothing was stored.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// Over the kind's bound (the edge refuses before reading, by its
    /// declared length, and again here).
    #[error("a {kind} upload is at most {limit} bytes; this one is {size}")]
    TooLarge {
        /// What it was.
        kind: UploadKind,
        /// Its size.
        size: usize,
        /// The bound.
        limit: usize,
    },
    /// Empty.
    #[error("the upload is empty")]
    Empty,
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
    /// Keeps `bytes` as an upload of `kind` for `who`, who needs the
    /// authoring permission; answers its handle and the host's digest.
    pub async fn upload(
        &self,
        who: &Principal,
        kind: UploadKind,
        bytes: Vec<u8>,
    ) -> Result<Upload, UploadError> {
        let grants = self.grants(who).await?;
        let permission = AUTHORING_PERMISSION
            .parse()
            .expect("a valid permission literal");
        if !decide(who, &grants, &permission, Risk::Low, Use::Call).permits() {
            return Err(InvokeError::PermissionDenied {
                tool: "workspace uploads".into(),
            }
            .into());
        }
        let limit = upload_limit(kind);
        if bytes.is_empty() {
            return Err(UploadError::Empty);
        }
        if bytes.len() > limit {
            return Err(UploadError::TooLarge {
                kind,
                size: bytes.len(),
                limit,
            });
        }
        let ws = self.workspace()?;
        let now = self.gate_policy.now_ms();
        let ttl = i64::try_from(ws.upload_ttl.as_millis()).unwrap_or(i64::MAX);
        let upload = Upload {
            handle: UploadHandle::new(),
            tenant: who.tenant.clone(),
            owner: who.subject.clone(),
            kind,
            size: bytes.len() as u64,
            sha256: Digest::of(&bytes).to_string(),
            created_at_ms: now,
            expires_at_ms: now.saturating_add(ttl),
        };
        ws.store
            .put_upload(NewUpload {
                upload: upload.clone(),
                bytes,
            })
            .await
            .map_err(InvokeError::Workspace)?;
        Ok(upload)
    }
}
