//! `conformance`: the tools the MCP conformance suite
//! (`@modelcontextprotocol/conformance server`) calls, under the suite's
//! names, as far as a tool plugin can provide them.
//!
//! Everything goes through the plugin contract alone: answers with
//! structured JSON, text and content blocks, logs, progress, questions to
//! the client (`client`), prompts, resources and templates, and resource
//! updates (`notify`). The few scenarios that cannot apply to this host are
//! listed, with why, in `tests/e2e_conformance.rs`.
//!
//! Served only by the end-to-end tests; never part of the reference catalog.

use std::borrow::Cow;

use schemars::{Schema, SchemaGenerator, json_schema};
use toolhost_sdk::prelude::*;

mod asks;
mod prompts;
mod resources;

/// Every tool, in the order `describe` lists them.
fn tools() -> Vec<Tool> {
    [answer_tools(), asks::tools(), streaming_tools()]
        .into_iter()
        .flatten()
        .collect()
}

/// A conformance tool: needs `conformance:run`, read-only, idempotent.
pub(crate) fn tool(t: Tool) -> Tool {
    t.permission("conformance", "run").read_only().idempotent()
}

/// The tools whose answers the suite checks: text, errors, schemas,
/// headers, logs and content blocks.
fn answer_tools() -> Vec<Tool> {
    vec![
        tool(Tool::new(
            "test_simple_text",
            "Returns a simple text response (scenario tools-call-simple-text).",
            simple_text,
        )),
        tool(Tool::new(
            "test_error_handling",
            "Always fails with a tool error (scenario tools-call-error).",
            error_handling,
        )),
        tool(Tool::new(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features (scenario json-schema-2020-12).",
            json_schema_2020_12,
        )),
        tool(Tool::new(
            "test_custom_headers",
            "Echoes a string argument the client mirrors into the Mcp-Param-Region header \
             (scenario http-custom-header-server-validation).",
            custom_headers,
        )),
        tool(Tool::new(
            "test_logging_tool",
            "Logs one line and answers; a stateless request without a log level must get \
             no notifications/message (scenario server-stateless).",
            logging_tool,
        )),
        tool(Tool::new(
            "test_tool_with_logging",
            "Logs three lines at info level while it runs (scenario tools-call-with-logging).",
            tool_with_logging,
        )),
        tool(Tool::new(
            "test_image_content",
            "Answers a 1x1 red PNG as an image block (scenario tools-call-image).",
            image_content,
        )),
        tool(Tool::new(
            "test_audio_content",
            "Answers a short WAV beep as an audio block (scenario tools-call-audio).",
            audio_content,
        )),
        tool(Tool::new(
            "test_embedded_resource",
            "Answers an embedded text resource (scenario tools-call-embedded-resource).",
            embedded_resource,
        )),
        tool(Tool::new(
            "test_multiple_content_types",
            "Answers text, an image and an embedded JSON resource \
             (scenario tools-call-mixed-content).",
            multiple_content_types,
        )),
    ]
}

/// The tools that report while they work or tell of a change: progress,
/// a resumed stream, resource updates.
fn streaming_tools() -> Vec<Tool> {
    vec![
        tool(Tool::new(
            "test_reconnection",
            "Works about a second and a half, reporting progress, then answers: a client that \
             loses its stream meanwhile resumes it with Last-Event-ID (scenario server-sse-polling).",
            reconnection,
        )),
        // Tells of a change, so it is not read-only.
        Tool::new(
            "test_touch_watched_resource",
            "Tells the clients subscribed to a resource (test://watched-resource unless \
             `uri` names another) that it changed (notifications/resources/updated).",
            resources::touch_watched,
        )
        .permission("conformance", "run")
        .idempotent(),
        tool(Tool::new(
            "test_tool_with_progress",
            "Reports progress 0, 50 and 100 of 100, then answers \
             (scenario tools-call-with-progress).",
            tool_with_progress,
        )),
    ]
}

toolhost_sdk::export_plugin!(
    tools,
    prompts = prompts::prompts,
    resources = resources::resources
);

/// The suite calls these tools with no arguments (or none at all).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoArgs {}

/// A text answer: the same text as `structuredContent` and as a text block.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
pub(crate) struct Text {
    /// What the tool says.
    text: String,
}

pub(crate) fn text(text: &str) -> Output<Text> {
    Output::new(Text { text: text.into() }).with_text(text)
}

/// The text `tools-call-simple-text` documents.
const SIMPLE_TEXT: &str = "This is a simple text response for testing.";
/// The error text `tools-call-error` documents.
const ERROR_TEXT: &str = "This tool intentionally returns an error for testing";

fn simple_text(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    Ok(text(SIMPLE_TEXT))
}

fn error_handling(_ctx: &Ctx, _args: NoArgs) -> Result<Text, ToolError> {
    Err(ToolError::Failed(ERROR_TEXT.into()))
}

/// Arguments of `json_schema_2020_12_tool`. Its input schema is the suite's
/// own, written by hand: `$defs` with an `$anchor`, `$ref`, `allOf`/`anyOf`,
/// `if`/`then`/`else` and `additionalProperties: false` must reach the
/// client as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)] // read through Debug only: the tool echoes what it parsed
struct ContactArgs {
    name: Option<String>,
    address: Option<Address>,
    contact_method: Option<ContactMethod>,
    phone: Option<String>,
    email: Option<String>,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Address {
    street: Option<String>,
    city: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ContactMethod {
    Phone,
    Email,
}

impl JsonSchema for ContactArgs {
    fn schema_name() -> Cow<'static, str> {
        "ContactArgs".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {
                        "street": { "type": "string" },
                        "city": { "type": "string" }
                    }
                }
            },
            "properties": {
                "name": { "type": "string" },
                "address": { "$ref": "#/$defs/address" },
                "contactMethod": { "type": "string", "enum": ["phone", "email"] },
                "phone": { "type": "string" },
                "email": { "type": "string" }
            },
            "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
            "if": {
                "properties": { "contactMethod": { "const": "phone" } },
                "required": ["contactMethod"]
            },
            "then": { "required": ["phone"] },
            "else": { "required": ["email"] },
            "additionalProperties": false
        })
    }
}

/// How `json_schema_2020_12_tool` would reach the person.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
struct Contact {
    /// `phone` or `email`.
    via: String,
    /// The number or address.
    at: String,
}

fn json_schema_2020_12(_ctx: &Ctx, args: ContactArgs) -> Result<Contact, ToolError> {
    let (via, at) = match (args.contact_method, args.phone, args.email) {
        (Some(ContactMethod::Phone), Some(phone), _) => ("phone", phone),
        (Some(ContactMethod::Phone), None, _) => {
            return Err(ToolError::InvalidArguments(
                "contactMethod is phone: phone is required".into(),
            ));
        }
        (_, _, Some(email)) => ("email", email),
        (None, Some(phone), None) => ("phone", phone),
        (_, _, None) => {
            return Err(ToolError::InvalidArguments("email is required".into()));
        }
    };
    Ok(Contact {
        via: via.into(),
        at,
    })
}

/// Arguments of `test_custom_headers`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CustomHeadersArgs {
    /// A plain string value, mirrored into the `Mcp-Param-Region` header.
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
}

/// The answer of `test_custom_headers`: the value the tool received.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
struct Region {
    /// The `region` argument, as received.
    region: String,
}

fn custom_headers(_ctx: &Ctx, args: CustomHeadersArgs) -> Result<Output<Region>, ToolError> {
    let text = format!("region: {}", args.region);
    Ok(Output::new(Region {
        region: args.region,
    })
    .with_text(text))
}

fn logging_tool(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    log::info("test_logging_tool called");
    Ok(text("Logged one line."))
}

fn tool_with_logging(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    // The suite asks for ~50 ms between lines; the sandbox has no sleep (and
    // its clock reads the epoch), so the lines go out back to back.
    log::info("Tool execution started");
    log::info("Tool processing data");
    log::info("Tool execution completed");
    Ok(text("Tool with logging executed successfully"))
}

/// A 1x1 red pixel.
pub(crate) const RED_PIXEL_PNG: &[u8] = include_bytes!("../assets/red-pixel.png");
/// A tenth of a second of 440 Hz, 8 kHz 8-bit mono.
const BEEP_WAV: &[u8] = include_bytes!("../assets/beep.wav");

fn image_content(_ctx: &Ctx, _args: NoArgs) -> Result<Output<()>, ToolError> {
    Ok(Output::new(()).with_content(Content::image("image/png", RED_PIXEL_PNG)))
}

fn audio_content(_ctx: &Ctx, _args: NoArgs) -> Result<Output<()>, ToolError> {
    Ok(Output::new(()).with_content(Content::audio("audio/wav", BEEP_WAV)))
}

fn embedded_resource(_ctx: &Ctx, _args: NoArgs) -> Result<Output<()>, ToolError> {
    Ok(Output::new(()).with_content(Content::embedded_text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )))
}

fn multiple_content_types(_ctx: &Ctx, _args: NoArgs) -> Result<Output<()>, ToolError> {
    Ok(Output::new(())
        .with_text("Multiple content types test:")
        .with_content(Content::image("image/png", RED_PIXEL_PNG))
        .with_content(Content::embedded_text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        )))
}

/// How long `test_reconnection` works.
const RECONNECTION_WORK: std::time::Duration = std::time::Duration::from_millis(1500);

fn reconnection(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    // The sandbox has no sleep: the call works (spins) for its time, with
    // a progress report every tenth of it.
    let started = std::time::Instant::now();
    let mut reported = 0;
    while started.elapsed() < RECONNECTION_WORK {
        let tenth = (started.elapsed().as_millis() * 10 / RECONNECTION_WORK.as_millis()) as u32;
        if tenth > reported {
            reported = tenth;
            toolhost_sdk::progress::report(f64::from(tenth), Some(10.0), None);
        }
        std::hint::spin_loop();
    }
    Ok(text("Reconnection test completed"))
}

fn tool_with_progress(_ctx: &Ctx, _args: NoArgs) -> Result<Output<Text>, ToolError> {
    for step in [0.0, 50.0, 100.0] {
        toolhost_sdk::progress::report(step, Some(100.0), None);
    }
    Ok(text("Tool with progress executed successfully"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx {
        Ctx::new("call-1", "tenant-a", "alice")
    }

    fn args<A: serde::de::DeserializeOwned>(json: &str) -> A {
        serde_json::from_str(json).expect("arguments parse")
    }

    #[test]
    fn simple_text_and_error_answer_the_suites_texts() {
        let out = simple_text(&ctx(), NoArgs {}).expect("answers");
        assert_eq!(out, text(SIMPLE_TEXT));
        assert_eq!(
            error_handling(&ctx(), NoArgs {}),
            Err(ToolError::Failed(ERROR_TEXT.into()))
        );
    }

    #[test]
    fn the_2020_12_schema_keeps_every_keyword_the_suite_checks() {
        let schema = serde_json::to_value(schemars::schema_for!(ContactArgs)).expect("json");
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(schema["$defs"]["address"]["$anchor"], "addressDef");
        assert_eq!(schema["additionalProperties"], false);
        assert!(schema["allOf"][0]["anyOf"].is_array());
        for key in ["if", "then", "else"] {
            assert!(schema.get(key).is_some(), "{key} kept");
        }
    }

    #[test]
    fn the_2020_12_tool_follows_its_conditional_schema() {
        let phone = json_schema_2020_12(&ctx(), args(r#"{"contactMethod":"phone","phone":"1"}"#));
        assert_eq!(
            phone,
            Ok(Contact {
                via: "phone".into(),
                at: "1".into()
            })
        );
        let email = json_schema_2020_12(&ctx(), args(r#"{"name":"Ada","email":"a@b"}"#));
        assert_eq!(email.map(|c| c.via), Ok("email".into()));
        assert!(json_schema_2020_12(&ctx(), args(r#"{"contactMethod":"phone"}"#)).is_err());
        assert!(serde_json::from_str::<ContactArgs>(r#"{"other":1}"#).is_err());
    }

    #[test]
    fn custom_headers_marks_region_for_header_mirroring() {
        let schema = serde_json::to_value(schemars::schema_for!(CustomHeadersArgs)).expect("json");
        let region = &schema["properties"]["region"];
        assert_eq!(region["type"], "string");
        assert_eq!(region["x-mcp-header"], "Region");
        let out = custom_headers(&ctx(), args(r#"{"region":"eu"}"#)).expect("echoes");
        assert_eq!(
            out,
            Output::new(Region {
                region: "eu".into()
            })
            .with_text("region: eu")
        );
    }
}
