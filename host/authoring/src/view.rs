//! What the workspace tools answer: a session with what is in it, the runs
//! that joined it as they are now (with their receipt digests), and its
//! promotions with their review as it stands.

use serde_json::{Value, json};
use toolhost_runs::RunId;
use toolhost_types::Principal;
use toolhost_workspace::{Promotion, Proposal, Session, SessionView};

use crate::Work;

/// A session's own fields.
pub(crate) fn session(s: &Session) -> Value {
    json!({
        "session_id": s.id,
        "subject": s.subject.to_string(),
        "bound_to": s.bound_to,
        "subject_version": s.subject_version,
        "version": s.version,
        "state": s.state,
        "owner": s.owner,
        "created_at_ms": s.created_at_ms,
        "updated_at_ms": s.updated_at_ms,
    })
}

/// A proposal as listed (its diff is `get_revision_diff`'s).
pub(crate) fn proposal(p: &Proposal) -> Value {
    json!({
        "proposal_id": p.id,
        "number": p.number,
        "author": p.author,
        "digest": p.digest,
        "body": p.body,
        "validation": p.validation,
        "subject_version": p.subject_version,
        "created_at_ms": p.created_at_ms,
    })
}

impl Work<'_> {
    /// `view` as the read tools answer it.
    pub(crate) async fn session_view(&self, who: &Principal, view: &SessionView) -> Value {
        let mut runs = Vec::with_capacity(view.runs.len());
        for link in &view.runs {
            runs.push(
                self.linked_run(
                    who,
                    &link.run_id,
                    link.proposal.as_ref().map(|p| p.as_str()),
                )
                .await,
            );
        }
        let mut promotions = Vec::with_capacity(view.promotions.len());
        for p in &view.promotions {
            promotions.push(self.promotion_view(p).await);
        }
        let mut v = session(&view.session);
        v["proposals"] = view.proposals.iter().map(proposal).collect();
        v["runs"] = Value::Array(runs);
        v["promotions"] = Value::Array(promotions);
        v
    }

    /// A run of the session as it is now: its state and, once over, its
    /// receipt's digest.
    async fn linked_run(&self, who: &Principal, id: &str, proposal: Option<&str>) -> Value {
        let store = &self.runs().config().store;
        let run = match RunId::parse(id) {
            Some(rid) => store.run(&who.tenant, &rid).await.ok().flatten(),
            None => None,
        };
        json!({
            "run_id": id,
            "proposal_id": proposal,
            "tool": run.as_ref().map(|r| r.spec.tool.clone()),
            "state": run.as_ref().map(|r| r.state.as_str()),
            "receipt_sha256": run.as_ref().and_then(|r| r.receipt_sha256.clone()),
        })
    }

    /// A promotion, with its revision's review state now (a plugin subject).
    pub(crate) async fn promotion_view(&self, p: &Promotion) -> Value {
        let review = match (
            &p.revision_id,
            self.workspace().ok().and_then(|w| w.catalog.clone()),
        ) {
            (Some(id), Some(live)) => live
                .store()
                .revision(id)
                .await
                .ok()
                .flatten()
                .map(|r| r.state.as_str()),
            _ => None,
        };
        let mut v = promotion(p);
        v["review_state"] = json!(review);
        v
    }
}

/// A promotion's own fields.
pub(crate) fn promotion(p: &Promotion) -> Value {
    json!({
        "promotion_id": p.id,
        "proposal_id": p.proposal,
        "promoted_by": p.promoted_by,
        "state": p.state,
        "revision_id": p.revision_id,
        "gate_id": p.gate_id,
        "result": p.result,
        "created_at_ms": p.created_at_ms,
        "updated_at_ms": p.updated_at_ms,
    })
}
