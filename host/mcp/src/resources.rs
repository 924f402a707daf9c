//! `resources/list`, `resources/templates/list` and a plugin's side of
//! `resources/read`: host values as MCP values.

use rmcp::model::{ErrorData, Resource, ResourceContents, ResourceTemplate};
use serde_json::json;
use toolhost_invoke::{InvokeError, ResourceRef, TemplateRef};
use toolhost_runtime::{ResourceBody, ResourceContents as HostContents};

/// A resource as `resources/list` shows it.
pub(crate) fn resource(r: &ResourceRef) -> Resource {
    let s = &r.spec;
    let mut out = Resource::new(s.uri.clone(), s.name.clone());
    out.title = s.title.clone();
    out.description = Some(s.description.clone());
    out.mime_type = s.mime_type.clone();
    out
}

/// A template as `resources/templates/list` shows it.
pub(crate) fn template(t: &TemplateRef) -> ResourceTemplate {
    let s = &t.spec;
    let mut out = ResourceTemplate::new(s.uri_template.clone(), s.name.clone());
    out.title = s.title.clone();
    out.description = Some(s.description.clone());
    out.mime_type = s.mime_type.clone();
    out
}

/// A plugin's contents as `resources/read` returns them (bytes in base64).
pub(crate) fn contents(c: HostContents) -> ResourceContents {
    use base64::Engine as _;
    match c.body {
        ResourceBody::Text(text) => ResourceContents::TextResourceContents {
            uri: c.uri,
            mime_type: c.mime_type,
            text,
            meta: None,
        },
        ResourceBody::Blob(bytes) => ResourceContents::BlobResourceContents {
            uri: c.uri,
            mime_type: c.mime_type,
            blob: base64::engine::general_purpose::STANDARD.encode(bytes),
            meta: None,
        },
    }
}

/// A failed plugin read as a JSON-RPC error: the host's own failures as
/// for any request, the plugin's with its code, redacted (a plugin's
/// not-found is the resource-not-found error, a JSON-RPC error it raised
/// is answered as it raised it).
pub(crate) fn failure(
    e: &InvokeError,
    scanner: &toolhost_secrets::Scanner,
    uri: &str,
) -> ErrorData {
    if let Some(raised) = crate::convert::raised(e, scanner) {
        return raised;
    }
    if e.is_internal() || e.store_unavailable().is_some() {
        return crate::convert::rpc_failure(e, "reading a resource");
    }
    if matches!(
        e,
        InvokeError::Call(toolhost_runtime::CallError::NotFound(_))
    ) {
        return ErrorData::resource_not_found(
            format!("resource {uri:?} not found"),
            Some(json!({"uri": uri})),
        );
    }
    ErrorData::internal_error(
        scanner.redact(&e.to_string()).into_owned(),
        Some(json!({"code": e.code()})),
    )
}
