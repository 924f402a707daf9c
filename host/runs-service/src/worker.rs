//! [`RunWorker`]: claims queued runs from the shared store and executes
//! them in the exploration sandbox, a few at a time, on any replica.
//!
//! One attempt, in order: write the rows of earlier attempts whose worker
//! died; load the revision the run pinned; list the entities it resolves
//! and run the tool in a sandbox that reaches only exploration backends,
//! reads only, and may keep artifacts; meanwhile renew the lease every
//! second (a lost lease stops the guest and writes nothing; a stored cancel
//! request stops it at its next epoch tick, read at once when a cancel on
//! this replica, or one heard from another, signals the run, and at the
//! next heartbeat otherwise); settle the run with its receipt and the
//! attempt's audit row.
//!
//! A graceful stop ([`RunWorker::run`]'s `stop`) claims nothing more and
//! gives the runs held their grace to settle; a run whose guest has not
//! answered by then is handed over: its guest is stopped, and the
//! attempt's row is written with the run queued again and its lease
//! released ([`RunEffect::HandOver`]), so another replica's worker claims
//! it at once (PostgreSQL NOTIFYs the queue) without spending one of its
//! attempts. A cancel stored meanwhile settles the run `cancelled` instead.
//!
//! A run its client can answer (a task's: `RunSpec::client`) asks through
//! the `client` import as a stateless call does, its answers so far handed
//! to the guest. An attempt whose guest asked what has no answer yet ends
//! there: its row is written with the run waiting `input_required` and its
//! lease released ([`RunEffect::AwaitInput`]), spending no attempt. A run
//! claimed after waiting longer than [`toolhost_runs::INPUT_WAIT`] is
//! settled `timed_out` without running.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use toolhost_audit::Effect;
use toolhost_catalog::LoadedPlugin;
use toolhost_runs::{Beat, Claim, ErrorRecord, Progress, Run, RunEffect, RunSource, RunState};
use toolhost_runtime::{
    CallContext, CallError, ClientChannel, ClientLink, ClientSupport, Exploration, Payer,
    ProgressSink, Reply, RunLog, SamplingGrant, Snapshots,
};
use tracing::Instrument;

use toolhost_audit::AuditSink;
use toolhost_invoke::Toolhost;

use crate::RunEnd;
use crate::settle::{Ending, HostInfo, attempt_event, settle};
use crate::stops::StopSignal;
use crate::{DraftRef, Runs, Sessions};

/// The longest between two heartbeats of a running run: how stale its
/// stored progress may be, and how late a cancel request that sent no
/// signal (a lost notification, the operator's CLI on SQLite) is heard.
const BEAT: Duration = Duration::from_secs(1);

/// How a worker runs.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// This worker's id (in leases and receipts): host and process.
    pub id: String,
    /// Runs executed at once.
    pub slots: usize,
    /// How long a claim holds without a heartbeat.
    pub lease: Duration,
    /// How often the queue is read when nothing woke the worker.
    pub poll: Duration,
    /// SHA-256 of the sandbox engine's configuration (for receipts).
    pub engine_sha256: String,
    /// How long a graceful stop lets the runs held settle before it hands
    /// them over.
    pub grace: Duration,
}

/// Executes queued runs until stopped.
pub struct RunWorker {
    host: Arc<Toolhost>,
    runs: Arc<Runs>,
    audit: Arc<dyn AuditSink>,
    sessions: Option<Arc<dyn Sessions>>,
    config: WorkerConfig,
    /// Cancelled when the grace of a graceful stop is over: each attempt
    /// still running stops its guest and hands its run over.
    hand_over: CancellationToken,
}

/// Why an attempt stopped before its guest answered.
enum Interrupt {
    /// A cancel asked for at this time (Unix milliseconds).
    Cancelled(i64),
    LeaseLost,
    /// The worker is stopping and the grace is over.
    HandOver,
}

/// How an attempt ended.
enum Attempted {
    /// Settle the run so.
    Settled(Ending),
    /// Another worker holds the run now: write nothing.
    LeaseLost,
    /// Hand the run over (or, if a cancel is stored, settle it as this
    /// ending, which says it was cancelled).
    HandOver(Ending),
    /// The guest asked its client these requests (by key) without an
    /// answer: the run waits for them.
    AwaitInput(AskedFor),
}

/// An attempt that ended asking its client.
struct AskedFor {
    requests: BTreeMap<String, serde_json::Value>,
    took: Duration,
    rounds: Vec<toolhost_audit::ClientRound>,
}

impl RunWorker {
    /// A worker executing the runs `runs` keeps, on `host`'s sandbox
    /// runtime and catalog, writing each attempt's row to `audit`; drafts
    /// are loaded from `sessions` (without it, a draft's run fails).
    pub fn new(
        host: Arc<Toolhost>,
        runs: Arc<Runs>,
        audit: Arc<dyn AuditSink>,
        sessions: Option<Arc<dyn Sessions>>,
        config: WorkerConfig,
    ) -> Self {
        Self {
            host,
            runs,
            audit,
            sessions,
            config,
            hand_over: CancellationToken::new(),
        }
    }

    /// Claims and executes runs until `stop`; then claims nothing more,
    /// waits up to the grace for the runs it holds to settle, hands over
    /// those still running, and returns once each is written. (A process
    /// killed meanwhile leaves its runs to be taken over when their leases
    /// expire.)
    pub async fn run(self, stop: CancellationToken) {
        let runs = self.runs.config().clone();
        let slots = Arc::new(Semaphore::new(self.config.slots.max(1)));
        let held = TaskTracker::new();
        let this = Arc::new(self);
        let mut last_reap = Instant::now() - this.config.lease;
        loop {
            let permit = tokio::select! {
                p = slots.clone().acquire_owned() => p.expect("the semaphore is never closed"),
                () = stop.cancelled() => break,
            };
            if last_reap.elapsed() >= this.config.lease {
                this.reap().await;
                last_reap = Instant::now();
            }
            let now = this.host.host().now_ms();
            let lease_ms = millis(this.config.lease);
            match runs.store.claim(&this.config.id, lease_ms, now).await {
                Ok(Some(claim)) => {
                    let worker = this.clone();
                    let span = tracing::info_span!(
                        "run.attempt",
                        run = %claim.run.id,
                        attempt = claim.run.attempt,
                        tool = %claim.run.spec.tool,
                    );
                    held.spawn(
                        async move {
                            worker.attempt(claim).await;
                            drop(permit);
                        }
                        .instrument(span),
                    );
                    continue;
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "run worker: claiming a run"),
            }
            drop(permit);
            tokio::select! {
                () = runs.wake.notified() => {}
                () = tokio::time::sleep(this.config.poll) => {}
                () = stop.cancelled() => break,
            }
        }
        held.close();
        if held.is_empty() {
            return;
        }
        let grace = this.config.grace;
        tracing::info!(
            runs = held.len(),
            ?grace,
            "run worker stopping: letting the runs held settle"
        );
        if tokio::time::timeout(grace, held.wait()).await.is_err() {
            tracing::info!(
                runs = held.len(),
                "run worker stopping: handing the runs still running over"
            );
            this.hand_over.cancel();
            held.wait().await;
        }
    }

    fn info(&self) -> HostInfo {
        HostInfo {
            worker: self.config.id.clone(),
            engine_sha256: self.config.engine_sha256.clone(),
        }
    }

    /// Settles runs whose every attempt was lost: `failed`, `RUN_LOST`.
    async fn reap(&self) {
        let runs = self.runs.config();
        let now = self.host.host().now_ms();
        let exhausted = match runs.store.exhausted(now).await {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!(error = %e, "run worker: listing lost runs");
                return;
            }
        };
        for claim in exhausted {
            let ending = Ending::error(
                RunState::Failed,
                RunEnd::Lost.code(),
                format!(
                    "every one of the run's {} attempts lost its worker",
                    claim.run.attempt
                ),
            );
            self.write(&claim.run, Some(&claim.lease_token), &ending)
                .await;
        }
    }

    /// One attempt of a claimed run, settled unless its lease is lost.
    async fn attempt(&self, claim: Claim) {
        let Claim { run, lease_token } = claim;
        if !self.audit_lost_attempts(&run, &lease_token).await {
            return;
        }
        // Held before the first heartbeat reads the row: a cancel stored
        // after that read signals this hold.
        let signal = self.runs.stops.hold(&run.id);
        match self.execute(&run, &lease_token, &signal).await {
            Attempted::Settled(ending) => self.write(&run, Some(&lease_token), &ending).await,
            Attempted::LeaseLost => {
                tracing::warn!(run = %run.id, "run worker: the lease was taken over; this attempt writes nothing");
            }
            Attempted::HandOver(cancelled) => {
                self.hand_over(&run, &lease_token, cancelled).await;
            }
            Attempted::AwaitInput(asked) => self.await_input(&run, &lease_token, asked).await,
        }
    }

    /// Writes the attempt's row with `run` waiting for its client's answers
    /// to `asked`. A lease lost meanwhile writes nothing (the run is
    /// another worker's); a cancel stored meanwhile is heard by whoever
    /// cancels it next, or settles it when the wait is claimed.
    async fn await_input(&self, run: &Run, token: &str, asked: AskedFor) {
        let mut input = run.input.clone().unwrap_or_default();
        input.ask(asked.requests, run.attempt);
        let code = RunEnd::InputRequired.code().to_owned();
        let mut event = attempt_event(run, asked.took, Some(code));
        event.client_rounds = asked.rounds;
        let effect = Effect::Run(RunEffect::AwaitInput {
            id: run.id.clone(),
            lease_token: token.to_owned(),
            attempt: run.attempt,
            input: Box::new(input),
            parked_at_ms: self.host.host().now_ms(),
        });
        match self.audit.record_with(&event, &[effect]).await {
            Ok(()) => {
                tracing::info!(run = %run.id, attempt = run.attempt, "run waits for its client's input")
            }
            Err(e) => {
                tracing::warn!(run = %run.id, error = %e, "run worker: parking the run for input failed; it is taken over when its lease expires")
            }
        }
    }

    /// Queues `run` again for another worker, with this attempt's row,
    /// unless a cancel is stored: then it is settled as `cancelled` says.
    /// A lease lost meanwhile writes nothing; a run past its 62nd attempt
    /// is left to its lease.
    async fn hand_over(&self, run: &Run, token: &str, mut cancelled: Ending) {
        let runs = self.runs.config();
        let until = self.host.host().now_ms() + millis(self.config.lease);
        match runs.store.heartbeat(&run.id, token, until, None).await {
            Ok(Some(Beat {
                cancel_requested_at_ms: Some(at),
            })) => {
                cancelled.cancel_heard = Some(at);
                self.write(run, Some(token), &cancelled).await;
                return;
            }
            Ok(Some(_)) => {}
            Ok(None) => {
                tracing::warn!(run = %run.id, "run worker: the lease was taken over; the handover writes nothing");
                return;
            }
            // The handover's own write decides, under the same lease.
            Err(e) => {
                tracing::warn!(run = %run.id, error = %e, "run worker: heartbeat before a handover")
            }
        }
        let code = RunEnd::HandedOver.code().to_owned();
        let event = attempt_event(run, cancelled.took, Some(code));
        let effect = Effect::Run(RunEffect::HandOver {
            id: run.id.clone(),
            lease_token: token.to_owned(),
            attempt: run.attempt,
        });
        match self.audit.record_with(&event, &[effect]).await {
            Ok(()) => {
                tracing::info!(run = %run.id, attempt = run.attempt, "run handed over: queued again for another worker")
            }
            Err(e) => {
                tracing::warn!(run = %run.id, error = %e, "run worker: handing the run over failed; it is taken over when its lease expires")
            }
        }
    }

    async fn write(&self, run: &Run, lease_token: Option<&str>, ending: &Ending) {
        let now = self.host.host().now_ms();
        let (event, effects) = settle(
            self.host.host().scanner(),
            &self.info(),
            run,
            lease_token,
            ending,
            now,
        );
        match self.audit.record_with(&event, &effects).await {
            Ok(()) => {
                tracing::info!(run = %run.id, state = %ending.state, attempt = run.attempt, "run settled")
            }
            Err(e) => {
                tracing::warn!(run = %run.id, error = %e, "run worker: settling the run (its lease may have been taken over)")
            }
        }
    }

    /// Writes one row per earlier attempt whose worker died unrecorded.
    /// False: the lease is already gone.
    async fn audit_lost_attempts(&self, run: &Run, token: &str) -> bool {
        for n in run.audited_attempts + 1..run.attempt {
            let event = attempt_event(run, Duration::ZERO, Some(RunEnd::AttemptLost.code().into()));
            let effect = Effect::Run(RunEffect::AttemptLost {
                id: run.id.clone(),
                lease_token: token.to_owned(),
                attempt: n,
            });
            if let Err(e) = self.audit.record_with(&event, &[effect]).await {
                tracing::warn!(run = %run.id, error = %e, "run worker: recording a lost attempt");
                return false;
            }
        }
        true
    }

    /// Runs the attempt.
    async fn execute(&self, run: &Run, token: &str, signal: &StopSignal) -> Attempted {
        if run.state == RunState::Cancelling || run.cancel_requested_at_ms.is_some() {
            return Attempted::Settled(Ending::error(
                RunState::Cancelled,
                RunEnd::Cancelled.code(),
                "cancelled before this attempt started".into(),
            ));
        }
        if run.input.as_ref().is_some_and(|i| !i.is_answered()) {
            return Attempted::Settled(Ending::error(
                RunState::TimedOut,
                RunEnd::InputTimedOut.code(),
                format!(
                    "its client did not answer its requests for input within {:?}",
                    toolhost_runs::INPUT_WAIT
                ),
            ));
        }
        let now = self.host.host().now_ms();
        let remaining = run
            .deadline_at_ms
            .map_or(run.spec.budget.call.timeout, |d| {
                Duration::from_millis(u64::try_from(d - now).unwrap_or(0))
            });
        if remaining.is_zero() {
            return Attempted::Settled(Ending::error(
                RunState::TimedOut,
                RunEnd::TimedOut.code(),
                format!("the run's {:?} ran out", run.spec.budget.call.timeout),
            ));
        }
        let plugin = match self.plugin_for(run).await {
            Ok(p) => p,
            Err(why) => {
                return Attempted::Settled(Ending::error(
                    RunState::Failed,
                    RunEnd::RevisionUnavailable.code(),
                    why,
                ));
            }
        };
        let log = Arc::new(Mutex::new(RunLog::default()));
        let progress: Arc<Mutex<Option<Progress>>> = Arc::default();
        let started = Instant::now();
        let link = client_link(run, &plugin, self.host.host().scanner());
        let attempt = self.guest(
            run,
            &plugin,
            remaining,
            (log.clone(), progress.clone()),
            link.clone(),
        );
        let watch = self.watch(run, token, progress, signal);
        // Dropping the guest's call stops it at its next epoch tick.
        let result = tokio::select! {
            r = attempt => Ok(r),
            i = watch => Err(i),
            () = self.hand_over.cancelled() => Err(Interrupt::HandOver),
        };
        let guest_stopped_at_ms = Some(self.host.host().now_ms());
        let log = std::mem::take(&mut *log.lock().unwrap_or_else(|p| p.into_inner()));
        let took = started.elapsed();
        let cancelled = |log, cancel_heard| Ending {
            state: RunState::Cancelled,
            result: Err(error(
                RunEnd::Cancelled.code(),
                "cancelled while it ran".into(),
            )),
            log,
            took,
            guest_stopped_at_ms,
            cancel_heard,
            rpc_code: None,
        };
        match result {
            Err(Interrupt::LeaseLost) => Attempted::LeaseLost,
            Err(Interrupt::Cancelled(at)) => Attempted::Settled(cancelled(log, Some(at))),
            Err(Interrupt::HandOver) => Attempted::HandOver(cancelled(log, None)),
            Ok(Ok(Reply::NeedsInput(requests))) if may_ask_again(run) => {
                Attempted::AwaitInput(AskedFor {
                    requests,
                    took,
                    rounds: toolhost_invoke::client_rounds(link.as_ref()),
                })
            }
            Ok(reply) => {
                let (state, result, rpc_code) = settled(self.host.host().scanner(), run, reply);
                Attempted::Settled(Ending {
                    state,
                    result,
                    log,
                    took,
                    guest_stopped_at_ms,
                    cancel_heard: None,
                    rpc_code,
                })
            }
        }
    }

    /// The tool's call in the exploration sandbox, with the entities it
    /// resolves listed there first (never from the shared cache: those
    /// came from production backends).
    async fn guest(
        &self,
        run: &Run,
        plugin: &LoadedPlugin,
        remaining: Duration,
        (log, progress): (Arc<Mutex<RunLog>>, Arc<Mutex<Option<Progress>>>),
        link: Option<ClientLink>,
    ) -> Result<Reply, CallError> {
        let runs = self.runs.config();
        let budget = run.spec.budget;
        let exploration = Exploration {
            run_id: run.id.to_string(),
            tool: run.spec.tool.clone(),
            client_id: run.client_id.clone(),
            max_artifacts: budget.artifacts,
            max_artifact_bytes: budget.artifact_bytes.as_u64(),
            artifact_ttl_ms: millis(runs.artifact_ttl),
            scanner: self.host.host().scanner().clone(),
            log,
        };
        let mut call_budget = budget.call;
        call_budget.timeout = remaining;
        let base = CallContext::new(&run.tenant, &run.principal)
            .with_scanner(self.host.host().scanner().clone())
            .with_backends(self.host.host().backend_grant(plugin))
            .in_run(exploration);
        let section = plugin
            .manifest
            .tools
            .iter()
            .find(|(n, _)| n.as_str() == run.spec.tool);
        let mut snapshots = Snapshots::new();
        for kind in section.map(|(_, s)| s.resolves.clone()).unwrap_or_default() {
            let rows = (self.host.host().runtime())
                .snapshot(&plugin.plugin, &base, &kind, &plugin.budget)
                .await?;
            let name = plugin.manifest.plugin.name.as_str();
            snapshots.insert(
                kind.clone(),
                toolhost_invoke::floor(rows, &run.tenant, name, &kind),
            );
        }
        let sink = ProgressSink::new(move |r| {
            *progress.lock().unwrap_or_else(|p| p.into_inner()) = Some(Progress {
                progress: r.progress,
                total: r.total,
                message: r.message,
            });
        });
        let ctx = base
            .with_snapshots(Arc::new(snapshots))
            .with_progress(Some(sink))
            .with_client(link);
        let args = run.spec.arguments.to_string();
        (self.host.host().runtime())
            .call(&plugin.plugin, &ctx, &run.spec.tool, &args, &call_budget)
            .await
    }

    /// Renews the lease at once, then every second (at most a third of
    /// it) and whenever the run is signalled, storing the latest progress
    /// and learning of a cancel request; ends only when the lease is lost
    /// or a cancel is asked for.
    async fn watch(
        &self,
        run: &Run,
        token: &str,
        progress: Arc<Mutex<Option<Progress>>>,
        signal: &StopSignal,
    ) -> Interrupt {
        let runs = self.runs.config();
        let every = (self.config.lease / 3).min(BEAT);
        let mut first = true;
        loop {
            if !std::mem::take(&mut first) {
                tokio::select! {
                    () = tokio::time::sleep(every) => {}
                    () = signal.signalled() => {}
                }
            }
            let until = self.host.host().now_ms() + millis(self.config.lease);
            let latest = progress.lock().unwrap_or_else(|p| p.into_inner()).clone();
            match runs
                .store
                .heartbeat(&run.id, token, until, latest.as_ref())
                .await
            {
                Ok(Some(Beat {
                    cancel_requested_at_ms: Some(at),
                })) => return Interrupt::Cancelled(at),
                Ok(Some(_)) => {}
                Ok(None) => return Interrupt::LeaseLost,
                // The store is away: keep going until the lease would be
                // lost anyway (the next beat decides).
                Err(e) => tracing::warn!(run = %run.id, error = %e, "run worker: heartbeat"),
            }
        }
    }

    /// The plugin revision the run pinned: the served one if it still is,
    /// else loaded from the store by its revision id.
    async fn plugin_for(&self, run: &Run) -> Result<Arc<LoadedPlugin>, String> {
        let wanted = &run.spec.revision;
        if run.spec.source == RunSource::Active {
            let served = self.host.catalog(&run.tenant);
            let hit = served.plugins_arc().find(|p| {
                p.manifest.plugin.name.as_str() == wanted.plugin
                    && p.plugin.digest().to_string() == wanted.component_sha256
            });
            if let Some(p) = hit {
                return Ok(p);
            }
        }
        let id = match (&run.spec.source, &wanted.id) {
            (RunSource::Draft { session, proposal }, _) => {
                // The run was admitted when it was queued: its compile
                // (a miss only on another replica, or after the draft
                // cache was dropped) waits for a worker, never refused.
                let sessions = (self.sessions.as_ref())
                    .ok_or("no authoring service to load the draft from")?;
                let draft = DraftRef {
                    tenant: &run.tenant,
                    session,
                    proposal,
                };
                let loaded = sessions.draft(draft, Payer::Host).await?;
                if loaded.plugin.digest().to_string() != wanted.component_sha256 {
                    return Err(format!(
                        "the draft of {proposal} is not the component the run pinned"
                    ));
                }
                return Ok(loaded);
            }
            (RunSource::Candidate { revision }, _) => revision.clone(),
            (RunSource::Active, Some(id)) => id.clone(),
            (RunSource::Active, None) => {
                return Err(format!(
                    "plugin {} {} is no longer served and was not loaded from the store",
                    wanted.plugin, wanted.version
                ));
            }
        };
        let live = (self.runs.config().catalog.clone())
            .ok_or("no catalog store to load the revision from")?;
        let (_, loaded) = live.load_revision(&id).await?;
        if loaded.plugin.digest().to_string() != wanted.component_sha256 {
            return Err(format!("revision {id} is not the component the run pinned"));
        }
        Ok(loaded)
    }
}

/// A record of the error `code` with `message`.
fn error(code: &str, message: String) -> ErrorRecord {
    ErrorRecord {
        code: code.into(),
        message,
    }
}

/// Whether `run` may stop to ask its client once more: its client can
/// answer, and it has rounds left.
fn may_ask_again(run: &Run) -> bool {
    run.spec.client.is_some() && !run.input.as_ref().is_some_and(|i| i.rounds_spent())
}

/// The link through which `run`'s guest asks its client, if it may: the
/// answers given so far, by rounds, within what the client declared and
/// the plugin's manifest grants of sampling.
fn client_link(
    run: &Run,
    plugin: &LoadedPlugin,
    scanner: &toolhost_secrets::Scanner,
) -> Option<ClientLink> {
    let client = run.spec.client?;
    let answers = run
        .input
        .as_ref()
        .map(|i| i.answers.clone())
        .unwrap_or_default();
    let supports = ClientSupport {
        elicitation: client.elicitation,
        sampling: client.sampling,
        roots: client.roots,
    };
    let mut link = ClientLink::new(supports, ClientChannel::Rounds(answers));
    link.scanner = scanner.clone();
    link.sampling = plugin.manifest.sampling.map(|s| SamplingGrant {
        messages: s.messages,
        tokens: s.max_tokens,
    });
    Some(link)
}

/// How a run ends once its guest answered `reply`: an answer with a
/// secret in it, a question it may not ask (its client cannot answer, or
/// it asked every round it may) and an error all fail it; an error the
/// plugin raised as a JSON-RPC error keeps its code.
fn settled(
    scanner: &toolhost_secrets::Scanner,
    run: &Run,
    reply: Result<Reply, CallError>,
) -> (
    RunState,
    Result<toolhost_runtime::ToolOutput, ErrorRecord>,
    Option<i32>,
) {
    let (state, result) = match reply {
        Ok(Reply::Output(out)) => match run_secret(scanner, &out) {
            Some(f) => (
                RunState::Failed,
                Err(error(
                    RunEnd::SecretExposure.code(),
                    format!("the answer held a {}: withheld", f.kind),
                )),
            ),
            None => (RunState::Succeeded, Ok(out)),
        },
        Ok(Reply::NeedsInput(_)) => {
            let why = if run.spec.client.is_some() {
                format!(
                    "a run asks its client at most {} rounds",
                    toolhost_runs::MAX_INPUT_ROUNDS
                )
            } else {
                "only a run followed as a task (a 2026-07-28 request with the Tasks extension) \
                 can ask its client"
                    .into()
            };
            (
                RunState::Failed,
                Err(error(RunEnd::InputRequired.code(), why)),
            )
        }
        Ok(Reply::Clarify(c)) => (
            RunState::Failed,
            Err(error(
                RunEnd::NeedsClarification.code(),
                format!("a run cannot ask a person: {}", c.ask_user),
            )),
        ),
        Err(e @ CallError::Timeout { .. }) => {
            (RunState::TimedOut, Err(error(e.code(), e.to_string())))
        }
        // The plugin ended the run with a JSON-RPC error of its own: its
        // task is `failed` with it.
        Err(CallError::Protocol { code, message }) => {
            let failed = error(
                CallError::Protocol {
                    code,
                    message: String::new(),
                }
                .code(),
                message,
            );
            return (RunState::Failed, Err(failed), Some(code));
        }
        Err(e) => (RunState::Failed, Err(error(e.code(), e.to_string()))),
    };
    (state, result, None)
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// A secret anywhere in a run's answer: its structured result, its text,
/// its content blocks.
fn run_secret(
    scanner: &toolhost_secrets::Scanner,
    out: &toolhost_runtime::ToolOutput,
) -> Option<toolhost_secrets::Finding> {
    let structured = out.structured.to_string();
    let texts = out
        .content
        .iter()
        .flat_map(toolhost_runtime::ContentBlock::texts);
    scanner
        .find(&structured)
        .or_else(|| out.text.as_deref().and_then(|t| scanner.find(t)))
        .or_else(|| texts.into_iter().find_map(|t| scanner.find(&t)))
}
