//! The `authoring` export: the kinds of object a plugin authors, and its
//! three answers about them (a subject's current state, a proposal
//! validated, a normalized proposal diffed), each asked in a fresh sandbox
//! that may not have side effects.
//!
//! The export is optional: a component without
//! `toolhost:plugin/authoring` authors nothing and loads as before.
//! What the host does with the answers (sessions, proposals, promotion) is
//! not this room's: it checks the answers at the boundary ([`answers`])
//! and converts them to the host's own types below.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolhost_limits::CallBudget;
use wasmtime::Store;

use crate::bindings::exports::toolhost::plugin::authoring as wit_authoring;
use crate::bindings::toolhost::plugin::types as wit;
use crate::error::{CallError, LoadError};
use crate::sandbox::{Answer, Ask, CallContext, Plugin, Runtime, refusal_at_load, tool_error};
use crate::state::HostState;

mod answers;

use answers::{checked_kinds, current, diffed, validated};

/// The `authoring` export's instance name: loaded only when present.
pub(crate) const AUTHORING_EXPORT: &str = "toolhost:plugin/authoring@0.2.0";

/// Most kinds one plugin may author: as for entity kinds, a plugin with
/// more is a flood, not a domain.
pub const MAX_AUTHORING_KINDS: usize = 64;

/// Most problems one `validate` may answer. A person reads them; a plan of
/// a few hundred items with a problem or two each fits, and the bound
/// keeps what the host stores per proposal small. Past it the answer is
/// refused whole ([`CallError::InvalidOutput`]), never cut.
pub const MAX_PROBLEMS: usize = 1000;

/// Most changes one `diff` may answer, for the same reasons as
/// [`MAX_PROBLEMS`]: a reviewer reads every one before promoting.
pub const MAX_CHANGES: usize = 1000;

/// Longest `version` a `current` may answer, in bytes: an opaque token the
/// host compares and keeps with each session, not data.
pub const MAX_VERSION_LEN: usize = 256;

/// One kind of object a plugin authors, as it listed it at load (checked).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthoringKind {
    /// 1–64 of `[a-z0-9_]`, unique in the plugin, e.g. `test_plan`.
    pub name: String,
    /// What it is, for the model and the person.
    pub description: String,
    /// The entity kind (one the plugin's `entities` export lists) a
    /// session's subject names, e.g. `project`.
    pub subject_kind: String,
    /// The plugin's tool (one it describes) whose call promotes a proposal:
    /// its arguments are exactly the normalized proposal.
    pub promoted_by: String,
}

/// A subject's current state.
#[derive(Debug, Clone, PartialEq)]
pub struct Current {
    /// Changes whenever the state does: compare it to tell whether the
    /// subject moved under a proposal. 1 to [`MAX_VERSION_LEN`] bytes.
    pub version: String,
    /// The state; what `authoring_validate` and `authoring_diff` take back.
    pub body: Value,
}

/// One reason a proposal is invalid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// A JSON pointer into the proposal (`/tests/3/name`); empty for the
    /// proposal as a whole.
    pub path: String,
    /// One line a person can act on, as the plugin wrote it.
    pub message: String,
}

/// What one entry of a diff does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeOp {
    /// A new item: `after` only.
    Added,
    /// An item that changes: `before` and `after`.
    Changed,
    /// An item that goes away: `before` only.
    Removed,
}

/// One entry of a structured diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// What it does.
    pub op: ChangeOp,
    /// What changed, as people name it (a test's name).
    pub item: String,
    /// The item before; absent when added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    /// The item after; absent when removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
}

/// What to ask of the `authoring` export.
pub(crate) enum AuthoringAsk<'a> {
    Kinds,
    Current(&'a wit::CallContext, &'a str, i64),
    Validate(&'a wit::CallContext, &'a str, &'a str, &'a str),
    Diff(&'a wit::CallContext, &'a str, &'a str, &'a str),
}

/// What it answered, as the guest wrote it.
pub(crate) enum AuthoringAnswer {
    Kinds(Vec<wit_authoring::AuthoringKind>),
    Current(Result<wit_authoring::CurrentState, wit::ToolError>),
    Validate(Result<String, Vec<wit_authoring::Problem>>),
    Diff(Result<Vec<wit_authoring::Change>, wit::ToolError>),
}

/// Runs `ask` on a loaded `authoring` export.
pub(crate) async fn run(
    guest: &wit_authoring::Guest,
    store: &mut Store<HostState>,
    ask: AuthoringAsk<'_>,
) -> wasmtime::Result<AuthoringAnswer> {
    Ok(match ask {
        AuthoringAsk::Kinds => AuthoringAnswer::Kinds(guest.call_kinds(&mut *store).await?),
        AuthoringAsk::Current(c, k, s) => {
            AuthoringAnswer::Current(guest.call_current(&mut *store, c, k, s).await?)
        }
        AuthoringAsk::Validate(c, k, cur, p) => {
            AuthoringAnswer::Validate(guest.call_validate(&mut *store, c, k, cur, p).await?)
        }
        AuthoringAsk::Diff(c, k, cur, n) => {
            AuthoringAnswer::Diff(guest.call_diff(&mut *store, c, k, cur, n).await?)
        }
    })
}

impl Plugin {
    /// The kinds its `authoring` export lists (none without one), checked
    /// at load, in the plugin's order.
    pub fn authoring_kinds(&self) -> &[AuthoringKind] {
        &self.authoring_kinds
    }

    /// The authoring kind named `name`, if the plugin lists it.
    pub fn authoring_kind(&self, name: &str) -> Option<&AuthoringKind> {
        self.authoring_kinds.iter().find(|k| k.name == name)
    }
}

impl Runtime {
    /// At load: the plugin's authoring kinds, checked against its tools and
    /// entity kinds; none without the export.
    pub(crate) async fn load_authoring_kinds(
        &self,
        plugin: &Plugin,
    ) -> Result<Vec<AuthoringKind>, LoadError> {
        if !plugin.contract.has_authoring() {
            return Ok(Vec::new());
        }
        let refuse = refusal_at_load(plugin, "authoring kinds: ");
        let answer = self
            .ask_at_load(plugin, Ask::Authoring(AuthoringAsk::Kinds))
            .await
            .map_err(|e| refuse(e.to_string()))?;
        let Answer::Authoring(AuthoringAnswer::Kinds(kinds)) = answer else {
            unreachable!("kinds answers kinds")
        };
        checked_kinds(kinds, plugin.tools(), plugin.kinds()).map_err(refuse)
    }

    /// The current state of `subject` (an entity id of the kind's subject
    /// kind) for `ctx.tenant`, in a fresh sandbox that may not have side
    /// effects (GET and HEAD backend requests only). A `kind` the plugin
    /// does not list is a [`CallError::ContractViolation`]; a version
    /// empty or over [`MAX_VERSION_LEN`], or a body that is not JSON, is
    /// [`CallError::InvalidOutput`]; an answer over `budget.output` is
    /// [`CallError::OutputLimit`].
    pub async fn authoring_current(
        &self,
        plugin: &Plugin,
        ctx: &CallContext,
        kind: &str,
        subject: i64,
        budget: &CallBudget,
    ) -> Result<Current, CallError> {
        listed(plugin, kind)?;
        let wctx = ctx.wit();
        let ask = Ask::Authoring(AuthoringAsk::Current(&wctx, kind, subject));
        match self.sandboxed(plugin, ctx, budget, ask).await? {
            Answer::Authoring(AuthoringAnswer::Current(Ok(state))) => current(state, budget),
            Answer::Authoring(AuthoringAnswer::Current(Err(e))) => Err(tool_error(e, budget)),
            _ => unreachable!("current answers current"),
        }
    }

    /// Checks `proposal` against `current` (a body `authoring_current`
    /// answered): `Ok(normalized)`, a JSON object that is exactly the
    /// arguments of the kind's `promoted_by` tool, or `Err(problems)`,
    /// at least one and at most [`MAX_PROBLEMS`], each path empty or a
    /// JSON pointer. Anything else is [`CallError::InvalidOutput`].
    ///
    /// Pure: whatever `ctx` grants, it runs with no backend, checkpoint,
    /// resolver snapshot or run.
    pub async fn authoring_validate(
        &self,
        plugin: &Plugin,
        ctx: &CallContext,
        kind: &str,
        current: &Value,
        proposal: &Value,
        budget: &CallBudget,
    ) -> Result<Result<Value, Vec<Problem>>, CallError> {
        listed(plugin, kind)?;
        let ctx = pure(ctx);
        let wctx = ctx.wit();
        let (current, proposal) = (current.to_string(), proposal.to_string());
        let ask = Ask::Authoring(AuthoringAsk::Validate(&wctx, kind, &current, &proposal));
        match self.sandboxed(plugin, &ctx, budget, ask).await? {
            Answer::Authoring(AuthoringAnswer::Validate(answer)) => validated(answer, budget),
            _ => unreachable!("validate answers validate"),
        }
    }

    /// What promoting `normalized` (an answer of `authoring_validate`)
    /// would change relative to `current`: at most [`MAX_CHANGES`], each
    /// with the sides its op has (`added`: `after`; `changed`: both;
    /// `removed`: `before`), each side JSON. Anything else is
    /// [`CallError::InvalidOutput`].
    ///
    /// Pure, as `authoring_validate`.
    pub async fn authoring_diff(
        &self,
        plugin: &Plugin,
        ctx: &CallContext,
        kind: &str,
        current: &Value,
        normalized: &Value,
        budget: &CallBudget,
    ) -> Result<Vec<Change>, CallError> {
        listed(plugin, kind)?;
        let ctx = pure(ctx);
        let wctx = ctx.wit();
        let (current, normalized) = (current.to_string(), normalized.to_string());
        let ask = Ask::Authoring(AuthoringAsk::Diff(&wctx, kind, &current, &normalized));
        match self.sandboxed(plugin, &ctx, budget, ask).await? {
            Answer::Authoring(AuthoringAnswer::Diff(Ok(changes))) => diffed(changes, budget),
            Answer::Authoring(AuthoringAnswer::Diff(Err(e))) => Err(tool_error(e, budget)),
            _ => unreachable!("diff answers diff"),
        }
    }
}

/// `ctx` with nothing granted but its identity and progress sink.
fn pure(ctx: &CallContext) -> CallContext {
    CallContext {
        snapshots: Arc::default(),
        backends: None,
        checkpoints: None,
        exploration: None,
        ..ctx.clone()
    }
}

fn listed(plugin: &Plugin, kind: &str) -> Result<(), CallError> {
    match plugin.authoring_kind(kind) {
        Some(_) => Ok(()),
        None => Err(CallError::ContractViolation {
            detail: format!("the plugin authors no kind {kind:?}"),
        }),
    }
}
