//! What a plugin sends and what it gets back: the WIT `request` and
//! `response` records, as Rust values.

use crate::Method;

/// A plugin's request: a backend name and a path, never a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// A backend name the plugin's manifest declares.
    pub backend: String,
    /// The method; side-effecting ones are refused while
    /// [`crate::Access::safe_only`] is set.
    pub method: Method,
    /// Starts with exactly one `/`, appended to the backend's base URL; an
    /// optional `?query` follows. At most [`crate::MAX_PATH`] bytes; no `.`
    /// or `..` segments (plain or percent-encoded), no `\`, `@`, `://`,
    /// `#`, whitespace or control characters.
    pub path: String,
    /// Extra headers. Credentials, cookies, `Host`, `X-Tenant`,
    /// `Forwarded`/`X-Forwarded-*` and hop-by-hop headers are dropped; at
    /// most [`crate::MAX_HEADERS`] headers and [`crate::MAX_HEADER_BYTES`]
    /// bytes of names and values.
    pub headers: Vec<(String, String)>,
    /// At most [`crate::MAX_REQUEST_BODY`] bytes.
    pub body: Option<Vec<u8>>,
}

/// The backend's answer as the plugin sees it.
///
/// A 3xx is returned as is (redirects are never followed). `Set-Cookie` is
/// dropped, and the backend's credential is replaced by `[redacted]`
/// wherever it appears in a header or the body; if that changed the body's
/// length, `Content-Length` is rewritten to match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status code.
    pub status: u16,
    /// Header names in lower case, in the order received; a value that is
    /// not UTF-8 is converted lossily.
    pub headers: Vec<(String, String)>,
    /// At most the backend's `max_response` bytes (before redaction).
    pub body: Vec<u8>,
}
