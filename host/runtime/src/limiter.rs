//! The per-call resource limiter: memory, tables and instance counts, with a
//! record of which cap was hit so a trap can be named after its cause.

use toolhost_limits::CallBudget;

/// Memories a component may define per store: a Rust guest has one.
const MAX_MEMORIES: usize = 4;

/// Enforces one call's memory and table budget and remembers refusals.
pub(crate) struct CallLimiter {
    memory: usize,
    table_elements: usize,
    instances: usize,
    tables: usize,
    /// Set when a `memory.grow` was refused: a later trap is the guest
    /// dying of it (a Rust guest aborts on allocation failure).
    pub(crate) memory_refused: bool,
    /// Set when a `table.grow` was refused.
    pub(crate) table_refused: bool,
}

impl CallLimiter {
    pub(crate) fn new(budget: &CallBudget) -> Self {
        Self {
            memory: usize::try_from(budget.memory.as_u64()).unwrap_or(usize::MAX),
            table_elements: budget.table_elements as usize,
            instances: budget.instances as usize,
            tables: budget.tables as usize,
            memory_refused: false,
            table_refused: false,
        }
    }
}

impl wasmtime::ResourceLimiter for CallLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let ok = desired <= self.memory;
        self.memory_refused |= !ok;
        Ok(ok)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let ok = desired <= self.table_elements;
        self.table_refused |= !ok;
        Ok(ok)
    }

    fn instances(&self) -> usize {
        self.instances
    }

    fn tables(&self) -> usize {
        self.tables
    }

    fn memories(&self) -> usize {
        MAX_MEMORIES
    }
}
