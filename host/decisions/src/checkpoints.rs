//! Human checkpoints as MCP tools (seed 002, MCPX-FR-019/029):
//! `list_checkpoints` and `decide_checkpoint`, host tools over the one
//! durable checkpoint store. Only a person decides; a decision names the
//! version it saw (compare-and-set), and every description names the
//! outcome each disposition records.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_gates::{CheckpointStore, Disposition};
use toolhost_invoke::{
    GatePolicy, HostCall, HostTool, HostToolFuture, InvokeError, host_spec as spec, invalid,
};
use toolhost_runtime::{ToolOutput, ToolSpec};
use toolhost_types::Principal;

use crate::DecisionError;
use crate::arguments::{bounded, listing, parsed, people_only};

/// Listing checkpoints needs this permission.
pub const CHECKPOINT_READ_PERMISSION: &str = "checkpoints:read";
/// Deciding them needs this one (and a user principal).
pub const CHECKPOINT_DECIDE_PERMISSION: &str = "checkpoints:decide";
const MAX_LISTED: u32 = 100;

/// `list_checkpoints(filter?)`.
pub struct ListCheckpoints {
    spec: ToolSpec,
    store: Arc<dyn CheckpointStore>,
}

impl ListCheckpoints {
    /// The tool over `store`.
    pub fn new(store: Arc<dyn CheckpointStore>) -> Self {
        let input = json!({
            "type": "object",
            "properties": {"filter": {
                "type": "object",
                "properties": {"state": {"enum": ["waiting", "all"]}},
                "additionalProperties": false,
            }},
            "additionalProperties": false,
        });
        let spec = spec(
            "list_checkpoints",
            "List human checkpoints",
            "Lists the runs of your tenant waiting for a person's judgement (by default only those still waiting), with their evidence and current version. Decide one with decide_checkpoint, naming the version you saw.",
            input,
            CHECKPOINT_READ_PERMISSION,
            false,
        );
        Self { spec, store }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    #[serde(default)]
    filter: ListFilter,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ListFilter {
    state: Option<String>,
}

impl HostTool for ListCheckpoints {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(async move { Ok((self.run(c.who, c.args).await?, Vec::new())) })
    }
}

impl ListCheckpoints {
    async fn run(&self, who: &Principal, args: &Value) -> Result<ToolOutput, InvokeError> {
        let args: ListArgs = listing(args)?;
        let waiting_only = match args.filter.state.as_deref() {
            None | Some("waiting") => true,
            Some("all") => false,
            Some(s) => return Err(invalid(format!("unknown state {s:?}"))),
        };
        let rows = self
            .store
            .list_checkpoints(&who.tenant, waiting_only, MAX_LISTED)
            .await
            .map_err(InvokeError::Gates)?;
        let shown: Vec<Value> = rows.iter().map(|c| c.view()).collect();
        let text = format!("{} checkpoint(s)", shown.len());
        Ok(ToolOutput {
            structured: json!({"checkpoints": shown}),
            text: Some(text),
            content: Vec::new(),
        })
    }
}

/// `decide_checkpoint(checkpoint_id, disposition, expected_version, reason?)`.
pub struct DecideCheckpoint {
    spec: ToolSpec,
    store: Arc<dyn CheckpointStore>,
    clock: GatePolicy,
}

impl DecideCheckpoint {
    /// The tool over `store`.
    pub fn new(store: Arc<dyn CheckpointStore>, clock: GatePolicy) -> Self {
        let input = json!({
            "type": "object",
            "required": ["checkpoint_id", "disposition", "expected_version"],
            "properties": {
                "checkpoint_id": {"type": "string"},
                "disposition": {
                    "enum": ["confirm", "false_positive", "inconclusive"],
                    "description": "confirm records the step as PASSED; false_positive and inconclusive record it as INCONCLUSIVE.",
                },
                "expected_version": {"type": "integer", "minimum": 1, "description": "The version list_checkpoints showed; a stale one is refused."},
                "reason": {"type": "string", "maxLength": 1000},
            },
            "additionalProperties": false,
        });
        let spec = spec(
            "decide_checkpoint",
            "Decide a human checkpoint",
            "Records a person's judgement of a run waiting at a human checkpoint. Each choice is named by the step outcome it records: confirm → the step PASSED; false_positive → INCONCLUSIVE; inconclusive → INCONCLUSIVE. Only a person (not a service) may decide; the decision names the version you saw and is refused if it changed (CHECKPOINT_VERSION_CONFLICT). The run continues the next time its status is read.",
            input,
            CHECKPOINT_DECIDE_PERMISSION,
            true,
        );
        Self { spec, store, clock }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecideArgs {
    checkpoint_id: String,
    disposition: Disposition,
    expected_version: u32,
    #[serde(default)]
    reason: String,
}

impl HostTool for DecideCheckpoint {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(async move { Ok((self.run(c.who, c.args).await?, Vec::new())) })
    }
}

impl DecideCheckpoint {
    async fn run(&self, who: &Principal, args: &Value) -> Result<ToolOutput, InvokeError> {
        people_only(who, &self.spec)?;
        let args: DecideArgs = parsed(args)?;
        let reason = args.reason.trim();
        bounded(reason)?;
        let now = self.clock.now_ms();
        let decided = self
            .store
            .decide_checkpoint(
                &who.tenant,
                &args.checkpoint_id,
                args.expected_version,
                args.disposition,
                &who.subject,
                reason,
                now,
            )
            .await
            .map_err(DecisionError::Checkpoint)?;
        tracing::info!(checkpoint = %args.checkpoint_id, by = %who.subject,
                disposition = args.disposition.as_str(), "checkpoint decided");
        let text = format!(
            "Checkpoint {} decided: {} (the step is recorded {}).",
            args.checkpoint_id,
            args.disposition,
            args.disposition.outcome().to_uppercase()
        );
        Ok(ToolOutput {
            structured: decided.view(),
            text: Some(text),
            content: Vec::new(),
        })
    }
}
