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
    /// Linear memory kept resident per pool slot between calls: within the
    /// first `keep_resident` bytes the pages a call dirtied are reset in
    /// place (the whole prefix where the kernel lacks `PAGEMAP_SCAN`), the
    /// rest handed back to the OS and faulted in again on first touch.
    /// Resetting costs per byte, faulting per page touched: the sweet spot
    /// covers what a guest touches on every call (its stack, data and
    /// first heap pages).
    pub keep_resident: usize,
    /// Components compiled at once, host-wide (`compile_queue.rs`): each
    /// compile already spreads over the cores, so one keeps the others'
    /// calls served.
    pub compile_workers: usize,
    /// Compiles one tenant may have waiting or running at once; past it a
    /// tenant's load is refused as busy (the host's own loads never are).
    pub compile_share: usize,
}

impl RuntimeConfig {
    /// Default slots: enough for a 2-core host at concurrency 64 with headroom.
    pub const DEFAULT_SLOTS: u32 = 128;
    /// Default epoch tick. 1 ms keeps timeouts tight and costs nothing measurable.
    pub const DEFAULT_EPOCH_TICK: Duration = Duration::from_millis(1);
    /// Default keep-resident size per slot: 1 MiB. With the kernel's
    /// `PAGEMAP_SCAN` (Linux 6.7+, used when present; see `engine.rs`)
    /// only the pages a call dirtied are reset, so the size bounds what a
    /// slot keeps rather than what every reset costs. Measured on the
    /// 2-core machines (`cargo bench -p toolhost-runtime --bench
    /// languages`, BENCHMARKS.md part 8), `greet` p50 in Rust / Python /
    /// TypeScript: 256 KiB without the scan 11 µs / 1.40 ms / 179 µs; with
    /// it 10 µs / 1.26 ms / 98 µs; 1 MiB with it 9 µs / 1.26 ms / 83 µs;
    /// 4 and 16 MiB no faster. Without the scan, larger sizes cost
    /// zeroing (2 MiB → 38 µs set-up for Rust, measured before). With the
    /// scan, the patched wasmtime keeps each slot's heap image resident on
    /// top of this (vendor/README.md), which is what an interpreter needs
    /// (BENCHMARKS.md part 24).
    pub const DEFAULT_KEEP_RESIDENT: usize = 1 << 20;
    /// Default compile workers: one.
    pub const DEFAULT_COMPILE_WORKERS: usize = 1;
    /// Default share of the compile queue per tenant: two.
    pub const DEFAULT_COMPILE_SHARE: usize = 2;
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        Self {
            slots: Self::DEFAULT_SLOTS,
            ceiling: CallBudget::CEILING,
            epoch_tick: Self::DEFAULT_EPOCH_TICK,
            cache_dir: None,
            keep_resident: Self::DEFAULT_KEEP_RESIDENT,
            compile_workers: Self::DEFAULT_COMPILE_WORKERS,
            compile_share: Self::DEFAULT_COMPILE_SHARE,
        }
    }
}
