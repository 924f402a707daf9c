//! The exploration host tools, for every client in both eras:
//! `start_exploration`, `get_exploration_result`, `cancel_exploration`
//! and `list_explorations`. Each is bound to the caller: a run is seen and
//! cancelled by the one who started it (or the tenant's admins); anyone
//! else is told it does not exist.

use std::sync::Arc;

use serde_json::{Value, json};
use toolhost_audit::Effect;
use toolhost_catalog::ToolRef;
use toolhost_invoke::{
    AnswerFuture, ClaimTools, HostCall, HostTool, HostToolFuture, InvokeError, host_spec, invalid,
};
use toolhost_runs::{RunCursor, RunEffect, RunQuery, RunState};
use toolhost_runtime::{ToolOutput, ToolSpec};

use crate::started::{RUN_NOTE, run_schema, started};
use crate::view::snapshot;
use crate::{RunError, Runs, Sessions, run_lost, settle};

/// Starting, reading and cancelling one's own runs needs this permission
/// (and, to start one, the permission of the tool it runs).
pub const RUN_PERMISSION: &str = "explorations:run";

/// What a runs tool answers: its output and the effects to write.
type Started = Result<(ToolOutput, Vec<Effect>), InvokeError>;

/// The most runs one listing returns.
const MAX_LISTED: u32 = 100;

/// The longest text a listing's tool or plugin filter takes: a name is
/// far shorter; the bound keeps a pattern cheap to match.
const MAX_FILTER_LEN: usize = 200;

/// Every run state, as a listing's `state` filter takes them.
const STATES: [&str; 8] = toolhost_runs::RunState::NAMES;

/// The longest `get_exploration_result` waits for a run to end.
const MAX_WAIT_SECONDS: u64 = 30;

/// The longest a cancel waits for its run to settle before answering that
/// it is still stopping (a worker that heard no signal hears the cancel at
/// its next heartbeat, within a second).
const CANCEL_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

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

/// A tool that starts runs: `start_exploration(tool, arguments)`, which
/// queues a run of any catalog tool the caller may call, and each catalog
/// tool with a `run` table, whose call queues a run of it (its caller and
/// arguments admitted by the call path as for any call of the tool). Both
/// answer at once with the run; a caller that asked for progress waits for
/// it.
pub(crate) struct StartTool {
    spec: ToolSpec,
    runs: Arc<Runs>,
    starts: Starts,
}

/// What a [`StartTool`] starts.
enum Starts {
    /// The tool its arguments name; a run that joins an authoring session
    /// is started by `sessions`.
    Named(Option<Arc<dyn Sessions>>),
    /// The catalog tool it claimed.
    Claimed(ToolRef),
}

impl StartTool {
    /// `start_exploration`.
    pub(crate) fn named(runs: Arc<Runs>, sessions: Option<Arc<dyn Sessions>>) -> Self {
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
        let starts = Starts::Named(sessions);
        Self { spec, runs, starts }
    }

    /// The run tool serving catalog tool `tool`.
    pub(crate) fn claimed(runs: Arc<Runs>, tool: ToolRef) -> Self {
        let mut spec = tool.spec().clone();
        spec.description = format!("{} {RUN_NOTE}", spec.description);
        spec.output_schema = Some(run_schema());
        let starts = Starts::Claimed(tool);
        Self { spec, runs, starts }
    }
}

impl HostTool for StartTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(async move {
            let (client, task) = (c.client, c.task);
            let (out, mut effects) = match &self.starts {
                Starts::Named(sessions) => self.start_named(sessions.as_deref(), c).await?,
                Starts::Claimed(tool) => {
                    crate::start::ask_first(&c, tool).await?;
                    self.runs.start_run(c.host, c.who, tool, c.args).await?
                }
            };
            crate::start::let_ask(&mut effects, client.filter(|_| task));
            Ok((out, effects))
        })
    }

    fn is_task(&self) -> bool {
        true
    }

    fn requires_task(&self) -> bool {
        let Starts::Claimed(tool) = &self.starts else {
            return false;
        };
        let section = tool.plugin().manifest.tools.get(&tool.spec().name);
        section
            .and_then(|s| s.run.as_ref())
            .is_some_and(|run| run.task == toolhost_limits::TaskUse::Required)
    }

    fn claimed(&self) -> Option<&ToolRef> {
        match &self.starts {
            Starts::Claimed(tool) => Some(tool),
            Starts::Named(_) => None,
        }
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
        match (effect, &self.starts) {
            (Effect::Workspace(_), Starts::Named(Some(sessions))) => sessions.lost(c, effect),
            _ => Box::pin(std::future::ready(Err(run_lost(effect)))),
        }
    }
}

/// The runs feature's claim: every catalog tool whose manifest entry has a
/// `run` table is served as a run tool.
pub struct RunTools(Arc<Runs>);

impl RunTools {
    pub(crate) fn new(runs: Arc<Runs>) -> Self {
        Self(runs)
    }
}

impl ClaimTools for RunTools {
    fn claim(&self, tool: &ToolRef) -> Option<Arc<dyn HostTool>> {
        let section = tool.plugin().manifest.tools.get(&tool.spec().name)?;
        section.run.as_ref()?;
        Some(Arc::new(StartTool::claimed(self.0.clone(), tool.clone())))
    }
}

impl StartTool {
    async fn start_named(&self, sessions: Option<&dyn Sessions>, c: HostCall<'_>) -> Started {
        let (host, who, args) = (c.host, c.who, c.args);
        let name = args
            .get("tool")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("tool (a string) is required"))?;
        let arguments = args.get("arguments").cloned().unwrap_or_else(|| json!({}));
        if args.get("session_id").is_some() {
            let sessions = sessions
                .ok_or_else(|| invalid("session_id: this host keeps no authoring sessions"))?;
            return sessions.start_run(c, name, &arguments).await;
        }
        if let Some(revision) = args.get("revision").and_then(Value::as_str) {
            return (self.runs)
                .start_candidate_run(host, who, revision, name, &arguments)
                .await;
        }
        self.runs.start_named_run(host, who, name, &arguments).await
    }
}

/// A tool that reads or stops runs: `get_exploration_result`,
/// `cancel_exploration`, `list_explorations`.
struct RunsTool {
    spec: ToolSpec,
    which: Which,
    runs: Arc<Runs>,
}

/// Which [`RunsTool`].
#[derive(Clone, Copy)]
enum Which {
    Get,
    Cancel,
    List,
}

/// The tools that read or stop runs, over `runs`.
pub(crate) fn runs_tools(runs: &Arc<Runs>) -> Vec<Arc<dyn HostTool>> {
    [Which::Get, Which::Cancel, Which::List]
        .into_iter()
        .map(|which| {
            let spec = which.spec();
            let runs = runs.clone();
            Arc::new(RunsTool { spec, which, runs }) as Arc<dyn HostTool>
        })
        .collect()
}

impl Which {
    fn spec(self) -> ToolSpec {
        match self {
            Which::Get => host_spec(
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
            Which::Cancel => host_spec(
                "cancel_exploration",
                "Cancel an exploration run",
                "Stops an exploration run you started, whatever state it is in: a queued one at once, a running one at its guest's next epoch tick once its worker hears the cancel (at once; within a second at worst). Answers how the run ended: cancelled, or the outcome it had already reached. Cancelling a run that is over changes nothing.",
                json!({
                    "type": "object",
                    "properties": {"run_id": {"type": "string"}},
                    "required": ["run_id"],
                    "additionalProperties": false
                }),
                RUN_PERMISSION,
                true,
            ),
            Which::List => host_spec(
                "list_explorations",
                "List exploration runs",
                "Your exploration runs, newest first (a tenant admin sees the tenant's), a page at a time: state, tool and plugin filter them (a tool or plugin whose name contains the text, ignoring case); next_cursor, when the answer has one, passed as before reads the next older page, and a run's cursor passed as after reads the page of runs newer than it.",
                json!({
                    "type": "object",
                    "properties": {
                        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LISTED},
                        "state": {"type": "string", "enum": STATES},
                        "tool": {"type": "string", "maxLength": MAX_FILTER_LEN},
                        "plugin": {"type": "string", "maxLength": MAX_FILTER_LEN},
                        "before": {"type": "string", "description": "a next_cursor: the runs older than it"},
                        "after": {"type": "string", "description": "a run's cursor: the page of runs just newer than it, still newest first"}
                    },
                    "additionalProperties": false
                }),
                RUN_PERMISSION,
                false,
            ),
        }
    }
}

impl HostTool for RunsTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        let runs = &*self.runs;
        match self.which {
            Which::Get => Box::pin(get_result(runs, c)),
            Which::Cancel => Box::pin(cancel(runs, c)),
            Which::List => Box::pin(list(runs, c)),
        }
    }

    fn lost<'a>(&'a self, c: HostCall<'a>, effect: &'a Effect) -> AnswerFuture<'a> {
        match (self.which, effect) {
            (Which::Cancel, Effect::Run(RunEffect::Finish(_))) => {
                Box::pin(cancel_lost(&self.runs, c))
            }
            _ => Box::pin(std::future::ready(Err(run_lost(effect)))),
        }
    }
}

/// `get_exploration_result(run_id, wait_seconds?)`: the run, with its
/// outcome, receipt digest and artifacts once it is over.
async fn get_result(runs: &Runs, c: HostCall<'_>) -> Started {
    let (host, who, args) = (c.host, c.who, c.args);
    let id = run_id_arg(args)?;
    let wait = args
        .get("wait_seconds")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let wait = std::time::Duration::from_secs(wait.min(MAX_WAIT_SECONDS));
    let run = runs.visible_run(host, who, id).await?;
    let until = tokio::time::Instant::now() + wait;
    let never = tokio_util::sync::CancellationToken::new();
    let run = runs
        .await_run(host, who, run, until, |_| {}, &never)
        .await?;
    Ok((crate::run_output(&run), Vec::new()))
}

/// `cancel_exploration(run_id)`: stops a run, whatever state it is in when
/// the cancel arrives; idempotent.
///
/// The request is stored first, in one statement that any claim or finish
/// races safely, so it always lands: a worker that claims the run after it
/// settles the run `cancelled` before its guest starts, and one already
/// running it hears it at once (signalled here, or through the store on
/// another replica) and stops its guest at the next epoch tick. A run
/// still queued is then settled `cancelled` with this call's row (its
/// receipt with it); when a worker claimed it meanwhile, that write loses
/// and [`cancel_lost`] answers instead. The answer waits a moment for the
/// run to settle and says how it ended: `cancelled`, or the outcome it had
/// already reached.
async fn cancel(runs: &Runs, c: HostCall<'_>) -> Started {
    let (host, who, args) = (c.host, c.who, c.args);
    let id = run_id_arg(args)?;
    let run = runs.visible_run(host, who, id).await?;
    if run.state.is_terminal() {
        return Ok((ended(&run), Vec::new()));
    }
    let now = host.now_ms();
    let run = (runs.config.store)
        .request_cancel(&run.tenant, &run.id, now)
        .await
        .map_err(RunError::Store)?
        .unwrap_or(run);
    if matches!(run.state, RunState::Queued | RunState::InputRequired) {
        let finish = settle::cancelled_before_start(host.scanner(), &run, who, now);
        let mut settled = run.clone();
        settled.state = RunState::Cancelled;
        settled.finished_at_ms = Some(now);
        settled.outcome = Some(finish.outcome.clone());
        settled.receipt = Some(finish.receipt.clone());
        settled.receipt_sha256 = Some(finish.receipt_sha256.clone());
        let text = if run.state == RunState::Queued {
            format!("Run {id} was cancelled before it started.")
        } else {
            format!("Run {id} was cancelled while it waited for its client's input.")
        };
        let effect = Effect::Run(RunEffect::Finish(Box::new(finish)));
        return Ok((answer(&settled, text), vec![effect]));
    }
    Ok((stopping(runs, &c, run).await?, Vec::new()))
}

/// The answer of a cancel whose settling of a queued run lost to a worker
/// that claimed it: the request was stored before, so that worker settles
/// it `cancelled` (or, had it already answered, with its outcome).
async fn cancel_lost(runs: &Runs, c: HostCall<'_>) -> Result<ToolOutput, InvokeError> {
    let id = run_id_arg(c.args)?;
    let run = runs.visible_run(c.host, c.who, id).await?;
    stopping(runs, &c, run).await
}

/// The answer of a cancel stored for `run`, which is not queued: its
/// worker here is signalled, and `run` read again until it is over or
/// [`CANCEL_WAIT`] passes.
async fn stopping(
    runs: &Runs,
    c: &HostCall<'_>,
    run: toolhost_runs::Run,
) -> Result<ToolOutput, InvokeError> {
    runs.stops.signal(&run.id);
    let until = tokio::time::Instant::now() + CANCEL_WAIT;
    let run = (runs.await_run(c.host, c.who, run, until, |_| {}, c.cancel)).await?;
    Ok(ended(&run))
}

/// What a cancel answers about `run`: how it ended, or that it is still
/// stopping.
fn ended(run: &toolhost_runs::Run) -> ToolOutput {
    let id = &run.id;
    let text = match run.state {
        RunState::Cancelled => format!("Run {id} was cancelled."),
        s if s.is_terminal() => {
            format!("Run {id} had already ended: {s}; the cancel changed nothing.")
        }
        s => format!(
            "Run {id} is {s}: its cancel is stored, and its worker stops it within a second."
        ),
    };
    answer(run, text)
}

/// `list_explorations(limit?, state?, tool?, plugin?, before?, after?)`:
/// the caller's runs, newest first (a tenant admin sees the tenant's),
/// filtered and paged in the store. `next_cursor` names the next older
/// page when there is one, `prev_cursor` the newer page before a page read
/// from a cursor; each run's own place is its `cursor`.
async fn list(runs: &Runs, c: HostCall<'_>) -> Started {
    let (host, who, args) = (c.host, c.who, c.args);
    let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(20);
    let limit = u32::try_from(limit.min(u64::from(MAX_LISTED))).unwrap_or(MAX_LISTED);
    let principal = if host.is_tenant_admin(who).await? {
        None
    } else {
        Some(who.subject.clone())
    };
    let mut query = listing(args, &who.tenant, principal)?;
    // One more than asked: whether there is a page beyond.
    query.limit = limit + 1;
    let store = &runs.config.store;
    let mut page = store.page(&query).await.map_err(RunError::Store)?;
    let toward_newer = query.after.is_some() && query.before.is_none();
    let more = toolhost_types::keep_page(&mut page, limit as usize, toward_newer);
    // Read from a cursor, is there a page the other way? One run says.
    let beyond = match (page.first(), page.last()) {
        (Some(first), Some(last)) if query.before.is_some() || query.after.is_some() => {
            let probe = if toward_newer {
                RunQuery {
                    before: Some(RunCursor::of(last)),
                    after: None,
                    limit: 1,
                    ..query.clone()
                }
            } else {
                RunQuery {
                    before: None,
                    after: Some(RunCursor::of(first)),
                    limit: 1,
                    ..query.clone()
                }
            };
            !store
                .page(&probe)
                .await
                .map_err(RunError::Store)?
                .is_empty()
        }
        _ => false,
    };
    let (older, newer) = if toward_newer {
        (beyond, more)
    } else {
        (more, beyond)
    };
    let text = page
        .iter()
        .map(|r| format!("{} {} {}", r.id, r.state, r.spec.tool))
        .collect::<Vec<_>>()
        .join("\n");
    let listed: Vec<Value> = page
        .iter()
        .map(|r| {
            let mut v = snapshot(r);
            v["cursor"] = json!(RunCursor::of(r).to_string());
            v
        })
        .collect();
    let cursor = |run: Option<&toolhost_runs::Run>, wanted: bool| {
        run.filter(|_| wanted).map(|r| RunCursor::of(r).to_string())
    };
    let out = ToolOutput {
        structured: json!({
            "runs": listed,
            "next_cursor": cursor(page.last(), older),
            "prev_cursor": cursor(page.first(), newer),
        }),
        text: Some(if text.is_empty() {
            "No runs.".into()
        } else {
            text
        }),
        content: Vec::new(),
    };
    Ok((out, Vec::new()))
}

/// The store's query for a listing's `args` in `tenant` (of `principal`
/// only, when given); its limit is set by the caller.
fn listing(args: &Value, tenant: &str, principal: Option<String>) -> Result<RunQuery, InvokeError> {
    let text = |key: &str| -> Result<Option<String>, InvokeError> {
        match args.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.len() <= MAX_FILTER_LEN => {
                Ok(Some(s.trim().to_owned()).filter(|s| !s.is_empty()))
            }
            Some(_) => Err(invalid(format!(
                "{key}: a string of at most {MAX_FILTER_LEN} bytes"
            ))),
        }
    };
    let state = match text("state")? {
        None => None,
        Some(s) => Some(
            RunState::parse(&s)
                .ok_or_else(|| invalid(format!("state {s:?}: one of {}", STATES.join(", "))))?,
        ),
    };
    let cursor = |key: &str| -> Result<Option<RunCursor>, InvokeError> {
        match text(key)? {
            None => Ok(None),
            Some(c) => RunCursor::parse(&c).map(Some).ok_or_else(|| {
                invalid(format!(
                    "{key}: a cursor as list_explorations answers it (next_cursor, or a run's cursor)"
                ))
            }),
        }
    };
    Ok(RunQuery {
        tenant: tenant.to_owned(),
        principal,
        state,
        tool: text("tool")?,
        plugin: text("plugin")?,
        before: cursor("before")?,
        after: cursor("after")?,
        limit: MAX_LISTED,
    })
}
