//! The call path. Every tool call the host serves goes through
//! [`Toolhost::call`], one function you can read top to bottom; each later
//! concern (authentication, policy, the resolver, gates, bounds) adds one
//! line to it.
//!
//! This room owns the order of the steps and the one audit event per call.
//! It owns none of the steps themselves: the catalog finds the tool, the
//! policy decides (the same decision for listing and calling), the runtime
//! runs it, the audit sink stores the event.
//!
//! It also owns the seam features plug into: [`HostTool`], called with a
//! [`HostCall`] (the admitted caller, the arguments, progress,
//! cancellation and a narrow [`Host`] handle), answering its output and the
//! effects to write with the call's row; a feature's typed refusals reach
//! the client as one [`Refusal`]; features may claim catalog tools and
//! serve them as host tools ([`ClaimTools`]). It does not own the features:
//! people's decisions are `toolhost_decisions`', runs
//! `toolhost_runs_service`', authoring `toolhost_authoring`', and what a
//! server installs is its composition root's choice.

mod bounds;
mod call;
mod error;
mod gating;
mod lost;
mod metrics;
mod plugin_call;
mod prompts;
mod resources;
mod results;
mod snapshots;
mod tool;

pub use call::{CallRequest, Listing, Toolhost};
pub use error::{InvokeError, Refusal, STORE_RETRY_AFTER_MS, STORE_UNAVAILABLE_MESSAGE};
pub use gating::{Clock, DEFAULT_GATE_TTL, GATE_ID_ARG, GatePolicy, IDEMPOTENCY_KEY_ARG, millis};
pub use plugin_call::Answer;
pub use prompts::{MAX_COMPLETIONS, PromptAnswer, PromptRef, client_rounds};
pub use resources::{ResourceRef, ResourceUpdate, TemplateRef, UpdateRelay};
pub use results::ResultPolicy;
pub use snapshots::{
    Conversation, EntityGenerations, GenerationFuture, SNAPSHOT_IDLE, SnapshotCache, floor,
};
pub use tool::{
    AnswerFuture, BoxFuture, ClaimTools, Host, HostCall, HostTool, HostToolFuture, Tool, host_spec,
    invalid,
};
pub use toolhost_gates::IDEMPOTENCY_LEASE;
