//! Host values as MCP values, and the one mapping of host errors to MCP.

use std::sync::Arc;

use rmcp::model::{
    CallToolResult, ContentBlock, ErrorCode, ErrorData, JsonObject, Resource, ResourceContents,
    Tool, ToolAnnotations,
};
use serde_json::{Value, json};
use toolhost_artifacts::Artifact;
use toolhost_gates::Gate;
use toolhost_invoke::{GATE_ID_ARG, IDEMPOTENCY_KEY_ARG, InvokeError, Tool as HostTool};
use toolhost_runtime::{CallError, ContentBlock as HostBlock, ResourceBody, ToolOutput};
use toolhost_secrets::Scanner;

fn object(v: &Value) -> JsonObject {
    v.as_object().cloned().unwrap_or_default()
}

/// A catalog tool as MCP lists it, served from the catalog at
/// `catalog_version`. A tool that resolves names may answer with a
/// clarification, so its output schema admits one.
pub(crate) fn tool(t: &HostTool, catalog_version: &str) -> Tool {
    let spec = t.spec();
    let t_resolves = t.resolves();
    let t_gateable = t.gateable();
    let own_answer = matches!(t, HostTool::Host(..));
    let a = &spec.annotations;
    let annotations = ToolAnnotations::from_raw(
        spec.title.clone(),
        a.read_only,
        a.destructive,
        a.idempotent,
        a.open_world,
    );
    let input = if t_gateable {
        with_host_arguments(&spec.input_schema)
    } else {
        spec.input_schema.clone()
    };
    let description = match t.deprecation() {
        Some(d) => deprecated(&spec.description, d),
        None => spec.description.clone(),
    };
    let meta = meta(t, catalog_version);
    let mut t = Tool::new(spec.name.to_string(), description, Arc::new(object(&input)))
        .with_annotations(annotations)
        .with_meta(rmcp::model::MetaObject(meta));
    if let Some(title) = &spec.title {
        t = t.with_title(title.clone());
    }
    if own_answer {
        // A host tool says what it answers (a claimed run tool: the run).
        if let Some(schema) = &spec.output_schema {
            t = t.with_raw_output_schema(Arc::new(object(schema)));
        }
        return t;
    }
    let mut answers = Vec::new();
    if t_resolves {
        answers.push(crate::clarify::schema());
    }
    if t_gateable {
        answers.push(approval_schema());
    }
    // Any answer may be over the inline limit and come back as an artifact.
    if !answers.is_empty() || spec.output_schema.is_some() {
        answers.push(artifact_schema());
    }
    if !answers.is_empty() {
        let schema = crate::clarify::output_schema(spec.output_schema.as_ref(), answers);
        t = t.with_raw_output_schema(Arc::new(object(&schema)));
    } else if let Some(schema) = &spec.output_schema {
        t = t.with_raw_output_schema(Arc::new(object(schema)));
    }
    t
}

/// The `_meta` key of a deprecated tool: `{"replacement": name or null,
/// "until": catalog version}`.
pub const DEPRECATED_META: &str = "toolhost/deprecated";

/// The `_meta` key of every tool's definition digest, `sha256:` and 64 hex
/// characters: what a client pins (`toolhost_catalog::definition_digest`
/// says what it covers). The call's audit row names the same digest.
pub const DEFINITION_META: &str = "toolhost/definition";

/// The `_meta` key of the version of the catalog a tool was listed from
/// (`MAJOR.MINOR.PATCH`), the one a call's audit row names.
pub const CATALOG_VERSION_META: &str = "toolhost/catalogVersion";

/// The `_meta` key of a tool's tags (its manifest's, sorted), when it has
/// any: the words `find_tools` finds it by.
pub const TAGS_META: &str = "toolhost/tags";

/// A tool's `_meta`: its definition digest, the catalog version it was
/// listed from, its tags if it has any, and its deprecation if a newer
/// revision retired it. Keys
/// are under the `toolhost/` prefix, as MCP asks of an implementation's own.
fn meta(t: &HostTool, catalog_version: &str) -> JsonObject {
    let mut meta = JsonObject::new();
    let digest = format!("sha256:{}", t.definition_digest());
    meta.insert(DEFINITION_META.into(), json!(digest));
    meta.insert(CATALOG_VERSION_META.into(), json!(catalog_version));
    let tags: std::collections::BTreeSet<&String> = t.tags().iter().collect();
    if !tags.is_empty() {
        meta.insert(TAGS_META.into(), json!(tags));
    }
    if let Some(d) = t.deprecation() {
        let retired = json!({"replacement": d.replacement, "until": d.until});
        meta.insert(DEPRECATED_META.into(), retired);
    }
    meta
}

/// A deprecated tool's description: what to use instead, and when it goes.
fn deprecated(description: &str, d: &toolhost_catalog::Deprecation) -> String {
    let instead = match &d.replacement {
        Some(r) => format!("use {r} instead"),
        None => "it has no replacement".into(),
    };
    format!(
        "DEPRECATED: {instead}; removed in catalog {}. {description}",
        d.until
    )
}

/// A gateable tool's input schema: the plugin's, plus the arguments the
/// host owns (and takes out before the plugin sees them).
fn with_host_arguments(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert(
            GATE_ID_ARG.into(),
            json!({"type": "string", "description": "Set when retrying a call that answered approval_required, after a person confirmed the gate (decide_approval): the call then runs once."}),
        );
        props.insert(
            IDEMPOTENCY_KEY_ARG.into(),
            json!({"type": "string", "minLength": 1, "maxLength": 255, "description": "Your key for this request: a retry with the same key and arguments answers with the first result instead of running again."}),
        );
    }
    schema
}

/// The JSON Schema of an `approval_required` answer.
fn approval_schema() -> Value {
    json!({
        "type": "object",
        "description": "The call waits for a person's approval; nothing ran. A person decides with decide_approval; then call again with the same arguments and gate_id.",
        "required": ["approval_required"],
        "properties": {"approval_required": {
            "type": "object",
            "required": ["gate_id", "targets", "risk", "reason_required", "expires_at"],
            "properties": {
                "gate_id": {"type": "string"},
                "targets": {"type": "array"},
                "risk": {"enum": ["low", "medium", "high"]},
                "reason_required": {"type": "boolean"},
                "expires_at": {"type": "string"},
            },
        }},
    })
}

/// The JSON Schema of an answer kept as an artifact.
fn artifact_schema() -> Value {
    json!({
        "type": "object",
        "description": "The answer was too large to send inline; read it with resources/read at artifact.uri (its bytes match artifact.sha256).",
        "required": ["artifact"],
        "properties": {"artifact": {
            "type": "object",
            "required": ["uri", "mime_type", "size", "sha256", "expires_at"],
            "properties": {
                "uri": {"type": "string"},
                "mime_type": {"type": "string"},
                "size": {"type": "integer"},
                "sha256": {"type": "string"},
                "expires_at": {"type": "string"},
            },
        }},
    })
}

/// An answer kept as an artifact: its reference, as structured content
/// and as an MCP resource link, then the answer's content blocks.
pub(crate) fn artifact(a: &Artifact, content: Vec<HostBlock>) -> CallToolResult {
    let uri = a.id.uri();
    let expires = humantime::format_rfc3339_millis(
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(a.expires_at_ms.max(0) as u64),
    )
    .to_string();
    let text = format!(
        "The answer of {} is {} bytes ({}), too large to send inline. Read it with resources/read at {uri} (SHA-256 {}); it is kept until {expires}.",
        a.tool, a.size, a.mime_type, a.sha256
    );
    let mut link = Resource::new(uri.clone(), format!("{}-result", a.tool));
    link.mime_type = Some(a.mime_type.clone());
    link.size = Some(a.size);
    link.description = Some(format!("sha256:{}", a.sha256));
    let mut result = CallToolResult::structured(json!({"artifact": {
        "uri": uri,
        "mime_type": a.mime_type,
        "size": a.size,
        "sha256": a.sha256.to_string(),
        "expires_at": expires,
    }}));
    result.content = [ContentBlock::text(text), ContentBlock::resource_link(link)]
        .into_iter()
        .chain(content.into_iter().map(content_block))
        .collect();
    result
}

/// An artifact's bytes as `resources/read` returns them: text (JSON or
/// plain text are UTF-8), else base64.
pub(crate) fn artifact_contents(a: &Artifact, body: Vec<u8>) -> ResourceContents {
    let uri = a.id.uri();
    match String::from_utf8(body) {
        Ok(text) => ResourceContents::TextResourceContents {
            uri,
            mime_type: Some(a.mime_type.clone()),
            text,
            meta: None,
        },
        Err(e) => {
            use base64::Engine as _;
            let blob = base64::engine::general_purpose::STANDARD.encode(e.into_bytes());
            ResourceContents::blob(blob, uri).with_mime_type(a.mime_type.clone())
        }
    }
}

/// A gated call's answer: a normal result naming the gate.
pub(crate) fn approval(gate: &Gate) -> CallToolResult {
    let now = toolhost_invoke::millis(std::time::SystemTime::now());
    let view = gate.view(now);
    let text = format!(
        "Approval required ({} risk): {}. A person must confirm gate {} with decide_approval; then call {} again with the same arguments and gate_id. It expires at {}.",
        gate.opened.risk,
        gate.opened.summary,
        gate.id(),
        gate.opened.tool,
        view["expires_at"].as_str().unwrap_or_default()
    );
    let mut result = CallToolResult::structured(json!({"approval_required": view}));
    result.content = vec![ContentBlock::text(text)];
    result
}

/// A tool's answer: `structuredContent` plus a text block (the plugin's text,
/// or the structured JSON, as the spec recommends for older clients), then
/// its content blocks. An answer of content blocks alone (structured
/// `null`) has no `structuredContent`, and a text block only if the plugin
/// gave one.
pub(crate) fn answer(out: ToolOutput) -> CallToolResult {
    let blocks = out.content.into_iter().map(content_block);
    if out.structured.is_null() && blocks.len() > 0 {
        let text = out.text.map(ContentBlock::text);
        return CallToolResult::success(text.into_iter().chain(blocks).collect());
    }
    let text = out.text.unwrap_or_else(|| out.structured.to_string());
    let mut result = CallToolResult::structured(out.structured);
    result.content = std::iter::once(ContentBlock::text(text))
        .chain(blocks)
        .collect();
    result
}

/// A plugin's content block as MCP's (bytes in base64).
pub(crate) fn content_block(block: HostBlock) -> ContentBlock {
    use base64::Engine as _;
    let b64 = |bytes: Vec<u8>| base64::engine::general_purpose::STANDARD.encode(bytes);
    match block {
        HostBlock::Text { text } => ContentBlock::text(text),
        HostBlock::Image { mime_type, data } => ContentBlock::image(b64(data), mime_type),
        HostBlock::Audio { mime_type, data } => ContentBlock::audio(b64(data), mime_type),
        HostBlock::ResourceLink(l) => {
            let mut link = Resource::new(l.uri, l.name);
            link.title = l.title;
            link.description = l.description;
            link.mime_type = l.mime_type;
            link.size = l.size;
            ContentBlock::resource_link(link)
        }
        HostBlock::Resource {
            uri,
            mime_type,
            body,
        } => ContentBlock::resource(match body {
            ResourceBody::Text(text) => ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                meta: None,
            },
            ResourceBody::Blob(bytes) => ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob: b64(bytes),
                meta: None,
            },
        }),
    }
}

/// JSON-RPC's code for `STORE_UNAVAILABLE` outside `tools/call` (one of
/// the server errors an implementation defines, -32000 to -32099).
pub const STORE_UNAVAILABLE_RPC: ErrorCode = ErrorCode(-32050);

/// A request other than `tools/call` that failed, as a JSON-RPC error:
/// the store unreachable is said, with the code a call's result would
/// carry and `retryable`; any other internal failure is opaque.
pub(crate) fn rpc_failure(e: &InvokeError, doing: &'static str) -> ErrorData {
    match e.store_unavailable() {
        Some(down) => store_unavailable(down, doing),
        None => {
            tracing::error!(error = ?e, doing, "a request failed internally");
            ErrorData::internal_error("internal error", None)
        }
    }
}

/// The JSON-RPC error a plugin ended its call with (`protocol.raise`), as
/// it raised it, if `e` is one: its code (the runtime refused the host's
/// own codes, but -32602), its message (cut and redacted by the
/// runtime, redacted again here with the host's scanner), and `data`
/// naming the stable code `PROTOCOL_ERROR`, as a failed call's result does.
pub(crate) fn raised(e: &InvokeError, scanner: &Scanner) -> Option<ErrorData> {
    let InvokeError::Call(CallError::Protocol { code, message }) = e else {
        return None;
    };
    Some(ErrorData::new(
        ErrorCode(*code),
        scanner.redact(message).into_owned(),
        Some(json!({"code": e.code()})),
    ))
}

/// The store unreachable while `doing`, as a JSON-RPC error (retryable).
pub(crate) fn store_unavailable(
    down: &toolhost_types::StoreUnavailable,
    doing: &'static str,
) -> ErrorData {
    tracing::warn!(error = %down, doing, "the store is unreachable");
    ErrorData::new(
        STORE_UNAVAILABLE_RPC,
        toolhost_invoke::STORE_UNAVAILABLE_MESSAGE,
        Some(json!({
            "code": "STORE_UNAVAILABLE",
            "retryable": true,
            "retry_after_ms": toolhost_invoke::STORE_RETRY_AFTER_MS,
        })),
    )
}

/// A failed call. Everything the caller can act on is a tool result with
/// `isError` and a stable code; a protocol error is either internal (and
/// opaque) or the plugin's own JSON-RPC error ([`raised`]).
///
/// A failure's message may carry what a plugin or its backend said: any
/// credential or host path in it is replaced by `[redacted:<kind>]`
/// (`scanner`), and the code is kept.
pub(crate) fn failure(e: &InvokeError, scanner: &Scanner) -> Result<CallToolResult, ErrorData> {
    if let Some(raised) = raised(e, scanner) {
        return Err(raised);
    }
    if e.is_internal() {
        tracing::error!(error = ?e, "call failed internally");
        return Err(ErrorData::internal_error("internal error", None));
    }
    let message = match e.store_unavailable() {
        Some(down) => {
            tracing::warn!(error = %down, "call failed: the store is unreachable");
            toolhost_invoke::STORE_UNAVAILABLE_MESSAGE.to_owned()
        }
        None => scanner.redact(&e.to_string()).into_owned(),
    };
    let mut error = json!({"code": e.code(), "message": message});
    if matches!(
        e,
        InvokeError::ToolNotFound { .. } | InvokeError::PermissionDenied { .. }
    ) {
        error["hint"] = json!("call tools/list to refresh your tool catalog");
    }
    if let (Some(details), Some(obj)) = (e.details(), error.as_object_mut())
        && let Some(more) = details.as_object()
    {
        for (k, v) in more {
            obj.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    let text = format!("{}: {message}", e.code());
    let mut result = CallToolResult::structured_error(json!({"error": error}));
    result.content = vec![ContentBlock::text(text)];
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raise(code: i32, message: &str) -> InvokeError {
        InvokeError::Call(CallError::Protocol {
            code,
            message: message.into(),
        })
    }

    #[test]
    fn a_raised_error_answers_the_call_as_that_json_rpc_error() {
        let err = failure(&raise(-30000, "no such job"), &Scanner::new())
            .expect_err("a protocol error, not a tool result");
        assert_eq!(err.code, ErrorCode(-30000));
        assert_eq!(err.message, "no such job");
        assert_eq!(err.data, Some(json!({"code": "PROTOCOL_ERROR"})));
    }

    #[test]
    fn a_raised_message_is_redacted_with_the_host_scanner() {
        let scanner = Scanner::new().with_secret("operator-backend-token-1234");
        let err = failure(
            &raise(-30000, "token operator-backend-token-1234"),
            &scanner,
        )
        .expect_err("a protocol error");
        assert!(!err.message.contains("operator-backend"), "{}", err.message);
    }

    #[test]
    fn the_plugins_own_failure_stays_a_tool_result() {
        let failed = InvokeError::Call(CallError::ToolFailed("nope".into()));
        let result = failure(&failed, &Scanner::new()).expect("a tool result");
        assert_eq!(result.is_error, Some(true));
        assert!(raised(&failed, &Scanner::new()).is_none());
    }
}
