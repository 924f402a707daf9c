//! The call path. Every tool call the host serves goes through
//! [`Toolhost::call`], one function you can read top to bottom; each later
//! concern (authentication, policy, the resolver, gates, bounds) adds one
//! line to it.
//!
//! This room owns the order of the steps and the one audit event per call.
//! It owns none of the steps themselves: the catalog finds the tool, the
//! policy decides (the same decision for listing and calling), the runtime
//! runs it, the audit sink stores the event.

mod call;
mod error;
mod metrics;
mod snapshots;
mod tool;

pub use call::{CallRequest, Toolhost};
pub use error::InvokeError;
pub use snapshots::{Conversation, SNAPSHOT_IDLE, SnapshotCache};
pub use tool::{HostTool, HostToolFuture, Tool};
