//! The Python MCP SDK (`mcp`, tests/e2e/requirements.txt) against the real
//! `toolhost serve`: the 2025-11-25 initialize handshake with a session, the
//! `server/discover` probe landing on stateless 2026-07-28, and 2026-07-28
//! pinned. See tests/e2e/python_client.py.

mod support;

use std::time::Duration;

use support::{Server, Tools};

#[test]
fn python_sdk_client_lists_and_calls_over_initialize_and_discover() {
    let tools = Tools::require();
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let cmd = tools.python("python_client.py", &[&server.url]);
    server.run_client("python SDK client", cmd, Duration::from_secs(120));
}
