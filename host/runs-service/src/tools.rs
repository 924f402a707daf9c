//! The exploration host tools, for every client in both eras:
//! `start_exploration`, `get_exploration_result`, `cancel_exploration`
//! and `list_explorations`. Each is bound to the caller: a run is seen and
//! cancelled by the one who started it (or the tenant's admins); anyone
//! else is told it does not exist.

use std::sync::Arc;

use serde_json::{Value, json};
use toolhost_audit::Effect;
use toolhost_invoke::{
    AnswerFuture, Host, HostCall, HostTool, HostToolFuture, InvokeError, host_spec, invalid,
};
use toolhost_runs::{RunEffect, RunState};
use toolhost_runtime::{ToolOutput, ToolSpec};
use toolhost_types::Principal;

use crate::claim::{lost_elsewhere, started};
use crate::view::snapshot;
use crate::{RunError, Runs, Sessions, catalog_tool, run_lost, settle};

/// Starting, reading and cancelling one's own runs needs this permission
/// (and, to start one, the permission of the tool it runs).
pub const RUN_PERMISSION: &str = "explorations:run";

/// The most runs one listing returns.
const MAX_LISTED: u32 = 100;

/// The longest `get_exploration_result` waits for a run to end.
const MAX_WAIT_SECONDS: u64 = 30;

fn run_id_arg(args: &Value) -> Result<&str, InvokeError> {
    args.get("run_id")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("run_id (a string, run_…) is required"))
}

fn answer(run: &toolhost_runs::Run, text: String) -> ToolOutput {
    ToolOutput {
        structured: snapshot(run),
        text: Some(text),
        content: Vec::new(),
    }
}

/// `start_exploration(tool, arguments)`: queues a run of any catalog tool
/// the caller may call, in the exploration sandbox.
pub struct StartExploration {
    spec: ToolSpec,
    runs: Arc<Runs>,
    sessions: Option<Arc<dyn Sessions>>,
}

impl StartExploration {
    pub(crate) fn new(runs: Arc<Runs>, sessions: Option<Arc<dyn Sessions>>) -> Self {
        let spec = host_spec(
            "start_exploration",
            "Start an exploration run",
            "Runs a tool as an exploration run: queued durably, executed by a worker in a sandbox that reaches only exploration backends and only reads, bounded in time, output and artifacts, cancellable, and ending with a receipt. With revision, runs the tool of a candidate revision you submitted. With session_id, the run joins an authoring session (and with proposal_id runs that proposal's draft). Answers at once with the run; follow it with get_exploration_result.",
            json!({
                "type": "object",
                "properties": {
                    "tool": {"type": "string", "description": "The tool to run (any tool you may call)."},
                    "arguments": {"type": "object", "description": "Its arguments."},
                    "revision": {"type": "string", "description": "A plugin revision you submitted that waits for review: run its tool instead of the served one (try a candidate before asking for review)."},
                    "session_id": {"type": "string", "description": "An authoring session the run joins (its receipt becomes the session's evidence); needs expected_version and idempotency_key."},
                    "proposal_id": {"type": "string", "description": "With session_id: run the tool of this proposal's candidate revision (a draft, perhaps unsigned) instead of the served one."},
                    "expected_version": {"type": "integer", "minimum": 1},
                    "idempotency_key": {"type": "string", "maxLength": 255}
                },
                "required": ["tool"],
                "additionalProperties": false
            }),
            RUN_PERMISSION,
            true,
        );
        Self {
            spec,
            runs,
            sessions,
        }
    }
}

impl HostTool for StartExploration {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(self.run(c))
    }

    fn is_task(&self) -> bool {
        true
    }

    fn written<'a>(
        &'a self,
        c: HostCall<'a>,
        out: ToolOutput,
        effects: &'a [Effect],
    ) -> AnswerFuture<'a> {
        Box::pin(started(&self.runs, c, out, effects))
    }

    fn lost<'a>(&'a self, c: HostCall<'a>, effect: &'a Effect) -> AnswerFuture<'a> {
        match (effect, &self.sessions) {
            (Effect::Run(r), _) => Box::pin(std::future::ready(Err(run_lost(r)))),
            (Effect::Workspace(_), Some(sessions)) => sessions.lost(c, effect),
            _ => Box::pin(std::future::ready(Err(lost_elsewhere()))),
        }
    }
}

impl StartExploration {
    async fn run(&self, c: HostCall<'_>) -> Result<(ToolOutput, Vec<Effect>), InvokeError> {
        let (host, who, args) = (c.host, c.who, c.args);
        let name = args
            .get("tool")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("tool (a string) is required"))?;
        let arguments = args.get("arguments").cloned().unwrap_or_else(|| json!({}));
        if args.get("session_id").is_some() {
            let sessions = self
                .sessions
                .as_ref()
                .ok_or_else(|| invalid("session_id: this host keeps no authoring sessions"))?;
            return sessions.start_run(c, name, &arguments).await;
        }
        if let Some(revision) = args.get("revision").and_then(Value::as_str) {
            return (self.runs)
                .start_candidate_run(host, who, revision, name, &arguments)
                .await;
        }
        let tool = catalog_tool(host.tool(name), name)?;
        (self.runs)
            .start_named_run(host, who, &tool, &arguments)
            .await
    }
}

/// `get_exploration_result(run_id, wait_seconds?)`: the run, with its
/// outcome, receipt digest and artifacts once it is over.
pub struct GetExplorationResult(ToolSpec, Arc<Runs>);

impl GetExplorationResult {
    pub(crate) fn new(runs: Arc<Runs>) -> Self {
        Self(
            host_spec(
                "get_exploration_result",
                "Get an exploration run",
                "An exploration run you started: its state and progress; once it is over, its outcome, the SHA-256 of its receipt and its artifacts (read them with resources/read). wait_seconds (at most 30) waits for the run to end first.",
                json!({
                    "type": "object",
                    "properties": {
                        "run_id": {"type": "string"},
                        "wait_seconds": {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_SECONDS}
                    },
                    "required": ["run_id"],
                    "additionalProperties": false
                }),
                RUN_PERMISSION,
                false,
            ),
            runs,
        )
    }
}

impl HostTool for GetExplorationResult {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(self.run(c.host, c.who, c.args))
    }
}

impl GetExplorationResult {
    async fn run(
        &self,
        host: Host<'_>,
        who: &Principal,
        args: &Value,
    ) -> Result<(ToolOutput, Vec<Effect>), InvokeError> {
        let id = run_id_arg(args)?;
        let wait = args
            .get("wait_seconds")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let wait = std::time::Duration::from_secs(wait.min(MAX_WAIT_SECONDS));
        let run = self.1.visible_run(host, who, id).await?;
        let until = tokio::time::Instant::now() + wait;
        let never = tokio_util::sync::CancellationToken::new();
        let run = (self.1)
            .await_run(host, who, run, until, |_| {}, &never)
            .await?;
        Ok((crate::run_output(&run), Vec::new()))
    }
}

/// `cancel_exploration(run_id)`: stops a run. A queued run is cancelled at
/// once (its receipt is written with this call's row); a running one stops
/// at its guest's next epoch tick, on whichever replica runs it. A run
/// that is over is answered as it is.
pub struct CancelExploration(ToolSpec, Arc<Runs>);

impl CancelExploration {
    pub(crate) fn new(runs: Arc<Runs>) -> Self {
        Self(
            host_spec(
                "cancel_exploration",
                "Cancel an exploration run",
                "Stops an exploration run you started: a queued one at once, a running one at its next epoch tick. Cancelling a run that is over changes nothing.",
                json!({
                    "type": "object",
                    "properties": {"run_id": {"type": "string"}},
                    "required": ["run_id"],
                    "additionalProperties": false
                }),
                RUN_PERMISSION,
                true,
            ),
            runs,
        )
    }
}

impl HostTool for CancelExploration {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(self.run(c.host, c.who, c.args))
    }

    fn lost<'a>(&'a self, _: HostCall<'a>, effect: &'a Effect) -> AnswerFuture<'a> {
        Box::pin(std::future::ready(Err(match effect {
            Effect::Run(r) => run_lost(r),
            _ => lost_elsewhere(),
        })))
    }
}

impl CancelExploration {
    async fn run(
        &self,
        host: Host<'_>,
        who: &Principal,
        args: &Value,
    ) -> Result<(ToolOutput, Vec<Effect>), InvokeError> {
        let id = run_id_arg(args)?;
        let run = self.1.visible_run(host, who, id).await?;
        let now = host.now_ms();
        let store = &self.1.config.store;
        let run = match run.state {
            RunState::Queued => {
                let finish = settle::cancelled_before_start(host.scanner(), &run, who, now);
                let mut settled = run.clone();
                settled.state = RunState::Cancelled;
                settled.finished_at_ms = Some(now);
                settled.outcome = Some(finish.outcome.clone());
                settled.receipt = Some(finish.receipt.clone());
                settled.receipt_sha256 = Some(finish.receipt_sha256.clone());
                let text = format!("Run {id} was cancelled before it started.");
                let effect = Effect::Run(RunEffect::Finish(Box::new(finish)));
                return Ok((answer(&settled, text), vec![effect]));
            }
            s if s.is_terminal() => run,
            _ => store
                .request_cancel(&run.tenant, &run.id, now)
                .await
                .map_err(RunError::Store)?
                .unwrap_or(run),
        };
        let text = format!("Run {id} is {}.", run.state);
        Ok((answer(&run, text), Vec::new()))
    }
}

/// `list_explorations(limit?)`: the caller's runs, newest first (a tenant
/// admin sees the tenant's).
pub struct ListExplorations(ToolSpec, Arc<Runs>);

impl ListExplorations {
    pub(crate) fn new(runs: Arc<Runs>) -> Self {
        Self(
            host_spec(
                "list_explorations",
                "List exploration runs",
                "Your exploration runs, newest first (a tenant admin sees the tenant's).",
                json!({
                    "type": "object",
                    "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": MAX_LISTED}},
                    "additionalProperties": false
                }),
                RUN_PERMISSION,
                false,
            ),
            runs,
        )
    }
}

impl HostTool for ListExplorations {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(self.run(c.host, c.who, c.args))
    }
}

impl ListExplorations {
    async fn run(
        &self,
        host: Host<'_>,
        who: &Principal,
        args: &Value,
    ) -> Result<(ToolOutput, Vec<Effect>), InvokeError> {
        let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(20);
        let limit = u32::try_from(limit.min(u64::from(MAX_LISTED))).unwrap_or(MAX_LISTED);
        let principal = if host.is_tenant_admin(who).await? {
            None
        } else {
            Some(who.subject.as_str())
        };
        let runs = (self.1.config.store)
            .runs(&who.tenant, principal, limit)
            .await
            .map_err(RunError::Store)?;
        let text = runs
            .iter()
            .map(|r| format!("{} {} {}", r.id, r.state, r.spec.tool))
            .collect::<Vec<_>>()
            .join("\n");
        let listed: Vec<Value> = runs.iter().map(snapshot).collect();
        let out = ToolOutput {
            structured: json!({"runs": listed}),
            text: Some(if text.is_empty() {
                "No runs.".into()
            } else {
                text
            }),
            content: Vec::new(),
        };
        Ok((out, Vec::new()))
    }
}
