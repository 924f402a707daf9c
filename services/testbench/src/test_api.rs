//! The test API under `/_test`, mounted only when [`crate::Config::test_api`]
//! is on (404 otherwise) and needing no token: e2e tests drive the backend
//! through it when they cannot hold a [`Handle`].

use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;

use crate::counters::Counters;
use crate::error::ApiError;
use crate::handle::Handle;
use crate::seed::Seed;

pub(crate) fn routes() -> Router<Handle> {
    Router::new()
        .route("/_test/counters", get(counters))
        .route("/_test/reset", post(reset))
        .route("/_test/seed", post(seed))
        .route("/_test/leak", post(leak))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Leak {
    on: bool,
}

async fn counters(State(h): State<Handle>) -> Json<Counters> {
    Json(h.counters())
}

async fn reset(State(h): State<Handle>) -> StatusCode {
    h.reset();
    StatusCode::NO_CONTENT
}

/// 400 naming the problem when the body is not a valid seed.
async fn seed(
    State(h): State<Handle>,
    body: Result<Json<Seed>, JsonRejection>,
) -> Result<StatusCode, ApiError> {
    let Json(seed) = body.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    h.load(seed)
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    Ok(StatusCode::NO_CONTENT)
}

async fn leak(
    State(h): State<Handle>,
    body: Result<Json<Leak>, JsonRejection>,
) -> Result<StatusCode, ApiError> {
    let Json(Leak { on }) = body.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    h.set_leak(on);
    Ok(StatusCode::NO_CONTENT)
}
