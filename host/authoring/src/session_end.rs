//! How a session ends, and how it follows its subject:
//! `close_authoring_session` (its work is done), `abandon_authoring_session`
//! (given up: its runs not yet over are cancelled with it) and
//! `rebind_authoring_session` (bound to the subject as it is now). Each is
//! one step of the session's version, with an idempotency key, like every
//! mutation; an ended session takes no more, and stays readable as the
//! record of what was proposed, run and promoted.
//!
//! A rebinding moves the session, not its proposals: each keeps the
//! subject version its diff is against, and one made before the rebinding
//! is not promoted (`PROPOSAL_OUTDATED`: propose it again, to be diffed
//! against the subject as it is now).

use serde_json::{Value, json};
use toolhost_invoke::InvokeError;
use toolhost_runs::RunId;
use toolhost_types::Principal;
use toolhost_workspace::{Binding, SessionChange, SessionState, SessionView};

use crate::answer::{Answered, changed, output};
use crate::{Step, Work};

/// `close_authoring_session(session_id, expected_version, idempotency_key)`.
pub(crate) async fn close_session(host: Work<'_>, who: &Principal, args: &Value) -> Answered {
    end(host, who, args, SessionState::Closed).await
}

/// `abandon_authoring_session(session_id, expected_version, idempotency_key)`.
pub(crate) async fn abandon_session(host: Work<'_>, who: &Principal, args: &Value) -> Answered {
    end(host, who, args, SessionState::Abandoned).await
}

/// The session `args` names ended in `state`; abandoning it cancels its
/// runs not yet over, in the same step.
async fn end(host: Work<'_>, who: &Principal, args: &Value, state: SessionState) -> Answered {
    let tool = match state {
        SessionState::Abandoned => "abandon_authoring_session",
        _ => "close_authoring_session",
    };
    let step = match host.step(who, tool, args).await? {
        Ok(step) => step,
        Err(replay) => return Ok((replay, Vec::new())),
    };
    let abandoned = state == SessionState::Abandoned;
    let cancelled = match abandoned {
        true => host.runs_not_over(who, &step.view).await?,
        false => Vec::new(),
    };
    let session = &step.view.session;
    let structured = json!({
        "session_id": session.id,
        "version": step.expected + 1,
        "state": state,
        "runs_cancelled": cancelled,
    });
    let text = match (abandoned, cancelled.len()) {
        (false, _) => format!(
            "Session {} is closed; it takes no more mutations.",
            session.id
        ),
        (true, 0) => format!(
            "Session {} is abandoned; it had no run to cancel.",
            session.id
        ),
        (true, n) => format!(
            "Session {} is abandoned; {n} of its runs are being cancelled.",
            session.id
        ),
    };
    let now = host.host.now_ms();
    let out = output(structured, text);
    let change = SessionChange {
        state: Some(state),
        cancel_runs: abandoned,
        ..step.change(who, &out, now)
    };
    changed(out, change)
}

/// `rebind_authoring_session(session_id, expected_version, idempotency_key)`:
/// the session bound to its subject as it is now (the same object, or the
/// plugin's active revision now).
pub(crate) async fn rebind_session(host: Work<'_>, who: &Principal, args: &Value) -> Answered {
    let step: Step = match host.step(who, "rebind_authoring_session", args).await? {
        Ok(step) => step,
        Err(replay) => return Ok((replay, Vec::new())),
    };
    let session = &step.view.session;
    let bound = host.rebind(who, session).await?;
    let outdated: Vec<&str> = step
        .view
        .proposals
        .iter()
        .filter(|p| p.subject_version != bound.version)
        .map(|p| p.id.as_str())
        .collect();
    let moved = bound.version != session.subject_version;
    let structured = json!({
        "session_id": session.id,
        "version": step.expected + 1,
        "state": session.state,
        "bound_to": bound.bound_to,
        "subject_version": bound.version,
        "previous_version": session.subject_version,
        "moved": moved,
        "current": bound.current,
        "outdated_proposals": outdated,
    });
    let text = match moved {
        true => format!(
            "Session {} is bound to {} at version {} (it was {}); {} earlier proposals are against the old version: propose again to promote.",
            session.id,
            session.subject,
            bound.version,
            session.subject_version,
            outdated.len()
        ),
        false => format!(
            "Session {} is bound to {} at version {}, as it was.",
            session.id, session.subject, bound.version
        ),
    };
    let now = host.host.now_ms();
    let out = output(structured, text);
    let change = SessionChange {
        rebound: Some(Binding {
            bound_to: bound.bound_to,
            subject_version: bound.version,
        }),
        ..step.change(who, &out, now)
    };
    changed(out, change)
}

impl Work<'_> {
    /// The session's runs not yet over, by id (read as the caller's
    /// tenant): those an abandonment cancels.
    async fn runs_not_over(
        &self,
        who: &Principal,
        view: &SessionView,
    ) -> Result<Vec<String>, InvokeError> {
        let store = &self.runs().config().store;
        let mut going = Vec::new();
        for link in &view.runs {
            let Some(id) = RunId::parse(&link.run_id) else {
                continue;
            };
            let run = store
                .run(&who.tenant, &id)
                .await
                .map_err(toolhost_runs_service::RunError::Store)?;
            if run.is_some_and(|r| !r.state.is_terminal()) {
                going.push(link.run_id.clone());
            }
        }
        Ok(going)
    }
}
