//! Bodies bounded before they are read: a route's middleware that refuses
//! a body declared over its bound with 413 before a byte of it is read (an
//! undeclared one is cut off at the bound while it is read: by the route's
//! `DefaultBodyLimit`, or, for a workspace upload, by the upload as its
//! bytes arrive). Used by the upload routes, behind the bearer check.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// What a route's bound is, and what its bodies are called in the refusal.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bound {
    /// The most bytes a body may declare.
    pub limit: usize,
    /// `a submission`, `an upload`.
    pub what: &'static str,
}

/// Refuses a request whose `Content-Length` is over `bound.limit`.
pub(crate) async fn declared_within(
    State(bound): State<Bound>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let declared = request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match declared {
        Some(n) if n > bound.limit as u64 => {
            let message = format!(
                "{} is at most {} bytes; this one declares {n}",
                bound.what, bound.limit
            );
            let body = json!({"error": {"code": "LIMIT_EXCEEDED", "message": message}});
            (StatusCode::PAYLOAD_TOO_LARGE, Json(body)).into_response()
        }
        _ => next.run(request).await,
    }
}
