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

/// Memories per component: a Rust guest has one; two leaves room for a
/// component that links a second module with its own memory.
const MEMORIES_PER_COMPONENT: u32 = 2;

/// Builds the engine for `cfg`.
pub(crate) fn build(cfg: &RuntimeConfig) -> wasmtime::Result<Engine> {
    let ceiling = &cfg.ceiling;
    let memory_max = usize::try_from(ceiling.memory.as_u64()).unwrap_or(usize::MAX);
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(cfg.slots)
        .total_core_instances(cfg.slots * 8)
        .total_memories(cfg.slots * MEMORIES_PER_COMPONENT)
        .total_tables(cfg.slots * 4)
        .total_stacks(cfg.slots)
        .max_core_instances_per_component(ceiling.instances)
        .max_memories_per_component(MEMORIES_PER_COMPONENT)
        .max_tables_per_component(ceiling.tables)
        .table_elements(ceiling.table_elements as usize)
        .max_memory_size(memory_max)
        .linear_memory_keep_resident(cfg.keep_resident)
        .table_keep_resident(64 << 10)
        .async_stack_keep_resident(64 << 10);

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
