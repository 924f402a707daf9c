//! Host values as MCP values, and the one mapping of host errors to MCP.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, ErrorData, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use toolhost_invoke::{InvokeError, Tool as HostTool};
use toolhost_runtime::ToolOutput;

fn object(v: &Value) -> JsonObject {
    v.as_object().cloned().unwrap_or_default()
}

/// A catalog tool as MCP lists it. A tool that resolves names may answer
/// with a clarification, so its output schema admits one.
pub(crate) fn tool(t: &HostTool) -> Tool {
    let spec = t.spec();
    let t_resolves = t.resolves();
    let a = &spec.annotations;
    let annotations = ToolAnnotations::from_raw(
        spec.title.clone(),
        a.read_only,
        a.destructive,
        a.idempotent,
        a.open_world,
    );
    let mut t = Tool::new(
        spec.name.to_string(),
        spec.description.clone(),
        Arc::new(object(&spec.input_schema)),
    )
    .with_annotations(annotations);
    if let Some(title) = &spec.title {
        t = t.with_title(title.clone());
    }
    if t_resolves {
        let schema = crate::clarify::output_schema(spec.output_schema.as_ref());
        t = t.with_raw_output_schema(Arc::new(object(&schema)));
    } else if let Some(schema) = &spec.output_schema {
        t = t.with_raw_output_schema(Arc::new(object(schema)));
    }
    t
}

/// A tool's answer: `structuredContent` plus a text block (the plugin's text,
/// or the structured JSON, as the spec recommends for older clients).
pub(crate) fn answer(out: ToolOutput) -> CallToolResult {
    let text = out.text.unwrap_or_else(|| out.structured.to_string());
    let mut result = CallToolResult::structured(out.structured);
    result.content = vec![ContentBlock::text(text)];
    result
}

/// A failed call. Everything the caller can act on is a tool result with
/// `isError` and a stable code; only an internal failure is a protocol
/// error, and an opaque one.
pub(crate) fn failure(e: &InvokeError) -> Result<CallToolResult, ErrorData> {
    if matches!(e, InvokeError::Audit(_) | InvokeError::Policy(_)) {
        tracing::error!(error = ?e, "call failed internally");
        return Err(ErrorData::internal_error("internal error", None));
    }
    let mut error = json!({"code": e.code(), "message": e.to_string()});
    if matches!(
        e,
        InvokeError::ToolNotFound { .. } | InvokeError::PermissionDenied { .. }
    ) {
        error["hint"] = json!("call tools/list to refresh your tool catalog");
    }
    let text = format!("{}: {e}", e.code());
    let mut result = CallToolResult::structured_error(json!({"error": error}));
    result.content = vec![ContentBlock::text(text)];
    Ok(result)
}
