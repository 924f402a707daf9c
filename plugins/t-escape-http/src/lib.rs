//! Hostile fixture `t-escape-http`: `http_get` speaks HTTP/1.1 by hand over
//! `TcpStream` to `http://HOST:PORT/PATH` and reports the status line or the
//! error of the step that failed. The host grants no network, so it must fail
//! at `connect`.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use fixture_kit::Attempt;
use std::io::{Read, Write};
use std::net::TcpStream;
use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "http_get",
            "Tries an HTTP/1.1 GET by hand over TCP; reports the status line or the error.",
            http_get,
        )
        .permission("fixture", "run")
        .read_only(),
        fixture_kit::ping(),
    ]
}

toolhost_sdk::export_plugin!(tools);

/// Arguments of `http_get`.
#[derive(Deserialize, JsonSchema)]
struct GetArgs {
    /// `http://HOST[:PORT][/PATH]` (a listener the test opened).
    url: String,
}

/// How far the request got.
#[derive(Serialize, JsonSchema)]
struct GetReport {
    /// The step that answered `attempt`: `connect`, `write`, `read` or `done`.
    step: String,
    attempt: Attempt,
}

fn http_get(_ctx: &Ctx, args: GetArgs) -> Result<GetReport, ToolError> {
    let Some(rest) = args.url.strip_prefix("http://") else {
        return Err(ToolError::InvalidArguments(
            "url must start with http://".into(),
        ));
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let host = authority.split(':').next().unwrap_or(authority);
    let target = if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    let report = |step: &str, attempt| {
        Ok(GetReport {
            step: step.into(),
            attempt,
        })
    };

    let mut stream = match TcpStream::connect(&target) {
        Ok(s) => s,
        Err(e) => return report("connect", Attempt::of(Err::<(), _>(e), |_| String::new())),
    };
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    if let Err(e) = stream.write_all(request.as_bytes()) {
        return report("write", Attempt::of(Err::<(), _>(e), |_| String::new()));
    }
    let mut head = Vec::new();
    let read = stream.take(64 * 1024).read_to_end(&mut head);
    if read.is_err() {
        return report("read", Attempt::of(read, |_| String::new()));
    }
    let text = String::from_utf8_lossy(&head);
    let status = text.lines().next().unwrap_or_default().to_owned();
    report("done", Attempt::of(Ok(status), |s| s))
}
