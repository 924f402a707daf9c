//! Hostile fixture `t-limits-deep-recursion`: two unbounded recursions (not
//! tail calls, so neither can become a loop), one per stack a Rust guest has.
//! `recurse` keeps its state in wasm locals, so the engine's native wasm stack
//! runs out (`STACK_OVERFLOW`). `recurse_frames` keeps a 128-byte frame in
//! linear memory, so Rust's shadow stack runs off the bottom of memory first (a
//! `TRAPPED` out-of-bounds access).
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use fixture_kit::{Never, NoArgs};
use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "recurse",
            "Recurses until the wasm stack overflows.",
            recurse,
        )
        .permission("fixture", "run")
        .read_only(),
        Tool::new(
            "recurse_frames",
            "Recurses with frames in linear memory until the shadow stack overflows.",
            recurse_frames,
        )
        .permission("fixture", "run")
        .read_only(),
        fixture_kit::ping(),
    ]
}

toolhost_sdk::export_plugin!(tools);

fn recurse(_ctx: &Ctx, _args: NoArgs) -> Result<Never, ToolError> {
    descend_in_locals(0, std::hint::black_box(u64::MAX));
    unreachable!("descend_in_locals never returns")
}

/// Recursion whose state lives in wasm locals only: no address is taken, so
/// nothing goes to the shadow stack. `limit` is opaque to the optimizer and
/// never reached; the result is mixed after the call, so it stays a real call.
#[inline(never)]
fn descend_in_locals(depth: u64, limit: u64) -> u64 {
    if depth == limit {
        return depth;
    }
    descend_in_locals(depth + 1, limit).wrapping_mul(31) ^ depth
}

fn recurse_frames(_ctx: &Ctx, _args: NoArgs) -> Result<Never, ToolError> {
    descend(0);
    unreachable!("descend never returns")
}

/// Keeps a 128-byte frame alive across the recursive call, and uses the
/// callee's result afterwards, so the recursion stays real.
#[inline(never)]
#[allow(unconditional_recursion)]
fn descend(depth: u64) -> u64 {
    let frame = std::hint::black_box([depth; 16]);
    let below = descend(std::hint::black_box(depth + 1));
    below.wrapping_add(frame[(depth % 16) as usize])
}
