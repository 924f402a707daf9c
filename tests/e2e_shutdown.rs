//! Graceful shutdown: on SIGTERM the host stops accepting, lets the calls
//! in flight finish (and be audited), answers them, and exits cleanly.

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Server, exchange};

#[test]
fn sigterm_finishes_the_call_in_flight_then_exits_cleanly() {
    // `spin` runs until its 200 ms budget ends it: a call that is surely
    // still in flight when the signal arrives 50 ms in.
    let server = Server::start(&[toolhost_fixtures::T_LIMITS_SPIN]);
    let url = server.url.clone();
    let bearer = server.bearer().to_owned();
    let call = std::thread::spawn(move || {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"spin","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let headers = [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "spin"),
            ("Authorization", bearer.as_str()),
        ];
        exchange(&url, "POST", "/mcp", &headers, body)
    });
    std::thread::sleep(Duration::from_millis(50));
    let signalled = Instant::now();
    let kill = Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success());

    let (status, body) = call.join().expect("the call thread");
    assert_eq!(status, 200, "the call in flight was answered: {body}");
    let v: Value = serde_json::from_str(body.trim()).expect("JSON");
    assert_eq!(
        v["result"]["structuredContent"]["error"]["code"], "TIMEOUT",
        "{v}"
    );

    let exit = server
        .wait_exit(Duration::from_secs(20))
        .expect("the server exits after draining");
    assert!(exit.success(), "clean exit: {exit}\n{}", server.log());
    assert!(signalled.elapsed() < Duration::from_secs(20));
    // Nothing new is accepted once the host has gone.
    let authority = server
        .url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .expect("authority");
    assert!(
        std::net::TcpStream::connect(authority).is_err(),
        "the listener is closed"
    );
}
