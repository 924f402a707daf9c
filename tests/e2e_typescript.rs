//! The TypeScript MCP SDKs against the real `toolhost serve`:
//! `@modelcontextprotocol/sdk` v1 (initialize, session) and
//! `@modelcontextprotocol/client` v2 (`server/discover`, stateless
//! 2026-07-28), each with `Client` + `StreamableHTTPClientTransport`.
//! See tests/e2e/ts_client.mjs.

mod support;

use std::time::Duration;

use support::{Server, Tools};

#[test]
fn typescript_sdk_client_lists_and_calls() {
    let tools = Tools::require();
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let cmd = tools.node("ts_client.mjs", &[&server.url]);
    server.run_client("typescript SDK client", cmd, Duration::from_secs(120));
}
