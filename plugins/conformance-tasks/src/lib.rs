//! `conformance-tasks`: the fixture tools the MCP conformance suite's
//! Tasks-extension scenarios (`conformance server --scenario tasks-*`)
//! call, under the suite's names, as far as a tool plugin can provide them.
//!
//! - `greet` is a plain tool: it answers at once, never as a task.
//! - `slow_compute`, `failing_job` and `protocol_error_job` are run tools
//!   (their manifest entries have a `run` table): the host queues a run and,
//!   for a 2026-07-28 request that declares the extension, answers with a
//!   task over it. Sleeping works in a run (the sandbox grants the
//!   monotonic clock) and a cancel interrupts it.
//!
//! - `confirm_delete` and `multi_input` are run tools that ask the person
//!   from inside their task: the run waits `input_required` with the
//!   requests (`inputRequests` on `tasks/get`) until the client answers
//!   them (`tasks/update`), then runs again from the start with the
//!   answers.
//!
//! - `test_tool_with_task` is served only as a task and asks the person's
//!   name from its plan: the host runs a task call's plan before queueing
//!   its run, so the call first answers `input_required` (no task yet),
//!   and the next round, with the name, gets the task whose run reads the
//!   same answer.
//!
//! - `protocol_error_job` ends with a JSON-RPC error through the SDK's
//!   `protocol::raise`: its task is `failed` with that error (a guest's own
//!   failure is a tool result with `isError`, its task `completed`).
//!
//! What a plugin cannot provide, the scenarios' expected failures in
//! `tests/e2e_conformance.rs` list (none today).
//!
//! Served only by the end-to-end tests; never part of the reference catalog.

use std::thread;
use std::time::Duration;

use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    let tool = |tool: Tool| tool.permission("conformance", "run").read_only();
    vec![
        tool(Tool::new(
            "greet",
            "Greets someone by name, at once (a plain tool, never a task).",
            greet,
        ))
        .idempotent(),
        tool(Tool::new(
            "slow_compute",
            "Run tool: computes for `seconds` seconds (0 for at once), then answers with `label`.",
            slow_compute,
        )),
        tool(Tool::new(
            "failing_job",
            "Run tool: works for about a second, then fails with a tool error.",
            failing_job,
        )),
        tool(Tool::new(
            "confirm_delete",
            "Run tool: asks the person to confirm deleting `filename` (one form, asked from inside its task), then answers whether it would delete it.",
            confirm_delete,
        )),
        tool(Tool::new(
            "multi_input",
            "Run tool: asks the person two forms at once (both pending together), then answers with both answers.",
            multi_input,
        )),
        tool(Tool::new(
            "test_tool_with_task",
            "Run tool served only as a task: asks the person's name before its task exists (its plan asks, so the call answers input_required), then greets them from inside the task.",
            test_tool_with_task,
        ))
        .plan(|_ctx: &Ctx, _args: &NoArgs| {
            user_name()?;
            Ok(Plan::new(Risk::Low, "greets the person by the name they give"))
        }),
        tool(Tool::new(
            "protocol_error_job",
            "Run tool: ends with a JSON-RPC error (code -30000), never a tool result.",
            protocol_error_job,
        )),
    ]
}

toolhost_sdk::export_plugin!(tools);

/// The longest `slow_compute` sleeps: below the manifest's run timeout
/// (2 min), above the suite's longest computation (60 s, always cancelled).
const MAX_SECONDS: f64 = 90.0;

/// How long `failing_job` works before it fails: the suite's "about 1 s".
const FAILING_JOB_WORK: Duration = Duration::from_secs(1);

/// The text `failing_job` fails with.
const FAILING_JOB_ERROR: &str = "failing_job failed, as it always does";

/// Calls without arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// A text answer: the same text as `structuredContent` and as a text block.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
struct Text {
    /// What the tool says.
    text: String,
}

fn text(text: String) -> Output<Text> {
    Output::new(Text { text: text.clone() }).with_text(text)
}

/// Arguments of `greet`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

/// `Hello, {name}!`: the suite compares the text exactly.
fn greet(_ctx: &Ctx, args: GreetArgs) -> Result<Output<Text>, ToolError> {
    Ok(text(format!("Hello, {}!", args.name)))
}

/// Arguments of `slow_compute`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SlowComputeArgs {
    /// How long to compute, in seconds (fractions allowed; at most 90).
    seconds: f64,
    /// A label the answer repeats, so a caller can tell its runs apart.
    #[serde(default)]
    label: Option<String>,
}

fn slow_compute(_ctx: &Ctx, args: SlowComputeArgs) -> Result<Output<Text>, ToolError> {
    if !(0.0..=MAX_SECONDS).contains(&args.seconds) {
        return Err(ToolError::InvalidArguments(format!(
            "seconds must be between 0 and {MAX_SECONDS}, not {}",
            args.seconds
        )));
    }
    thread::sleep(Duration::from_secs_f64(args.seconds));
    let label = args.label.as_deref().unwrap_or("unlabelled");
    Ok(text(format!("Computed {label} in {} s.", args.seconds)))
}

fn failing_job(_ctx: &Ctx, _args: NoArgs) -> Result<Text, ToolError> {
    thread::sleep(FAILING_JOB_WORK);
    Err(ToolError::Failed(FAILING_JOB_ERROR.into()))
}

/// The JSON-RPC error code `protocol_error_job` raises: application-defined,
/// outside the codes that are the host's (-32768..=-31000, which a plugin
/// may not raise but for -32602); the suite asks only for a numeric code.
const PROTOCOL_ERROR_CODE: i32 = -30000;

/// The message `protocol_error_job` raises.
const PROTOCOL_ERROR_MESSAGE: &str =
    "protocol_error_job failed with a protocol error, as it always does";

/// The suite's fixture that "fails with a protocol error": it raises a
/// JSON-RPC error, which the host answers instead of a tool result.
fn protocol_error_job(_ctx: &Ctx, _args: NoArgs) -> Result<Text, ToolError> {
    protocol::raise(PROTOCOL_ERROR_CODE, PROTOCOL_ERROR_MESSAGE)
}

/// Arguments of `confirm_delete`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ConfirmDeleteArgs {
    /// The file to delete (nothing is deleted: the answer says whether it
    /// would be).
    filename: String,
}

/// The form `confirm_delete` asks.
fn confirm_form() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean", "description": "Delete it?"}},
        "required": ["confirm"],
    })
}

/// Asks one form from inside its task (the run waits `input_required`
/// until the client answers it with `tasks/update`), then answers.
fn confirm_delete(_ctx: &Ctx, args: ConfirmDeleteArgs) -> Result<Output<Text>, ToolError> {
    let message = format!("Delete {}?", args.filename);
    let answer = client::elicit("confirm", message, &confirm_form())
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let confirmed = matches!(&answer, client::Elicitation::Accept(v) if v["confirm"] == true);
    Ok(text(if confirmed {
        format!("Deleted {} (confirmed).", args.filename)
    } else {
        format!("Kept {}: not confirmed.", args.filename)
    }))
}

/// The form each of `multi_input`'s two requests asks.
fn name_form() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "confirm": {"type": "boolean"},
        },
    })
}

/// Asks two forms in one `ask`, so both are pending at once; answers with
/// the names given.
fn multi_input(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    let asked = client::ask(vec![
        client::Input::elicit("first", "The first name?", &name_form()),
        client::Input::elicit("second", "The second name?", &name_form()),
    ])
    .map_err(|e| ToolError::Failed(e.to_string()))?;
    let names: Vec<String> = asked
        .iter()
        .map(|r| match r {
            client::Response::Elicited(client::Elicitation::Accept(v)) => {
                v["name"].as_str().unwrap_or("(no name)").to_owned()
            }
            _ => "(declined)".to_owned(),
        })
        .collect();
    Ok(text(format!("Got {}.", names.join(" and "))))
}

/// Asks the person's name (the same key in the plan and in the run, so
/// the run gets the answer given before it existed).
fn user_name() -> Result<String, ToolError> {
    let form = serde_json::json!({
        "type": "object",
        "properties": {"name": {"type": "string", "description": "Your name."}},
        "required": ["name"],
    });
    match client::elicit("user_name", "What is your name?", &form) {
        Ok(client::Elicitation::Accept(v)) => Ok(v["name"].as_str().unwrap_or("").to_owned()),
        Ok(_) => Err(ToolError::Failed(
            "the person did not say their name".into(),
        )),
        Err(e) => Err(ToolError::Failed(e.to_string())),
    }
}

/// Greets the person by the name its plan asked for (the MRTR round
/// before the task), from inside its task.
fn test_tool_with_task(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    let name = user_name()?;
    Ok(text(format!("Hello, {name}, from a task!")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call of `slow_compute` with the arguments JSON `json`.
    fn compute(json: &str) -> Result<Output<Text>, ToolError> {
        let args = serde_json::from_str(json).expect("arguments parse");
        slow_compute(&Ctx::new("call-1", "tenant-a", "alice"), args)
    }

    #[test]
    fn greet_says_hello_by_name() {
        let args = GreetArgs {
            name: "World".into(),
        };
        let out = greet(&Ctx::new("call-1", "tenant-a", "alice"), args).expect("greets");
        assert_eq!(out, text("Hello, World!".into()));
    }

    #[test]
    fn slow_compute_repeats_its_label_and_bounds_its_seconds() {
        let out = compute(r#"{"seconds":0,"label":"instant"}"#).expect("ok");
        assert_eq!(out, text("Computed instant in 0 s.".into()));
        for seconds in ["-1", "91"] {
            let json = format!(r#"{{"seconds":{seconds}}}"#);
            assert!(compute(&json).is_err(), "{seconds}");
        }
    }

    #[test]
    fn failing_job_fails_with_a_tool_error() {
        assert_eq!(
            failing_job(&Ctx::new("call-1", "tenant-a", "alice"), NoArgs {}),
            Err(ToolError::Failed(FAILING_JOB_ERROR.into()))
        );
    }
}
