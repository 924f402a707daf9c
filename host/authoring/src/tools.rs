//! The workspace's host tools, for every client in both eras:
//! `create_authoring_session`, `get_authoring_session`,
//! `list_authoring_sessions`, `propose_revision`, `get_revision_diff` and
//! `promote_revision` (`start_exploration` takes a `session_id` too: see
//! `session_runs.rs`). A session is seen by its tenant's principals who
//! hold [`AUTHORING_PERMISSION`] (co-authors); anyone else, or another
//! tenant, is told it does not exist.

use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_audit::Effect;
use toolhost_runtime::{ToolOutput, ToolSpec};
use toolhost_types::Principal;
use toolhost_workspace::{
    PromotionState, Proposal, ProposalId, Session, SessionChange, SessionId, SessionState, Subject,
    WorkspaceEffect, refuse_authority,
};

use super::domain_subject::{started, waiting};
use super::plugin_subject::{RevisionDraft, problem, source};
use super::{Guarded, mutation, text_arg, view};
use std::sync::Arc;

use toolhost_invoke::{
    AnswerFuture, HostCall, HostTool, HostToolFuture, InvokeError, host_spec, invalid,
};

use crate::{Authoring, Work, WorkspaceError};

/// Every workspace tool needs this permission (besides, for a domain
/// subject, the permission of the tool that promotes it).
pub const AUTHORING_PERMISSION: &str = "workspace:author";

/// The most sessions one listing returns.
const MAX_LISTED: u64 = 100;
/// The longest summary a proposal carries.
const MAX_SUMMARY_CHARS: usize = 500;
/// The most runs a proposal cites as evidence.
const MAX_EVIDENCE: usize = 32;

fn spec(name: &str, title: &str, description: &str, input: Value, mutating: bool) -> ToolSpec {
    host_spec(
        name,
        title,
        description,
        input,
        AUTHORING_PERMISSION,
        mutating,
    )
}

fn output(structured: Value, text: String) -> ToolOutput {
    ToolOutput {
        structured,
        text: Some(text),
        content: Vec::new(),
    }
}

type Answered = Result<(ToolOutput, Vec<Effect>), InvokeError>;

/// `create_authoring_session(subject, idempotency_key?)`.
pub struct CreateAuthoringSession(ToolSpec, Arc<Authoring>);

impl CreateAuthoringSession {
    pub(crate) fn new(authoring: Arc<Authoring>) -> Self {
        Self(
            spec(
                "create_authoring_session",
                "Open an authoring session",
                "Opens a workspace session the host keeps, bound to what it authors as it is now: plugin:NAME for a new revision of a plugin (proposals are uploaded candidates; promotion submits one for review), or PLUGIN/KIND:OBJECT for an object in a plugin's domain, e.g. testbench/test_plan:payments (promotion calls the plugin's promoting tool, gated as any call). Answers the session at version 1; every later mutation names the version it read and an idempotency key.",
                json!({
                    "type": "object",
                    "properties": {
                        "subject": {"type": "string", "maxLength": 300, "description": "plugin:NAME, or PLUGIN/KIND:OBJECT (OBJECT: a name or an id)."},
                        "idempotency_key": {"type": "string", "maxLength": 255}
                    },
                    "required": ["subject"],
                    "additionalProperties": false
                }),
                true,
            ),
            authoring,
        )
    }
}

impl HostTool for CreateAuthoringSession {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(self.run(self.1.on(c.host), c.who, c.args))
    }

    fn lost<'a>(&'a self, c: HostCall<'a>, effect: &'a Effect) -> AnswerFuture<'a> {
        Box::pin(crate::lost(self.1.on(c.host), c.who, effect))
    }
}

impl CreateAuthoringSession {
    async fn run(&self, host: Work<'_>, who: &Principal, args: &Value) -> Answered {
        let guard = match host
            .mutation_guard(who, "create_authoring_session", args, false)
            .await?
        {
            Some(Guarded::Replay(out)) => return Ok((out, Vec::new())),
            Some(Guarded::Fresh(g)) => Some(g),
            None => None,
        };
        let subject: Subject =
            text_arg(args, "subject")?
                .parse()
                .map_err(
                    |e: toolhost_workspace::SubjectError| WorkspaceError::SubjectInvalid {
                        detail: e.to_string(),
                    },
                )?;
        let bound = host.bind(who, &subject).await?;
        let now = host.host.now_ms();
        let session = Session {
            id: SessionId::new(),
            tenant: who.tenant.clone(),
            owner: who.subject.clone(),
            subject,
            bound_to: bound.bound_to,
            subject_version: bound.version,
            version: 1,
            state: SessionState::Open,
            created_at_ms: now,
            updated_at_ms: now,
        };
        let mut structured = view::session(&session);
        structured["current"] = bound.current.unwrap_or(Value::Null);
        let text = format!(
            "Session {} authors {} (bound at version {}); it is at version 1.",
            session.id, session.subject, session.subject_version
        );
        let out = output(structured, text);
        let mutation = guard.map(|g| mutation(who, &g, &session.id, &out, now));
        let effect = WorkspaceEffect::Open {
            session: Box::new(session),
            mutation,
        };
        Ok((out, vec![Effect::Workspace(effect)]))
    }
}

/// `get_authoring_session(session_id)`.
pub struct GetAuthoringSession(ToolSpec, Arc<Authoring>);

impl GetAuthoringSession {
    pub(crate) fn new(authoring: Arc<Authoring>) -> Self {
        Self(
            spec(
                "get_authoring_session",
                "Read an authoring session",
                "A session with its version, proposals, the exploration runs that joined it (state and receipt digest) and its promotions (with the review's state).",
                json!({
                    "type": "object",
                    "properties": {"session_id": {"type": "string"}},
                    "required": ["session_id"],
                    "additionalProperties": false
                }),
                false,
            ),
            authoring,
        )
    }
}

impl HostTool for GetAuthoringSession {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(self.run(self.1.on(c.host), c.who, c.args))
    }
}

impl GetAuthoringSession {
    async fn run(&self, host: Work<'_>, who: &Principal, args: &Value) -> Answered {
        let view = host
            .visible_session(who, text_arg(args, "session_id")?)
            .await?;
        let structured = host.session_view(who, &view).await;
        let s = &view.session;
        let text = format!(
            "Session {} ({}) is {} at version {}: {} proposals, {} runs, {} promotions.",
            s.id,
            s.subject,
            s.state,
            s.version,
            view.proposals.len(),
            view.runs.len(),
            view.promotions.len()
        );
        Ok((output(structured, text), Vec::new()))
    }
}

/// `list_authoring_sessions(mine?, limit?)`.
pub struct ListAuthoringSessions(ToolSpec, Arc<Authoring>);

impl ListAuthoringSessions {
    pub(crate) fn new(authoring: Arc<Authoring>) -> Self {
        Self(
            spec(
                "list_authoring_sessions",
                "List authoring sessions",
                "Your tenant's authoring sessions, newest first; mine: only the ones you opened.",
                json!({
                    "type": "object",
                    "properties": {
                        "mine": {"type": "boolean"},
                        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LISTED}
                    },
                    "additionalProperties": false
                }),
                false,
            ),
            authoring,
        )
    }
}

impl HostTool for ListAuthoringSessions {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(self.run(self.1.on(c.host), c.who, c.args))
    }
}

impl ListAuthoringSessions {
    async fn run(&self, host: Work<'_>, who: &Principal, args: &Value) -> Answered {
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .unwrap_or(20)
            .min(MAX_LISTED);
        let mine = args.get("mine").and_then(Value::as_bool).unwrap_or(false);
        let owner = mine.then_some(who.subject.as_str());
        let sessions = host
            .workspace()?
            .store
            .sessions(&who.tenant, owner, u32::try_from(limit).unwrap_or(20))
            .await
            .map_err(WorkspaceError::Store)?;
        let text = sessions
            .iter()
            .map(|s| format!("{} {} {} v{}", s.id, s.subject, s.state, s.version))
            .collect::<Vec<_>>()
            .join("\n");
        let listed: Vec<Value> = sessions.iter().map(view::session).collect();
        let text = if text.is_empty() {
            "No sessions.".into()
        } else {
            text
        };
        Ok((output(json!({"sessions": listed}), text), Vec::new()))
    }
}

/// What a proposal may carry besides its subject's body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProposalBody {
    /// A candidate revision (a plugin subject).
    #[serde(default)]
    revision: Option<Value>,
    /// An object of the plugin's kind (a domain subject).
    #[serde(default)]
    object: Option<Value>,
    /// One line for the reviewer.
    #[serde(default)]
    summary: Option<String>,
    /// Runs of this session the proposal was built from.
    #[serde(default)]
    evidence: Vec<String>,
}

fn invalid_proposal(path: &str, message: &str) -> InvokeError {
    WorkspaceError::ProposalInvalid {
        problems: vec![problem(path, message)],
    }
    .into()
}

/// `proposal` parsed, with its evidence checked against the session's runs.
fn parse_proposal(
    view: &toolhost_workspace::SessionView,
    proposal: &Value,
) -> Result<ProposalBody, InvokeError> {
    let body: ProposalBody = serde_json::from_value(proposal.clone())
        .map_err(|e| invalid_proposal("", &e.to_string()))?;
    if body
        .summary
        .as_ref()
        .is_some_and(|s| s.chars().count() > MAX_SUMMARY_CHARS)
    {
        return Err(invalid_proposal(
            "/summary",
            &format!("at most {MAX_SUMMARY_CHARS} characters"),
        ));
    }
    if body.evidence.len() > MAX_EVIDENCE {
        return Err(invalid_proposal(
            "/evidence",
            &format!("at most {MAX_EVIDENCE} runs"),
        ));
    }
    for (i, run) in body.evidence.iter().enumerate() {
        if !view.runs.iter().any(|l| &l.run_id == run) {
            return Err(invalid_proposal(
                &format!("/evidence/{i}"),
                &format!(
                    "{run:?} is not a run of this session (start_exploration with session_id joins one)"
                ),
            ));
        }
    }
    Ok(body)
}

/// `propose_revision(session_id, proposal, expected_version, idempotency_key)`.
pub struct ProposeRevision(ToolSpec, Arc<Authoring>);

impl ProposeRevision {
    pub(crate) fn new(authoring: Arc<Authoring>) -> Self {
        Self(
            spec(
                "propose_revision",
                "Propose a revision",
                "Adds a proposal to a session, which the host validates and diffs against the subject as the session was bound to it. A plugin subject takes {\"revision\": {\"component\": \"upl_…\", \"manifest\": \"upl_…\", \"signature\"?: \"upl_…\"}} (handles from POST /workspace/uploads); a domain subject takes {\"object\": {…}} in the plugin's own shape. Optional: summary, evidence (run ids of this session). Paths, URLs, cookies, credentials and digests are refused as authority. A stale expected_version is WORKSPACE_VERSION_CONFLICT (with the current version); a replayed idempotency_key answers the first result.",
                json!({
                    "type": "object",
                    "properties": {
                        "session_id": {"type": "string"},
                        "proposal": {"type": "object"},
                        "expected_version": {"type": "integer", "minimum": 1},
                        "idempotency_key": {"type": "string", "maxLength": 255}
                    },
                    "required": ["session_id", "proposal", "expected_version", "idempotency_key"],
                    "additionalProperties": false
                }),
                true,
            ),
            authoring,
        )
    }
}

impl HostTool for ProposeRevision {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(self.run(self.1.on(c.host), c.who, c.args))
    }

    fn lost<'a>(&'a self, c: HostCall<'a>, effect: &'a Effect) -> AnswerFuture<'a> {
        Box::pin(crate::lost(self.1.on(c.host), c.who, effect))
    }
}

impl ProposeRevision {
    async fn run(&self, host: Work<'_>, who: &Principal, args: &Value) -> Answered {
        let step = match host.step(who, "propose_revision", args).await? {
            Ok(step) => step,
            Err(replay) => return Ok((replay, Vec::new())),
        };
        let (expected, view) = (step.expected, &step.view);
        let raw = args.get("proposal").cloned().unwrap_or(Value::Null);
        refuse_authority(&raw, host.host.scanner()).map_err(WorkspaceError::AuthorityRefused)?;
        let body = parse_proposal(view, &raw)?;
        let session = &view.session;
        let id = ProposalId::new();
        let (digest, mut validation, diff, keep) =
            match (&session.subject, body.revision, body.object) {
                (Subject::Plugin { .. }, Some(revision), None) => {
                    let draft: RevisionDraft = serde_json::from_value(revision)
                        .map_err(|e| invalid_proposal("/revision", &e.to_string()))?;
                    let c = host
                        .check_candidate(
                            who,
                            session,
                            &draft,
                            false,
                            source(&session.id, id.as_str()),
                        )
                        .await?;
                    (c.digest, c.validation, c.diff, draft.handles())
                }
                (Subject::Domain { .. }, None, Some(object)) => {
                    let (domain, current) = host.domain_as_bound(who, session).await?;
                    let c = host.check_object(who, &domain, &current, &object).await?;
                    let validation = json!({"valid": true, "normalized": c.normalized});
                    (c.digest, validation, c.diff, Vec::new())
                }
                (Subject::Plugin { .. }, _, _) => {
                    return Err(invalid_proposal(
                        "/revision",
                        "a plugin subject takes a revision (and no object)",
                    ));
                }
                (Subject::Domain { .. }, _, _) => {
                    return Err(invalid_proposal(
                        "/object",
                        "a domain subject takes an object (and no revision)",
                    ));
                }
            };
        validation["evidence"] = json!(body.evidence);
        validation["summary"] = json!(body.summary);
        let now = host.host.now_ms();
        let proposal = Proposal {
            id,
            session: session.id.clone(),
            number: i64::try_from(view.proposals.len()).unwrap_or(i64::MAX - 1) + 1,
            author: who.subject.clone(),
            body: raw,
            digest,
            validation,
            diff,
            created_at_ms: now,
        };
        let mut structured = json!({"session_id": session.id, "version": expected + 1});
        structured["proposal"] = view::proposal(&proposal);
        structured["diff"] = proposal.diff.clone();
        let text = format!(
            "Proposal {} (#{}) is in session {}, now at version {}. Read its diff with get_revision_diff.",
            proposal.id,
            proposal.number,
            session.id,
            expected + 1
        );
        let out = output(structured, text);
        let change = SessionChange {
            proposal: Some(proposal),
            keep_uploads: keep,
            ..step.change(who, &out, now)
        };
        Ok((
            out,
            vec![Effect::Workspace(WorkspaceEffect::Change(Box::new(change)))],
        ))
    }
}

/// `get_revision_diff(session_id, proposal_id)`.
pub struct GetRevisionDiff(ToolSpec, Arc<Authoring>);

impl GetRevisionDiff {
    pub(crate) fn new(authoring: Arc<Authoring>) -> Self {
        Self(
            spec(
                "get_revision_diff",
                "Read a proposal's diff",
                "The diff the host computed for a proposal against the subject as the session was bound to it: for a plugin revision, the catalog's capability diff (what a reviewer sees: tools, schemas, permissions, backends, limits, imports, signer, each widening or narrowing); for a domain object, the plugin's structured changes (added, changed, removed).",
                json!({
                    "type": "object",
                    "properties": {"session_id": {"type": "string"}, "proposal_id": {"type": "string"}},
                    "required": ["session_id", "proposal_id"],
                    "additionalProperties": false
                }),
                false,
            ),
            authoring,
        )
    }
}

impl HostTool for GetRevisionDiff {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(self.run(self.1.on(c.host), c.who, c.args))
    }
}

impl GetRevisionDiff {
    async fn run(&self, host: Work<'_>, who: &Principal, args: &Value) -> Answered {
        let view = host
            .visible_session(who, text_arg(args, "session_id")?)
            .await?;
        let p = find_proposal(&view, text_arg(args, "proposal_id")?)?;
        let s = &view.session;
        let structured = json!({
            "session_id": s.id,
            "proposal_id": p.id,
            "subject": s.subject.to_string(),
            "subject_version": s.subject_version,
            "digest": p.digest,
            "diff": p.diff,
        });
        let n = p
            .diff
            .get("changes")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let text = format!(
            "Proposal {} changes {n} things against {}.",
            p.id, s.subject
        );
        Ok((output(structured, text), Vec::new()))
    }
}

/// Proposal `id` of `view`'s session, or `PROPOSAL_NOT_FOUND`.
pub(super) fn find_proposal<'a>(
    view: &'a toolhost_workspace::SessionView,
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

/// `promote_revision(session_id, proposal_id, expected_version, idempotency_key, gate_id?)`.
pub struct PromoteRevision(ToolSpec, Arc<Authoring>);

impl PromoteRevision {
    pub(crate) fn new(authoring: Arc<Authoring>) -> Self {
        Self(
            spec(
                "promote_revision",
                "Promote a proposal",
                "Hands a proposal on; it never activates anything by itself. A plugin revision (signed by a trusted signer) is submitted for review: a reviewer's approval (decide_plugin_review) activates it. A domain object is promoted by calling the plugin's promoting tool with the normalized proposal through the ordinary call path: if that call needs a person's approval, the promotion waits (awaiting_approval, with its gate); once the gate is confirmed, promote again with gate_id.",
                json!({
                    "type": "object",
                    "properties": {
                        "session_id": {"type": "string"},
                        "proposal_id": {"type": "string"},
                        "expected_version": {"type": "integer", "minimum": 1},
                        "idempotency_key": {"type": "string", "maxLength": 255},
                        "gate_id": {"type": "string", "description": "The confirmed gate of a promotion that waited for approval."}
                    },
                    "required": ["session_id", "proposal_id", "expected_version", "idempotency_key"],
                    "additionalProperties": false
                }),
                true,
            ),
            authoring,
        )
    }
}

impl HostTool for PromoteRevision {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(self.run(self.1.on(c.host), c.who, c.args))
    }

    fn lost<'a>(&'a self, c: HostCall<'a>, effect: &'a Effect) -> AnswerFuture<'a> {
        Box::pin(crate::lost(self.1.on(c.host), c.who, effect))
    }
}

impl PromoteRevision {
    async fn run(&self, host: Work<'_>, who: &Principal, args: &Value) -> Answered {
        let step = match host.step(who, "promote_revision", args).await? {
            Ok(step) => step,
            Err(replay) => return Ok((replay, Vec::new())),
        };
        let (expected, view) = (step.expected, &step.view);
        let proposal = find_proposal(view, text_arg(args, "proposal_id")?)?.clone();
        let gate_id = args.get("gate_id").and_then(Value::as_str);
        let session = &view.session;
        let now = host.host.now_ms();
        let (promotion, submit) = match &session.subject {
            Subject::Plugin { .. } => {
                let draft: RevisionDraft =
                    serde_json::from_value(proposal.body["revision"].clone())
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
                let c = host
                    .check_candidate(
                        who,
                        session,
                        &draft,
                        true,
                        source(&session.id, proposal.id.as_str()),
                    )
                    .await?;
                host.promotable(&c.checked.revision.id).await?;
                let mut p = started(who, view, &proposal.id, now, PromotionState::PendingReview);
                p.revision_id = Some(c.checked.revision.id.clone());
                (p, Some(Box::new(c.checked.revision)))
            }
            Subject::Domain { .. } => {
                let (domain, _) = host.domain_as_bound(who, session).await?;
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
                let normalized = proposal
                    .validation
                    .get("normalized")
                    .cloned()
                    .unwrap_or(Value::Null);
                let moved = host
                    .promote_object(who, &domain, &normalized, promotion, gate_id)
                    .await?;
                (moved, None)
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
        Ok((
            out,
            vec![Effect::Workspace(WorkspaceEffect::Change(Box::new(change)))],
        ))
    }
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
