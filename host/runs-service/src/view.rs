//! A run as the exploration tools and MCP Tasks show it, to whom may see
//! it.

use serde_json::{Value, json};
use toolhost_invoke::{Host, InvokeError};
use toolhost_runs::{Run, RunId, RunState};
use toolhost_runtime::ToolOutput;
use toolhost_types::Principal;

use crate::{RunError, Runs};

impl Runs {
    /// The run `id` as `who` may see it: their own, or any of their
    /// tenant's if they are its admin. Anything else is not found.
    pub async fn visible_run(
        &self,
        host: Host<'_>,
        who: &Principal,
        id: &str,
    ) -> Result<Run, InvokeError> {
        let not_found = || RunError::NotFound { id: id.to_owned() };
        let run_id = RunId::parse(id).ok_or_else(not_found)?;
        let run = self
            .config
            .store
            .run(&who.tenant, &run_id)
            .await
            .map_err(RunError::Store)?
            .ok_or_else(not_found)?;
        if run.owned_by(&who.tenant, &who.subject) || host.is_tenant_admin(who).await? {
            Ok(run)
        } else {
            Err(not_found().into())
        }
    }

    /// How long a run is kept readable once over (its artifacts' TTL).
    pub fn retention(&self) -> std::time::Duration {
        self.config.artifact_ttl
    }
}

/// How long a caller should wait before asking again.
pub(crate) const POLL_AFTER_MS: u64 = 1000;

/// A run as the exploration tools answer with it: its snapshot, and a line
/// for people.
pub fn run_output(run: &Run) -> ToolOutput {
    let text = match &run.receipt_sha256 {
        Some(sha) => format!("Run {} is {}; receipt sha256 {sha}.", run.id, run.state),
        None => format!("Run {} is {}.", run.id, run.state),
    };
    ToolOutput {
        structured: snapshot(run),
        text: Some(text),
        content: Vec::new(),
    }
}

/// What every exploration tool answers about a run: its id and state,
/// progress, and once it is over, its outcome, receipt digest and
/// artifacts.
pub(crate) fn snapshot(run: &Run) -> Value {
    let mut v = json!({
        "run_id": run.id.as_str(),
        "state": run.state.as_str(),
        "tool": run.spec.tool,
        "plugin": run.spec.revision.plugin,
        "attempt": run.attempt,
        "created_at_ms": run.created_at_ms,
        "started_at_ms": run.started_at_ms,
        "finished_at_ms": run.finished_at_ms,
        "progress": run.progress,
    });
    if run.state.is_terminal() {
        v["outcome"] = serde_json::to_value(&run.outcome).unwrap_or(Value::Null);
        v["receipt_sha256"] = json!(run.receipt_sha256);
        let receipt = run
            .receipt
            .as_deref()
            .and_then(|r| serde_json::from_str::<toolhost_runs::Receipt>(r).ok());
        if let Some(r) = receipt {
            v["artifacts"] = serde_json::to_value(&r.artifacts).unwrap_or_default();
            v["receipt"] = serde_json::to_value(&r).unwrap_or_default();
        }
    } else {
        v["poll_after_ms"] = json!(POLL_AFTER_MS);
    }
    if let Some(input) = run
        .input
        .as_ref()
        .filter(|_| run.state == RunState::InputRequired)
    {
        // What it waits on, by key: its client answers with `tasks/update`.
        v["input_requests"] = json!(input.pending);
    }
    v
}
