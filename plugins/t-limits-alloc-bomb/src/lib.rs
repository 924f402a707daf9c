//! Hostile fixture `t-limits-alloc-bomb`: `bomb` keeps allocating 1 MiB blocks
//! filled with non-zero bytes (so every page is touched) until the allocator
//! fails, which aborts: a trap. The host's memory cap (16 MiB in the manifest)
//! must refuse the growth.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use fixture_kit::{Never, NoArgs};
use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "bomb",
            "Allocates and touches memory until the allocator fails.",
            bomb,
        )
        .permission("fixture", "run")
        .read_only(),
        fixture_kit::ping(),
    ]
}

toolhost_sdk::export_plugin!(tools);

const MIB: usize = 1 << 20;

fn bomb(_ctx: &Ctx, _args: NoArgs) -> Result<Never, ToolError> {
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        hoard.push(vec![0xA5; MIB]);
        std::hint::black_box(&hoard);
    }
}
