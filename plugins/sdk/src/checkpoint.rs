//! Human checkpoints, through the host's `checkpoint` import.
//!
//! A run that needs a person's judgement (a flaky-looking failure, a visual
//! check) opens a checkpoint for it with [`open`]; a person decides it from
//! any MCP client (the host's `list_checkpoints` and `decide_checkpoint`
//! tools); the tool reads the decision by calling [`open`] again on a later
//! call, and carries it to its backend:
//!
//! ```no_run
//! # use toolhost_sdk::prelude::*;
//! # fn f() -> Result<(), ToolError> {
//! let info = checkpoint::open(
//!     "execution:ex-3",
//!     "UI test \"Checkout page\" in staging needs a person's review",
//!     "The screenshot diff of step 2 is 4% off; the run itself passed.",
//! )?;
//! match info.outcome.as_deref() {
//!     Some(outcome) => log::info!("decided: record {outcome}"),
//!     None => log::info!("waiting for a person: checkpoint {}", info.id),
//! }
//! # Ok(()) }
//! ```
//!
//! The host owns the rows: one per (tenant, plugin, subject), so calling
//! [`open`] again for the same subject never opens a second one, and no
//! plugin can decide one. Limits, all the host's: opening counts against
//! the call's host-call budget; it is refused while a `plan` runs and after
//! a clarification (the call may not have side effects then), so a tool
//! that opens checkpoints is a mutating one.

use crate::ToolError;
use crate::bindings::toolhost::plugin::checkpoint as wit;

/// The longest subject the host accepts, in bytes (and it must not be empty).
pub const MAX_SUBJECT_BYTES: usize = 200;
/// The longest title the host accepts, in bytes: one line for a person.
pub const MAX_TITLE_BYTES: usize = 300;
/// The longest evidence the host accepts, in bytes: a paragraph or two.
pub const MAX_EVIDENCE_BYTES: usize = 4096;

/// A checkpoint as the host holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointInfo {
    /// The host's id (`chk_…`): what a person names in `decide_checkpoint`.
    pub id: String,
    /// Bumped by every change (1 when opened); a decision names the version
    /// it saw, so two people cannot both decide it.
    pub version: u32,
    /// `waiting` or `decided`.
    pub state: String,
    /// The person's choice once decided: `confirm`, `false_positive` or
    /// `inconclusive`.
    pub disposition: Option<String>,
    /// The step outcome the choice records once decided: `passed` (for
    /// `confirm`) or `inconclusive` (for the other two). This is what to
    /// carry to the backend.
    pub outcome: Option<String>,
}

impl CheckpointInfo {
    /// Whether a person has decided it (it has an [`outcome`](Self::outcome)).
    pub fn is_decided(&self) -> bool {
        self.outcome.is_some()
    }
}

impl From<wit::CheckpointInfo> for CheckpointInfo {
    fn from(c: wit::CheckpointInfo) -> Self {
        CheckpointInfo {
            id: c.id,
            version: c.version,
            state: c.state,
            disposition: c.disposition,
            outcome: c.outcome,
        }
    }
}

/// Opens the checkpoint of `subject` (the plugin's own name for the run,
/// e.g. `execution:ex-3`), or answers the one already open for it in the
/// caller's tenant, decided or not: calling it again is how a tool reads
/// the decision.
///
/// `title` (one line) and `evidence` (what the person needs to judge) are
/// cut to [`MAX_TITLE_BYTES`] and [`MAX_EVIDENCE_BYTES`] at a character
/// boundary, ending in `…`; they matter only when the checkpoint is first
/// opened. `subject` is not cut (cutting would change which run it names):
/// an empty one or one over [`MAX_SUBJECT_BYTES`] is refused.
///
/// A refusal (while planning or after a clarification, no checkpoint store,
/// a subject out of bounds) is [`ToolError::Failed`] with the host's reason.
/// Outside wasm (native unit tests) there is no host: every call fails.
pub fn open(subject: &str, title: &str, evidence: &str) -> Result<CheckpointInfo, ToolError> {
    let title = fit(title, MAX_TITLE_BYTES);
    let evidence = fit(evidence, MAX_EVIDENCE_BYTES);
    #[cfg(target_arch = "wasm32")]
    let answer: Result<wit::CheckpointInfo, String> = wit::open(subject, &title, &evidence);
    #[cfg(not(target_arch = "wasm32"))]
    let answer: Result<wit::CheckpointInfo, String> = {
        drop((title, evidence));
        Err("checkpoints are only available inside the toolhost".into())
    };
    answer
        .map(CheckpointInfo::from)
        .map_err(|why| refused(subject, &why))
}

/// The host's refusal, naming the subject.
fn refused(subject: &str, why: &str) -> ToolError {
    ToolError::Failed(format!("checkpoint {subject:?} could not be opened: {why}"))
}

/// `text` if it fits in `max` bytes, else its longest prefix that fits
/// with a trailing `…`, cut at a character boundary.
fn fit(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    const ELLIPSIS: &str = "…";
    let mut end = max.saturating_sub(ELLIPSIS.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{ELLIPSIS}", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_fits_is_kept_and_longer_text_is_cut_at_a_character_boundary() {
        assert_eq!(fit("short", 10), "short");
        assert_eq!(fit("0123456789", 10), "0123456789");
        assert_eq!(fit("0123456789ab", 10), "0123456…");
        // "é" is two bytes: the cut never splits it.
        let cut = fit(&"é".repeat(10), 10);
        assert_eq!(cut, "ééé…");
        assert!(cut.len() <= 10);
        assert!(fit(&"x".repeat(5000), MAX_EVIDENCE_BYTES).len() <= MAX_EVIDENCE_BYTES);
    }

    #[test]
    fn a_record_keeps_every_field_and_knows_whether_it_is_decided() {
        let waiting = CheckpointInfo::from(wit::CheckpointInfo {
            id: "chk_1".into(),
            version: 1,
            state: "waiting".into(),
            disposition: None,
            outcome: None,
        });
        assert_eq!((waiting.id.as_str(), waiting.version), ("chk_1", 1));
        assert!(!waiting.is_decided());
        let decided = CheckpointInfo {
            version: 2,
            state: "decided".into(),
            disposition: Some("false_positive".into()),
            outcome: Some("inconclusive".into()),
            ..waiting
        };
        assert!(decided.is_decided());
    }

    #[test]
    fn a_refusal_is_failed_naming_the_subject_and_the_hosts_reason() {
        assert_eq!(
            refused("execution:ex-3", "no side effects while planning"),
            ToolError::Failed(
                "checkpoint \"execution:ex-3\" could not be opened: no side effects while planning"
                    .into()
            )
        );
    }

    #[test]
    fn outside_wasm_opening_fails_instead_of_trapping() {
        let err = open("execution:ex-1", "t", "e").expect_err("no host");
        assert!(
            matches!(&err, ToolError::Failed(m) if m.contains("only available inside")),
            "{err:?}"
        );
    }
}
