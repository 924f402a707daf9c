//! `POST /workspace/uploads`: the bounded upload through which bytes reach
//! an authoring proposal. Before a byte of the body is read: the caller's
//! bearer token, the principal's upload rate (`rate_limit_uploads` per
//! window, shared by every replica on the store; 429 with `Retry-After`),
//! the declared length against the largest kind's bound, then
//! [`Toolhost::begin_upload`]: the authoring permission (403), the kind's
//! bound (413 `LIMIT_EXCEEDED`) and the principal's quota
//! (`max_uploads_per_principal` uploads and `max_upload_bytes_per_principal`
//! bytes no proposal names; 413 `QUOTA_EXCEEDED`, its `data` naming the
//! quota and its limit). Only then is the body read, frame by frame, into
//! the store in parts of 1 MiB, hashed as it comes and checked against
//! the same bounds as it arrives; a refused or failed upload leaves no
//! row. The answer is a server-issued handle a proposal names. No path,
//! URL or digest a caller writes ever stands for bytes.
//!
//! A quota is answered 413, not 429: waiting does not help (an upload
//! stops counting only when a proposal names it or it expires a day
//! later), and a client must not retry it as a rate limit; the rate is the
//! 429.
//!
//! ```text
//! POST /workspace/uploads?kind=component|manifest|signature
//! Authorization: Bearer …
//! <the raw bytes>
//! → 201 {"handle": "upl_…", "kind", "size", "sha256", "expires_at_ms"}
//! → 4xx {"error": {"code", "message", "data"?}}        (nothing stored)
//! ```

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Extension, Json, Router};
use http_body_util::BodyExt;
use serde::Deserialize;
use serde_json::json;
use toolhost_auth::AuthServer;
use toolhost_authoring::{Arriving, Authoring, UploadError, upload_limit};
use toolhost_invoke::{InvokeError, Toolhost};
use toolhost_types::Principal;
use toolhost_workspace::{Upload, UploadKind};

use crate::rate_limit::RateLimiter;

/// Largest body the route reads: the largest kind's bound (a component).
fn max_upload() -> usize {
    UploadKind::ALL
        .iter()
        .map(|k| upload_limit(*k))
        .max()
        .unwrap_or(0)
}

/// The route, behind the bearer check.
pub fn routes(host: Arc<Toolhost>, authoring: Arc<Authoring>, auth: Arc<AuthServer>) -> Router {
    Router::new()
        .route("/workspace/uploads", post(upload))
        .with_state((host, authoring))
        .layer(axum::middleware::from_fn_with_state(
            crate::declared::Bound {
                limit: max_upload(),
                what: "an upload",
            },
            crate::declared::declared_within,
        ))
        .layer(axum::middleware::from_fn(upload_rate))
        .layer(axum::middleware::from_fn_with_state(
            auth,
            toolhost_auth::require_bearer,
        ))
}

/// Counts an upload against its principal's rate before its body is read
/// (with a [`RateLimiter`] in the request's extensions; without, all pass).
async fn upload_rate(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let found = req.extensions();
    let (Some(limiter), Some(who)) = (found.get::<RateLimiter>(), found.get::<Principal>()) else {
        return next.run(req).await;
    };
    let bucket = crate::rate_limit::upload_bucket(who);
    let max = limiter.limits().uploads;
    match limiter.admit(&bucket, max).await {
        Ok(()) => next.run(req).await,
        Err(retry_after) => {
            let mut refused = refuse(
                StatusCode::TOO_MANY_REQUESTS,
                "RATE_LIMITED",
                format!(
                    "at most {max} uploads per principal per window; retry after {retry_after}s"
                ),
            );
            refused
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, retry_after.into());
            refused
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UploadQuery {
    kind: String,
}

fn refuse(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let body = json!({"error": {"code": code, "message": message.into()}});
    (status, Json(body)).into_response()
}

async fn upload(
    State((host, authoring)): State<(Arc<Toolhost>, Arc<Authoring>)>,
    Extension(who): Extension<Principal>,
    query: Result<Query<UploadQuery>, axum::extract::rejection::QueryRejection>,
    request: axum::extract::Request,
) -> Response {
    let Ok(Ok(kind)) = query.map(|Query(q)| q.kind.parse::<UploadKind>()) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "INVALID_REQUEST",
            "kind must be component, manifest or signature (?kind=…)",
        );
    };
    let declared = declared_length(&request);
    if declared == Some(0) {
        return refused(UploadError::Empty);
    }
    // Permission, then the kind's bound and the quota: nothing is read yet.
    let arriving = match authoring
        .begin_upload(host.host(), &who, kind, declared)
        .await
    {
        Ok(a) => a,
        Err(e) => return refused(e),
    };
    match stream_body(request.into_body(), arriving).await {
        Ok(u) => {
            let answer = json!({"handle": u.handle, "kind": u.kind, "size": u.size,
                "sha256": u.sha256, "expires_at_ms": u.expires_at_ms});
            (StatusCode::CREATED, Json(answer)).into_response()
        }
        Err(refusal) => refusal,
    }
}

/// The body's declared `Content-Length`, if it has one.
fn declared_length(request: &axum::extract::Request) -> Option<u64> {
    request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

/// Hands `body` to `arriving` frame by frame (it bounds the bytes by the
/// kind and the quota), then finishes it; a body that fails (cut off,
/// late) drops the upload.
async fn stream_body(mut body: Body, mut arriving: Arriving) -> Result<Upload, Response> {
    while let Some(frame) = body.frame().await {
        let data = match frame {
            Ok(frame) => frame.into_data().ok(),
            Err(_) => {
                arriving.abort().await;
                return Err(refuse(
                    StatusCode::BAD_REQUEST,
                    "INVALID_REQUEST",
                    "the upload's body could not be read",
                ));
            }
        };
        if let Some(data) = data {
            arriving.push(&data).await.map_err(refused)?;
        }
    }
    arriving.finish().await.map_err(refused)
}

/// The answer to a refused upload (nothing of it was stored).
fn refused(e: UploadError) -> Response {
    match e {
        e @ UploadError::TooLarge { .. } => refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            "LIMIT_EXCEEDED",
            e.to_string(),
        ),
        UploadError::Quota(q) => {
            let body = json!({"error": {"code": "QUOTA_EXCEEDED", "message": q.to_string(),
                "data": {"quota": q.key(), "limit": q.limit()}}});
            (StatusCode::PAYLOAD_TOO_LARGE, Json(body)).into_response()
        }
        e @ UploadError::Empty => refuse(StatusCode::BAD_REQUEST, "INVALID_REQUEST", e.to_string()),
        // Only chunks over MCP are placed or digested by the caller.
        e @ (UploadError::OffsetMismatch { .. } | UploadError::DigestMismatch { .. }) => {
            refuse(StatusCode::BAD_REQUEST, e.code(), e.to_string())
        }
        UploadError::Invoke(e @ InvokeError::PermissionDenied { .. }) => refuse(
            StatusCode::FORBIDDEN,
            "PERMISSION_DENIED",
            format!(
                "{e} (uploads need {})",
                toolhost_authoring::AUTHORING_PERMISSION
            ),
        ),
        UploadError::Invoke(e) => {
            tracing::error!(error = ?e, "an upload failed internally");
            refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                "INTERNAL",
                "internal error",
            )
        }
    }
}
