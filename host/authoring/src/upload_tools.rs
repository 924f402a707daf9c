//! Uploads over MCP: `begin_upload` and `upload_chunk`, host tools an
//! agent calls from any MCP client to put a draft's component, manifest
//! or signature in the workspace, where `POST /workspace/uploads` needs a
//! client that speaks HTTP beside MCP.
//!
//! Why tools, and not a resource write or a minted URL: MCP has no
//! resource write, and an upload URL works only for a client that can
//! make an HTTP request of its own (most agents' clients cannot), while
//! it would put a bearer capability in the conversation. Every client
//! calls tools, under the bearer check, the call path's permission, its
//! rate limits and its audit row; the bytes travel as base64 in bounded
//! chunks, each its own call.
//!
//! `begin_upload(kind, size)` admits the upload as the HTTP route does
//! before it reads a body (the permission, the kind's bound against
//! `size`, the principal's quota, and at the edge the principal's upload
//! rate, `rate_limit_uploads`, shared with the route) and answers its
//! handle. `upload_chunk(upload, offset, data, last?, sha256?)` appends at
//! most [`MAX_CHUNK_BYTES`] decoded at `offset`, the bytes the upload holds
//! so far: a chunk sent again or one that skips bytes is refused
//! `UPLOAD_OFFSET_MISMATCH` with the offset to send next, and changes
//! nothing. Each chunk is one part in the store, written with the quota's
//! bytes checked in the same transaction; nothing of an upload is held in
//! memory between calls, so its chunks may reach any replica. With
//! `last`, the host reads the parts back in order, hashes them and
//! finishes the upload; a `sha256` given that does not match drops it.
//! Only its owner may add to an upload; over the kind's bound or the
//! quota it is dropped, as on the HTTP route, and one left unfinished is
//! purged after its short expiry (each chunk moves it on).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use toolhost_invoke::{InvokeError, invalid};
use toolhost_types::{Digest, Principal};
use toolhost_workspace::{
    ArrivingState, ChunkKept, QuotaExceeded, Upload, UploadChunk, UploadHandle, UploadKind,
};

use crate::answer::{Answered, output};
use crate::upload_bounds::{
    ARRIVING_UPLOAD_TTL, MAX_CHUNK_BYTES, UploadError, millis_of, upload_limit,
};
use crate::{Work, WorkspaceError, text_arg};

/// The host tool that begins an upload over MCP: the edge counts its
/// calls against the principal's upload rate.
pub const BEGIN_UPLOAD_TOOL: &str = "begin_upload";

/// `begin_upload(kind, size)`: an upload admitted, arriving, and its handle.
pub(crate) async fn begin_upload(host: Work<'_>, who: &Principal, args: &Value) -> Answered {
    let kind: UploadKind = text_arg(args, "kind")?
        .parse()
        .map_err(|_| invalid("kind must be component, manifest or signature"))?;
    let size = args
        .get("size")
        .and_then(Value::as_u64)
        .filter(|s| *s >= 1)
        .ok_or_else(|| invalid("size (the upload's bytes in all, an integer ≥ 1) is required"))?;
    let (upload, _, until) = host.admit_upload(who, kind, Some(size)).await?;
    let structured = json!({
        "upload": upload.handle,
        "kind": kind,
        "size": size,
        "chunk_bytes": MAX_CHUNK_BYTES,
        "expires_at_ms": until,
    });
    let text = format!(
        "Upload {} begun: send its {size} bytes with upload_chunk, base64, at most {MAX_CHUNK_BYTES} bytes a chunk, from offset 0; mark the last.",
        upload.handle
    );
    Ok((output(structured, text), Vec::new()))
}

/// A chunk as the caller sent it, checked.
struct Chunk {
    handle: UploadHandle,
    offset: u64,
    bytes: Vec<u8>,
    last: bool,
    sha256: Option<String>,
}

impl Chunk {
    fn read(args: &Value) -> Result<Chunk, InvokeError> {
        let id = text_arg(args, "upload")?;
        let handle = UploadHandle::parse(id).ok_or_else(|| not_found(id))?;
        let offset = args.get("offset").and_then(Value::as_u64).ok_or_else(|| {
            invalid("offset (the bytes the upload holds so far, an integer ≥ 0) is required")
        })?;
        let bytes = STANDARD
            .decode(text_arg(args, "data")?)
            .map_err(|e| invalid(format!("data is not base64: {e}")))?;
        if bytes.len() > MAX_CHUNK_BYTES {
            return Err(invalid(format!(
                "data holds {} bytes decoded; a chunk holds at most {MAX_CHUNK_BYTES}",
                bytes.len()
            )));
        }
        let last = args.get("last").and_then(Value::as_bool).unwrap_or(false);
        if bytes.is_empty() && !last {
            return Err(invalid("data is empty: only the last chunk may be"));
        }
        let sha256 = match args.get("sha256") {
            None => None,
            Some(Value::String(d)) if last && is_sha256(d) => Some(d.clone()),
            Some(_) => {
                return Err(invalid(
                    "sha256 goes with the last chunk, as 64 lower-case hex digits",
                ));
            }
        };
        Ok(Chunk {
            handle,
            offset,
            bytes,
            last,
            sha256,
        })
    }
}

fn is_sha256(d: &str) -> bool {
    d.len() == 64 && d.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn not_found(id: &str) -> InvokeError {
    WorkspaceError::NotFound {
        what: "upload",
        id: id.to_owned(),
    }
    .into()
}

/// `upload_chunk(upload, offset, data, last?, sha256?)`: a chunk appended
/// to the caller's arriving upload; with `last`, the upload finished.
pub(crate) async fn upload_chunk(host: Work<'_>, who: &Principal, args: &Value) -> Answered {
    let chunk = Chunk::read(args)?;
    let store = host.workspace()?.store.clone();
    let now = host.host.now_ms();
    let handle = &chunk.handle;
    let state = store
        .arriving_upload(&who.tenant, &who.subject, handle, now)
        .await
        .map_err(WorkspaceError::Store)?
        .ok_or_else(|| not_found(handle.as_str()))?;
    let received = chunk.offset.saturating_add(chunk.bytes.len() as u64);
    let limit = upload_limit(state.upload.kind);
    if received > limit as u64 {
        host.drop_upload(who, handle).await;
        return Err(UploadError::TooLarge {
            kind: state.upload.kind,
            size: received,
            limit,
        }
        .into());
    }
    let until = now.saturating_add(millis_of(ARRIVING_UPLOAD_TTL));
    if chunk.bytes.is_empty() {
        if chunk.offset != state.size {
            return Err(UploadError::OffsetMismatch {
                received: state.size,
            }
            .into());
        }
    } else {
        host.append(who, &chunk, now, until).await?;
    }
    if !chunk.last {
        let structured = json!({"upload": handle, "received": received, "done": false,
            "expires_at_ms": until});
        let text = format!("Upload {handle} holds {received} bytes; send the next chunk there.");
        return Ok((output(structured, text), Vec::new()));
    }
    let upload = host
        .finish(who, &state, chunk.sha256.as_deref(), now)
        .await?;
    let structured = json!({"upload": upload.handle, "handle": upload.handle, "kind": upload.kind,
        "size": upload.size, "sha256": upload.sha256, "expires_at_ms": upload.expires_at_ms,
        "done": true});
    let text = format!(
        "Upload {} is finished: {} bytes, SHA-256 {}. Name it in a proposal.",
        upload.handle, upload.size, upload.sha256
    );
    Ok((output(structured, text), Vec::new()))
}

impl Work<'_> {
    /// Appends `chunk` to its upload, arriving until `until`.
    async fn append(
        &self,
        who: &Principal,
        chunk: &Chunk,
        now: i64,
        until: i64,
    ) -> Result<(), InvokeError> {
        let ws = self.workspace()?;
        let kept = ws
            .store
            .append_upload_chunk(UploadChunk {
                tenant: &who.tenant,
                owner: &who.subject,
                handle: &chunk.handle,
                offset: chunk.offset,
                bytes: &chunk.bytes,
                max_bytes: ws.upload_quota.bytes,
                now_ms: now,
                arriving_until_ms: until,
            })
            .await
            .map_err(WorkspaceError::Store)?;
        match kept {
            ChunkKept::Kept => Ok(()),
            ChunkKept::Moved { received } => Err(UploadError::OffsetMismatch { received }.into()),
            ChunkKept::Gone => Err(not_found(chunk.handle.as_str())),
            ChunkKept::OverQuota => {
                let held = ws
                    .store
                    .held_uploads(&who.tenant, &who.subject, now)
                    .await
                    .map_err(WorkspaceError::Store)?;
                self.drop_upload(who, &chunk.handle).await;
                Err(UploadError::Quota(QuotaExceeded::Bytes {
                    limit: ws.upload_quota.bytes,
                    held: held.bytes.saturating_sub(chunk.offset),
                })
                .into())
            }
        }
    }

    /// The arriving upload `state` finished: its parts read back in order
    /// and hashed; `expected` (the caller's digest), if given, must match.
    /// A mismatch, or an empty upload, drops it.
    async fn finish(
        &self,
        who: &Principal,
        state: &ArrivingState,
        expected: Option<&str>,
        now: i64,
    ) -> Result<Upload, InvokeError> {
        let ws = self.workspace()?;
        let u = &state.upload;
        let mut hasher = Digest::hasher();
        let mut size = 0u64;
        for seq in 0.. {
            let part = ws
                .store
                .upload_part(&who.tenant, &u.handle, seq)
                .await
                .map_err(WorkspaceError::Store)?;
            let Some(bytes) = part else { break };
            size += bytes.len() as u64;
            hasher.update(&bytes);
        }
        if size == 0 {
            self.drop_upload(who, &u.handle).await;
            return Err(UploadError::Empty.into());
        }
        let sha256 = hasher.finish().to_string();
        if let Some(expected) = expected.filter(|e| *e != sha256) {
            self.drop_upload(who, &u.handle).await;
            return Err(UploadError::DigestMismatch {
                expected: expected.to_owned(),
                actual: sha256,
            }
            .into());
        }
        let upload = Upload {
            handle: u.handle.clone(),
            tenant: u.tenant.clone(),
            owner: u.owner.clone(),
            kind: u.kind,
            size,
            sha256,
            created_at_ms: u.created_at_ms,
            expires_at_ms: now.saturating_add(millis_of(ws.upload_ttl)),
        };
        let finished = ws
            .store
            .finish_upload(&upload)
            .await
            .map_err(WorkspaceError::Store)?;
        match finished {
            true => Ok(upload),
            // Purged, or a chunk came beside the last meanwhile.
            false => Err(not_found(u.handle.as_str())),
        }
    }

    /// Drops `who`'s upload `handle` (refused: over a bound, or not the
    /// bytes said); a failure is logged (its short expiry purges it).
    async fn drop_upload(&self, who: &Principal, handle: &UploadHandle) {
        let Ok(ws) = self.workspace() else { return };
        if let Err(e) = ws.store.drop_upload(&who.tenant, handle).await {
            tracing::warn!(error = %e, %handle, "a refused upload was not dropped");
        }
    }
}
