//! Hostile fixture `t-limits-log-flood`: `flood` writes log lines through the
//! `log` import forever. The host must end the call at its log budget (4 KiB in
//! the manifest) or its host-call budget, whichever comes first.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use fixture_kit::{Never, NoArgs};
use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("flood", "Logs lines through the log import forever.", flood)
            .permission("fixture", "run")
            .read_only(),
        fixture_kit::ping(),
    ]
}

toolhost_sdk::export_plugin!(tools);

fn flood(_ctx: &Ctx, _args: NoArgs) -> Result<Never, ToolError> {
    let mut line: u64 = 0;
    loop {
        log::info!("flood line {line}: the quick brown fox jumps over the lazy dog");
        line += 1;
    }
}
