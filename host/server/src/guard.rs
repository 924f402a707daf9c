//! The host's own gate in front of rmcp on `/mcp`: the request body is
//! bounded and must be one JSON-RPC message before any MCP machinery sees
//! it, so an oversized or malformed request gets the host's typed JSON-RPC
//! error (not a generic 413 or 415) and runs nothing. The pass that checks
//! the JSON also reads what the layers inside need of it ([`Peeked`]), so
//! no other layer parses the body before rmcp does.
//!
//! The names a message addresses are bounded here too, before dispatch:
//! a method, a tool or prompt name, a resource URI and a request id each
//! have a most bytes ([`NameBounds`]). A name past its bound cannot name
//! anything the catalog serves, and would otherwise be echoed in the
//! answer, written to the operator's log and kept in the audit trail; it
//! is refused with `LIMIT_EXCEEDED`, naming the bound, and echoes nothing
//! of the request. A batch (JSON-RPC arrays, which MCP no longer allows)
//! and JSON that is not a JSON-RPC message are `400` with JSON-RPC's
//! invalid-request error.

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::task::TaskTracker;

/// JSON-RPC code for a request refused by one of the host's limits. Our own
/// codes sit outside the range JSON-RPC reserves (−32768..−32000).
pub const LIMIT_EXCEEDED: i64 = -31001;
/// JSON-RPC's parse error.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's invalid-request error.
const INVALID_REQUEST: i64 = -32600;

/// The most bytes of each name a message may carry, checked before
/// dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameBounds;

impl NameBounds {
    /// A method: MCP's longest is under 40 bytes.
    pub const METHOD: usize = 128;
    /// A tool or prompt name (`params.name`, `params.ref.name`): the
    /// catalog's names are at most 64 bytes, and MCP allows 128.
    pub const NAME: usize = 128;
    /// A resource URI or template (`params.uri`, `params.ref.uri`): URLs
    /// past 2 KiB are refused by much of the web too.
    pub const URI: usize = 2048;
    /// A string request id, echoed in every answer to it.
    pub const ID: usize = 256;
}
/// Default bound on a request body: MCP requests are small JSON; 4 MiB
/// leaves room for large tool arguments while bounding memory per request.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 4 << 20;

/// The guard's state: the body bound, and the POSTs in flight (so shutdown
/// can wait for their answers before closing MCP sessions).
#[derive(Clone)]
pub struct Guard {
    max_request_bytes: usize,
    in_flight: TaskTracker,
}

impl Guard {
    /// A guard bounding bodies to `max_request_bytes`.
    pub fn new(max_request_bytes: usize) -> Self {
        Self {
            max_request_bytes,
            in_flight: TaskTracker::new(),
        }
    }

    /// Waits until every POST in flight has its response.
    pub async fn drain(&self) {
        self.in_flight.close();
        self.in_flight.wait().await;
    }
}

/// Counts a POST as in flight from the moment it arrives (before the bearer
/// check) until its response, so shutdown waits for it wherever it is.
pub async fn track_in_flight(State(guard): State<Guard>, req: Request, next: Next) -> Response {
    if req.method() != Method::POST {
        return next.run(req).await;
    }
    guard.in_flight.clone().track_future(next.run(req)).await
}

/// Bounds a POST body and checks it parses as JSON, then hands it on.
pub async fn mcp_guard(State(guard): State<Guard>, req: Request, next: Next) -> Response {
    if req.method() != Method::POST {
        return next.run(req).await;
    }
    checked(guard.max_request_bytes, req, next).await
}

async fn checked(max: usize, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return too_large(max);
    }
    let bytes: Bytes = match axum::body::to_bytes(body, max).await {
        Ok(b) => b,
        Err(_) => return too_large(max),
    };
    // One pass reads what the inner layers need and checks the JSON; only
    // a body that is not a JSON-RPC message is parsed again, to tell
    // malformed JSON from other JSON.
    let Some(peeked) = peek(&bytes) else {
        return not_a_message(&bytes);
    };
    if let Some((what, max)) = peeked.too_long {
        return name_too_long(what, max);
    }
    let mut req = Request::from_parts(parts, Body::from(bytes));
    req.extensions_mut().insert(peeked);
    next.run(req).await
}

/// What the guard reads of a JSON-RPC body while checking it, for the
/// layers inside it (in the request's extensions): the tool a `tools/call`
/// names (the rate limiter classifies by it), the message's method and its
/// id (echoed in a refusal).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Peeked {
    /// The tool named by a `tools/call` message.
    pub tools: Vec<String>,
    /// The message's id (none for a notification, a bound-breaking id or
    /// a non-scalar one).
    pub id: Option<Value>,
    /// The message's method (none for a response).
    pub method: Option<String>,
    /// The first name past its bound: which, and the bound.
    too_long: Option<(&'static str, usize)>,
}

/// One message, reading only what [`Peeked`] needs (arguments are skipped).
#[derive(Deserialize)]
struct Message {
    id: Option<Value>,
    method: Option<String>,
    params: Option<Params>,
}

#[derive(Deserialize)]
struct Params {
    name: Option<String>,
    uri: Option<String>,
    #[serde(rename = "ref")]
    reference: Option<Reference>,
}

/// A completion's reference: a prompt by name or a resource template by URI.
#[derive(Deserialize)]
struct Reference {
    name: Option<String>,
    uri: Option<String>,
}

/// Reads `body` as one JSON-RPC message; `None` if it is not one (a batch
/// included).
fn peek(body: &[u8]) -> Option<Peeked> {
    if !body.trim_ascii_start().starts_with(b"{") {
        return None;
    }
    let message: Message = serde_json::from_slice(body).ok()?;
    let (name, uri, ref_name, ref_uri) = match &message.params {
        Some(p) => (
            p.name.as_deref(),
            p.uri.as_deref(),
            p.reference.as_ref().and_then(|r| r.name.as_deref()),
            p.reference.as_ref().and_then(|r| r.uri.as_deref()),
        ),
        None => (None, None, None, None),
    };
    let id_bytes = match &message.id {
        Some(Value::String(s)) => s.len(),
        Some(Value::Number(_) | Value::Null) | None => 0,
        // JSON-RPC ids are strings, numbers or null.
        Some(_) => usize::MAX,
    };
    let too_long = [
        (
            "method",
            message.method.as_deref().map_or(0, str::len),
            NameBounds::METHOD,
        ),
        ("name", name.map_or(0, str::len), NameBounds::NAME),
        ("uri", uri.map_or(0, str::len), NameBounds::URI),
        ("ref.name", ref_name.map_or(0, str::len), NameBounds::NAME),
        ("ref.uri", ref_uri.map_or(0, str::len), NameBounds::URI),
        ("id", id_bytes, NameBounds::ID),
    ]
    .into_iter()
    .find(|&(_, len, max)| len > max)
    .map(|(what, _, max)| (what, max));
    let tools = match (message.method.as_deref(), name) {
        (Some("tools/call"), Some(name)) if too_long.is_none() => vec![name.to_owned()],
        _ => Vec::new(),
    };
    let id = message.id.filter(|_| id_bytes <= NameBounds::ID);
    Some(Peeked {
        tools,
        id,
        method: message.method,
        too_long,
    })
}

/// The answer to a body that is not one JSON-RPC message: a parse error
/// for malformed JSON, else an invalid request (a batch says so).
fn not_a_message(bytes: &[u8]) -> Response {
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
        return error(
            StatusCode::BAD_REQUEST,
            PARSE_ERROR,
            format!("Parse error: {e}"),
            None,
        );
    }
    let message = if bytes.trim_ascii_start().starts_with(b"[") {
        "Invalid Request: JSON-RPC batches are not supported; send one message per request"
    } else {
        "Invalid Request: the body is not a JSON-RPC message"
    };
    error(
        StatusCode::BAD_REQUEST,
        INVALID_REQUEST,
        message.to_owned(),
        None,
    )
}

/// The answer to a message carrying a name past its bound: which field and
/// the bound, nothing of the name itself.
fn name_too_long(what: &str, max: usize) -> Response {
    let data = json!({"code": "LIMIT_EXCEEDED", "limit": format!("{what}_bytes"), "value": max});
    let message = format!("LIMIT_EXCEEDED: the request's {what} is longer than {max} bytes");
    error(StatusCode::BAD_REQUEST, LIMIT_EXCEEDED, message, Some(data))
}

fn too_large(max: usize) -> Response {
    let data = json!({"code": "LIMIT_EXCEEDED", "limit": "request_bytes", "value": max});
    let message = format!("LIMIT_EXCEEDED: the request body exceeds {max} bytes");
    error(
        StatusCode::PAYLOAD_TOO_LARGE,
        LIMIT_EXCEEDED,
        message,
        Some(data),
    )
}

/// A JSON-RPC error response without an id (the request was not read as
/// one, or has none: a GET).
pub(crate) fn error(
    status: StatusCode,
    code: i64,
    message: String,
    data: Option<serde_json::Value>,
) -> Response {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    let body = json!({"jsonrpc": "2.0", "id": null, "error": error});
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peek_reads_the_called_tool_the_method_and_the_request_id() {
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"deploy","arguments":{"name":"x"}}}"#;
        let peeked = peek(call).expect("a message");
        assert_eq!(peeked.tools, vec!["deploy".to_owned()]);
        assert_eq!(peeked.id, Some(json!(7)));
        assert_eq!(peeked.method.as_deref(), Some("tools/call"));
        let list =
            br#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"name":"deploy"}}"#;
        assert_eq!(peek(list).map(|p| p.tools), Some(vec![]));
        let answer = br#"{"jsonrpc":"2.0","id":0,"result":{"action":"accept"}}"#;
        assert_eq!(peek(answer).map(|p| p.id), Some(Some(json!(0))));
    }

    #[test]
    fn batches_ambiguous_bodies_and_other_json_are_not_one_message() {
        let batch =
            br#" [{"method":"tools/call","id":1,"params":{"name":"a"}},{"method":"ping","id":2}]"#;
        assert_eq!(peek(batch), None);
        let twice = br#"{"method":"tools/call","params":{"name":"read","name":"deploy"}}"#;
        assert_eq!(peek(twice), None, "an ambiguous body is not read");
        assert_eq!(peek(b"{\"method\": 3}"), None);
        assert_eq!(peek(b"\"tools/call\""), None);
    }

    #[test]
    fn each_name_past_its_bound_is_found_and_the_name_is_not_kept() {
        let long = |n: usize| "x".repeat(n);
        let cases = [
            (
                json!({"method": long(129), "id": 1}),
                "method",
                NameBounds::METHOD,
            ),
            (
                json!({"method": "tools/call", "id": 1, "params": {"name": long(129)}}),
                "name",
                NameBounds::NAME,
            ),
            (
                json!({"method": "prompts/get", "id": 1, "params": {"name": long(129)}}),
                "name",
                NameBounds::NAME,
            ),
            (
                json!({"method": "resources/read", "id": 1, "params": {"uri": long(2049)}}),
                "uri",
                NameBounds::URI,
            ),
            (
                json!({"method": "completion/complete", "id": 1, "params": {"ref": {"type": "ref/prompt", "name": long(129)}}}),
                "ref.name",
                NameBounds::NAME,
            ),
            (
                json!({"method": "ping", "id": long(257)}),
                "id",
                NameBounds::ID,
            ),
        ];
        for (message, what, max) in cases {
            let peeked = peek(message.to_string().as_bytes()).expect("a message");
            assert_eq!(peeked.too_long, Some((what, max)), "{what}");
            assert!(peeked.tools.is_empty(), "{what}: no long name is handed on");
            assert!(
                peeked
                    .id
                    .as_ref()
                    .is_none_or(|id| id.to_string().len() <= NameBounds::ID + 2),
                "{what}: no long id is echoed"
            );
        }
        let at_bounds =
            json!({"method": "tools/call", "id": long(256), "params": {"name": long(128)}});
        assert_eq!(
            peek(at_bounds.to_string().as_bytes())
                .expect("a message")
                .too_long,
            None
        );
    }
}
