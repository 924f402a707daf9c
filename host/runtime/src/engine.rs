//! The one `Engine`: trimmed features, a sized pooling allocator, epoch
//! interruption, and the ticker thread that drives the epoch.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::config::RuntimeConfig;

/// Guard pages after each linear memory. Memories are bounds-checked
/// explicitly (the reservation is far below 4 GiB), so the guard only has to
/// catch small constant offsets; 64 KiB keeps each slot's reservation small.
const MEMORY_GUARD: u64 = 64 << 10;

/// Memories per component: a Rust or Python guest has one, a QuickJS one
/// two (its engine and a stub module); four leaves room for toolchains that
/// link further modules with their own memory. Each costs a reservation of
/// virtual address space per slot (`ceiling.memory` plus the guard), not
/// resident memory.
const MEMORIES_PER_COMPONENT: u32 = 4;

/// Builds the engine for `cfg`.
pub(crate) fn build(cfg: &RuntimeConfig) -> wasmtime::Result<Engine> {
    let ceiling = &cfg.ceiling;
    let memory_max = usize::try_from(ceiling.memory.as_u64()).unwrap_or(usize::MAX);
    let mut pool = PoolingAllocationConfig::new();
    // Every slot may hold a component at the ceiling: a Python component
    // instantiates 14 core instances where a Rust one needs 4–8, so sizing
    // the pool for Rust would run it dry before the slots are (the slot
    // semaphore is the one bound a caller waits on).
    pool.total_component_instances(cfg.slots)
        .total_core_instances(cfg.slots.saturating_mul(ceiling.instances))
        .total_memories(cfg.slots * MEMORIES_PER_COMPONENT)
        .total_tables(cfg.slots.saturating_mul(ceiling.tables.min(8)))
        .total_stacks(cfg.slots)
        .max_core_instances_per_component(ceiling.instances)
        .max_memories_per_component(MEMORIES_PER_COMPONENT)
        .max_tables_per_component(ceiling.tables)
        .table_elements(ceiling.table_elements as usize)
        .max_memory_size(memory_max)
        .linear_memory_keep_resident(cfg.keep_resident)
        .table_keep_resident(64 << 10)
        .async_stack_keep_resident(64 << 10);
    // Between callers, reset only the pages a call wrote, present or
    // swapped out (`PAGEMAP_SCAN`, Linux 6.7+; elsewhere wasmtime resets
    // the kept-resident prefix whole and decommits the rest). The scan is
    // our patched wasmtime's (vendor/README.md): it resumes past 32 dirty
    // regions, and a slot keeps its instance's heap image resident on top
    // of `keep_resident` (BENCHMARKS.md part 24).
    pool.pagemap_scan(wasmtime::Enabled::Auto);

    let mut config = Config::new();
    config
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool))
        .wasm_component_model(true)
        .epoch_interruption(true)
        .memory_reservation(ceiling.memory.as_u64())
        .memory_guard_size(MEMORY_GUARD)
        .memory_reservation_for_growth(0)
        .parallel_compilation(true);
    Engine::new(&config)
}

/// Advances the engine's epoch every `tick` until dropped.
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
}

impl EpochTicker {
    pub(crate) fn start(engine: Engine, tick: std::time::Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::Builder::new()
            .name("toolhost-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(tick);
                    engine.increment_epoch();
                }
            })
            .expect("spawning the epoch thread at start-up cannot fail short of OOM");
        Self { stop }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
