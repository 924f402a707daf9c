//! The host's own view of what a plugin describes and answers, converted and
//! validated from the generated WIT types at the boundary.

use serde_json::Value;
use toolhost_types::{Permission, Risk, ToolName};

use crate::bindings::toolhost::plugin::types as wit;
use crate::content::ContentBlock;

/// MCP tool annotations, as the plugin declared them (hints only).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Annotations {
    /// `readOnlyHint`.
    pub read_only: Option<bool>,
    /// `destructiveHint`.
    pub destructive: Option<bool>,
    /// `idempotentHint`.
    pub idempotent: Option<bool>,
    /// `openWorldHint`.
    pub open_world: Option<bool>,
}

/// One tool as the plugin describes it, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: ToolName,
    /// A display title.
    pub title: Option<String>,
    /// What the tool does, for the model and the person.
    pub description: String,
    /// JSON Schema of the arguments; always an object schema.
    pub input_schema: Value,
    /// JSON Schema of the structured answer.
    pub output_schema: Option<Value>,
    /// Client hints.
    pub annotations: Annotations,
    /// The permission a caller needs.
    pub permission: Permission,
    /// Typical risk.
    pub risk: Risk,
    /// Whether calls change state.
    pub mutating: bool,
}

/// A thing a call would act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// e.g. `environment`.
    pub kind: String,
    /// The thing's id.
    pub id: String,
    /// Its display name.
    pub name: String,
    /// Tags such as `prod`, matched by risk rules.
    pub tags: Vec<String>,
}

/// The side-effect free preparation of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// What the call would act on.
    pub targets: Vec<Target>,
    /// The plugin's risk class for this call.
    pub risk: Risk,
    /// One line for a person approving the call.
    pub summary: String,
}

/// A tool's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The structured result (MCP `structuredContent`). `Null` with
    /// content blocks: the answer is its content alone.
    pub structured: Value,
    /// Text for people; `None` means the host renders `structured`.
    pub text: Option<String>,
    /// Content blocks after the text, in the plugin's order.
    pub content: Vec<ContentBlock>,
}

impl ToolOutput {
    /// An answer of `structured` and `text`, without content blocks.
    pub fn new(structured: Value, text: Option<String>) -> Self {
        ToolOutput {
            structured,
            text,
            content: Vec::new(),
        }
    }
}

pub(crate) fn risk(r: wit::Risk) -> Risk {
    match r {
        wit::Risk::Low => Risk::Low,
        wit::Risk::Medium => Risk::Medium,
        wit::Risk::High => Risk::High,
    }
}

fn schema(tool: &str, which: &str, text: &str) -> Result<Value, String> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| format!("tool {tool:?}: {which} schema is not JSON: {e}"))?;
    if !v.is_object() {
        return Err(format!(
            "tool {tool:?}: {which} schema must be a JSON object"
        ));
    }
    Ok(v)
}

/// Validates one described tool.
pub(crate) fn tool_spec(s: wit::ToolSpec) -> Result<ToolSpec, String> {
    let name: ToolName = s.name.parse().map_err(|e| format!("{e}"))?;
    let input_schema = schema(&s.name, "input", &s.input_schema)?;
    if input_schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(format!(
            "tool {:?}: input schema must have \"type\": \"object\"",
            s.name
        ));
    }
    let output_schema = match s.output_schema.as_deref() {
        Some(text) => Some(schema(&s.name, "output", text)?),
        None => None,
    };
    let permission = Permission::new(&s.permission.resource, &s.permission.action)
        .map_err(|e| format!("tool {:?}: {e}", s.name))?;
    Ok(ToolSpec {
        name,
        title: s.title,
        description: s.description,
        input_schema,
        output_schema,
        annotations: Annotations {
            read_only: s.annotations.read_only,
            destructive: s.annotations.destructive,
            idempotent: s.annotations.idempotent,
            open_world: s.annotations.open_world,
        },
        permission,
        risk: risk(s.risk),
        mutating: s.mutating,
    })
}

pub(crate) fn plan(p: wit::CallPlan) -> Plan {
    Plan {
        targets: p
            .targets
            .into_iter()
            .map(|t| Target {
                kind: t.kind,
                id: t.id,
                name: t.name,
                tags: t.tags,
            })
            .collect(),
        risk: risk(p.risk),
        summary: p.summary,
    }
}

/// A row of an `entities` snapshot as the resolver room sees it.
pub(crate) fn entity(
    e: crate::bindings::exports::toolhost::plugin::entities::Entity,
) -> toolhost_resolver::Entity {
    toolhost_resolver::Entity {
        id: e.id,
        name: e.name,
        tenant: e.tenant,
        parents: e
            .parents
            .into_iter()
            .map(|p| toolhost_resolver::Parent {
                kind: p.kind,
                id: p.id,
            })
            .collect(),
        detail: e.detail,
    }
}
