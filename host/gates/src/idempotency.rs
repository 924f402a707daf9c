//! Idempotency keys on mutating tools: the same key and the same request
//! answer with the stored result; the same key and another request is a
//! typed conflict (`IDEMPOTENCY_KEY_REUSED`).

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
    /// The same request is running now (another retry holds the key).
    InProgress,
    /// The key was used for another request.
    Reused,
}
