//! A run's end: its receipt, the effects that settle it, and the audit row
//! of the attempt that ended it. A receipt is written every time a run
//! ends, whatever the way: answered, failed, timed out, cancelled (even
//! before it started), or lost with every worker that took it.

use std::time::Duration;

use toolhost_audit::{AuditEvent, Effect, Outcome as RowOutcome};
use toolhost_runs::{
    ArtifactRecord, AttemptRecord, ErrorRecord, FinishRun, HostRecord, OutboundRecord, Outcome,
    RECEIPT_VERSION, Receipt, RefusalRecord, Run, RunEffect, RunState,
};
use toolhost_runtime::{KeptArtifact, RunLog, ToolOutput};
use toolhost_types::{Digest, Principal};

use toolhost_secrets::Scanner;

use crate::RunEnd;

/// Why a re-run after a lost worker is safe: the receipt says so.
const RERUN_NOTE: &str = "an earlier attempt's worker stopped renewing its lease, or was asked \
     to stop and handed the run over, or its guest asked the client for input and the client \
     answered, and the run was run again from the start; runs are \
     side-effect free (exploration backends only, reads only), so a re-run changes nothing; only \
     the last attempt's requests are listed";

/// Which host ran an attempt.
#[derive(Debug, Clone)]
pub(crate) struct HostInfo {
    pub(crate) worker: String,
    pub(crate) engine_sha256: String,
}

/// How an attempt ended, before it is written down.
pub(crate) struct Ending {
    pub(crate) state: RunState,
    pub(crate) result: Result<ToolOutput, ErrorRecord>,
    pub(crate) log: RunLog,
    pub(crate) took: Duration,
    /// When the guest stopped (none: no guest ran).
    pub(crate) guest_stopped_at_ms: Option<i64>,
    /// When the cancel this attempt heard was asked for (none: it heard
    /// none; the claimed run may still name one asked for earlier).
    pub(crate) cancel_heard: Option<i64>,
    /// The JSON-RPC error code the plugin ended the run with, if it raised
    /// one (`PROTOCOL_ERROR`).
    pub(crate) rpc_code: Option<i32>,
}

impl Ending {
    /// An ending with no answer and nothing done.
    pub(crate) fn error(state: RunState, code: &str, message: String) -> Self {
        Ending {
            state,
            result: Err(ErrorRecord {
                code: code.into(),
                message,
            }),
            log: RunLog::default(),
            took: Duration::ZERO,
            guest_stopped_at_ms: None,
            cancel_heard: None,
            rpc_code: None,
        }
    }
}

/// The receipt of `run` ending as `ending` at `now`: every field a person
/// needs, strings the sandbox recorded passed through the host's scanner.
fn receipt(scanner: &Scanner, info: &HostInfo, run: &Run, ending: &Ending, now: i64) -> Receipt {
    let (outbound, refused) = redacted_log(scanner, &ending.log);
    let answer_sha256 = ending.result.as_ref().ok().map(|out| {
        let text = toolhost_types::canonical_json(&out.structured);
        Digest::of(text.as_bytes()).to_string()
    });
    Receipt {
        receipt_version: RECEIPT_VERSION,
        run_id: run.id.to_string(),
        tenant: run.tenant.clone(),
        principal: run.principal.clone(),
        principal_kind: run.principal_kind.clone(),
        client_id: run.client_id.clone(),
        tool: run.spec.tool.clone(),
        source: run.spec.source.clone(),
        revision: run.spec.revision.clone(),
        argument_digest: run.spec.argument_digest.clone(),
        host: HostRecord {
            version: env!("CARGO_PKG_VERSION").into(),
            engine_sha256: info.engine_sha256.clone(),
            worker: info.worker.clone(),
        },
        budget: run.spec.budget,
        created_at_ms: run.created_at_ms,
        started_at_ms: run.started_at_ms,
        finished_at_ms: now,
        cancel_requested_at_ms: run.cancel_requested_at_ms.or(ending.cancel_heard),
        guest_stopped_at_ms: ending.guest_stopped_at_ms,
        attempts: attempts(info, run, ending),
        state: ending.state.as_str().into(),
        error: ending.result.as_ref().err().cloned(),
        answer_sha256,
        outbound,
        refused,
        artifacts: ending.log.artifacts.iter().map(artifact_record).collect(),
        note: (run.attempt > 1).then(|| RERUN_NOTE.into()),
    }
}

/// Every attempt of `run`: the earlier ones were handed over by a graceful
/// stop, ended asking the client for input, or lost their worker; the last one finished on this worker (unless
/// it was lost too).
fn attempts(info: &HostInfo, run: &Run, ending: &Ending) -> Vec<AttemptRecord> {
    let mut attempts: Vec<AttemptRecord> = (1..run.attempt)
        .map(|n| AttemptRecord {
            number: n,
            worker: None,
            ended: if run.was_handed_over(n) {
                "handed_over"
            } else if run.asked_in(n) {
                "input_required"
            } else {
                "lost"
            }
            .into(),
        })
        .collect();
    if run.attempt > 0 {
        let lost = ending
            .result
            .as_ref()
            .is_err_and(|e| e.code == RunEnd::Lost.code());
        attempts.push(AttemptRecord {
            number: run.attempt,
            worker: (!lost).then(|| info.worker.clone()),
            ended: if lost { "lost" } else { "finished" }.into(),
        });
    }
    attempts
}

/// What the sandbox recorded of a run's requests and refusals, passed
/// through the host's scanner.
fn redacted_log(scanner: &Scanner, log: &RunLog) -> (Vec<OutboundRecord>, Vec<RefusalRecord>) {
    let redact = |s: &str| scanner.redact(s).into_owned();
    let outbound = (log.outbound.iter().cloned())
        .map(|mut o| {
            o.path = redact(&o.path);
            o
        })
        .collect();
    let mut refused: Vec<RefusalRecord> = (log.refused.iter().cloned())
        .map(|mut r| {
            r.detail = redact(&r.detail);
            r
        })
        .collect();
    if log.refusals_unlisted > 0 {
        refused.push(RefusalRecord {
            what: "unlisted".into(),
            detail: format!(
                "{} more refused attempts, not listed",
                log.refusals_unlisted
            ),
        });
    }
    (outbound, refused)
}

fn artifact_record(kept: &KeptArtifact) -> ArtifactRecord {
    let a = &kept.new.artifact;
    ArtifactRecord {
        uri: a.id.uri(),
        name: kept.name.clone(),
        mime_type: a.mime_type.clone(),
        sha256: a.sha256.to_string(),
        size: a.size,
    }
}

/// What callers are told of an ending.
fn outcome(ending: &Ending) -> Outcome {
    match &ending.result {
        Ok(out) => Outcome::Answered {
            structured: out.structured.clone(),
            text: out.text.clone(),
        },
        Err(e) => Outcome::Error {
            code: e.code.clone(),
            message: e.message.clone(),
            rpc_code: ending.rpc_code,
        },
    }
}

/// The effects and audit row that settle `run`, which ended as `ending`
/// under `lease_token`: the run's terminal state with its receipt, its
/// artifacts, and the row of its last attempt (linking the receipt).
pub(crate) fn settle(
    scanner: &Scanner,
    info: &HostInfo,
    run: &Run,
    lease_token: Option<&str>,
    ending: &Ending,
    now: i64,
) -> (AuditEvent, Vec<Effect>) {
    let (text, digest) = receipt(scanner, info, run, ending, now).seal();
    let finish = FinishRun {
        id: run.id.clone(),
        lease_token: lease_token.map(str::to_owned),
        attempt: run.attempt,
        state: ending.state,
        finished_at_ms: now,
        outcome: outcome(ending),
        receipt: text,
        receipt_sha256: digest.to_string(),
    };
    let mut effects: Vec<Effect> = ending
        .log
        .artifacts
        .iter()
        .map(|k| Effect::StoreArtifact(k.new.clone()))
        .collect();
    effects.push(Effect::Run(RunEffect::Finish(Box::new(finish))));
    let code = ending.result.as_ref().err().map(|e| e.code.clone());
    let mut event = attempt_event(run, ending.took, code);
    event.receipt_sha256 = Some(digest.to_string());
    (event, effects)
}

/// The audit row of one attempt of `run`.
pub(crate) fn attempt_event(run: &Run, took: Duration, error_code: Option<String>) -> AuditEvent {
    let revision = &run.spec.revision;
    let digest = (run.spec.argument_digest.parse()).unwrap_or_else(|_| Digest::of(b""));
    AuditEvent {
        client_id: Some(run.client_id.clone()),
        plugin: Some(revision.plugin.clone()),
        catalog_version: revision.catalog_version.clone(),
        plugin_digest: revision.component_sha256.parse().ok(),
        outcome: match error_code {
            None => RowOutcome::Executed,
            Some(_) => RowOutcome::Error,
        },
        error_code,
        duration: took,
        ..AuditEvent::new(&run.tenant, &run.principal, &run.spec.tool, digest)
    }
}

/// The settlement of a queued run cancelled by `who` before any worker
/// claimed it (written with the cancelling call's row).
pub(crate) fn cancelled_before_start(
    scanner: &Scanner,
    run: &Run,
    who: &Principal,
    now: i64,
) -> FinishRun {
    let waiting = run.state == RunState::InputRequired;
    let info = HostInfo {
        worker: if waiting {
            "(none: cancelled while it waited for input)".into()
        } else {
            "(none: cancelled before it started)".into()
        },
        engine_sha256: String::new(),
    };
    let when = if waiting {
        "while it waited for its client's input"
    } else {
        "before it started"
    };
    let ending = Ending::error(
        RunState::Cancelled,
        RunEnd::Cancelled.code(),
        format!("cancelled by {} {when}", who.subject),
    );
    let mut run = run.clone();
    run.cancel_requested_at_ms.get_or_insert(now);
    let (text, digest) = receipt(scanner, &info, &run, &ending, now).seal();
    FinishRun {
        id: run.id.clone(),
        lease_token: None,
        attempt: run.audited_attempts,
        state: RunState::Cancelled,
        finished_at_ms: now,
        outcome: outcome(&ending),
        receipt: text,
        receipt_sha256: digest.to_string(),
    }
}
