//! Hostile fixture `t-limits-log-flood`: `flood` writes log lines through the
//! `log` import forever. The host must end the call at its log budget (4 KiB in
//! the manifest) or its host-call budget, whichever comes first.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("flood", "Logs lines through the log import forever.", flood)
            .permission("fixture", "run")
            .read_only(),
        Tool::new("ping", "Answers {\"pong\": true}.", ping)
            .permission("fixture", "run")
            .read_only(),
    ]
}

toolhost_sdk::export_plugin!(tools);

/// Never produced: the tool does not return.
#[derive(Serialize, JsonSchema)]
struct Never {}

fn flood(_ctx: &Ctx, _args: NoArgs) -> Result<Never, ToolError> {
    let mut line: u64 = 0;
    loop {
        log::info!("flood line {line}: the quick brown fox jumps over the lazy dog");
        line += 1;
    }
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
