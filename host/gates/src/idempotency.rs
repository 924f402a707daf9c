//! Idempotency keys on mutating tools: the same key and the same request
//! answer with the stored result; the same key and another request is a
//! typed conflict (`IDEMPOTENCY_KEY_REUSED`).

use std::time::Duration;

/// How long a `running` claim holds its key. A claim is settled with its
/// call's audit row; one older than this belongs to a call that can no
/// longer be running (a host killed mid-call), and the same request may
/// claim the key again. A call's wall time is bounded by its budgets
/// (at most 120 s per sandbox run at the ceiling: the snapshots, the plan,
/// the call), so 15 minutes never cuts a live call short.
pub const IDEMPOTENCY_LEASE: Duration = Duration::from_secs(15 * 60);

/// Names one client-chosen key: per tenant, principal and tool.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey {
    /// The caller's tenant.
    pub tenant: String,
    /// The caller.
    pub principal: String,
    /// The tool.
    pub tool: String,
    /// The key the client sent (1–255 printable ASCII characters).
    pub key: String,
}

/// What claiming a key found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdempotencyClaim {
    /// The key is new: it is now held for this request; run the call, then
    /// store its result (or release the key if it failed).
    Claimed,
    /// The same request finished before: its stored result (JSON text).
    Done(String),
    /// The same request is running now (another retry holds the key,
    /// and its claim is younger than [`IDEMPOTENCY_LEASE`]).
    InProgress,
    /// The key was used for another request.
    Reused,
}
