//! The workspace's host tools, for every client in both eras:
//! `create_authoring_session`, `get_authoring_session`,
//! `list_authoring_sessions`, `propose_revision`, `get_revision_diff`,
//! `promote_revision`, the session's end (`close_authoring_session`,
//! `abandon_authoring_session`) and rebinding (`rebind_authoring_session`,
//! see `session_end.rs`), and uploads (`begin_upload`, `upload_chunk`: see
//! `upload_tools.rs`). `start_exploration` takes a `session_id` too: see
//! `session_runs.rs`. A session is seen by its tenant's principals who
//! hold [`AUTHORING_PERMISSION`] (co-authors); anyone else, or another
//! tenant, is told it does not exist.

use serde_json::{Value, json};
use toolhost_audit::Effect;
use toolhost_runtime::ToolSpec;
use toolhost_types::Principal;
use toolhost_workspace::{
    Session, SessionId, SessionKey, SessionState, SessionsFrom, Subject, WorkspaceEffect,
};

use super::{Guarded, mutation, text_arg, view};
use std::sync::Arc;

use toolhost_invoke::{
    AnswerFuture, HostCall, HostTool, HostToolFuture, InvokeError, host_spec, invalid,
};

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
    CloseAuthoringSession,
    AbandonAuthoringSession,
    RebindAuthoringSession,
    BeginUpload,
    UploadChunk,
}

impl Which {
    const ALL: [Which; 11] = [
        Which::CreateAuthoringSession,
        Which::GetAuthoringSession,
        Which::ListAuthoringSessions,
        Which::ProposeRevision,
        Which::GetRevisionDiff,
        Which::PromoteRevision,
        Which::CloseAuthoringSession,
        Which::AbandonAuthoringSession,
        Which::RebindAuthoringSession,
        Which::BeginUpload,
        Which::UploadChunk,
    ];

    fn spec(self) -> ToolSpec {
        match self {
            Which::CreateAuthoringSession => create_session_spec(),
            Which::GetAuthoringSession => get_session_spec(),
            Which::ListAuthoringSessions => list_sessions_spec(),
            Which::ProposeRevision => propose_revision_spec(),
            Which::GetRevisionDiff => get_revision_diff_spec(),
            Which::PromoteRevision => promote_revision_spec(),
            Which::CloseAuthoringSession => end_spec(
                "close_authoring_session",
                "Close an authoring session",
                "Ends a session whose work is done: it takes no more proposals, runs or promotions, and stays readable as the record of what was proposed, run and promoted. Its runs still going end as they would. A stale expected_version is WORKSPACE_VERSION_CONFLICT; a replayed idempotency_key answers the first result.",
            ),
            Which::AbandonAuthoringSession => end_spec(
                "abandon_authoring_session",
                "Abandon an authoring session",
                "Gives a session up: it takes no more proposals, runs or promotions, and its exploration runs not yet over are cancelled with it (runs_cancelled names them). It stays readable. A stale expected_version is WORKSPACE_VERSION_CONFLICT; a replayed idempotency_key answers the first result.",
            ),
            Which::RebindAuthoringSession => end_spec(
                "rebind_authoring_session",
                "Rebind an authoring session",
                "Binds an open session to its subject as it is now (the same object, or the plugin's active revision now), when it moved since the session was bound (SUBJECT_CHANGED on promotion). Proposals made before keep the version their diff is against and are not promoted (PROPOSAL_OUTDATED; outdated_proposals names them): propose again to be diffed against the subject now.",
            ),
            Which::BeginUpload => begin_upload_spec(),
            Which::UploadChunk => upload_chunk_spec(),
        }
    }
}

/// A step of a session that names only the session, its version and a key.
fn end_spec(name: &str, title: &str, description: &str) -> ToolSpec {
    spec(
        name,
        title,
        description,
        json!({
            "type": "object",
            "properties": {
                "session_id": {"type": "string"},
                "expected_version": {"type": "integer", "minimum": 1},
                "idempotency_key": {"type": "string", "maxLength": 255}
            },
            "required": ["session_id", "expected_version", "idempotency_key"],
            "additionalProperties": false
        }),
        true,
    )
}

fn begin_upload_spec() -> ToolSpec {
    spec(
        crate::upload_tools::BEGIN_UPLOAD_TOOL,
        "Begin an upload",
        "Begins uploading a draft's component, manifest or signature over MCP (the same as POST /workspace/uploads for a client without HTTP): give its kind and its size in bytes; checked against the kind's bound and your upload quota before any byte is sent (LIMIT_EXCEEDED, QUOTA_EXCEEDED), and counted against your upload rate. Answers the upload's handle and chunk_bytes; send the bytes with upload_chunk.",
        json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["component", "manifest", "signature"]},
                "size": {"type": "integer", "minimum": 1, "description": "The upload's bytes in all."}
            },
            "required": ["kind", "size"],
            "additionalProperties": false
        }),
        true,
    )
}

fn upload_chunk_spec() -> ToolSpec {
    spec(
        "upload_chunk",
        "Send a chunk of an upload",
        "Appends the next chunk of an upload you began: data is base64 of at most chunk_bytes (524288) bytes, offset the bytes sent so far. A chunk sent twice or one that skips bytes is UPLOAD_OFFSET_MISMATCH with the offset to send (received), and changes nothing. With last: true the upload is finished and its handle may be named in propose_revision; sha256 (hex, optional, with the last chunk) is checked against the bytes that arrived (UPLOAD_DIGEST_MISMATCH drops the upload). An upload idle for five minutes is dropped.",
        json!({
            "type": "object",
            "properties": {
                "upload": {"type": "string", "description": "The handle begin_upload answered (upl_…)."},
                "offset": {"type": "integer", "minimum": 0},
                "data": {"type": "string", "contentEncoding": "base64", "maxLength": 699052},
                "last": {"type": "boolean"},
                "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"}
            },
            "required": ["upload", "offset", "data"],
            "additionalProperties": false
        }),
        true,
    )
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
        "Your tenant's authoring sessions, newest first, a page at a time; mine: only the ones you opened. The answer's older and newer are cursors: pass one back as before (the next, older page) or after (the page before it).",
        json!({
            "type": "object",
            "properties": {
                "mine": {"type": "boolean"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LISTED},
                "before": {"type": "string", "maxLength": 100, "description": "A cursor (older): the sessions just older than it."},
                "after": {"type": "string", "maxLength": 100, "description": "A cursor (newer): the sessions just newer than it."}
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
        "Adds a proposal to a session, which the host validates and diffs against the subject as the session was bound to it. A plugin subject takes {\"revision\": {\"component\": \"upl_…\", \"manifest\": \"upl_…\", \"signature\"?: \"upl_…\"}} (handles from begin_upload and upload_chunk, or POST /workspace/uploads); a domain subject takes {\"object\": {…}} in the plugin's own shape. Optional: summary, evidence (run ids of this session). URLs, paths and hashes in the object are data; credentials and cookies are refused anywhere (AUTHORITY_REFUSED, with the pointer and kind), a revision's files only by handle, and a field the promoting tool declares a location must be a public http(s) address. A stale expected_version is WORKSPACE_VERSION_CONFLICT (with the current version); a replayed idempotency_key answers the first result.",
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
            Which::CloseAuthoringSession => {
                Box::pin(crate::session_end::close_session(work, who, args))
            }
            Which::AbandonAuthoringSession => {
                Box::pin(crate::session_end::abandon_session(work, who, args))
            }
            Which::RebindAuthoringSession => {
                Box::pin(crate::session_end::rebind_session(work, who, args))
            }
            Which::BeginUpload => Box::pin(crate::upload_tools::begin_upload(work, who, args)),
            Which::UploadChunk => Box::pin(crate::upload_tools::upload_chunk(work, who, args)),
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

/// Where `args` start a page: `before` or `after` a cursor, or the newest.
fn page_from(args: &Value) -> Result<SessionsFrom, InvokeError> {
    let cursor = |name: &str| -> Result<Option<SessionKey>, InvokeError> {
        match args.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => s
                .parse()
                .map(Some)
                .map_err(|e: String| invalid(format!("{name}: {e}"))),
            Some(_) => Err(invalid(format!("{name} is a cursor (a string)"))),
        }
    };
    match (cursor("before")?, cursor("after")?) {
        (Some(_), Some(_)) => Err(invalid("give before or after, not both")),
        (Some(k), None) => Ok(SessionsFrom::OlderThan(k)),
        (None, Some(k)) => Ok(SessionsFrom::NewerThan(k)),
        (None, None) => Ok(SessionsFrom::Newest),
    }
}

fn key(s: &Session) -> String {
    SessionKey {
        created_at_ms: s.created_at_ms,
        id: s.id.clone(),
    }
    .to_string()
}

/// `list_authoring_sessions(mine?, limit?, before?, after?)`: a page of
/// sessions by keyset, with the cursors of the pages beside it.
async fn list_sessions(host: Work<'_>, who: &Principal, args: &Value) -> Answered {
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(20)
        .clamp(1, MAX_LISTED);
    let limit = usize::try_from(limit).unwrap_or(20);
    let mine = args.get("mine").and_then(Value::as_bool).unwrap_or(false);
    let owner = mine.then_some(who.subject.as_str());
    let from = page_from(args)?;
    // One more than the page: whether there is another beyond it.
    let mut sessions = host
        .workspace()?
        .store
        .sessions(
            &who.tenant,
            owner,
            &from,
            u32::try_from(limit + 1).unwrap_or(21),
        )
        .await
        .map_err(WorkspaceError::Store)?;
    let toward_newer = matches!(from, SessionsFrom::NewerThan(_));
    let beyond = toolhost_types::keep_page(&mut sessions, limit, toward_newer);
    let (older, newer) = match from {
        SessionsFrom::Newest => (beyond.then(|| sessions.last().map(key)).flatten(), None),
        SessionsFrom::OlderThan(_) => (
            beyond.then(|| sessions.last().map(key)).flatten(),
            sessions.first().map(key),
        ),
        SessionsFrom::NewerThan(_) => (
            sessions.last().map(key),
            beyond.then(|| sessions.first().map(key)).flatten(),
        ),
    };
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
    let structured = json!({"sessions": listed, "older": older, "newer": newer});
    Ok((output(structured, text), Vec::new()))
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
