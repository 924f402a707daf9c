//! Human checkpoints (seed 002, MCPX-FR-019/029): a run waiting for a
//! person's judgement. The host owns the rows; a plugin opens one (through
//! its `checkpoint` import) and reads the decision later; a person decides
//! it with a compare-and-set on its version.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{GateFuture, GateStoreError};

/// A person's disposition of a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    /// The step passed: records outcome `passed`.
    Confirm,
    /// What the run flagged is not real: records outcome `inconclusive`.
    FalsePositive,
    /// The person cannot tell: records outcome `inconclusive`.
    Inconclusive,
}

impl Disposition {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Disposition::Confirm => "confirm",
            Disposition::FalsePositive => "false_positive",
            Disposition::Inconclusive => "inconclusive",
        }
    }

    /// The step outcome it records (the lifecycle mapping is fixed:
    /// confirm → passed; false_positive, inconclusive → inconclusive).
    pub fn outcome(self) -> &'static str {
        match self {
            Disposition::Confirm => "passed",
            Disposition::FalsePositive | Disposition::Inconclusive => "inconclusive",
        }
    }
}

impl FromStr for Disposition {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        [
            Disposition::Confirm,
            Disposition::FalsePositive,
            Disposition::Inconclusive,
        ]
        .into_iter()
        .find(|d| d.as_str() == s)
        .ok_or_else(|| format!("{s:?} is not confirm, false_positive or inconclusive"))
    }
}

impl fmt::Display for Disposition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a plugin gives when it opens a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCheckpoint {
    /// The new checkpoint's id (`chk_` and 32 hex characters).
    pub id: String,
    /// The caller's tenant.
    pub tenant: String,
    /// The plugin that opened it.
    pub plugin: String,
    /// The plugin's name for the run (`execution:ex-3`); one open
    /// checkpoint per (tenant, plugin, subject).
    pub subject: String,
    /// One line for the person.
    pub title: String,
    /// What the person needs to judge (text, bounded by the host).
    pub evidence: String,
    /// Who was calling when it was opened.
    pub opened_by: String,
    /// Unix milliseconds.
    pub created_at: i64,
}

/// A checkpoint as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// What it was opened with.
    pub opened: NewCheckpoint,
    /// 1 when opened, 2 once decided.
    pub version: u32,
    /// The disposition, once decided.
    pub disposition: Option<Disposition>,
    /// Who decided it.
    pub decided_by: Option<String>,
    /// Their reason.
    pub reason: Option<String>,
    /// When, unix milliseconds.
    pub decided_at: Option<i64>,
}

impl Checkpoint {
    /// `waiting` or `decided`.
    pub fn state(&self) -> &'static str {
        if self.disposition.is_some() {
            "decided"
        } else {
            "waiting"
        }
    }

    /// The checkpoint as tools show it.
    pub fn view(&self) -> serde_json::Value {
        let o = &self.opened;
        serde_json::json!({
            "checkpoint_id": o.id,
            "subject": o.subject,
            "plugin": o.plugin,
            "title": o.title,
            "evidence": o.evidence,
            "state": self.state(),
            "version": self.version,
            "disposition": self.disposition.map(Disposition::as_str),
            "outcome": self.disposition.map(Disposition::outcome),
            "decided_by": self.decided_by,
            "reason": self.reason,
            "opened_at": crate::rfc3339(o.created_at),
            "decided_at": self.decided_at.map(crate::rfc3339),
        })
    }
}

/// Why a disposition was refused; nothing changed.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// No checkpoint of that id in the tenant.
    #[error("no checkpoint {0} in this tenant")]
    NotFound(String),
    /// The version the decider saw is not the current one (someone decided
    /// first, or the decider's view is stale).
    #[error("checkpoint {id} is at version {current}, not {expected}: list it again")]
    VersionConflict {
        /// The checkpoint.
        id: String,
        /// The version the decider named.
        expected: u32,
        /// The stored version.
        current: u32,
    },
    /// It was decided already.
    #[error("checkpoint {0} is already decided")]
    Decided(String),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] GateStoreError),
}

/// Checkpoint rows. Tenant is part of every lookup.
pub trait CheckpointStore: Send + Sync {
    /// Opens `c`, or returns the checkpoint already held for its tenant,
    /// plugin and subject (waiting or decided) unchanged.
    fn open_checkpoint(&self, c: NewCheckpoint) -> GateFuture<'_, Checkpoint>;

    /// Checkpoints of `tenant`, waiting only or all, newest first.
    fn list_checkpoints<'a>(
        &'a self,
        tenant: &'a str,
        waiting_only: bool,
        limit: u32,
    ) -> GateFuture<'a, Vec<Checkpoint>>;

    /// Records `disposition` if the checkpoint is waiting and at
    /// `expected_version` (one conditional update; the version becomes
    /// `expected_version + 1`). Of two deciders one wins, the other gets
    /// `Decided`; a decider naming an old version of a waiting checkpoint
    /// gets `VersionConflict`.
    #[allow(clippy::too_many_arguments)]
    fn decide_checkpoint<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        expected_version: u32,
        disposition: Disposition,
        by: &'a str,
        reason: &'a str,
        now: i64,
    ) -> GateFuture<'a, Checkpoint, CheckpointError>;
}
