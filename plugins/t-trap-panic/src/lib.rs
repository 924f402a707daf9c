//! Hostile fixture `t-trap-panic`: `panic` panics. Plugins are built with
//! `panic = "abort"`, so the host sees a trap, never an unwinding guest.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use fixture_kit::{Never, NoArgs};
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
        fixture_kit::ping(),
    ]
}

toolhost_sdk::export_plugin!(tools);

fn panic(_ctx: &Ctx, _args: NoArgs) -> Result<Never, ToolError> {
    panic!("t-trap-panic: a deliberate panic")
}
