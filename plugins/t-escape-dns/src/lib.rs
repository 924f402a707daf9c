//! Hostile fixture `t-escape-dns`: `resolve` tries `(host,
//! 80).to_socket_addrs()`. The host grants no name lookup, so the answer must
//! carry the error.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use std::net::ToSocketAddrs;
use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "resolve",
            "Tries to resolve a host name and reports what happened.",
            resolve,
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

/// Arguments of `resolve`.
#[derive(Deserialize, JsonSchema)]
struct ResolveArgs {
    /// The name to resolve (default `localhost`).
    #[serde(default = "default_host")]
    host: String,
}

fn default_host() -> String {
    "localhost".into()
}

fn resolve(_ctx: &Ctx, args: ResolveArgs) -> Result<Attempt, ToolError> {
    Ok(Attempt::of(
        (args.host.as_str(), 80).to_socket_addrs(),
        |addrs| addrs.map(|a| a.to_string()).collect::<Vec<_>>().join(", "),
    ))
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
