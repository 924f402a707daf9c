//! The conformance suite's tools that ask the client for input (the
//! `client` import): elicitation (2025-11-25 in session; 2026-07-28 as
//! input-required rounds), sampling and roots.

use serde_json::{Value, json};
use toolhost_sdk::client::{self, Elicitation, Input, Response};
use toolhost_sdk::prelude::*;

use crate::{NoArgs, Text, text, tool};

/// The tools that ask, in the order `describe` lists them.
pub(crate) fn tools() -> Vec<Tool> {
    vec![
        tool(Tool::new(
            "test_elicitation",
            "Asks the person for a username and email (scenario tools-call-elicitation).",
            elicitation,
        )),
        tool(Tool::new(
            "test_elicitation_sep1034_defaults",
            "Asks a form whose fields have defaults (scenario elicitation-sep1034-defaults).",
            sep1034_defaults,
        )),
        tool(Tool::new(
            "test_elicitation_sep1330_enums",
            "Asks a form with every enum style (scenario elicitation-sep1330-enums).",
            sep1330_enums,
        )),
        tool(Tool::new(
            "test_sampling",
            "Asks the client's model a prompt (scenario tools-call-sampling).",
            sampling,
        )),
        tool(Tool::new(
            "test_input_required_result_elicitation",
            "Asks the person's name (scenario input-required-result-basic-elicitation).",
            ir_elicitation,
        )),
        tool(Tool::new(
            "test_input_required_result_sampling",
            "Asks the client's model a question (scenario input-required-result-basic-sampling).",
            ir_sampling,
        )),
        tool(Tool::new(
            "test_input_required_result_list_roots",
            "Asks the client's roots (scenario input-required-result-basic-list-roots).",
            ir_list_roots,
        )),
        tool(Tool::new(
            "test_input_required_result_request_state",
            "Asks a confirmation, its answer sealed in the request state (scenario input-required-result-request-state).",
            ir_request_state,
        )),
        tool(Tool::new(
            "test_input_required_result_multiple_inputs",
            "Asks a form, the model and the roots at once (scenario input-required-result-multiple-input-requests).",
            ir_multiple_inputs,
        )),
        tool(Tool::new(
            "test_input_required_result_multi_round",
            "Asks two forms in turn (scenario input-required-result-multi-round).",
            ir_multi_round,
        )),
        tool(Tool::new(
            "test_input_required_result_tampered_state",
            "Asks the person's name; a tampered request state is refused (scenario input-required-result-tampered-state).",
            ir_tampered_state,
        )),
        tool(Tool::new(
            "test_input_required_result_capabilities",
            "Asks only what the client declared (scenario input-required-result-capability-check).",
            ir_capabilities,
        )),
        tool(Tool::new(
            "test_missing_capability",
            "Asks the client's model whatever it declared (scenario server-stateless, -32021).",
            missing_capability,
        )),
    ]
}

/// A failed ask as the tool's error.
fn failed(e: client::ClientError) -> ToolError {
    ToolError::Failed(e.to_string())
}

/// How the suite's texts spell an elicitation's answer.
fn said(e: &Elicitation) -> String {
    match e {
        Elicitation::Accept(content) => format!("action=accept, content={content}"),
        Elicitation::Decline => "action=decline, content={}".into(),
        Elicitation::Cancel => "action=cancel, content={}".into(),
    }
}

/// The one-field form `{name: string}`, required.
fn name_form() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
}

/// Arguments of `test_elicitation`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageArgs {
    /// The message to show the person.
    message: String,
}

pub fn elicitation(_ctx: &Ctx, args: MessageArgs) -> Result<Output<Text>, ToolError> {
    let form = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    });
    let answer = client::elicit("user_info", args.message, &form).map_err(failed)?;
    Ok(text(&format!("User response: <{}>", said(&answer))))
}

pub fn sep1034_defaults(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    let form = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": true},
        },
    });
    let answer = client::elicit("defaults", "Please review your profile", &form).map_err(failed)?;
    Ok(text(&format!("Elicitation completed: {}", said(&answer))))
}

pub fn sep1330_enums(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    let titled = |pairs: &[(&str, &str)]| -> Vec<Value> {
        pairs
            .iter()
            .map(|(c, t)| json!({"const": c, "title": t}))
            .collect()
    };
    let form = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": titled(&[("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")])},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": titled(&[("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")])}},
        },
    });
    let answer = client::elicit("enums", "Pick your options", &form).map_err(failed)?;
    Ok(text(&format!("Elicitation completed: {}", said(&answer))))
}

pub fn ir_elicitation(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    match client::elicit("user_name", "What is your name?", &name_form()).map_err(failed)? {
        Elicitation::Accept(c) => Ok(text(&format!(
            "Hello, {}!",
            c["name"].as_str().unwrap_or("?")
        ))),
        other => Ok(text(&format!("No name: {}", said(&other)))),
    }
}

fn capital_question() -> client::SamplingRequest {
    client::prompt("What is the capital of France?", 100)
}

pub fn ir_sampling(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    let answer = client::sample("capital_question", capital_question()).map_err(failed)?;
    Ok(text(&format!("The model said: {}", answer.text)))
}

pub fn ir_list_roots(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    let roots = client::roots("client_roots").map_err(failed)?;
    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(text(&format!("Roots: {}", uris.join(", "))))
}

pub fn ir_request_state(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    let form =
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
    let answer = client::elicit("confirm", "Please confirm", &form).map_err(failed)?;
    // The host opened and checked the sealed requestState to hand this
    // answer over: a tampered or replayed one never reaches the plugin.
    Ok(text(&format!("state-ok: {}", said(&answer))))
}

pub fn ir_multiple_inputs(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    let answers = client::ask(vec![
        Input::elicit("user_name", "What is your name?", &name_form()),
        Input::sample("greeting", client::prompt("Generate a greeting", 50)),
        Input::roots("client_roots"),
    ])
    .map_err(failed)?;
    Ok(text(&format!(
        "Got {} answers: {}",
        answers.len(),
        summary(&answers)
    )))
}

fn summary(answers: &[Response]) -> String {
    let one = |r: &Response| match r {
        Response::Elicited(e) => said(e),
        Response::Sampled(s) => format!("sampled {:?}", s.text),
        Response::Roots(r) => format!("{} roots", r.len()),
    };
    answers.iter().map(one).collect::<Vec<_>>().join("; ")
}

pub fn ir_multi_round(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    let name =
        client::elicit("step1", "Step 1: What is your name?", &name_form()).map_err(failed)?;
    let color_form = json!({"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]});
    let color = client::elicit("step2", "Step 2: What is your favorite color?", &color_form)
        .map_err(failed)?;
    Ok(text(&format!(
        "Both steps done: {}; {}",
        said(&name),
        said(&color)
    )))
}

pub fn ir_tampered_state(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    let answer = client::elicit("user_name", "What is your name?", &name_form()).map_err(failed)?;
    Ok(text(&format!("Untampered: {}", said(&answer))))
}

pub fn ir_capabilities(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    let can = client::supports();
    let mut asks = Vec::new();
    if can.elicitation {
        asks.push(Input::elicit(
            "user_name",
            "What is your name?",
            &name_form(),
        ));
    }
    if can.sampling {
        asks.push(Input::sample("capital_question", capital_question()));
    }
    if can.roots {
        asks.push(Input::roots("client_roots"));
    }
    if asks.is_empty() {
        return Ok(text("The client declared nothing to ask."));
    }
    let answers = client::ask(asks).map_err(failed)?;
    Ok(text(&format!(
        "Asked what the client supports: {}",
        summary(&answers)
    )))
}

pub fn sampling(_ctx: &Ctx, args: PromptArgs) -> Result<Output<Text>, ToolError> {
    let answer = client::sample("llm", client::prompt(args.prompt, 100)).map_err(failed)?;
    Ok(text(&format!("LLM response: {}", answer.text)))
}

/// Arguments of `test_sampling`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptArgs {
    /// The prompt to send the client's model.
    prompt: String,
}

pub fn missing_capability(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    // Asks for sampling whatever the client declared: a 2026-07-28 client
    // that did not declare it gets -32021 from the host.
    let answer = client::sample("needs_sampling", client::prompt("Say hi", 10)).map_err(failed)?;
    Ok(text(&format!("Sampled: {}", answer.text)))
}
