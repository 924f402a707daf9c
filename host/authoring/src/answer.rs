//! What the authoring tools answer: an output, and the session change
//! written with the call's row.

use serde_json::Value;
use toolhost_audit::Effect;
use toolhost_invoke::InvokeError;
use toolhost_runtime::ToolOutput;
use toolhost_workspace::{Proposal, SessionChange, SessionView, WorkspaceEffect};

use crate::WorkspaceError;

/// What an authoring tool answers: its output, and the effects to write
/// with the call's row.
pub(crate) type Answered = Result<(ToolOutput, Vec<Effect>), InvokeError>;

/// An output with `structured` content and `text` for people.
pub(crate) fn output(structured: Value, text: String) -> ToolOutput {
    ToolOutput {
        structured,
        text: Some(text),
        content: Vec::new(),
    }
}

/// The answer of a mutation of a session: `out`, and `change` written with
/// the call's row.
pub(crate) fn changed(out: ToolOutput, change: SessionChange) -> Answered {
    let effect = WorkspaceEffect::Change(Box::new(change));
    Ok((out, vec![Effect::Workspace(effect)]))
}

/// Proposal `id` of `view`'s session, or `PROPOSAL_NOT_FOUND`.
pub(crate) fn find_proposal<'a>(
    view: &'a SessionView,
    id: &str,
) -> Result<&'a Proposal, InvokeError> {
    view.proposals
        .iter()
        .find(|p| p.id.as_str() == id)
        .ok_or_else(|| {
            WorkspaceError::NotFound {
                what: "proposal",
                id: id.to_owned(),
            }
            .into()
        })
}
