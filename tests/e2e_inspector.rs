//! The MCP Inspector's CLI against the real `toolhost serve`, in both
//! protocol eras: `--method tools/list`, then `--method tools/call
//! --tool-name greet --tool-arg name=Ada`. See tests/e2e/inspector_cli.mjs.

mod support;

use std::time::Duration;

use support::{Server, Tools};

#[test]
fn inspector_cli_lists_and_calls() {
    let tools = Tools::require();
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let cmd = tools.node("inspector_cli.mjs", &[&server.url]);
    server.run_client("inspector CLI", cmd, Duration::from_secs(180));
}
