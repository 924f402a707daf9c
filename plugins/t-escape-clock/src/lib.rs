//! Hostile fixture `t-escape-clock`: `now` reports `SystemTime::now()` as
//! seconds since the Unix epoch (the host pins the wall clock at 0, so a plugin
//! cannot learn the time of day) and the `Instant` elapsed over a tiny loop
//! (the monotonic clock is allowed).
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use fixture_kit::NoArgs;
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "now",
            "Reports the wall-clock time and a monotonic-clock measurement.",
            now,
        )
        .permission("fixture", "run")
        .read_only(),
        fixture_kit::ping(),
    ]
}

toolhost_sdk::export_plugin!(tools);

/// What the guest sees of time.
#[derive(Serialize, JsonSchema)]
struct Now {
    /// Whole seconds since the Unix epoch, per the wall clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    unix_seconds: Option<u64>,
    /// Nanoseconds past `unix_seconds`.
    #[serde(skip_serializing_if = "Option::is_none")]
    subsec_nanos: Option<u32>,
    /// Set when the wall clock reads before the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// Nanoseconds an `Instant` measured over a 10 000-step loop.
    monotonic_elapsed_nanos: u64,
}

fn now(_ctx: &Ctx, _args: NoArgs) -> Result<Now, ToolError> {
    let (unix_seconds, subsec_nanos, error) = match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => (Some(d.as_secs()), Some(d.subsec_nanos()), None),
        Err(e) => (None, None, Some(e.to_string())),
    };
    let start = Instant::now();
    let mut acc: u64 = 0;
    for i in 0..std::hint::black_box(10_000u64) {
        acc = std::hint::black_box(acc.wrapping_add(i));
    }
    let elapsed = start.elapsed();
    Ok(Now {
        unix_seconds,
        subsec_nanos,
        error,
        monotonic_elapsed_nanos: u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX),
    })
}
