//! `promote_revision`: a proposal handed on, never activated here: a
//! plugin revision submitted for review, a domain object to the plugin's
//! promoting tool.

use serde_json::{Value, json};
use toolhost_invoke::{InvokeError, invalid};
use toolhost_review::NewRevision;
use toolhost_types::Principal;
use toolhost_workspace::{
    Promotion, PromotionState, Proposal, SessionChange, SessionState, SessionView, Subject,
};

use crate::answer::{Answered, changed, find_proposal, output};
use crate::domain_subject::{started, waiting};
use crate::plugin_subject::{RevisionDraft, source};
use crate::propose::invalid_proposal;
use crate::{Work, WorkspaceError, text_arg, view};

/// `promote_revision(session_id, proposal_id, expected_version, idempotency_key, gate_id?)`.
pub(crate) async fn promote_revision(host: Work<'_>, who: &Principal, args: &Value) -> Answered {
    let step = match host.step(who, "promote_revision", args).await? {
        Ok(step) => step,
        Err(replay) => return Ok((replay, Vec::new())),
    };
    let (expected, view) = (step.expected, &step.view);
    let proposal = find_proposal(view, text_arg(args, "proposal_id")?)?.clone();
    let gate_id = args.get("gate_id").and_then(Value::as_str);
    let session = &view.session;
    if proposal.subject_version != session.subject_version {
        return Err(WorkspaceError::ProposalOutdated {
            proposal: proposal.id.to_string(),
            made_against: proposal.subject_version,
            bound: session.subject_version.clone(),
        }
        .into());
    }
    let now = host.host.now_ms();
    let (promotion, submit) = match &session.subject {
        Subject::Plugin { .. } => promote_plugin(host, who, view, &proposal, now).await?,
        Subject::Domain { .. } => {
            let promotion = promote_domain(host, who, view, &proposal, gate_id, now).await?;
            (promotion, None)
        }
    };
    let state = matches!(
        promotion.state,
        PromotionState::Promoted | PromotionState::PendingReview
    )
    .then_some(SessionState::Promoted);
    let mut shown = view::promotion(&promotion);
    if promotion.state == PromotionState::PendingReview {
        shown["review_state"] = json!("pending_review");
    }
    let structured = json!({
        "session_id": session.id,
        "version": expected + 1,
        "state": state.unwrap_or(session.state),
        "promotion": shown,
    });
    let text = promoted_text(&promotion);
    let out = output(structured, text);
    let change = SessionChange {
        state,
        promotion: Some(promotion),
        submit,
        ..step.change(who, &out, now)
    };
    changed(out, change)
}

fn promoted_text(p: &toolhost_workspace::Promotion) -> String {
    match p.state {
        PromotionState::PendingReview => format!(
            "Revision {} is submitted for review; a reviewer's approval activates it.",
            p.revision_id.as_deref().unwrap_or("?")
        ),
        PromotionState::AwaitingApproval => format!(
            "The promotion waits for a person's approval of gate {}; once confirmed, promote again with gate_id.",
            p.gate_id.as_deref().unwrap_or("?")
        ),
        PromotionState::Promoted => "Promoted.".into(),
    }
}

/// A plugin revision's promotion: the candidate, signed, checked again
/// against the plugin as it is now, and submitted for review.
async fn promote_plugin(
    host: Work<'_>,
    who: &Principal,
    view: &SessionView,
    proposal: &Proposal,
    now: i64,
) -> Result<(Promotion, Option<Box<NewRevision>>), InvokeError> {
    let session = &view.session;
    let draft: RevisionDraft = serde_json::from_value(proposal.body["revision"].clone())
        .map_err(|e| invalid_proposal("/revision", &e.to_string()))?;
    let now_version = host.plugin_version_now(session).await?;
    if now_version != session.subject_version {
        return Err(WorkspaceError::SubjectChanged {
            session: session.id.to_string(),
            bound: session.subject_version.clone(),
            current: now_version,
        }
        .into());
    }
    let source = source(&session.id, proposal.id.as_str());
    let c = (host.check_candidate(who, session, &draft, true, source)).await?;
    host.promotable(&c.checked.revision.id).await?;
    let mut p = started(who, view, &proposal.id, now, PromotionState::PendingReview);
    p.revision_id = Some(c.checked.revision.id.clone());
    Ok((p, Some(Box::new(c.checked.revision))))
}

/// A domain object's promotion: the plugin's promoting tool called with
/// the normalized proposal (again with `gate_id` once its gate is
/// confirmed).
async fn promote_domain(
    host: Work<'_>,
    who: &Principal,
    view: &SessionView,
    proposal: &Proposal,
    gate_id: Option<&str>,
    now: i64,
) -> Result<Promotion, InvokeError> {
    let (domain, _) = host.domain_as_bound(who, &view.session).await?;
    let promotion = match (waiting(view, proposal.id.as_str()), gate_id) {
        (Some(p), Some(_)) => p,
        (Some(p), None) => {
            return Err(WorkspaceError::PromotionAwaitingApproval {
                gate: p.gate_id.unwrap_or_default(),
            }
            .into());
        }
        (None, Some(_)) => {
            return Err(invalid(
                "gate_id: no promotion of this proposal waits for a gate",
            ));
        }
        (None, None) => started(
            who,
            view,
            &proposal.id,
            now,
            PromotionState::AwaitingApproval,
        ),
    };
    let normalized = (proposal.validation.get("normalized").cloned()).unwrap_or(Value::Null);
    host.promote_object(who, &domain, &normalized, promotion, gate_id)
        .await
}
