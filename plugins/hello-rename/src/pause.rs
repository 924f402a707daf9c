//! `pause`: waits, then answers. It sleeps on the monotonic clock (WASI
//! `poll`), so a long call costs no CPU; the host's timeout still bounds it.

use std::time::{Duration, Instant};

use toolhost_sdk::prelude::*;

/// `pause`.
pub(crate) fn pause_tool() -> Tool {
    Tool::new(
        "pause",
        "Waits the given number of milliseconds, then says how long it waited.",
        pause,
    )
    .title("Pause")
    .permission("hello", "read")
    .read_only()
    .idempotent()
}

/// Arguments of `pause`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PauseArgs {
    /// How long to wait, in milliseconds (at most 60000).
    ms: u64,
}

/// The answer of `pause`.
#[derive(Debug, Serialize, JsonSchema)]
struct Paused {
    /// How long the call waited, in milliseconds.
    waited_ms: u64,
}

fn pause(_ctx: &Ctx, args: PauseArgs) -> Result<Paused, ToolError> {
    if args.ms > 60_000 {
        return Err(ToolError::InvalidArguments(format!(
            "ms is {}, at most 60000",
            args.ms
        )));
    }
    let started = Instant::now();
    std::thread::sleep(Duration::from_millis(args.ms));
    Ok(Paused {
        waited_ms: started.elapsed().as_millis() as u64,
    })
}
