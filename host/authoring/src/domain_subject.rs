//! A domain subject (`PLUGIN/KIND:OBJECT`): the plugin's `authoring`
//! export owns the meaning, the host owns the state. A proposal is the
//! plugin's own JSON, validated (and normalized into the arguments of the
//! kind's promoting tool) and diffed against the object as the session was
//! bound to it, in sandboxes that reach no backend. Promotion is a call of
//! the promoting tool through the ordinary call path (RBAC, plan, gates,
//! idempotency, audit): a promotion into production waits for a person.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost_runtime::CallContext;
use toolhost_types::{Digest, Principal, canonical_json};
use toolhost_workspace::{Promotion, PromotionId, PromotionState, Session, SessionView, Subject};

use super::bind::Domain;
use crate::Work;
use crate::WorkspaceError;
use toolhost_invoke::{Answer, CallRequest, InvokeError};

/// A domain proposal, checked: its normalized form, digest and diff.
pub(crate) struct Checked {
    pub normalized: Value,
    pub digest: String,
    pub diff: Value,
}

impl Work<'_> {
    /// The domain subject's plugin and kind, and its object's state now,
    /// which must still be the state the session was bound to.
    pub(crate) async fn domain_as_bound(
        &self,
        who: &Principal,
        session: &Session,
    ) -> Result<(Domain, Value), InvokeError> {
        let Subject::Domain { plugin, kind, .. } = &session.subject else {
            return Err(WorkspaceError::ProposalInvalid {
                problems: vec![super::plugin_subject::problem(
                    "/object",
                    "this session authors a plugin revision, not an object",
                )],
            }
            .into());
        };
        let domain = self.domain(who, plugin, kind).await?;
        let bound = session
            .bound_to
            .clone()
            .ok_or_else(|| WorkspaceError::SubjectInvalid {
                detail: format!("session {} is bound to no object", session.id),
            })?;
        let now = self.domain_now(who, &domain, bound).await?;
        if now.version != session.subject_version {
            return Err(WorkspaceError::SubjectChanged {
                session: session.id.to_string(),
                bound: session.subject_version.clone(),
                current: now.version,
            }
            .into());
        }
        Ok((domain, now.current.unwrap_or(Value::Null)))
    }

    /// Validates and diffs `object` against `current` in sandboxes that
    /// reach no backend.
    pub(crate) async fn check_object(
        &self,
        who: &Principal,
        domain: &Domain,
        current: &Value,
        object: &Value,
    ) -> Result<Checked, InvokeError> {
        let plugin = &domain.plugin;
        let ctx = CallContext::new(&who.tenant, &who.subject);
        let kind = &domain.kind.name;
        let normalized = self
            .host
            .runtime()
            .authoring_validate(&plugin.plugin, &ctx, kind, current, object, &plugin.budget)
            .await?
            .map_err(|problems| WorkspaceError::ProposalInvalid { problems })?;
        let changes = self
            .host
            .runtime()
            .authoring_diff(
                &plugin.plugin,
                &ctx,
                kind,
                current,
                &normalized,
                &plugin.budget,
            )
            .await?;
        let digest = Digest::of(canonical_json(&normalized).as_bytes()).to_string();
        Ok(Checked {
            normalized,
            digest,
            diff: json!({"changes": changes}),
        })
    }

    /// Calls the kind's promoting tool with the proposal's normalized
    /// arguments, as `who`, through the ordinary call path (its own audit
    /// row). Its idempotency key is the promotion's, so a retry never acts
    /// twice; `gate_id` carries a confirmed gate.
    pub(crate) async fn promote_object(
        &self,
        who: &Principal,
        domain: &Domain,
        normalized: &Value,
        promotion: Promotion,
        gate_id: Option<&str>,
    ) -> Result<Promotion, InvokeError> {
        let mut args = normalized.clone();
        let map = args
            .as_object_mut()
            .ok_or_else(|| WorkspaceError::ProposalInvalid {
                problems: vec![super::plugin_subject::problem(
                    "/object",
                    "the normalized proposal is not an object",
                )],
            })?;
        map.insert(
            toolhost_invoke::IDEMPOTENCY_KEY_ARG.into(),
            json!(format!("promotion-{}", promotion.id)),
        );
        if let Some(gate) = gate_id {
            map.insert(toolhost_invoke::GATE_ID_ARG.into(), json!(gate));
        }
        let req = CallRequest::new(&domain.kind.promoted_by, args);
        let cancel = CancellationToken::new();
        let answer = self.host.call(who, req, &cancel).await?;
        let now = self.host.now_ms();
        let moved = |state, gate: Option<String>, result: Option<Value>| Promotion {
            state,
            gate_id: gate.or(promotion.gate_id.clone()),
            result,
            updated_at_ms: now,
            ..promotion.clone()
        };
        match answer {
            Answer::Output(out) => Ok(moved(PromotionState::Promoted, None, Some(out.structured))),
            Answer::Artifact(a, _) => Ok(moved(
                PromotionState::Promoted,
                None,
                Some(json!({"artifact": a.id.uri(), "sha256": a.sha256.to_string()})),
            )),
            Answer::ApprovalRequired(gate) => Ok(moved(
                PromotionState::AwaitingApproval,
                Some(gate.id().to_string()),
                None,
            )),
            Answer::Clarify(c) => Err(WorkspaceError::PromotionNeedsClarification {
                question: c.ask_user.clone(),
            }
            .into()),
            Answer::NeedsInput(_) => Err(WorkspaceError::PromotionNeedsClarification {
                question: "the promoting tool asks the client for input".into(),
            }
            .into()),
        }
    }
}

/// The promotion of `proposal` that is waiting for its gate, if any: a
/// promotion goes on under its first id.
pub(crate) fn waiting(view: &SessionView, proposal: &str) -> Option<Promotion> {
    view.promotions
        .iter()
        .find(|p| p.proposal.as_str() == proposal && p.state == PromotionState::AwaitingApproval)
        .cloned()
}

/// A new promotion of `proposal` by `who`.
pub(crate) fn started(
    who: &Principal,
    view: &SessionView,
    proposal: &toolhost_workspace::ProposalId,
    now: i64,
    state: PromotionState,
) -> Promotion {
    Promotion {
        id: PromotionId::of(proposal),
        session: view.session.id.clone(),
        proposal: proposal.clone(),
        promoted_by: who.subject.clone(),
        state,
        revision_id: None,
        gate_id: None,
        result: None,
        created_at_ms: now,
        updated_at_ms: now,
    }
}
