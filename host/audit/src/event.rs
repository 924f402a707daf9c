//! One audit event per tool call, and where it goes.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use toolhost_types::Digest;

/// How a call ended. Stored as the lowercase name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The tool ran and answered.
    Executed,
    /// The call stopped to ask which of several things was meant.
    NeedsClarification,
    /// The call waits for a person's approval.
    ApprovalRequired,
    /// The caller may not call this tool.
    Denied,
    /// A request bound refused the call before dispatch.
    LimitRejected,
    /// Anything else: unknown tool, the tool's own failure, a sandbox breach.
    Error,
}

impl Outcome {
    /// The stored name, e.g. `needs_clarification`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Outcome::Executed => "executed",
            Outcome::NeedsClarification => "needs_clarification",
            Outcome::ApprovalRequired => "approval_required",
            Outcome::Denied => "denied",
            Outcome::LimitRejected => "limit_rejected",
            Outcome::Error => "error",
        }
    }

    /// The outcome named `s`, if any.
    pub fn parse(s: &str) -> Option<Self> {
        [
            Outcome::Executed,
            Outcome::NeedsClarification,
            Outcome::ApprovalRequired,
            Outcome::Denied,
            Outcome::LimitRejected,
            Outcome::Error,
        ]
        .into_iter()
        .find(|o| o.as_str() == s)
    }
}

/// One tool call, as the audit trail records it. Never holds arguments or
/// answers themselves: only their digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEvent {
    /// The call's id (also in logs).
    pub call_id: String,
    /// When the call started.
    pub at: SystemTime,
    /// Who called (an opaque principal id).
    pub principal: String,
    /// The caller's tenant.
    pub tenant: String,
    /// The OAuth client the caller's token was issued to. `None` on rows
    /// recorded before the column existed (migration 0006).
    pub client_id: Option<String>,
    /// The tool's name as called (even if unknown).
    pub tool: String,
    /// The plugin that provides it, when the tool is known.
    pub plugin: Option<String>,
    /// The catalog's version (`MAJOR.MINOR.PATCH`) that served the call,
    /// when the tool is a known plugin tool; for a catalog decision, the
    /// version it produced.
    pub catalog_version: Option<String>,
    /// The plugin component's digest, when the tool is known.
    pub plugin_digest: Option<Digest>,
    /// The digest of the definition of the tool the call found, as
    /// `tools/list` served it (`_meta["toolhost/definition"]`), when the
    /// tool is known; a host tool's too (migration 0021).
    pub definition_digest: Option<Digest>,
    /// SHA-256 of the canonical JSON of the arguments.
    pub argument_digest: Digest,
    /// How it ended.
    pub outcome: Outcome,
    /// The stable error code, when it did not execute.
    pub error_code: Option<String>,
    /// How long the call took in the host.
    pub duration: Duration,
    /// The approval gate the call is linked to: the one it raised
    /// (`approval_required`) or the one it presented as its `gate_id`.
    pub gate_id: Option<String>,
    /// The SHA-256 of the receipt an exploration run's attempt settled
    /// (migration 0011): the row links the receipt, the receipt names the run.
    pub receipt_sha256: Option<String>,
    /// What the call asked its MCP client, each round (elicitation,
    /// sampling, roots), in order: empty when it asked nothing (migration
    /// 0017).
    pub client_rounds: Vec<ClientRound>,
}

impl AuditEvent {
    /// The row of one act begun now, under a fresh call id: `principal` of
    /// `tenant` did `tool` with arguments of `argument_digest`, and it
    /// executed; no client, plugin, gate or receipt. Every row is built
    /// from this one, with what differs set by struct update:
    /// `AuditEvent { plugin: Some(name), ..AuditEvent::new(..) }`.
    pub fn new(tenant: &str, principal: &str, tool: &str, argument_digest: Digest) -> Self {
        Self {
            call_id: toolhost_types::CallId::new().to_string(),
            at: SystemTime::now(),
            principal: principal.to_owned(),
            tenant: tenant.to_owned(),
            client_id: None,
            tool: tool.to_owned(),
            plugin: None,
            catalog_version: None,
            plugin_digest: None,
            definition_digest: None,
            argument_digest,
            outcome: Outcome::Executed,
            error_code: None,
            duration: Duration::ZERO,
            gate_id: None,
            receipt_sha256: None,
            client_rounds: Vec::new(),
        }
    }
}

/// One request a call sent (or was to send) its MCP client: never its
/// content, only what and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRound {
    /// The plugin's key for the request.
    pub key: String,
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: String,
    /// `answered`, `declined`, `cancelled`, `pending`, `timeout` or `failed`.
    pub outcome: String,
}

impl ClientRound {
    /// `rounds` as stored: a JSON array, or none when there are none.
    pub fn to_column(rounds: &[ClientRound]) -> Option<String> {
        (!rounds.is_empty()).then(|| serde_json::to_string(rounds).unwrap_or_default())
    }

    /// The rounds a stored column holds (none: none).
    pub fn from_column(column: Option<&str>) -> Result<Vec<ClientRound>, serde_json::Error> {
        column.map_or(Ok(Vec::new()), serde_json::from_str)
    }
}

/// Why an event could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The write failed (a constraint, a driver error, a closed store).
    #[error("audit write failed: {0}")]
    Failed(String),
    /// The store could not be reached; nothing of the row was written, or
    /// all of it was (the commit's answer was lost).
    #[error("audit write failed: {0}")]
    Unavailable(#[from] toolhost_types::StoreUnavailable),
    /// The effect at `effect` (its place among the effects written with
    /// the row) found the state it changes not as it expected: a
    /// compare-and-set lost to another writer, a key another request took,
    /// a queue full. Nothing was written; the feature that decided the
    /// effect says what its caller is told.
    #[error("audit write failed: effect {effect} lost to another writer; nothing was written")]
    Lost {
        /// The effect's place among the row's effects.
        effect: usize,
    },
    /// A row with this call id is in the trail already; nothing was
    /// written (a row whose id is derived from what it records, written
    /// by another replica first).
    #[error("audit write failed: a row for call {call_id:?} exists already")]
    DuplicateCallId {
        /// The call id.
        call_id: String,
    },
}

impl AuditError {
    /// The unreachable store, if that is why.
    pub fn unavailable(&self) -> Option<&toolhost_types::StoreUnavailable> {
        match self {
            AuditError::Unavailable(u) => Some(u),
            AuditError::Failed(_)
            | AuditError::Lost { .. }
            | AuditError::DuplicateCallId { .. } => None,
        }
    }
}

/// A boxed future, so sinks can be used as trait objects.
pub type SinkFuture<'a> = Pin<Box<dyn Future<Output = Result<(), AuditError>> + Send + 'a>>;

/// Where audit events go. A call's reply is sent only after its event is
/// recorded, so an acknowledged call always has its row.
pub trait AuditSink: Send + Sync {
    /// Records one event durably, and applies `effects` in the same
    /// transaction: the row and the state changes it records are written
    /// together or not at all.
    fn record_with<'a>(&'a self, event: &'a AuditEvent, effects: &'a [Effect]) -> SinkFuture<'a>;

    /// Records one event that changed nothing else.
    fn record<'a>(&'a self, event: &'a AuditEvent) -> SinkFuture<'a> {
        self.record_with(event, &[])
    }
}

/// A state change a call made, written in the same transaction as the
/// call's audit row (so a row never records a change that was lost, and no
/// change exists without its row).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// The call held an idempotency key and finished: `result` (the JSON
    /// the host answers a retry with) is stored under the key.
    FinishKey {
        /// The key's owner and name.
        key: KeyRef,
        /// The stored answer.
        result: String,
    },
    /// The call held an idempotency key and did not finish (a failure, a
    /// question, a gate): the key is free for a retry.
    ReleaseKey {
        /// The key's owner and name.
        key: KeyRef,
    },
    /// The call's result was too large to send inline and is kept.
    StoreArtifact(toolhost_artifacts::NewArtifact),
    /// A catalog decision (a review approved, a rollback, a signer
    /// revoked): plugin revisions change state and the catalog moves to a
    /// new version, if it is still at the generation the decision was
    /// made against.
    Catalog(CatalogEffect),
    /// An exploration run queued, settled or taken over (`toolhost_runs`).
    Run(toolhost_runs::RunEffect),
    /// An authoring session opened or moved on (`toolhost_workspace`), by
    /// compare-and-set on its version, with its answer under the caller's
    /// idempotency key.
    Workspace(toolhost_workspace::WorkspaceEffect),
    /// An admin changed their tenant's people: a user disabled or enabled,
    /// a role's permission or member, a service client revoked.
    People(crate::PeopleEffect),
    /// An admin defined or deleted one of their tenant's toolsets.
    Toolset(crate::ToolsetEffect),
    /// A tool that changes entities ran: the generation of each of `kinds`
    /// moves, so every replica lists them again for its resolver.
    Entities {
        /// The caller's tenant.
        tenant: String,
        /// The plugin whose entities changed.
        plugin: String,
        /// The kinds its manifest says the tool changes (`invalidates`).
        kinds: Vec<String>,
    },
}

impl Effect {
    /// The digest of the receipt of a run this effect settles (a run's
    /// end): the row written with it links the receipt.
    pub fn settled_receipt(&self) -> Option<String> {
        match self {
            Effect::Run(toolhost_runs::RunEffect::Finish(f)) => Some(f.receipt_sha256.clone()),
            _ => None,
        }
    }
}

/// What a catalog decision changes, applied with its audit row: all of it
/// or nothing. A revision not in its expected state, or a catalog whose
/// generation moved meanwhile, fails the whole transaction (a concurrent
/// decision won; decide again against what is there now).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogEffect {
    /// Whether what is served changes (an activation, a rollback, a
    /// withdrawal): then the catalog's generation and version move, with a
    /// compare-and-set. A rejection changes nothing served.
    pub changes_served: bool,
    /// The catalog generation the decision was made against.
    pub expected_generation: i64,
    /// The catalog's version after the decision (`MAJOR.MINOR.PATCH`).
    pub version: String,
    /// When, in unix milliseconds.
    pub at_ms: i64,
    /// The revisions that change, in order.
    pub moves: Vec<RevisionMove>,
    /// The tenants a revision it activates is served to, if it sets them.
    pub audience: Option<AudienceChange>,
    /// Tenants pinned to a revision, or unpinned.
    pub pins: Vec<PinChange>,
}

/// The tenants a revision is served to, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AudienceChange {
    /// The revision.
    pub revision: String,
    /// A JSON array of tenant ids; `None`: every tenant.
    pub tenants: Option<String>,
}

/// A tenant held to a revision of a plugin, or let go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinChange {
    /// The tenant.
    pub tenant: String,
    /// The plugin.
    pub plugin: String,
    /// The revision it is held to; `None`: the pin is removed (the tenant
    /// follows the catalog again). Removing a pin that is not there fails
    /// the decision.
    pub revision: Option<String>,
    /// Who decided.
    pub by: String,
}

/// One revision's change of state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisionMove {
    /// The revision's id.
    pub revision: String,
    /// The state it must be in (`pending_review`, `approved`, `active`, …).
    pub from: String,
    /// The state it moves to.
    pub to: String,
    /// The reviewer and their reason, for a review decision.
    pub review: Option<(String, String)>,
    /// Tools of this revision that stay listed, deprecated, after it stops
    /// being active (JSON), and the catalog version that drops them;
    /// `None` clears them.
    pub retired: Option<(String, String)>,
}

/// An idempotency key as the store addresses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRef {
    /// The caller's tenant.
    pub tenant: String,
    /// The caller.
    pub principal: String,
    /// The tool.
    pub tool: String,
    /// The client's key.
    pub key: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_round_trip_through_their_names() {
        for o in [
            Outcome::Executed,
            Outcome::NeedsClarification,
            Outcome::Denied,
            Outcome::Error,
        ] {
            assert_eq!(Outcome::parse(o.as_str()), Some(o));
        }
        assert_eq!(Outcome::parse("maybe"), None);
    }
}
