//! Hostile fixture `t-trap-panic`: `panic` panics. Plugins are built with
//! `panic = "abort"`, so the host sees a trap, never an unwinding guest.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "panic",
            "Panics, which aborts the instance (a trap).",
            panic,
        )
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

fn panic(_ctx: &Ctx, _args: NoArgs) -> Result<Never, ToolError> {
    panic!("t-trap-panic: a deliberate panic")
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
