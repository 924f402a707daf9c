//! Legacy (2025-11-25) MCP sessions over raw HTTP, at `/mcp` or a
//! toolset's endpoint: for the tests of who a session answers.

use serde_json::json;

use super::{Answer, exchange_full};

/// A legacy request of `bearer` at `path` of the host at `url`, in
/// `session` if given.
pub fn legacy_at(
    url: &str,
    path: &str,
    bearer: &str,
    session: Option<&str>,
    method: &str,
    body: &str,
) -> Answer {
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", bearer),
    ];
    if let Some(id) = session {
        headers.push(("Mcp-Session-Id", id));
        headers.push(("MCP-Protocol-Version", "2025-11-25"));
    }
    exchange_full(url, method, path, &headers, body)
}

/// A new legacy session of `bearer` at `path`: its id (the handshake
/// done), or the refusal.
pub fn open_session_at(url: &str, path: &str, bearer: &str) -> Result<String, Answer> {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "e2e-sessions", "version": "1"}}});
    let answer = legacy_at(url, path, bearer, None, "POST", &init.to_string());
    let Some(id) = answer.header("mcp-session-id").map(str::to_owned) else {
        return Err(answer);
    };
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let ack = legacy_at(url, path, bearer, Some(&id), "POST", &done.to_string());
    assert_eq!(ack.status, 202, "{}", ack.body);
    Ok(id)
}

/// `tools/list` in `session` at `path`.
pub fn tools_list_at(url: &str, path: &str, bearer: &str, session: &str) -> Answer {
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    legacy_at(url, path, bearer, Some(session), "POST", &list.to_string())
}
