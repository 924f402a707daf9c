//! What a call that starts a run comes to once its row is written
//! ([`started`]), and what a run tool says of itself: the note its
//! description adds and the answer it gives (the run).

use serde_json::{Value, json};
use toolhost_audit::Effect;
use toolhost_invoke::{HostCall, InvokeError};
use toolhost_runtime::ToolOutput;

use crate::{Runs, queued_run};

/// Once the row that queued a run is written: this host's workers are
/// woken (other replicas hear of it by NOTIFY, or by polling), and a caller
/// that asked for progress waits for the run on this request, hearing its
/// progress (the run goes on if it stops waiting).
pub async fn started(
    runs: &Runs,
    c: HostCall<'_>,
    out: ToolOutput,
    effects: &[Effect],
) -> Result<ToolOutput, InvokeError> {
    let Some(run) = queued_run(effects) else {
        return Ok(out);
    };
    runs.config.wake.notify_waiters();
    match c.progress {
        Some(sink) => runs.follow(c.host, c.who, &run, sink, c.cancel).await,
        None => Ok(out),
    }
}

/// What a run tool's description adds.
pub(crate) const RUN_NOTE: &str = "Runs as an exploration run: the call queues it and answers with the run \
     (follow it with get_exploration_result); a call with a progress token waits for it, hearing \
     its progress. Its answer is the run's outcome.";

/// The answer of a call that queued a run: the run as
/// `get_exploration_result` shows it.
pub(crate) fn run_schema() -> Value {
    json!({
        "type": "object",
        "description": "An exploration run: once its state is over, outcome holds the tool's answer or error, receipt_sha256 its receipt's digest, artifacts what it kept.",
        "required": ["run_id", "state", "tool"],
        "properties": {
            "run_id": {"type": "string"},
            "state": {"enum": ["queued", "running", "cancelling", "input_required", "succeeded", "failed", "cancelled", "timed_out"]},
            "tool": {"type": "string"},
            "outcome": {"type": ["object", "null"]},
            "receipt_sha256": {"type": ["string", "null"]},
            "artifacts": {"type": "array"},
            "receipt": {"type": "object"},
            "poll_after_ms": {"type": "integer"},
            "input_requests": {"type": "object", "description": "While input_required: the requests its tool asked its client, by key; the client answers them with tasks/update."},
        },
    })
}
