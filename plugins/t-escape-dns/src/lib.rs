//! Hostile fixture `t-escape-dns`: `resolve` tries `(host,
//! 80).to_socket_addrs()`. The host grants no name lookup, so the answer must
//! carry the error.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use fixture_kit::Attempt;
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
        fixture_kit::ping(),
    ]
}

toolhost_sdk::export_plugin!(tools);

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
