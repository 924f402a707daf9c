//! The 2026-07-28 Tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663) as a second view of exploration runs: a run started by a
//! request that declared the extension is answered as a task whose id is
//! the run's, and `tasks/get` / `tasks/cancel` read and cancel the run in
//! the store, so any replica answers for any task. Tasks are bound to the
//! caller exactly as runs are: a task of anyone else is an unknown id
//! (-32602). rmcp's in-memory task manager is not used.
//!
//! A run whose guest asked its client for input waits `input_required`:
//! `tasks/get` shows what it waits on (`inputRequests`, by the plugin's
//! keys), and `tasks/update` answers it (the run queued again once every
//! request is answered).

use std::time::{Duration, UNIX_EPOCH};

use rmcp::model::{
    CallToolResult, ContentBlock, CreateTaskResult, DetailedTask, ErrorCode, ErrorData,
    InputRequest, InputRequests, JsonObject, ProtocolVersion, TASKS_EXTENSION_ID, Task,
    TaskPayload, TaskStatus,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};
use toolhost_invoke::InvokeError;
use toolhost_runs::{Outcome, Run, RunState};
use toolhost_runs_service::run_output;

use crate::convert;

/// How often a client should poll a task.
const POLL_INTERVAL_MS: u64 = 1000;

/// Whether this request may be answered with a task: a 2026-07-28 request
/// that declared the extension (never a 2025-11-25 session, whatever its
/// `initialize` said).
pub(crate) fn wanted(ctx: &RequestContext<RoleServer>) -> bool {
    let modern = ctx
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    modern
        && ctx
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks())
}

/// The refusal of a call of `tool`, served only as a task, by a request
/// that did not declare the Tasks extension: -32021 (Missing Required
/// Client Capability), naming the extension it needs.
pub(crate) fn required(tool: &str) -> ErrorData {
    let data = json!({
        "requiredCapabilities": {"extensions": {TASKS_EXTENSION_ID: {}}},
    });
    ErrorData::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "{tool} is served only as a task: call it with protocol 2026-07-28 and the {TASKS_EXTENSION_ID} extension"
        ),
        Some(data),
    )
}

/// The run id a call's answer started, if it is the queued run a run tool
/// (or `start_exploration`) answers with.
pub(crate) fn started_run(structured: &Value) -> Option<&str> {
    let queued = structured.get("state").and_then(Value::as_str) == Some("queued");
    let id = structured.get("run_id").and_then(Value::as_str)?;
    (queued && id.starts_with("run_")).then_some(id)
}

fn iso(ms: i64) -> String {
    let at = UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_millis(at).to_string()
}

/// The task of `run`: its id, status and times.
fn task(run: &Run, retention: Option<Duration>) -> Task {
    let updated = run
        .finished_at_ms
        .or(run.started_at_ms)
        .unwrap_or(run.created_at_ms);
    let mut t = Task::new(
        run.id.as_str(),
        status(run),
        iso(run.created_at_ms),
        iso(updated),
    )
    .with_status_message(run.state.as_str())
    .with_poll_interval_ms(POLL_INTERVAL_MS);
    if let Some(r) = retention {
        t = t.with_ttl_ms(u64::try_from(r.as_millis()).unwrap_or(u64::MAX));
    }
    t
}

fn status(run: &Run) -> TaskStatus {
    match run.state {
        RunState::Queued | RunState::Running | RunState::Cancelling => TaskStatus::Working,
        RunState::InputRequired => TaskStatus::InputRequired,
        RunState::Cancelled => TaskStatus::Cancelled,
        RunState::Succeeded | RunState::TimedOut => TaskStatus::Completed,
        RunState::Failed if host_fault(run) || raised(run).is_some() => TaskStatus::Failed,
        RunState::Failed => TaskStatus::Completed,
    }
}

/// A run that failed because the host lost it (every worker died), not
/// because its tool failed: a task `failed` with a JSON-RPC error.
fn host_fault(run: &Run) -> bool {
    matches!(&run.outcome, Some(Outcome::Error { code, .. }) if code == "RUN_LOST" || code == "INTERNAL")
}

/// The JSON-RPC error code the run's plugin raised, if it ended so: a task
/// `failed` with that error.
fn raised(run: &Run) -> Option<i32> {
    match &run.outcome {
        Some(Outcome::Error { rpc_code, .. }) => *rpc_code,
        _ => None,
    }
}

/// The answer to the call that started `run`.
pub(crate) fn created(run: &Run, retention: Option<Duration>) -> CreateTaskResult {
    CreateTaskResult::new(task(run, retention))
}

/// `tasks/get`: the run as a detailed task, its result inlined once over
/// (the same `CallToolResult` `get_exploration_result` answers with; a
/// run that did not succeed has `isError`).
pub(crate) fn detailed(run: &Run, retention: Option<Duration>) -> Result<DetailedTask, ErrorData> {
    let t = task(run, retention);
    let payload = match t.status {
        TaskStatus::Working => TaskPayload::Working,
        TaskStatus::InputRequired => TaskPayload::InputRequired {
            input_requests: input_requests(run)?,
        },
        TaskStatus::Cancelled => TaskPayload::Cancelled,
        TaskStatus::Failed => {
            let error = match &run.outcome {
                Some(Outcome::Error {
                    message,
                    rpc_code: Some(code),
                    ..
                }) => json!({"code": code, "message": message}),
                Some(Outcome::Error { code, message, .. }) => json!({
                    "code": ErrorCode::INTERNAL_ERROR.0,
                    "message": format!("{code}: {message}"),
                }),
                _ => json!({"code": ErrorCode::INTERNAL_ERROR.0, "message": "the run failed"}),
            };
            TaskPayload::Failed {
                error: object(error),
            }
        }
        _ => {
            let result = tool_result(run);
            let value = serde_json::to_value(&result)
                .map_err(|e| ErrorData::internal_error(format!("a task result: {e}"), None))?;
            TaskPayload::Completed {
                result: object(value),
            }
        }
    };
    Ok(DetailedTask::new(t, payload))
}

/// What a run waiting for its client's input waits on, by the plugin's
/// keys, as the Tasks extension's `inputRequests`.
fn input_requests(run: &Run) -> Result<InputRequests, ErrorData> {
    let pending = run.input.as_ref().map(|i| &i.pending);
    let mut requests = InputRequests::new();
    for (key, request) in pending.into_iter().flatten() {
        let request: InputRequest = serde_json::from_value(request.clone()).map_err(|e| {
            tracing::error!(error = %e, key, run = %run.id, "a run's input request does not parse");
            ErrorData::internal_error("internal error", None)
        })?;
        requests.insert(key.clone(), request);
    }
    Ok(requests)
}

/// The result of the call that started `run`: the run, as the run tool
/// answers with it (so it fits the tool's listed output schema), with the
/// tool's own words as its text: its answer's text, or its typed error
/// (`isError` unless the run succeeded).
fn tool_result(run: &Run) -> CallToolResult {
    let mut result = convert::answer(run_output(run));
    let text = match &run.outcome {
        Some(Outcome::Answered {
            text: Some(text), ..
        }) => text.clone(),
        Some(Outcome::Answered { structured, .. }) => structured.to_string(),
        Some(Outcome::Error { code, message, .. }) => format!("{code}: {message}"),
        None => return result,
    };
    result.content = vec![ContentBlock::text(text)];
    if run.state != RunState::Succeeded {
        result.is_error = Some(true);
    }
    result
}

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(o) => o,
        _ => JsonObject::new(),
    }
}

/// An unknown task (or anyone else's): -32602, as SEP-2663 asks.
pub(crate) fn unknown(task_id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("unknown task {task_id:?}"),
        Some(json!({"taskId": task_id})),
    )
}

/// A failure reading or cancelling a run, as a JSON-RPC error.
pub(crate) fn error(task_id: &str, e: &InvokeError) -> ErrorData {
    match e {
        e if e.code() == "RUN_NOT_FOUND" => unknown(task_id),
        e if e.is_internal() || e.store_unavailable().is_some() => {
            crate::convert::rpc_failure(e, "a task operation")
        }
        e => ErrorData::invalid_params(e.to_string(), Some(json!({"code": e.code()}))),
    }
}
