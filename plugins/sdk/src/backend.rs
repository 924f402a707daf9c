//! HTTP to the plugin's declared backends, through the host's `backend` import.
//!
//! A plugin names a backend (a `[backends.<name>]` of its manifest) and a
//! path, never a host: the operator's configuration holds the base URL and
//! the credential, which the host adds together with the caller's tenant
//! (`X-Tenant`). The plugin never sees either.
//!
//! ```no_run
//! # use toolhost_sdk::prelude::*;
//! # #[derive(Deserialize)] struct Project { id: i64 }
//! # fn f() -> Result<(), ToolError> {
//! let projects: Vec<Project> = backend::get("testbench", "/api/projects")?.ok()?.json()?;
//! # Ok(()) }
//! ```
//!
//! Limits, all the host's: every request counts against the call's
//! host-call budget and time limit; while a `plan` or an entities snapshot
//! runs, and after a clarification, only GET and HEAD are allowed (others
//! fail with a "refused" [`ToolError::Failed`]); the host caps the answer's
//! size, drops credential, cookie, `Host`, `X-Tenant` and hop-by-hop request
//! headers, and `Set-Cookie` from answers.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::ToolError;
use crate::bindings::toolhost::plugin::backend as wit;
pub use crate::bindings::toolhost::plugin::backend::Method;

/// How many characters of an error answer's body a [`ToolError`] quotes:
/// enough for a backend's one-line reason, short of a page of HTML.
const EXCERPT_CHARS: usize = 200;

/// One request to a backend, built with [`Request::new`] and sent with
/// [`send`]; [`get`] and [`post_json`] cover the usual cases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    backend: String,
    method: Method,
    path: String,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
}

impl Request {
    /// `method` `path` on the manifest-declared `backend`. `path` starts
    /// with one `/` and may carry a query string; escape what callers
    /// passed with [`escape`]. The host refuses `//`, `..` segments and
    /// anything that would change the host.
    pub fn new(backend: impl Into<String>, method: Method, path: impl Into<String>) -> Self {
        Request {
            backend: backend.into(),
            method,
            path: path.into(),
            headers: Vec::new(),
            body: None,
        }
    }

    /// Adds a header. Credentials, cookies, `Host` and `X-Tenant` are the
    /// host's: it drops them.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Sets `value` as a JSON body with `Content-Type: application/json`.
    /// A value that does not serialize (a map with non-string keys) is
    /// [`ToolError::Failed`].
    pub fn json(self, value: &impl Serialize) -> Result<Self, ToolError> {
        let body = serde_json::to_vec(value)
            .map_err(|e| ToolError::Failed(format!("request body does not serialize: {e}")))?;
        Ok(self.header("content-type", "application/json").body(body))
    }

    /// `GET /path on backend NAME`: how errors name the request.
    fn origin(&self) -> String {
        format!(
            "{} {} on backend {}",
            method_name(self.method),
            self.path,
            self.backend
        )
    }
}

/// A backend's answer, whatever its status: check it with [`Response::ok`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// The answer's headers, as the host passed them on.
    pub headers: Vec<(String, String)>,
    /// The answer's body, at most the host's size limit.
    pub body: Vec<u8>,
    /// The request, for error messages.
    origin: String,
}

impl Response {
    /// An answer by hand, for unit tests of code that reads answers.
    pub fn new(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Response {
            status,
            headers: Vec::new(),
            body: body.into(),
            origin: "request".into(),
        }
    }

    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// This answer if its status is 2xx. Otherwise 404 is
    /// [`ToolError::NotFound`] and any other status [`ToolError::Failed`],
    /// each naming the request and the status and quoting the start of the
    /// body (the backend's reason), so the caller sees why.
    pub fn ok(self) -> Result<Self, ToolError> {
        if self.is_success() {
            return Ok(self);
        }
        let message = format!(
            "{} answered {}{}",
            self.origin,
            self.status,
            excerpt(&self.body)
        );
        Err(match self.status {
            404 => ToolError::NotFound(message),
            _ => ToolError::Failed(message),
        })
    }

    /// The body parsed as JSON into `T`; a body that does not fit is
    /// [`ToolError::Failed`] with serde's message (the backend broke its
    /// API, not the caller's arguments). Does not look at the status.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, ToolError> {
        serde_json::from_slice(&self.body).map_err(|e| {
            ToolError::Failed(format!(
                "{} answered JSON of an unexpected shape: {e}",
                self.origin
            ))
        })
    }

    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        (self.headers.iter())
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Sends `request`. Only the transport can fail here (see [`Method`] and
/// the module docs for what the host refuses): a 4xx or 5xx answer is an
/// `Ok` [`Response`] until [`Response::ok`] checks it.
///
/// Outside wasm (native unit tests) there is no host: every request fails.
pub fn send(request: Request) -> Result<Response, ToolError> {
    let origin = request.origin();
    let backend = request.backend.clone();
    let wit_request = wit::Request {
        backend: request.backend,
        method: request.method,
        path: request.path,
        headers: request.headers,
        body: request.body,
    };
    #[cfg(target_arch = "wasm32")]
    let answer: Result<wit::Response, wit::Error> = wit::send(&wit_request);
    #[cfg(not(target_arch = "wasm32"))]
    let answer: Result<wit::Response, wit::Error> = {
        drop(wit_request);
        Err(wit::Error::Unavailable(
            "backends are only reachable inside the toolhost".into(),
        ))
    };
    let r = answer.map_err(|e| transport_error(&backend, e))?;
    Ok(Response {
        status: r.status,
        headers: r.headers,
        body: r.body,
        origin,
    })
}

/// `GET path` on `backend`, asking for JSON.
pub fn get(backend: &str, path: &str) -> Result<Response, ToolError> {
    send(Request::new(backend, Method::Get, path).header("accept", "application/json"))
}

/// `POST path` on `backend` with `body` as JSON, asking for JSON. Refused
/// by the host while planning and after a clarification.
pub fn post_json(backend: &str, path: &str, body: &impl Serialize) -> Result<Response, ToolError> {
    send(
        Request::new(backend, Method::Post, path)
            .header("accept", "application/json")
            .json(body)?,
    )
}

/// Percent-encodes `text` for a path segment or a query value: every byte
/// but ASCII letters, digits and `-._~`.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn method_name(method: Method) -> &'static str {
    match method {
        Method::Get => "GET",
        Method::Head => "HEAD",
        Method::Post => "POST",
        Method::Put => "PUT",
        Method::Patch => "PATCH",
        Method::Delete => "DELETE",
    }
}

/// The WIT transport error as the text a caller can act on.
fn transport_error(backend: &str, e: wit::Error) -> ToolError {
    ToolError::Failed(match e {
        wit::Error::NotDeclared(name) => format!(
            "backend {name:?} is not declared in the plugin's manifest or not configured by the operator"
        ),
        wit::Error::Refused(why) => {
            format!("the host refused the request to backend {backend}: {why}")
        }
        wit::Error::Timeout => format!("backend {backend} did not answer in time"),
        wit::Error::TooLarge => format!("backend {backend} answered more than the host accepts"),
        wit::Error::Unavailable(why) => format!("backend {backend} is unavailable: {why}"),
    })
}

/// `": <start of body>"`, one line, or nothing for an empty body.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let words: Vec<&str> = text.split_whitespace().collect();
    let line = words.join(" ");
    if line.is_empty() {
        return String::new();
    }
    let mut cut: String = line.chars().take(EXCERPT_CHARS).collect();
    if cut.len() < line.len() {
        cut.push('…');
    }
    format!(": {cut}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_2xx_answer_passes_and_parses_as_json() {
        let r = Response::new(201, r#"{"id":7}"#).ok().expect("2xx");
        let v: serde_json::Value = r.json().expect("JSON");
        assert_eq!(v["id"], 7);
    }

    #[test]
    fn a_404_is_not_found_and_other_failures_are_failed_with_status_and_excerpt() {
        let err = Response::new(404, "no such\nexecution")
            .ok()
            .expect_err("404");
        assert_eq!(
            err,
            ToolError::NotFound("request answered 404: no such execution".into())
        );
        let err = Response::new(500, "").ok().expect_err("500");
        assert_eq!(err, ToolError::Failed("request answered 500".into()));
    }

    #[test]
    fn a_long_error_body_is_cut_to_a_short_excerpt() {
        let err = Response::new(502, "x".repeat(5000)).ok().expect_err("502");
        let ToolError::Failed(m) = err else {
            panic!("{err:?}")
        };
        assert!(m.len() < 300 && m.ends_with('…'), "{m}");
    }

    #[test]
    fn a_body_of_the_wrong_shape_is_failed_naming_the_request() {
        let err = Response::new(200, "[1]")
            .json::<std::collections::HashMap<String, i64>>()
            .expect_err("not a map");
        assert!(
            matches!(&err, ToolError::Failed(m) if m.starts_with("request answered JSON")),
            "{err:?}"
        );
    }

    #[test]
    fn escape_keeps_unreserved_characters_and_encodes_the_rest() {
        assert_eq!(escape("ex-1_a.b~"), "ex-1_a.b~");
        assert_eq!(escape("../a b,c/é"), "..%2Fa%20b%2Cc%2F%C3%A9");
    }

    #[test]
    fn transport_errors_say_which_backend_and_why() {
        let m = |e| transport_error("tb", e).to_string();
        assert_eq!(
            m(wit::Error::Timeout),
            "failed: backend tb did not answer in time"
        );
        assert!(m(wit::Error::NotDeclared("tb".into())).contains("not declared"));
        assert!(
            m(wit::Error::Refused("POST while planning".into())).contains("POST while planning")
        );
    }

    #[test]
    fn json_requests_carry_a_content_type_and_the_serialized_body() {
        let r = Request::new("tb", Method::Post, "/api/x")
            .json(&serde_json::json!({"a": 1}))
            .expect("serializes");
        assert_eq!(r.body.as_deref(), Some(&br#"{"a":1}"#[..]));
        assert!(
            r.headers
                .contains(&("content-type".into(), "application/json".into()))
        );
        assert_eq!(r.origin(), "POST /api/x on backend tb");
    }

    #[test]
    fn outside_wasm_sending_fails_instead_of_trapping() {
        let err = get("tb", "/x").expect_err("no host");
        assert!(
            matches!(&err, ToolError::Failed(m) if m.contains("unavailable")),
            "{err:?}"
        );
    }
}
