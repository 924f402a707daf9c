//! The task ids of a 2026-07-28 `subscriptions/listen` request, which
//! rmcp's filter type does not carry yet (SEP-2663's
//! `notifications.taskIds`).
//!
//! A listen request that declared the Tasks extension and named tasks has
//! them read here ([`toolhost_mcp::accepted_task_ids`]) and handed to the
//! handler in the request's extensions ([`ListenTasks`]), which tells the
//! stream of them; its acknowledgement is given the accepted ids, so the
//! client knows which it will be told of. Everything else passes through
//! untouched.

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http_body_util::BodyExt;
use serde_json::Value;
use toolhost_mcp::{ListenTasks, accepted_task_ids};

use crate::guard::Peeked;

const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// `/mcp`'s listen layer, inside the guard (the body is bounded and is one
/// JSON-RPC message by then).
pub async fn tasks(req: Request, next: Next) -> Response {
    let listens = req
        .extensions()
        .get::<Peeked>()
        .is_some_and(|p| p.method.as_deref() == Some("subscriptions/listen"));
    if !listens {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    // The guard read the body into memory already: collecting it again
    // copies nothing and cannot fail.
    let bytes = body
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    let accepted = named_tasks(&bytes);
    let mut req = Request::from_parts(parts, Body::from(bytes));
    if accepted.is_empty() {
        return next.run(req).await;
    }
    req.extensions_mut().insert(ListenTasks(accepted.clone()));
    let answer = next.run(req).await;
    if !crate::mcp_replay::is_event_stream(&answer) {
        return answer;
    }
    let (parts, body) = answer.into_parts();
    let mut acknowledged = false;
    let body = body.map_frame(move |frame| {
        if acknowledged {
            return frame;
        }
        match frame.into_data() {
            Ok(data) => match with_task_ids(&data, &accepted) {
                Some(rewritten) => {
                    acknowledged = true;
                    hyper::body::Frame::data(rewritten)
                }
                None => hyper::body::Frame::data(data),
            },
            Err(frame) => frame,
        }
    });
    Response::from_parts(parts, Body::new(body))
}

/// The task ids a listen request's filter names that its stream accepts:
/// none unless the request declared the Tasks extension.
fn named_tasks(body: &[u8]) -> Vec<String> {
    let Ok(message) = serde_json::from_slice::<Value>(body) else {
        return Vec::new();
    };
    let params = &message["params"];
    let declared = params["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
        .get(TASKS_EXTENSION)
        .is_some();
    let Some(named) = params["notifications"]["taskIds"].as_array() else {
        return Vec::new();
    };
    if !declared {
        return Vec::new();
    }
    accepted_task_ids(named.iter().filter_map(Value::as_str))
}

/// `chunk` with the accepted `ids` written into the acknowledgement it
/// carries (`params.notifications.taskIds`); `None` if it carries none.
/// Each SSE event is written in one piece.
fn with_task_ids(chunk: &Bytes, ids: &[String]) -> Option<Bytes> {
    let text = std::str::from_utf8(chunk).ok()?;
    let mut out = String::with_capacity(text.len() + ids.len() * 40);
    let mut found = false;
    for line in text.split_inclusive('\n') {
        let data = line.strip_prefix("data:").map(str::trim);
        let ack = data
            .filter(|_| !found)
            .and_then(|d| serde_json::from_str::<Value>(d).ok())
            .filter(|v| v["method"] == ACKNOWLEDGED);
        match ack {
            Some(mut ack) => {
                ack["params"]["notifications"]["taskIds"] = ids.into();
                out.push_str("data: ");
                out.push_str(&ack.to_string());
                out.push('\n');
                found = true;
            }
            None => out.push_str(line),
        }
    }
    found.then(|| Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task(i: u8) -> String {
        format!("run_{i:032x}")
    }

    #[test]
    fn a_listen_names_tasks_only_when_it_declared_the_extension() {
        let listen = |meta: Value| {
            json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
                "_meta": meta,
                "notifications": {"toolsListChanged": true, "taskIds": [task(1), "nope", task(1), 7]},
            }})
            .to_string()
        };
        let declared = json!({"io.modelcontextprotocol/clientCapabilities":
            {"extensions": {TASKS_EXTENSION: {}}}});
        assert_eq!(named_tasks(listen(declared).as_bytes()), [task(1)]);
        assert!(named_tasks(listen(json!({})).as_bytes()).is_empty());
        assert!(named_tasks(b"not json").is_empty());
    }

    #[test]
    fn the_acknowledgement_is_given_the_accepted_task_ids() {
        let ack = json!({"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": 1},
            "notifications": {"toolsListChanged": true},
        }});
        let chunk = Bytes::from(format!("event: message\ndata: {ack}\nid: e1\n\n"));
        let ids = [task(1), task(2)];
        let rewritten = with_task_ids(&chunk, &ids).expect("an acknowledgement");
        let text = std::str::from_utf8(&rewritten).expect("utf-8");
        assert!(text.starts_with("event: message\ndata: {"), "{text}");
        assert!(text.ends_with("\nid: e1\n\n"), "{text}");
        let data = text.lines().nth(1).and_then(|l| l.strip_prefix("data: "));
        let got: Value = serde_json::from_str(data.expect("data")).expect("JSON");
        assert_eq!(got["params"]["notifications"]["taskIds"], json!(ids));
        assert_eq!(got["params"]["notifications"]["toolsListChanged"], true);

        let other = Bytes::from_static(b"data: {\"method\":\"notifications/tasks\"}\n\n");
        assert_eq!(with_task_ids(&other, &ids), None);
    }
}
