//! `POST /workspace/uploads`: the bounded upload through which bytes reach
//! an authoring proposal. The caller's bearer token is checked first, the
//! principal's upload rate next (`rate_limit_uploads` per window, shared by
//! every replica on the store; 429 with `Retry-After`), then the declared
//! length (before a byte is read), then the kind's own bound; the answer is
//! a server-issued handle a proposal names. No path, URL or digest a caller
//! writes ever stands for bytes. The body is read once into memory and
//! handed on without a copy.
//!
//! ```text
//! POST /workspace/uploads?kind=component|manifest|signature
//! Authorization: Bearer …
//! <the raw bytes>
//! → 201 {"handle": "upl_…", "kind", "size", "sha256", "expires_at_ms"}
//! → 4xx {"error": {"code", "message"}}                 (nothing stored)
//! ```

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Extension, Json, Router};
use serde::Deserialize;
use serde_json::json;
use toolhost_auth::AuthServer;
use toolhost_invoke::{InvokeError, Toolhost, UploadError, upload_limit};
use toolhost_types::Principal;
use toolhost_workspace::UploadKind;

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
pub fn routes(host: Arc<Toolhost>, auth: Arc<AuthServer>) -> Router {
    Router::new()
        .route("/workspace/uploads", post(upload))
        .with_state(host)
        .layer(DefaultBodyLimit::max(max_upload()))
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
    let bucket = format!("upload:{}/{}", who.tenant, who.subject);
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
    State(host): State<Arc<Toolhost>>,
    Extension(who): Extension<Principal>,
    query: Result<Query<UploadQuery>, axum::extract::rejection::QueryRejection>,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let kind = match query.map(|Query(q)| q.kind.parse::<UploadKind>()) {
        Ok(Ok(kind)) => kind,
        _ => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "INVALID_REQUEST",
                "kind must be component, manifest or signature (?kind=…)",
            );
        }
    };
    let body = match body {
        Ok(b) => b,
        Err(e) => return refuse(e.status(), "LIMIT_EXCEEDED", e.body_text()),
    };
    match host.upload(&who, kind, Vec::from(body)).await {
        Ok(u) => {
            let answer = json!({"handle": u.handle, "kind": u.kind, "size": u.size,
                "sha256": u.sha256, "expires_at_ms": u.expires_at_ms});
            (StatusCode::CREATED, Json(answer)).into_response()
        }
        Err(e @ UploadError::TooLarge { .. }) => refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            "LIMIT_EXCEEDED",
            e.to_string(),
        ),
        Err(e @ UploadError::Empty) => {
            refuse(StatusCode::BAD_REQUEST, "INVALID_REQUEST", e.to_string())
        }
        Err(UploadError::Invoke(e @ InvokeError::PermissionDenied { .. })) => refuse(
            StatusCode::FORBIDDEN,
            "PERMISSION_DENIED",
            format!(
                "{e} (uploads need {})",
                toolhost_invoke::AUTHORING_PERMISSION
            ),
        ),
        Err(UploadError::Invoke(e)) => {
            tracing::error!(error = ?e, "an upload failed internally");
            refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                "INTERNAL",
                "internal error",
            )
        }
    }
}
