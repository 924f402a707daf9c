//! Why the runs service refused (its own errors, carried by the call path
//! as one [`Refusal`]), and why a run ended without its guest's answer
//! ([`RunEnd`], the codes of run outcomes).

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

/// Why a run ended without its guest's answer, when the host decided it:
/// the code its outcome and receipt record (and its audit row's). A guest
/// that failed on its own carries the sandbox's code instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    /// The run was cancelled: before it started (by the cancel itself, or
    /// by the worker that claimed it after the cancel was stored) or while
    /// it ran (its guest stopped at its next epoch tick).
    Cancelled,
    /// Every one of the run's attempts lost its worker (each lease
    /// expired).
    Lost,
    /// One attempt's worker stopped renewing its lease, and the run was
    /// taken over (the audit row of that attempt only; the run goes on).
    AttemptLost,
    /// One attempt's worker was asked to stop and the guest had not
    /// answered within its grace: the run was queued again for another
    /// worker, without spending an attempt (the audit row of that attempt
    /// only; the run goes on).
    HandedOver,
    /// The revision the run pinned can no longer be loaded.
    RevisionUnavailable,
    /// The run's time budget ran out before an attempt started.
    TimedOut,
    /// The guest asked its client for input, and the run cannot ask (its
    /// client cannot answer, or it asked every round it may); or, for an
    /// attempt's row, the run waits for the answers.
    InputRequired,
    /// The run waited for its client's input longer than it may.
    InputTimedOut,
    /// The guest asked a person to clarify; a run cannot.
    NeedsClarification,
    /// The guest's answer held a credential or a host path: withheld.
    SecretExposure,
}

impl RunEnd {
    /// The stable code a client sees in the run's outcome.
    pub fn code(self) -> &'static str {
        match self {
            RunEnd::Cancelled => "CANCELLED",
            RunEnd::Lost => "RUN_LOST",
            RunEnd::AttemptLost => "RUN_ATTEMPT_LOST",
            RunEnd::HandedOver => "RUN_HANDED_OVER",
            RunEnd::RevisionUnavailable => "REVISION_UNAVAILABLE",
            RunEnd::TimedOut => "TIMEOUT",
            RunEnd::InputRequired => "INPUT_REQUIRED",
            RunEnd::InputTimedOut => "INPUT_TIMEOUT",
            RunEnd::NeedsClarification => "NEEDS_CLARIFICATION",
            RunEnd::SecretExposure => "SECRET_EXPOSURE",
        }
    }
}
