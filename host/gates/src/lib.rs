//! Approval gates, idempotency keys and human checkpoints (seed 002: "Gates live entirely
//! inside MCP", MCPX-FR-005/018): the rows that make a risky call stop
//! before any side effect, wait for a person's decision, and then run
//! exactly once; and the rows that make a retried mutation answer with its
//! first result.
//!
//! This room owns the words and the store contract: [`Gate`], its
//! [`GateState`] machine, [`GateStore`] with compare-and-set transitions.
//! `storage` implements the store on SQLite and PostgreSQL; `invoke` decides
//! when a call is gated and consumes gates; the host tools and the web page
//! are two renderers of the same rows.

mod checkpoint;
mod gate;
mod idempotency;
mod page;
mod store;

pub use checkpoint::{Checkpoint, CheckpointError, CheckpointStore, Disposition, NewCheckpoint};
pub use gate::{Decision, Gate, GateId, GateState, NewGate, Target, rfc3339};
pub use idempotency::{IDEMPOTENCY_LEASE, IdempotencyClaim, IdempotencyKey};
pub use page::{GateCursor, GateQuery};
pub use store::{ConsumeError, DecideError, GateFuture, GateStore, GateStoreError};
