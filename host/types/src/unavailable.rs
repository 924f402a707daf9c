//! The one failure every store-backed room shares: the database could not
//! be reached. Each room's store error carries it as its own variant, so
//! the edge can answer a typed, retryable error instead of an internal one.

/// The store could not be reached while doing `operation`: the connection
/// was refused or lost, no pooled connection came free in time, or the
/// server is shutting down or starting. What the operation would have
/// written is all there or not there at all (one transaction); the request
/// may be tried again once the store is back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the store is unreachable ({operation}): {message}")]
pub struct StoreUnavailable {
    /// What the store was doing, e.g. `"insert audit row"`.
    pub operation: String,
    /// The driver's message.
    pub message: String,
}
