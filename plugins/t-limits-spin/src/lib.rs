//! Hostile fixture `t-limits-spin`: `spin` loops forever. The host's epoch
//! deadline (200 ms in the manifest) must interrupt it, and the plugin must
//! still answer `ping`.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use fixture_kit::{Never, NoArgs};
use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("spin", "Loops forever without yielding.", spin)
            .permission("fixture", "run")
            .read_only(),
        fixture_kit::ping(),
    ]
}

toolhost_sdk::export_plugin!(tools);

fn spin(_ctx: &Ctx, _args: NoArgs) -> Result<Never, ToolError> {
    // `black_box` keeps the optimizer from proving the loop does nothing.
    let mut i: u64 = 0;
    loop {
        i = std::hint::black_box(i.wrapping_add(1));
    }
}
