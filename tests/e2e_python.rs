//! The Python MCP SDK (`mcp`, tests/e2e/requirements.txt) against the real
//! `toolhost serve`: the 2025-11-25 initialize handshake with a session, the
//! `server/discover` probe landing on stateless 2026-07-28, and 2026-07-28
//! pinned (tests/e2e/python_client.py); and a plugin's log lines heard at
//! the level the client set, in both eras (tests/e2e/python_logging.py).

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

/// A plugin's log lines reach the Python SDK's `logging_callback` as
/// `notifications/message`, at the level it asked for, in both eras (see
/// tests/e2e/python_logging.py).
#[test]
fn python_sdk_client_hears_plugin_log_lines_at_the_level_it_set() {
    let tools = Tools::require();
    let server = Server::start(&[toolhost_fixtures::CONFORMANCE]);
    let cmd = tools.python("python_logging.py", &[&server.url]);
    server.run_client("python SDK logging", cmd, Duration::from_secs(120));
}
