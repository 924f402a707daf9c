//! The authoring service (DESIGN.md "Authoring workspace"), served as host
//! tools above the call path: sessions bound to a subject, proposals the
//! host validates and diffs, runs that join a session, and promotion,
//! which hands a proposal to review (a plugin revision) or to the plugin's
//! promoting tool through the ordinary call path (an object in its
//! domain). Nothing here activates anything.
//!
//! It owns what the authoring tools accept and answer and the upload that
//! mints handles. It does not own what the workspace is (its ids, rows and
//! store: `toolhost_workspace`), the checks a revision meets (the
//! catalog's intake), runs (the runs service, `toolhost_runs_service`,
//! which it asks to queue a session's runs), nor whether a caller may call
//! an authoring tool at all (the call path, `toolhost_invoke`).
//!
//! Every mutation names an idempotency key and the session version it
//! read. [`Work::mutation_guard`] answers a replay from the stored
//! answer, refuses a key reused for another request, and refuses a stale
//! version before any work; the store's compare-and-set decides the race
//! that is left, in the transaction of the call's audit row
//! ([`toolhost_workspace::WorkspaceEffect`]), and
//! [`Work::workspace_lost`] names the loser's conflict.
//!
//! Rooms: [`bind`] (what a subject is now), [`plugin_subject`] and
//! [`domain_subject`] (propose and promote, one per kind of subject),
//! [`session_end`] (a session closed, abandoned or rebound), [`uploads`]
//! (the bounded upload that mints handles), [`arriving`] (its body over
//! HTTP, streamed to the store in parts), [`upload_tools`] (its body over
//! MCP, in chunks, one call each) and [`upload_bounds`] (what bounds
//! them), [`view`] (what the read tools answer) and [`tools`] (the host
//! tools).

mod answer;
mod arriving;
mod bind;
mod domain_subject;
mod error;
mod plugin_subject;
mod promote;
mod propose;
mod session_end;
mod session_runs;
mod tools;
mod upload_bounds;
mod upload_tools;
mod uploads;
mod view;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolhost_audit::argument_digest;
use toolhost_catalog::LiveCatalog;
use toolhost_catalog::intake::IntakeOptions;
use toolhost_runtime::ToolOutput;
use toolhost_types::Principal;
use toolhost_workspace::{
    Mutation, Session, SessionChange, SessionId, SessionState, SessionView, WorkspaceEffect,
    WorkspaceStore,
};

use toolhost_invoke::{Host, HostTool, InvokeError};
use toolhost_runs_service::Runs;

pub use arriving::Arriving;
pub use error::WorkspaceError;
pub use tools::AUTHORING_PERMISSION;
pub use upload_bounds::{
    ARRIVING_UPLOAD_TTL, DEFAULT_UPLOAD_TTL, MAX_CHUNK_BYTES, MAX_SIGNATURE_BYTES,
    UPLOAD_PART_BYTES, UploadError, upload_limit,
};
pub use upload_tools::BEGIN_UPLOAD_TOOL;

/// How the workspace is kept.
#[derive(Clone)]
pub struct WorkspaceConfig {
    /// Sessions, proposals, uploads and answers.
    pub store: Arc<dyn WorkspaceStore>,
    /// The live catalog: plugin subjects are bound to its active
    /// revisions, and promoted into its review queue.
    pub catalog: Option<Arc<LiveCatalog>>,
    /// How a candidate revision is checked (the catalog's own options).
    pub intake: IntakeOptions,
    /// How long an upload no proposal names is kept.
    pub upload_ttl: Duration,
    /// What one principal may hold in uploads no proposal names.
    pub upload_quota: toolhost_workspace::UploadQuota,
}

/// The authoring service: how the workspace is kept, and the runs service
/// a session's runs are queued with.
pub struct Authoring {
    config: WorkspaceConfig,
    runs: Arc<Runs>,
}

impl Authoring {
    /// The service over `config`, queuing a session's runs with `runs`.
    pub fn new(config: WorkspaceConfig, runs: Arc<Runs>) -> Arc<Self> {
        Arc::new(Self { config, runs })
    }

    /// The authoring host tools: sessions, proposals, diffs and
    /// promotion.
    pub fn host_tools(self: &Arc<Self>) -> Vec<Arc<dyn HostTool>> {
        tools::host_tools(self)
    }

    /// The service at work on one call, on `host`.
    pub(crate) fn on<'a>(&'a self, host: Host<'a>) -> Work<'a> {
        Work {
            service: self,
            host,
        }
    }
}

/// The authoring service at work on one call: its state, and the host the
/// call runs on.
#[derive(Clone, Copy)]
pub(crate) struct Work<'a> {
    service: &'a Authoring,
    host: Host<'a>,
}

impl<'a> Work<'a> {
    pub(crate) fn workspace(&self) -> Result<&'a WorkspaceConfig, InvokeError> {
        Ok(&self.service.config)
    }

    pub(crate) fn runs(&self) -> &'a Runs {
        &self.service.runs
    }

    /// Session `id` with everything in it, as `who` may see it: a session
    /// of the caller's tenant. Anything else (malformed, another
    /// tenant's) is not found.
    pub(crate) async fn visible_session(
        &self,
        who: &Principal,
        id: &str,
    ) -> Result<SessionView, InvokeError> {
        let not_found = || WorkspaceError::NotFound {
            what: "session",
            id: id.to_owned(),
        };
        let sid = SessionId::parse(id).ok_or_else(not_found)?;
        self.workspace()?
            .store
            .view(&who.tenant, &sid)
            .await
            .map_err(WorkspaceError::Store)?
            .ok_or_else(|| not_found().into())
    }
}

/// A mutation's idempotency key and the digest of its request, checked.
pub(crate) struct Guard {
    key: String,
    tool: &'static str,
    digest: String,
}

/// What a guard found under the key.
pub(crate) enum Guarded {
    /// Nothing: go on, and store the answer under it.
    Fresh(Guard),
    /// The same request finished before: its answer.
    Replay(ToolOutput),
}

/// The longest idempotency key accepted (as the call path's).
const MAX_KEY_LEN: usize = 255;

/// What the caller of an authoring tool is told when `effect`, which it
/// decided, lost (see [`Work::workspace_lost`]).
pub(crate) async fn lost(
    work: Work<'_>,
    who: &Principal,
    effect: &toolhost_audit::Effect,
) -> Result<ToolOutput, InvokeError> {
    match effect {
        toolhost_audit::Effect::Workspace(w) => work.workspace_lost(who, w).await,
        _ => Err(InvokeError::Audit(toolhost_audit::AuditError::Failed(
            "an effect that never races lost".into(),
        ))),
    }
}

impl Work<'_> {
    /// Checks `args`' idempotency key for a mutation of `tool`: a replay is
    /// answered from the stored answer, another request under the key is
    /// `IDEMPOTENCY_KEY_REUSED`. `required`: a missing key is invalid.
    pub(crate) async fn mutation_guard(
        &self,
        who: &Principal,
        tool: &'static str,
        args: &Value,
        required: bool,
    ) -> Result<Option<Guarded>, InvokeError> {
        let Some(key) = idempotency_key(args, required)? else {
            return Ok(None);
        };
        let digest = request_digest(tool, args);
        let stored = self
            .workspace()?
            .store
            .mutation(&who.tenant, &who.subject, &key)
            .await
            .map_err(WorkspaceError::Store)?;
        Ok(Some(match stored {
            Some(m) if m.request_digest == digest => Guarded::Replay(restored(&m)?),
            Some(_) => return Err(InvokeError::IdempotencyKeyReused { key }),
            None => Guarded::Fresh(Guard { key, tool, digest }),
        }))
    }

    /// Why a workspace effect was not written: the key went to another
    /// request (or this one, whose answer is then returned), or the session
    /// moved past the version the request named.
    pub(crate) async fn workspace_lost(
        &self,
        who: &Principal,
        effect: &WorkspaceEffect,
    ) -> Result<ToolOutput, InvokeError> {
        let store = &self.workspace()?.store;
        let (mutation, expected) = match effect {
            WorkspaceEffect::Open { mutation, .. } => (mutation.as_ref(), None),
            WorkspaceEffect::Change(c) => {
                (Some(&c.mutation), Some((&c.session, c.expected_version)))
            }
        };
        if let Some(m) = mutation {
            let stored = store
                .mutation(&m.tenant, &m.principal, &m.key)
                .await
                .map_err(WorkspaceError::Store)?;
            match stored {
                Some(s) if s.request_digest == m.request_digest => return restored(&s),
                Some(_) => return Err(InvokeError::IdempotencyKeyReused { key: m.key.clone() }),
                None => {}
            }
        }
        let Some((session, expected)) = expected else {
            return Err(WorkspaceError::Changed.into());
        };
        match store
            .session(&who.tenant, session)
            .await
            .map_err(WorkspaceError::Store)?
        {
            Some(s) if s.state != SessionState::Open => Err(closed(&s)),
            Some(s) if s.version != expected => Err(conflict(&s, expected)),
            _ => Err(WorkspaceError::Changed.into()),
        }
    }
}

/// A mutation of a session, checked before any work: its key is fresh, and
/// the session the caller may see is open at the version it named.
pub(crate) struct Step {
    /// The key and the request's digest.
    pub guard: Guard,
    /// The version the request named.
    pub expected: i64,
    /// The session as read, with everything in it.
    pub view: SessionView,
}

impl Step {
    /// The step's change, adding nothing yet: the caller fills in what it
    /// adds, and its answer `out` is kept under the key.
    pub(crate) fn change(&self, who: &Principal, out: &ToolOutput, now: i64) -> SessionChange {
        let session = &self.view.session.id;
        SessionChange {
            tenant: who.tenant.clone(),
            session: session.clone(),
            expected_version: self.expected,
            at_ms: now,
            state: None,
            rebound: None,
            cancel_runs: false,
            proposal: None,
            keep_uploads: Vec::new(),
            link: None,
            promotion: None,
            submit: None,
            mutation: mutation(who, &self.guard, session, out, now),
        }
    }
}

impl Work<'_> {
    /// Starts a mutation of `tool` on the session `args` names: `Err` with
    /// the stored answer for a replay; refuses a reused key, a missing or
    /// stale version and a session the caller may not see or that is no
    /// longer open.
    pub(crate) async fn step(
        &self,
        who: &Principal,
        tool: &'static str,
        args: &Value,
    ) -> Result<Result<Step, ToolOutput>, InvokeError> {
        let guard = match self.mutation_guard(who, tool, args, true).await? {
            Some(Guarded::Replay(out)) => return Ok(Err(out)),
            Some(Guarded::Fresh(g)) => g,
            None => unreachable!("a required key is there or refused"),
        };
        let expected = expected_version(args)?;
        let view = self
            .visible_session(who, text_arg(args, "session_id")?)
            .await?;
        check_version(&view.session, expected)?;
        Ok(Ok(Step {
            guard,
            expected,
            view,
        }))
    }
}

/// Refuses a mutation of `session` at `expected` unless the session is
/// open and at that version.
pub(crate) fn check_version(session: &Session, expected: i64) -> Result<(), InvokeError> {
    if session.state != SessionState::Open {
        return Err(closed(session));
    }
    if session.version != expected {
        return Err(conflict(session, expected));
    }
    Ok(())
}

fn conflict(s: &Session, expected: i64) -> InvokeError {
    WorkspaceError::VersionConflict {
        session: s.id.to_string(),
        expected,
        current: s.version,
    }
    .into()
}

fn closed(s: &Session) -> InvokeError {
    WorkspaceError::Closed {
        session: s.id.to_string(),
        state: s.state.as_str(),
    }
    .into()
}

/// The answer `out` kept under `guard`'s key for `session`.
pub(crate) fn mutation(
    who: &Principal,
    guard: &Guard,
    session: &SessionId,
    out: &ToolOutput,
    at_ms: i64,
) -> Mutation {
    Mutation {
        tenant: who.tenant.clone(),
        principal: who.subject.clone(),
        key: guard.key.clone(),
        tool: guard.tool.to_owned(),
        request_digest: guard.digest.clone(),
        session: session.clone(),
        result: json!({"structured": out.structured, "text": out.text}).to_string(),
        at_ms,
    }
}

fn restored(m: &Mutation) -> Result<ToolOutput, InvokeError> {
    let v: Value = serde_json::from_str(&m.result).map_err(|e| {
        WorkspaceError::Store(toolhost_workspace::WorkspaceStoreError::Failed(format!(
            "stored answer under key {:?}: {e}",
            m.key
        )))
    })?;
    Ok(ToolOutput {
        structured: v.get("structured").cloned().unwrap_or(Value::Null),
        text: v.get("text").and_then(Value::as_str).map(str::to_owned),
        content: Vec::new(),
    })
}

/// The request's digest: the tool and its arguments without the key.
fn request_digest(tool: &str, args: &Value) -> String {
    let mut args = args.clone();
    if let Some(map) = args.as_object_mut() {
        map.remove(toolhost_invoke::IDEMPOTENCY_KEY_ARG);
    }
    argument_digest(&json!({"tool": tool, "arguments": args})).to_string()
}

fn idempotency_key(args: &Value, required: bool) -> Result<Option<String>, InvokeError> {
    match args.get(toolhost_invoke::IDEMPOTENCY_KEY_ARG) {
        None if required => Err(toolhost_invoke::invalid(
            "idempotency_key is required: every workspace mutation carries one",
        )),
        None => Ok(None),
        Some(v) => v
            .as_str()
            .filter(|k| {
                !k.is_empty() && k.len() <= MAX_KEY_LEN && k.bytes().all(|b| b.is_ascii_graphic())
            })
            .map(|k| Some(k.to_owned()))
            .ok_or_else(|| {
                toolhost_invoke::invalid(format!(
                    "idempotency_key must be 1–{MAX_KEY_LEN} printable ASCII characters"
                ))
            }),
    }
}

/// `expected_version` from `args`: required on every mutation of a session.
pub(crate) fn expected_version(args: &Value) -> Result<i64, InvokeError> {
    args.get("expected_version")
        .and_then(Value::as_i64)
        .filter(|v| *v >= 1)
        .ok_or_else(|| {
            toolhost_invoke::invalid(
                "expected_version (the session's version you read, an integer ≥ 1) is required",
            )
        })
}

/// A string argument `name`, required.
pub(crate) fn text_arg<'a>(args: &'a Value, name: &str) -> Result<&'a str, InvokeError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| toolhost_invoke::invalid(format!("{name} (a string) is required")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(version: i64, state: SessionState) -> Session {
        Session {
            id: SessionId::new(),
            tenant: "acme".into(),
            owner: "alice".into(),
            subject: "plugin:hello".parse().expect("a subject"),
            bound_to: None,
            subject_version: "none".into(),
            version,
            state,
            created_at_ms: 0,
            updated_at_ms: 0,
        }
    }

    #[test]
    fn a_request_digest_ignores_the_key_and_names_the_tool() {
        let a = json!({"session_id": "ws_1", "expected_version": 1, "idempotency_key": "k1"});
        let b = json!({"session_id": "ws_1", "expected_version": 1, "idempotency_key": "k2"});
        let c = json!({"session_id": "ws_1", "expected_version": 2, "idempotency_key": "k1"});
        assert_eq!(
            request_digest("propose_revision", &a),
            request_digest("propose_revision", &b)
        );
        assert_ne!(
            request_digest("propose_revision", &a),
            request_digest("propose_revision", &c)
        );
        assert_ne!(
            request_digest("propose_revision", &a),
            request_digest("promote_revision", &a)
        );
    }

    #[test]
    fn keys_are_required_where_asked_and_must_be_printable() {
        assert!(idempotency_key(&json!({}), true).is_err());
        assert_eq!(idempotency_key(&json!({}), false).ok(), Some(None));
        let ok = idempotency_key(&json!({"idempotency_key": "plan-1"}), true);
        assert_eq!(ok.ok().flatten().as_deref(), Some("plan-1"));
        let long = "k".repeat(MAX_KEY_LEN + 1);
        for bad in [json!(""), json!("a b"), json!(7), json!(long)] {
            assert!(
                idempotency_key(&json!({"idempotency_key": bad}), false).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_mutation_needs_an_open_session_at_the_version_it_names() {
        let open = session(3, SessionState::Open);
        assert!(check_version(&open, 3).is_ok());
        let stale = check_version(&open, 2).expect_err("a stale version");
        assert_eq!(stale.code(), "WORKSPACE_VERSION_CONFLICT");
        let details = stale.details().expect("the versions");
        assert_eq!(
            (&details["expected_version"], &details["current_version"]),
            (&json!(2), &json!(3))
        );
        let done = session(3, SessionState::Promoted);
        let closed = check_version(&done, 3).expect_err("a closed session");
        assert_eq!(closed.code(), "WORKSPACE_CLOSED");
        for bad in [
            json!({}),
            json!({"expected_version": 0}),
            json!({"expected_version": "1"}),
        ] {
            assert!(expected_version(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_stored_answer_is_restored_as_it_was_given() {
        let out = ToolOutput {
            structured: json!({"version": 2}),
            text: Some("Proposal …".into()),
            content: Vec::new(),
        };
        let who = Principal {
            subject: "alice".into(),
            kind: toolhost_types::PrincipalKind::User,
            name: "alice".into(),
            tenant: "acme".into(),
            client_id: "client-1".into(),
            scopes: Vec::new(),
            session: "grant-1".into(),
        };
        let guard = Guard {
            key: "k".into(),
            tool: "propose_revision",
            digest: "d".repeat(64),
        };
        let m = mutation(&who, &guard, &SessionId::new(), &out, 5);
        assert_eq!(restored(&m).expect("restored"), out);
    }
}
