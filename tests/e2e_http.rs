//! Requests the host must refuse at the HTTP edge, with the status and
//! JSON-RPC code the MCP spec gives, without running any plugin code; and
//! the operational routes.

mod support;

use serde_json::{Value, json};
use support::{Server, declare_body, exchange};

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn modern<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
    ];
    h.extend_from_slice(extra);
    h
}

fn call_body(name: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"{name}","arguments":{{"name":"Ada"}},{META}}}}}"#
    )
}

/// POSTs to `/mcp` with the server's bearer token added to `headers`.
fn mcp(server: &Server, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let mut with_token = headers.to_vec();
    with_token.push(("Authorization", server.bearer()));
    exchange(&server.url, "POST", "/mcp", &with_token, body)
}

fn rpc_code(body: &str) -> i64 {
    let v: Value = serde_json::from_str(body.trim())
        .unwrap_or_else(|e| panic!("a JSON-RPC body ({e}): {body}"));
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("an error code: {body}"))
}

fn calls_made(server: &Server) -> bool {
    server
        .metrics()
        .lines()
        .any(|l| l.starts_with("toolhost_calls_total{"))
}

#[test]
fn bad_requests_get_the_spec_status_and_code_and_run_no_plugin_code() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let list = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#);

    // Malformed JSON: 400 with JSON-RPC's parse error.
    let (s, b) = mcp(
        &server,
        &modern(&[("Mcp-Method", "tools/call")]),
        r#"{"jsonrpc":"2.0","id":1,"#,
    );
    assert_eq!((s, rpc_code(&b)), (400, -32700), "{b}");

    // Missing or mismatched 2026-07-28 standard headers: 400, -32020.
    let (s, b) = mcp(&server, &modern(&[]), &call_body("greet"));
    assert_eq!((s, rpc_code(&b)), (400, -32020), "missing Mcp-Method: {b}");
    let (s, b) = mcp(
        &server,
        &modern(&[("Mcp-Method", "tools/call")]),
        &call_body("greet"),
    );
    assert_eq!((s, rpc_code(&b)), (400, -32020), "missing Mcp-Name: {b}");
    let mismatched = modern(&[("Mcp-Method", "tools/call"), ("Mcp-Name", "add")]);
    let (s, b) = mcp(&server, &mismatched, &call_body("greet"));
    assert_eq!((s, rpc_code(&b)), (400, -32020), "mismatched Mcp-Name: {b}");

    // An unknown method: method not found.
    let unknown =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/frobnicate","params":{{{META}}}}}"#);
    let (s, b) = mcp(
        &server,
        &modern(&[("Mcp-Method", "tools/frobnicate")]),
        &unknown,
    );
    assert_eq!((s, rpc_code(&b)), (404, -32601), "{b}");

    // Content negotiation.
    let no_accept = [
        ("Content-Type", "application/json"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ];
    assert_eq!(mcp(&server, &no_accept, &list).0, 406);
    let wrong_type = [
        ("Content-Type", "text/plain"),
        ("Accept", "application/json, text/event-stream"),
        ("Mcp-Method", "tools/list"),
    ];
    assert_eq!(mcp(&server, &wrong_type, &list).0, 415);

    // A legacy request without a session, and an unknown protocol version.
    let legacy = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    assert_eq!(
        mcp(
            &server,
            &legacy,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#
        )
        .0,
        400
    );
    let bad_version = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "1999-01-01"),
    ];
    assert_eq!(
        mcp(
            &server,
            &bad_version,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#
        )
        .0,
        400
    );

    // DNS rebinding and cross-site requests: 403.
    let evil_origin = modern(&[
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "greet"),
        ("Origin", "https://evil.example"),
    ]);
    assert_eq!(mcp(&server, &evil_origin, &call_body("greet")).0, 403);
    let evil_host = modern(&[
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "greet"),
        ("Host", "evil.example"),
    ]);
    assert_eq!(mcp(&server, &evil_host, &call_body("greet")).0, 403);

    assert!(!calls_made(&server), "no request above reached a plugin");

    // The same call, well-formed, from a loopback page: it runs, and the
    // check above would have seen it.
    let good = modern(&[
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "greet"),
        ("Origin", "http://localhost:6274"),
    ]);
    let (s, b) = mcp(&server, &good, &call_body("greet"));
    assert_eq!(s, 200, "{b}");
    let v: Value = serde_json::from_str(b.trim()).expect("JSON");
    assert_eq!(
        v["result"]["structuredContent"],
        json!({"message": "Hello, Ada!"})
    );
    assert!(calls_made(&server));
}

#[test]
fn an_oversized_request_is_refused_by_the_host_with_its_limit() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let mut headers = modern(&[("Mcp-Method", "tools/call"), ("Mcp-Name", "greet")]);
    headers.push(("Authorization", server.bearer()));
    let (s, b) = declare_body(&server.url, &headers, (4 << 20) + 1);
    assert_eq!(s, 413, "{b}");
    let v: Value = serde_json::from_str(b.trim()).expect("JSON");
    assert_eq!(
        v["error"]["data"],
        json!({"code": "LIMIT_EXCEEDED", "limit": "request_bytes", "value": 4 << 20})
    );
    assert!(!calls_made(&server));
}

#[test]
fn health_readiness_and_metrics_answer() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    assert_eq!(
        exchange(&server.url, "GET", "/healthz", &[], ""),
        (200, "ok\n".into())
    );
    assert_eq!(
        exchange(&server.url, "GET", "/readyz", &[], ""),
        (200, "ready\n".into())
    );
    let headers = modern(&[("Mcp-Method", "tools/call"), ("Mcp-Name", "nope")]);
    let (s, b) = mcp(&server, &headers, &call_body("nope"));
    assert_eq!(s, 200);
    let v: Value = serde_json::from_str(b.trim()).expect("JSON");
    assert_eq!(v["result"]["isError"], json!(true));
    assert_eq!(
        v["result"]["structuredContent"]["error"]["code"],
        json!("TOOL_NOT_FOUND")
    );
    assert!(
        v["result"]["structuredContent"]["error"]["hint"]
            .as_str()
            .is_some_and(|h| h.contains("tools/list"))
    );
    let metrics = server.metrics();
    assert!(
        metrics.contains(r#"toolhost_calls_total{tool="(unknown)",outcome="error"} 1"#),
        "{metrics}"
    );
    // Never on the public listener: they name every tenant's tools.
    let (status, _) = exchange(&server.url, "GET", "/metrics", &[], "");
    assert_eq!(status, 404, "metrics on the public listener");
}
