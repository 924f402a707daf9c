//! The host's own gate in front of rmcp on `/mcp`: the request body is
//! bounded and must be JSON before any MCP machinery sees it, so an oversized
//! or malformed request gets the host's typed JSON-RPC error (not a generic
//! 413 or 415) and runs nothing. The pass that checks the JSON also reads
//! what the layers inside need of it ([`Peeked`]), so no other layer
//! parses the body before rmcp does.

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
    // malformed JSON from other JSON (rmcp answers that).
    let peeked = peek(&bytes);
    if peeked.is_none()
        && let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes)
    {
        return error(
            StatusCode::BAD_REQUEST,
            PARSE_ERROR,
            format!("Parse error: {e}"),
            None,
        );
    }
    let mut req = Request::from_parts(parts, Body::from(bytes));
    if let Some(peeked) = peeked {
        req.extensions_mut().insert(peeked);
    }
    next.run(req).await
}

/// What the guard reads of a JSON-RPC body while checking it, for the
/// layers inside it (in the request's extensions): the tools its
/// `tools/call` messages name (the rate limiter classifies by them), and a
/// single request's id (echoed in a refusal). Absent when the body is JSON
/// but not JSON-RPC that reads unambiguously.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Peeked {
    /// The tools named by the body's `tools/call` messages.
    pub tools: Vec<String>,
    /// The id of a single (not batched) message.
    pub id: Option<Value>,
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
}

/// Reads `body` (one message or a batch); `None` if it is not JSON-RPC.
fn peek(body: &[u8]) -> Option<Peeked> {
    let batch = body.trim_ascii_start().starts_with(b"[");
    let messages: Vec<Message> = if batch {
        serde_json::from_slice(body).ok()?
    } else {
        vec![serde_json::from_slice(body).ok()?]
    };
    let id = match &messages[..] {
        [one] if !batch => one.id.clone(),
        _ => None,
    };
    let tools = messages
        .into_iter()
        .filter(|m| m.method.as_deref() == Some("tools/call"))
        .filter_map(|m| m.params?.name)
        .collect();
    Some(Peeked { tools, id })
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

/// A JSON-RPC error response without an id (the request was not read as one).
fn error(
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
    fn peek_reads_called_tools_and_the_request_id() {
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"deploy","arguments":{"name":"x"}}}"#;
        assert_eq!(
            peek(call),
            Some(Peeked {
                tools: vec!["deploy".into()],
                id: Some(json!(7))
            })
        );
        let list =
            br#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"name":"deploy"}}"#;
        assert_eq!(peek(list).map(|p| p.tools), Some(vec![]));
        let batch =
            br#" [{"method":"tools/call","id":1,"params":{"name":"a"}},{"method":"ping","id":2}]"#;
        assert_eq!(
            peek(batch),
            Some(Peeked {
                tools: vec!["a".into()],
                id: None
            })
        );
        let twice = br#"{"method":"tools/call","params":{"name":"read","name":"deploy"}}"#;
        assert_eq!(peek(twice), None, "an ambiguous body is not read");
        assert_eq!(peek(b"{\"method\": 3}"), None);
    }
}
