//! Exploration runs: long, bounded, side-effect free work, queued durably
//! in the store and run by workers on any replica (DESIGN.md "Exploration
//! runs", MCPX-FR-023).
//!
//! This room owns what a run *is*: its id ([`RunId`]), its states and the
//! moves between them ([`RunState`]), what was asked ([`RunSpec`]), the
//! row as stored ([`Run`]), the lease a worker holds ([`Claim`]), the
//! store every replica shares ([`RunStore`]) and the digest-stamped
//! [`Receipt`] each finished run leaves. It runs nothing: the runs service
//! (`toolhost_runs_service`) starts runs and its worker executes them in
//! the runtime's exploration sandbox;
//! `storage` implements [`RunStore`] on SQLite and PostgreSQL.
//!
//! ```text
//! queued ──claim──▶ running ──finish──▶ succeeded | failed | timed_out
//!   │                 │  ▲
//!   │ cancel          │  └─ lease expired: claimed again (attempt + 1)
//!   ▼                 ▼ cancel
//! cancelled ◀──── cancelling
//!
//! running ──its guest asked its client──▶ input_required
//! input_required ──every request answered──▶ queued
//! input_required ──no answer within INPUT_WAIT──▶ timed_out
//! ```

mod id;
mod input;
mod listing;
mod receipt;
mod run;
mod state;
mod store;

pub use id::RunId;
pub use input::{
    INPUT_WAIT, InputError, MAX_INPUT_ANSWER_BYTES, MAX_INPUT_ANSWERS, MAX_INPUT_ROUNDS, RunClient,
    RunInput,
};
pub use listing::{RunCursor, RunQuery};
pub use receipt::{
    ArtifactRecord, AttemptRecord, ErrorRecord, HostRecord, OutboundRecord, RECEIPT_VERSION,
    Receipt, ReceiptError, RefusalRecord,
};
pub use run::{NewRun, Outcome, Progress, QueueLimits, RevisionRef, Run, RunSource, RunSpec};
pub use state::RunState;
pub use store::{
    Beat, Claim, FinishRun, MAX_ATTEMPTS, RunEffect, RunFuture, RunStore, RunStoreError,
};
