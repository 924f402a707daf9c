//! Hostile fixture `t-escape-http`: `http_get` speaks HTTP/1.1 by hand over
//! `TcpStream` to `http://HOST:PORT/PATH` and reports the status line or the
//! error of the step that failed. The host grants no network, so it must fail
//! at `connect`.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

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
        Tool::new("ping", "Answers {\"pong\": true}.", ping)
            .permission("fixture", "run")
            .read_only(),
    ]
}

toolhost_sdk::export_plugin!(tools);

/// The outcome of one attempt, reported rather than panicked on.
#[derive(Serialize, JsonSchema)]
struct Attempt {
    ok: bool,
    /// What succeeded (an address, a status line), if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
    /// The I/O error's text, if it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// The I/O error's kind (`Unsupported`, `PermissionDenied` …), if it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
}

impl Attempt {
    fn of<T>(result: std::io::Result<T>, detail: impl FnOnce(T) -> String) -> Self {
        match result {
            Ok(v) => Attempt {
                ok: true,
                detail: Some(detail(v)),
                error: None,
                kind: None,
            },
            Err(e) => Attempt {
                ok: false,
                detail: None,
                kind: Some(format!("{:?}", e.kind())),
                error: Some(e.to_string()),
            },
        }
    }
}

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

/// `ping` takes no arguments.
#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// The answer of `ping`.
#[derive(Serialize, JsonSchema)]
struct Pong {
    pong: bool,
}

/// Proves the plugin still works after the hostile call.
fn ping(_ctx: &Ctx, _args: NoArgs) -> Result<Pong, ToolError> {
    Ok(Pong { pong: true })
}
