//! How the runtime is sized. Every number has a default and a reason.

use std::path::PathBuf;
use std::time::Duration;

use toolhost_limits::CallBudget;

/// Runtime-wide settings: the pool, the ceilings, the cache.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// Sandboxes that may exist at once. Calls beyond this wait for a slot
    /// rather than fail. Each slot reserves virtual address space
    /// (`ceiling.memory` plus a guard per memory), not resident memory.
    pub slots: u32,
    /// The most any manifest may ask for; also sizes the pooling allocator.
    pub ceiling: CallBudget,
    /// How often the epoch advances: the granularity of timeouts and of
    /// cancellation, and how often a running guest yields to the scheduler.
    pub epoch_tick: Duration,
    /// Where precompiled components are kept between starts; `None` compiles
    /// on every start. The directory must be writable only by the host: its
    /// files are mapped as native code.
    pub cache_dir: Option<PathBuf>,
    /// Linear memory kept resident per pool slot between calls: the first
    /// `keep_resident` bytes are zeroed in place, the rest handed back to
    /// the OS and faulted in again on first touch. Zeroing costs per byte,
    /// faulting per page touched: the sweet spot covers what a guest
    /// touches on every call (its stack, data and first heap pages).
    pub keep_resident: usize,
}

impl RuntimeConfig {
    /// Default slots: enough for a 2-core host at concurrency 64 with headroom.
    pub const DEFAULT_SLOTS: u32 = 128;
    /// Default epoch tick. 1 ms keeps timeouts tight and costs nothing measurable.
    pub const DEFAULT_EPOCH_TICK: Duration = Duration::from_millis(1);
    /// Default keep-resident size per slot: 256 KiB. Measured on the
    /// 2-core machines with `hello` built with a 128 KiB stack (see
    /// `.cargo/config.toml`): 0 → 8 µs set-up but 31 µs per call (page
    /// faults); 256 KiB → 15 µs set-up, 21 µs per call; 2 MiB → 38 µs
    /// set-up (zeroing dominates).
    pub const DEFAULT_KEEP_RESIDENT: usize = 256 << 10;
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        Self {
            slots: Self::DEFAULT_SLOTS,
            ceiling: CallBudget::CEILING,
            epoch_tick: Self::DEFAULT_EPOCH_TICK,
            cache_dir: None,
            keep_resident: Self::DEFAULT_KEEP_RESIDENT,
        }
    }
}
