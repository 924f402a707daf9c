//! OAuth error responses (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 7009): a JSON
//! body with `error` and `error_description`, never cached.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An error the token, registration or revocation endpoint answers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthError {
    /// HTTP status.
    pub status: StatusCode,
    /// The RFC's error code (`invalid_grant`, `invalid_client`, …).
    pub code: &'static str,
    /// A precise human description (never a secret).
    pub description: String,
    /// Seconds to wait, for 429.
    pub retry_after: Option<u64>,
}

impl OAuthError {
    fn new(status: StatusCode, code: &'static str, description: impl Into<String>) -> Self {
        OAuthError {
            status,
            code,
            description: description.into(),
            retry_after: None,
        }
    }

    /// `invalid_request` (400): a parameter is missing, repeated or malformed.
    pub fn invalid_request(d: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", d)
    }
    /// `invalid_client` (401): client authentication failed.
    pub fn invalid_client(d: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "invalid_client", d)
    }
    /// `invalid_grant` (400): the code or refresh token is not valid.
    pub fn invalid_grant(d: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_grant", d)
    }
    /// `unauthorized_client` (400): this client may not use this grant.
    pub fn unauthorized_client(d: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "unauthorized_client", d)
    }
    /// `unsupported_grant_type` (400).
    pub fn unsupported_grant_type(d: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "unsupported_grant_type", d)
    }
    /// `invalid_scope` (400): more than was granted or allowed.
    pub fn invalid_scope(d: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_scope", d)
    }
    /// `invalid_target` (400, RFC 8707): a resource we do not serve.
    pub fn invalid_target(d: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_target", d)
    }
    /// `invalid_dpop_proof` (400, RFC 9449 §5): the `DPoP` header is
    /// missing where required, malformed, replayed, or by the wrong key.
    pub fn invalid_dpop_proof(d: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_dpop_proof", d)
    }
    /// `invalid_client_metadata` / `invalid_redirect_uri` (400, RFC 7591).
    pub fn registration(code: &'static str, d: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, d)
    }
    /// `slow_down`-style 429 with `Retry-After`.
    pub fn rate_limited(d: impl Into<String>, retry_after: u64) -> Self {
        let mut e = Self::new(StatusCode::TOO_MANY_REQUESTS, "rate_limited", d);
        e.retry_after = Some(retry_after.max(1));
        e
    }
    /// `server_error` (500): the store failed; details go to the log only.
    pub fn server_error() -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "the authorization server failed; try again",
        )
    }
}

impl<E: std::fmt::Display> From<&E> for OAuthError {
    fn from(e: &E) -> Self {
        tracing::error!(error = %log_detail(e), "authorization server error");
        OAuthError::server_error()
    }
}

/// Longest error text the authorization server writes to the operator's
/// log, in characters: a driver's message with its SQL and a cause chain
/// fit in 1000; an error carrying a hostile value (a client id, a URL, a
/// document) cannot make one line grow without bound.
pub(crate) const LOG_DETAIL_CHARS: usize = 1000;

/// An error's text for the operator's log, cut to [`LOG_DETAIL_CHARS`].
/// Pages and JSON errors never carry it: they say only that the server
/// failed.
pub(crate) fn log_detail(e: &(impl std::fmt::Display + ?Sized)) -> String {
    let text = e.to_string();
    match text.char_indices().nth(LOG_DETAIL_CHARS) {
        Some((end, _)) => format!("{}… ({} bytes in all)", &text[..end], text.len()),
        None => text,
    }
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        let body = json!({ "error": self.code, "error_description": self.description });
        let mut response = (self.status, Json(body)).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
        if let Some(secs) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"toolhost\""),
            );
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::{LOG_DETAIL_CHARS, log_detail};

    #[test]
    fn a_logged_error_is_cut_to_its_bound_and_says_how_long_it_was() {
        assert_eq!(log_detail(&"short"), "short");
        let long = "é".repeat(LOG_DETAIL_CHARS * 3);
        let logged = log_detail(&long);
        assert!(logged.chars().count() < LOG_DETAIL_CHARS + 40, "{logged}");
        assert!(logged.ends_with(&format!("({} bytes in all)", long.len())));
    }
}
