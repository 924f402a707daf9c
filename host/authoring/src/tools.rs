//! The workspace's host tools, for every client in both eras:
//! `create_authoring_session`, `get_authoring_session`,
//! `list_authoring_sessions`, `propose_revision`, `get_revision_diff` and
//! `promote_revision` (`start_exploration` takes a `session_id` too: see
//! `session_runs.rs`). A session is seen by its tenant's principals who
//! hold [`AUTHORING_PERMISSION`] (co-authors); anyone else, or another
//! tenant, is told it does not exist.

use serde_json::{Value, json};
use toolhost_audit::Effect;
use toolhost_runtime::ToolSpec;
use toolhost_types::Principal;
use toolhost_workspace::{Session, SessionId, SessionState, Subject, WorkspaceEffect};

use super::{Guarded, mutation, text_arg, view};
use std::sync::Arc;

use toolhost_invoke::{AnswerFuture, HostCall, HostTool, HostToolFuture, host_spec};

use crate::answer::{Answered, find_proposal, output};
use crate::{Authoring, Work, WorkspaceError};

/// Every workspace tool needs this permission (besides, for a domain
/// subject, the permission of the tool that promotes it).
pub const AUTHORING_PERMISSION: &str = "workspace:author";

/// The most sessions one listing returns.
const MAX_LISTED: u64 = 100;

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

/// The authoring tools, each over `service`.
pub(crate) fn host_tools(service: &Arc<Authoring>) -> Vec<Arc<dyn HostTool>> {
    Which::ALL
        .iter()
        .map(|&which| {
            let tool = AuthoringTool {
                spec: which.spec(),
                which,
                service: service.clone(),
            };
            Arc::new(tool) as Arc<dyn HostTool>
        })
        .collect()
}

/// Which authoring tool.
#[derive(Debug, Clone, Copy)]
enum Which {
    CreateAuthoringSession,
    GetAuthoringSession,
    ListAuthoringSessions,
    ProposeRevision,
    GetRevisionDiff,
    PromoteRevision,
}

impl Which {
    const ALL: [Which; 6] = [
        Which::CreateAuthoringSession,
        Which::GetAuthoringSession,
        Which::ListAuthoringSessions,
        Which::ProposeRevision,
        Which::GetRevisionDiff,
        Which::PromoteRevision,
    ];

    fn spec(self) -> ToolSpec {
        match self {
            Which::CreateAuthoringSession => create_session_spec(),
            Which::GetAuthoringSession => get_session_spec(),
            Which::ListAuthoringSessions => list_sessions_spec(),
            Which::ProposeRevision => propose_revision_spec(),
            Which::GetRevisionDiff => get_revision_diff_spec(),
            Which::PromoteRevision => promote_revision_spec(),
        }
    }
}

fn create_session_spec() -> ToolSpec {
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
    )
}

fn get_session_spec() -> ToolSpec {
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
    )
}

fn list_sessions_spec() -> ToolSpec {
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
    )
}

fn propose_revision_spec() -> ToolSpec {
    spec(
        "propose_revision",
        "Propose a revision",
        "Adds a proposal to a session, which the host validates and diffs against the subject as the session was bound to it. A plugin subject takes {\"revision\": {\"component\": \"upl_…\", \"manifest\": \"upl_…\", \"signature\"?: \"upl_…\"}} (handles from POST /workspace/uploads); a domain subject takes {\"object\": {…}} in the plugin's own shape. Optional: summary, evidence (run ids of this session). URLs, paths and hashes in the object are data; credentials and cookies are refused anywhere (AUTHORITY_REFUSED, with the pointer and kind), a revision's files only by handle, and a field the promoting tool declares a location must be a public http(s) address. A stale expected_version is WORKSPACE_VERSION_CONFLICT (with the current version); a replayed idempotency_key answers the first result.",
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
    )
}

fn get_revision_diff_spec() -> ToolSpec {
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
    )
}

fn promote_revision_spec() -> ToolSpec {
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
    )
}

/// An authoring tool: its spec, and the service it works with.
struct AuthoringTool {
    spec: ToolSpec,
    which: Which,
    service: Arc<Authoring>,
}

impl HostTool for AuthoringTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        let (work, who, args) = (self.service.on(c.host), c.who, c.args);
        match self.which {
            Which::CreateAuthoringSession => Box::pin(create_session(work, who, args)),
            Which::GetAuthoringSession => Box::pin(get_session(work, who, args)),
            Which::ListAuthoringSessions => Box::pin(list_sessions(work, who, args)),
            Which::ProposeRevision => Box::pin(crate::propose::propose_revision(work, who, args)),
            Which::GetRevisionDiff => Box::pin(get_revision_diff(work, who, args)),
            Which::PromoteRevision => Box::pin(crate::promote::promote_revision(work, who, args)),
        }
    }

    fn lost<'a>(&'a self, c: HostCall<'a>, effect: &'a Effect) -> AnswerFuture<'a> {
        Box::pin(crate::lost(self.service.on(c.host), c.who, effect))
    }
}

/// `create_authoring_session(subject, idempotency_key?)`.
async fn create_session(host: Work<'_>, who: &Principal, args: &Value) -> Answered {
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

/// `get_authoring_session(session_id)`.
async fn get_session(host: Work<'_>, who: &Principal, args: &Value) -> Answered {
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

/// `list_authoring_sessions(mine?, limit?)`.
async fn list_sessions(host: Work<'_>, who: &Principal, args: &Value) -> Answered {
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

/// `get_revision_diff(session_id, proposal_id)`.
async fn get_revision_diff(host: Work<'_>, who: &Principal, args: &Value) -> Answered {
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
