//! What `fuzz/targets` drives and the public API does not offer: the
//! `tools/list` cursors (`cursor`) and the MRTR request states (`ask`),
//! both private to the handler. Hidden from the docs and not an API:
//! nothing but the fuzz targets uses it.

use std::collections::BTreeMap;

use serde_json::Value;
use toolhost_resolver::{Candidate, Clarification, Reason};
use toolhost_types::Principal;

use crate::ask::{Asker, Keyring};

/// The cursor that resumes a `tools/list` after the tool named `last`.
pub fn cursor_after(last: &str) -> String {
    crate::cursor::after(last)
}

/// The tool name `cursor` resumes after, or `None` if it is not ours (the
/// handler answers that with invalid params).
pub fn cursor_resumes_after(cursor: &str) -> Option<String> {
    crate::cursor::parse(cursor)
}

/// Seals questions into request states and opens them, as `/mcp` does.
pub struct States(Asker);

impl States {
    /// Alone: a random key of its own (`toolhost call`, tests).
    pub fn alone() -> Self {
        States(Asker::new())
    }

    /// Over `ring`, as each replica on a shared store; refused as the
    /// codec refuses a keyring (a short key, no active key).
    pub fn over(ring: Keyring) -> Result<Self, String> {
        Asker::over(ring).map(States)
    }

    /// The `requestState` of a question (which of two projects) asked of
    /// `who` calling `tool` with `arguments`: what a client echoes back.
    pub fn seal(&self, who: &Principal, tool: &str, arguments: &Value) -> String {
        let candidate = |id: i64, name: &str| Candidate {
            id,
            name: name.into(),
            label: name.into(),
        };
        let question = Clarification {
            reason: Reason::Ambiguous,
            ask_user: "Which project?".into(),
            candidates: vec![candidate(1, "payments"), candidate(2, "auth")],
            scoped_by: BTreeMap::new(),
            field: "project".into(),
        };
        self.0
            .input_required(who, tool, arguments, &question, &BTreeMap::new())
            .expect("a fixed question with candidates seals")
            .request_state
            .expect("a sealed question carries its state")
    }

    /// Whether `state` opens for `who` calling `tool` with `arguments`:
    /// sealed by one of the keys for exactly them, and not expired. Opening
    /// does not spend it.
    pub fn opens(&self, who: &Principal, tool: &str, arguments: &Value, state: &str) -> bool {
        self.0.open(who, tool, arguments, state).is_ok()
    }
}
