//! The Python MCP SDK (`mcp`, tests/e2e/requirements.txt) against the real
//! `toolhost serve`: the 2025-11-25 initialize handshake with a session, the
//! `server/discover` probe landing on stateless 2026-07-28, and 2026-07-28
//! pinned (tests/e2e/python_client.py); and what plugins speak of MCP
//! beyond JSON, in both eras (tests/e2e/python_features.py): content
//! blocks, and log lines heard at the level the client set; and a stream
//! resumed with `Last-Event-ID` (tests/e2e/python_resume.py).

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

/// The Python SDK gets a plugin's image, audio and embedded resource
/// blocks, its questions, prompts, resources and resource updates (only
/// its own tenant's), and its log lines reach the `logging_callback` as
/// `notifications/message` at the level it asked for, in both eras (see
/// tests/e2e/python_features.py).
#[test]
fn python_sdk_client_gets_content_blocks_and_hears_log_lines_at_its_level() {
    let tools = Tools::require();
    let server = Server::start(&[toolhost_fixtures::CONFORMANCE]);
    let other = server.service_client_in("acme", "mcp conformance:run").1;
    let mut cmd = tools.python("python_features.py", &[&server.url]);
    cmd.env("TOOLHOST_E2E_OTHER_TOKEN", other);
    server.run_client("python SDK features", cmd, Duration::from_secs(120));
    // Each round a call asked its client is in the call's audit row: a
    // session's live requests and a stateless call's input-required rounds.
    let out = server.admin(&[
        "audit",
        "search",
        "--tool",
        "test_input_required_result_multiple_inputs",
        "--outcome",
        "executed",
    ]);
    let rows = String::from_utf8_lossy(&out.stdout);
    let asked: Vec<&str> = rows
        .lines()
        .filter(|l| l.contains("asked the client:"))
        .collect();
    assert_eq!(asked.len(), 2, "one executed call per era:\n{rows}");
    for line in asked {
        for round in [
            "(elicitation/create) answered",
            "(sampling/createMessage) answered",
            "(roots/list) answered",
        ] {
            assert!(line.contains(round), "{round} not in {line}");
        }
    }
}

/// A client that hangs up mid-call resumes its stream with `Last-Event-ID`
/// and gets the call's result, stateless and in a session; another
/// tenant's principal, or another session of the same principal, holding
/// the event id gets nothing (see tests/e2e/python_resume.py).
#[test]
fn a_client_that_loses_its_stream_mid_call_resumes_it_with_last_event_id() {
    let tools = Tools::require();
    let server = Server::start(&[toolhost_fixtures::CONFORMANCE]);
    let other = server.service_client_in("acme", "mcp conformance:run").1;
    let mut cmd = tools.python("python_resume.py", &[&server.url]);
    cmd.env("TOOLHOST_E2E_OTHER_TOKEN", other);
    server.run_client("python resume", cmd, Duration::from_secs(120));
}
