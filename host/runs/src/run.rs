//! What a run is asked to do, and the row the store keeps of it.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolhost_limits::RunBudget;

use crate::{RunClient, RunId, RunInput, RunState};

/// Which revision of the plugin a run uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunSource {
    /// The revision the catalog serves.
    Active,
    /// A revision not active yet (pending review), tried by its submitter.
    Candidate {
        /// The revision's id in the catalog store.
        revision: String,
    },
    /// A draft in an authoring session (a proposal's uploaded component
    /// and manifest, perhaps unsigned), tried before it is promoted.
    Draft {
        /// The session (`ws_…`).
        session: String,
        /// The proposal (`prop_…`).
        proposal: String,
    },
}

/// The exact code a run executes, as the receipt names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevisionRef {
    /// The revision's id in the catalog store (none: a plugin loaded from
    /// a directory).
    pub id: Option<String>,
    /// The plugin's name.
    pub plugin: String,
    /// The plugin's own version.
    pub version: String,
    /// SHA-256 of the component.
    pub component_sha256: String,
    /// SHA-256 of the manifest, when the revision came from the store.
    pub manifest_sha256: Option<String>,
    /// Who signed it (the signer's name), when it was signed.
    pub signer: Option<String>,
    /// The catalog version that served it (an active revision).
    pub catalog_version: Option<String>,
}

/// What was asked: fixed when the run is queued, never edited.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSpec {
    /// The tool.
    pub tool: String,
    /// Which revision.
    pub source: RunSource,
    /// The revision's digests.
    pub revision: RevisionRef,
    /// The arguments (a JSON object), kept for the worker; a receipt
    /// carries only their digest.
    pub arguments: Value,
    /// SHA-256 of the canonical JSON of the arguments.
    pub argument_digest: String,
    /// What the run may spend.
    pub budget: RunBudget,
    /// What the client that started it can answer, if it can be asked at
    /// all (a task of a 2026-07-28 request); none: the run cannot ask.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<RunClient>,
}

/// How many runs may wait or run at once, before a new one is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueLimits {
    /// Queued or running runs of one tenant.
    pub per_tenant: u32,
    /// Queued or running runs of one principal.
    pub per_principal: u32,
}

impl QueueLimits {
    /// 64 per tenant, 8 per principal.
    pub const DEFAULT: QueueLimits = QueueLimits {
        per_tenant: 64,
        per_principal: 8,
    };
}

/// A run to queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRun {
    /// Its id.
    pub id: RunId,
    /// The starter's tenant: the only tenant that sees it.
    pub tenant: String,
    /// Who started it: the only principal (with the tenant's admins) that
    /// reads it.
    pub principal: String,
    /// `user` or `service`.
    pub principal_kind: String,
    /// The OAuth client it was started through.
    pub client_id: String,
    /// What to run.
    pub spec: RunSpec,
    /// Unix milliseconds.
    pub created_at_ms: i64,
    /// Attempts allowed before a run whose workers keep dying fails.
    pub max_attempts: u32,
    /// The queue bounds this run must fit in.
    pub limits: QueueLimits,
    /// Answers its client gave before the run existed (a stateless call
    /// asked, then escalated to a run), handed to its guest's `ask`.
    pub input: Option<RunInput>,
}

/// How far a run has come, as its plugin last reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Increases with each report.
    pub progress: f64,
    /// The value at completion, when known.
    pub total: Option<f64>,
    /// One line for people.
    pub message: Option<String>,
}

/// How a finished run ended, as its callers are told.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// The tool answered.
    Answered {
        /// Its structured answer.
        structured: Value,
        /// Its text, if it gave one.
        text: Option<String>,
    },
    /// It did not: a typed error.
    Error {
        /// The stable code (`TIMEOUT`, `CANCELLED`, `TOOL_FAILED`…).
        code: String,
        /// What happened, for people.
        message: String,
        /// The JSON-RPC error code its plugin ended it with
        /// (`PROTOCOL_ERROR`): a task of it is `failed` with this code.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rpc_code: Option<i32>,
    },
}

/// A run as the store holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Its id.
    pub id: RunId,
    /// The starter's tenant.
    pub tenant: String,
    /// Who started it.
    pub principal: String,
    /// `user` or `service`.
    pub principal_kind: String,
    /// The client it was started through.
    pub client_id: String,
    /// What was asked.
    pub spec: RunSpec,
    /// Where it is.
    pub state: RunState,
    /// Attempts started so far (0 while first queued).
    pub attempt: u32,
    /// Attempts allowed.
    pub max_attempts: u32,
    /// Unix milliseconds, each.
    pub created_at_ms: i64,
    /// When the first attempt started.
    pub started_at_ms: Option<i64>,
    /// When it ended.
    pub finished_at_ms: Option<i64>,
    /// When its time budget ends: set by the first claim, inherited by
    /// every later attempt.
    pub deadline_at_ms: Option<i64>,
    /// When a cancel was asked for.
    pub cancel_requested_at_ms: Option<i64>,
    /// The worker holding the lease.
    pub lease_owner: Option<String>,
    /// Until when it holds it.
    pub lease_until_ms: Option<i64>,
    /// Attempts whose audit rows are written (an attempt whose worker
    /// died gets its row from the worker that takes the run over).
    pub audited_attempts: u32,
    /// The plugin's last progress report.
    pub progress: Option<Progress>,
    /// How it ended.
    pub outcome: Option<Outcome>,
    /// The receipt's canonical JSON, once finished.
    pub receipt: Option<String>,
    /// Its SHA-256.
    pub receipt_sha256: Option<String>,
    /// The attempts a worker's graceful stop handed over: bit `n - 1` for
    /// attempt `n` (each raised `max_attempts` by one).
    pub handed_over: u64,
    /// What its guest asked its client and was answered, if it asked.
    pub input: Option<RunInput>,
    /// Since when it waits `input_required`.
    pub parked_at_ms: Option<i64>,
}

impl Run {
    /// Whether attempt `n` was handed over by a graceful stop (not lost).
    pub fn was_handed_over(&self, n: u32) -> bool {
        (1..=64).contains(&n) && self.handed_over & (1 << (n - 1)) != 0
    }

    /// Whether attempt `n` ended asking the client for input (not lost).
    pub fn asked_in(&self, n: u32) -> bool {
        self.input.as_ref().is_some_and(|i| i.asked_in.contains(&n))
    }

    /// Whether `principal` of `tenant` may see this run: only the one who
    /// started it (tenant admins are the caller's to allow).
    pub fn owned_by(&self, tenant: &str, principal: &str) -> bool {
        self.tenant == tenant && self.principal == principal
    }
}
