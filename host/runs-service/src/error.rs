//! Why the runs service refused: its own errors, carried by the call path
//! as one [`Refusal`].

use toolhost_runs::RunStoreError;

use toolhost_invoke::{InvokeError, Refusal};

/// A run refused, or not found.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// No run by that id that the caller may see (whether it never
    /// existed or is someone else's is not said).
    #[error("run {id:?} not found")]
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// Too many runs of the caller (or its tenant) are queued or running:
    /// nothing was queued.
    #[error(
        "{scope} already has {limit} exploration runs queued or running; nothing was queued: wait for one to finish, or cancel one"
    )]
    QueueFull {
        /// `this principal` or `this tenant`.
        scope: &'static str,
        /// The bound.
        limit: u32,
    },
    /// The run moved on while this call decided about it (it started, or
    /// ended): nothing was written; read it and decide again.
    #[error("run {id:?} changed meanwhile; nothing was written: read it again")]
    Changed {
        /// The run.
        id: String,
    },
    /// The run store failed, or none is configured.
    #[error("internal error")]
    Store(#[source] RunStoreError),
}

impl RunError {
    /// The stable code a client sees.
    pub fn code(&self) -> &'static str {
        match self {
            RunError::NotFound { .. } => "RUN_NOT_FOUND",
            RunError::QueueFull { .. } => "RATE_LIMITED",
            RunError::Changed { .. } => "RUN_CHANGED",
            RunError::Store(_) => "INTERNAL",
        }
    }
}

impl From<RunError> for InvokeError {
    fn from(e: RunError) -> Self {
        let refusal = match &e {
            RunError::Store(store) => {
                let unavailable = store.unavailable().cloned();
                Refusal::store(e, unavailable)
            }
            _ => Refusal::new(e.code(), e.to_string()),
        };
        refusal.into()
    }
}
