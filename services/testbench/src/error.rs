//! The backend's HTTP errors: a status and a JSON body `{"error": "..."}`.
//!
//! A foreign row and a missing row get the same 404 and the same words, so
//! an answer never tells one tenant what another has.

use axum::Json;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Why a request was refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ApiError {
    /// No bearer token, or not the configured one.
    #[error("unauthorized")]
    Unauthorized,
    /// No usable `X-Tenant` header.
    #[error("missing or empty X-Tenant header")]
    MissingTenant,
    /// The thing named is missing, or belongs to another tenant.
    #[error("{0} not found")]
    NotFound(String),
    /// A malformed query or body.
    #[error("{0}")]
    BadRequest(String),
    /// The thing is not in a state the request applies to (a disposition
    /// for an execution that is not waiting for one).
    #[error("{0}")]
    Conflict(String),
    /// A well-formed body whose content is refused (a draft batch with a
    /// blank name, or replacing a test of another project).
    #[error("{0}")]
    Unprocessable(String),
}

impl ApiError {
    /// A 404 naming what was asked for, e.g. `project 7`.
    pub(crate) fn not_found(what: &str, id: impl std::fmt::Display) -> ApiError {
        ApiError::NotFound(format!("{what} {id}"))
    }

    fn status(&self) -> StatusCode {
        match self {
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::MissingTenant | ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Json(json!({ "error": self.to_string() }));
        match self {
            ApiError::Unauthorized => {
                (self.status(), [(header::WWW_AUTHENTICATE, "Bearer")], body).into_response()
            }
            _ => (self.status(), body).into_response(),
        }
    }
}
