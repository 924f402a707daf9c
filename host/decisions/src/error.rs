//! Why a decision was refused, and how the call path carries it.

use toolhost_gates::{CheckpointError, DecideError};
use toolhost_invoke::{InvokeError, Refusal};

/// A decision that was refused: nothing changed.
#[derive(Debug, thiserror::Error)]
pub enum DecisionError {
    /// The gate cannot be decided (unknown, decided already, expired).
    #[error("{0}")]
    Gate(#[source] DecideError),
    /// The checkpoint's disposition was refused.
    #[error("{0}")]
    Checkpoint(#[source] CheckpointError),
    /// The person who raised the gate may not decide it.
    #[error("you raised gate {gate}: another person must decide it")]
    SelfApproval {
        /// The gate.
        gate: String,
    },
    /// Confirming a high-risk gate needs a reason.
    #[error("gate {gate} is high-risk: confirming it needs a reason")]
    ReasonRequired {
        /// The gate.
        gate: String,
    },
}

impl DecisionError {
    /// The stable code a client sees.
    pub fn code(&self) -> &'static str {
        match self {
            DecisionError::Gate(DecideError::NotFound(_)) => "GATE_NOT_FOUND",
            DecisionError::Gate(DecideError::Decided { .. }) => "GATE_DECIDED",
            DecisionError::Gate(DecideError::Expired(_)) => "GATE_EXPIRED",
            DecisionError::Checkpoint(CheckpointError::NotFound(_)) => "CHECKPOINT_NOT_FOUND",
            DecisionError::Checkpoint(CheckpointError::VersionConflict { .. }) => {
                "CHECKPOINT_VERSION_CONFLICT"
            }
            DecisionError::Checkpoint(CheckpointError::Decided(_)) => "CHECKPOINT_DECIDED",
            DecisionError::Gate(DecideError::Store(_))
            | DecisionError::Checkpoint(CheckpointError::Store(_)) => "INTERNAL",
            DecisionError::SelfApproval { .. } => "SELF_APPROVAL",
            DecisionError::ReasonRequired { .. } => "REASON_REQUIRED",
        }
    }
}

impl From<DecisionError> for InvokeError {
    fn from(e: DecisionError) -> Self {
        let refusal = match &e {
            DecisionError::Gate(DecideError::Store(store))
            | DecisionError::Checkpoint(CheckpointError::Store(store)) => {
                let unavailable = store.unavailable().cloned();
                Refusal::store(e, unavailable)
            }
            _ => Refusal::new(e.code(), e.to_string()),
        };
        refusal.into()
    }
}

#[cfg(test)]
mod tests {
    use toolhost_gates::GateStoreError;
    use toolhost_types::StoreUnavailable;

    use super::*;

    #[test]
    fn a_refusal_keeps_its_code_and_words_and_a_store_failure_says_only_what_the_caller_may_know() {
        let refused: InvokeError = DecisionError::SelfApproval { gate: "g".into() }.into();
        assert_eq!(refused.code(), "SELF_APPROVAL");
        assert_eq!(
            refused.to_string(),
            "you raised gate g: another person must decide it"
        );
        assert!(!refused.is_internal());

        let failed = GateStoreError::Failed("disk on fire".into());
        let failed: InvokeError = DecisionError::Gate(DecideError::Store(failed)).into();
        assert_eq!(failed.code(), "INTERNAL");
        assert!(failed.is_internal());
        assert!(!failed.to_string().contains("disk"));

        let down = StoreUnavailable {
            operation: "decide gate".into(),
            message: "connection refused".into(),
        };
        let down = CheckpointError::Store(GateStoreError::Unavailable(down));
        let down: InvokeError = DecisionError::Checkpoint(down).into();
        assert_eq!(down.code(), "STORE_UNAVAILABLE");
        assert!(!down.is_internal());
        assert_eq!(down.details().expect("retry hint")["retryable"], true);
    }
}
