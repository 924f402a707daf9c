//! The receipt a finished run leaves: canonical JSON, stamped with its
//! SHA-256, written with the run's last audit row and never edited.

use serde::{Deserialize, Serialize};
use toolhost_limits::RunBudget;
use toolhost_types::Digest;

use crate::{RevisionRef, RunSource, RunState};

/// The receipt format's version: bumped when a field changes meaning.
pub const RECEIPT_VERSION: u32 = 1;

/// Everything a person needs to trust a run's result: who ran what code
/// with which inputs under which bounds, what it reached and was refused,
/// how it ended and what it left.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Receipt {
    /// [`RECEIPT_VERSION`].
    pub receipt_version: u32,
    /// The run.
    pub run_id: String,
    /// Its tenant.
    pub tenant: String,
    /// Who started it.
    pub principal: String,
    /// `user` or `service`.
    pub principal_kind: String,
    /// The client it was started through.
    pub client_id: String,
    /// The tool.
    pub tool: String,
    /// Which revision (the served one, or a candidate).
    pub source: RunSource,
    /// The revision's digests and signer.
    pub revision: RevisionRef,
    /// SHA-256 of the canonical JSON of the arguments (never the values).
    pub argument_digest: String,
    /// The host that ran the last attempt.
    pub host: HostRecord,
    /// The budget applied.
    pub budget: RunBudget,
    /// Unix milliseconds.
    pub created_at_ms: i64,
    /// When the first attempt started (none: it never started).
    pub started_at_ms: Option<i64>,
    /// When it ended (settled, just after its guest stopped).
    pub finished_at_ms: i64,
    /// When a cancel was first asked for, if one was and the run heard it
    /// (a run that answered before its worker heard the cancel keeps its
    /// outcome, and this stays empty).
    pub cancel_requested_at_ms: Option<i64>,
    /// When the last attempt's guest stopped: it answered, failed, ran out
    /// of time, or was interrupted by a cancel (none: no guest ran, as for
    /// a run cancelled before it started). Left out when none, so a
    /// receipt written before the field existed stays canonical.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_stopped_at_ms: Option<i64>,
    /// Every attempt, in order.
    pub attempts: Vec<AttemptRecord>,
    /// How it ended: `succeeded`, `failed`, `cancelled` or `timed_out`.
    pub state: String,
    /// The typed error, unless it succeeded.
    pub error: Option<ErrorRecord>,
    /// SHA-256 of the canonical JSON of its structured answer, if it answered.
    pub answer_sha256: Option<String>,
    /// Every request the last attempt sent, in order.
    pub outbound: Vec<OutboundRecord>,
    /// Every attempt the sandbox refused, in order.
    pub refused: Vec<RefusalRecord>,
    /// What it left.
    pub artifacts: Vec<ArtifactRecord>,
    /// Why a re-run (after a worker died) is safe, when there was one.
    pub note: Option<String>,
}

/// The host that ran it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostRecord {
    /// The host's version.
    pub version: String,
    /// SHA-256 of the sandbox engine's configuration.
    pub engine_sha256: String,
    /// The worker (replica) id.
    pub worker: String,
}

/// One attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// 1, 2, …
    pub number: u32,
    /// The worker that ran it, when known.
    pub worker: Option<String>,
    /// How it ended: `finished`; `lost` (its worker stopped renewing the
    /// lease; the run was taken over); `handed_over` (its worker was
    /// asked to stop and queued the run again for another); or
    /// `input_required` (its guest asked the client for input; the run
    /// waited for the answers and ran again with them).
    pub ended: String,
}

/// A typed error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorRecord {
    /// The stable code.
    pub code: String,
    /// For people.
    pub message: String,
}

/// One request a run sent to a backend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutboundRecord {
    /// `GET` or `HEAD`.
    pub method: String,
    /// The backend's name.
    pub backend: String,
    /// The path asked for (query included).
    pub path: String,
    /// The status answered (0: none, the exchange failed).
    pub status: u16,
    /// Response body bytes.
    pub bytes: u64,
    /// How long it took.
    pub ms: u64,
}

/// One thing the sandbox refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusalRecord {
    /// `backend`, `method`, `filesystem`, `environment`, `socket`,
    /// `artifact`…
    pub what: String,
    /// What was tried and why it was refused.
    pub detail: String,
}

/// One artifact the run kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactRecord {
    /// `toolhost://artifacts/<id>`.
    pub uri: String,
    /// The name the plugin gave it.
    pub name: String,
    /// Its type.
    pub mime_type: String,
    /// Lower-case hex SHA-256 of its bytes.
    pub sha256: String,
    /// Length of its bytes.
    pub size: u64,
}

/// Why a stored receipt does not check out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReceiptError {
    /// Its text is not what its digest says.
    #[error("the receipt's SHA-256 is {actual}, the run records {recorded}")]
    DigestMismatch {
        /// What the run row (or audit row) records.
        recorded: String,
        /// What the text hashes to.
        actual: String,
    },
    /// Its text is not a receipt.
    #[error("the receipt is not valid: {0}")]
    Malformed(String),
    /// Its text is valid but not in canonical form.
    #[error("the receipt is not in canonical form")]
    NotCanonical,
}

impl Receipt {
    /// The canonical JSON (keys sorted, no whitespace) and its SHA-256.
    pub fn seal(&self) -> (String, Digest) {
        let value = serde_json::to_value(self).expect("a receipt is plain data");
        let text = toolhost_types::canonical_json(&value);
        let digest = Digest::of(text.as_bytes());
        (text, digest)
    }

    /// Checks `text` against the digest a run recorded and parses it.
    pub fn verify(text: &str, recorded: &str) -> Result<Receipt, ReceiptError> {
        let actual = Digest::of(text.as_bytes()).to_string();
        if actual != recorded {
            return Err(ReceiptError::DigestMismatch {
                recorded: recorded.to_owned(),
                actual,
            });
        }
        let receipt: Receipt =
            serde_json::from_str(text).map_err(|e| ReceiptError::Malformed(e.to_string()))?;
        if receipt.seal().0 != text {
            return Err(ReceiptError::NotCanonical);
        }
        Ok(receipt)
    }

    /// The state it records.
    pub fn run_state(&self) -> Option<RunState> {
        RunState::parse(&self.state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> Receipt {
        Receipt {
            receipt_version: RECEIPT_VERSION,
            run_id: "run_00".into(),
            tenant: "demo".into(),
            principal: "ada".into(),
            principal_kind: "user".into(),
            client_id: "cli".into(),
            tool: "explore".into(),
            source: RunSource::Active,
            revision: RevisionRef {
                id: Some("0123456789abcdef".into()),
                plugin: "testbench".into(),
                version: "0.1.0".into(),
                component_sha256: "aa".into(),
                manifest_sha256: None,
                signer: None,
                catalog_version: Some("1.0.0".into()),
            },
            argument_digest: "bb".into(),
            host: HostRecord {
                version: "0.1.0".into(),
                engine_sha256: "cc".into(),
                worker: "w1".into(),
            },
            budget: RunBudget::DEFAULT,
            created_at_ms: 1,
            started_at_ms: Some(2),
            finished_at_ms: 3,
            cancel_requested_at_ms: None,
            guest_stopped_at_ms: Some(3),
            attempts: vec![AttemptRecord {
                number: 1,
                worker: Some("w1".into()),
                ended: "finished".into(),
            }],
            state: "succeeded".into(),
            error: None,
            answer_sha256: Some("dd".into()),
            outbound: vec![OutboundRecord {
                method: "GET".into(),
                backend: "testbench".into(),
                path: "/api/projects".into(),
                status: 200,
                bytes: 10,
                ms: 1,
            }],
            refused: vec![],
            artifacts: vec![],
            note: None,
        }
    }

    #[test]
    fn a_sealed_receipt_verifies_and_any_edit_is_caught() {
        let (text, digest) = sample().seal();
        let back = Receipt::verify(&text, &digest.to_string()).expect("verifies");
        assert_eq!(back, sample());
        assert_eq!(back.run_state(), Some(RunState::Succeeded));
        let edited = text.replace("\"status\":200", "\"status\":201");
        let e = Receipt::verify(&edited, &digest.to_string()).expect_err("edited");
        assert!(matches!(e, ReceiptError::DigestMismatch { .. }), "{e}");
        let spaced = text.replacen(',', ", ", 1);
        let e = Receipt::verify(&spaced, &Digest::of(spaced.as_bytes()).to_string());
        assert_eq!(e, Err(ReceiptError::NotCanonical));
    }

    #[test]
    fn a_receipt_without_a_guest_stop_time_is_canonical_as_it_was_written() {
        let mut old = sample();
        old.guest_stopped_at_ms = None;
        let (text, digest) = old.seal();
        assert!(!text.contains("guest_stopped_at_ms"), "{text}");
        let back = Receipt::verify(&text, &digest.to_string()).expect("verifies");
        assert_eq!(back.guest_stopped_at_ms, None);
    }

    #[test]
    fn the_canonical_form_sorts_keys() {
        let (text, _) = sample().seal();
        let at = |k: &str| text.find(&format!("\"{k}\"")).expect("present");
        assert!(at("argument_digest") < at("budget") && at("tenant") < at("tool"));
    }
}
