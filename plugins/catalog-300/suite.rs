// The tools of catalog-300-a and catalog-300-b: each plugin serves the
// rows of `tools.json` (written by `generate.py` with both manifests) that
// name it, each tool answering what it was asked.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolhost_sdk::prelude::*;

/// The catalog, as `generate.py` wrote it.
const TOOLS: &str = include_str!("tools.json");

/// One tool of the catalog.
#[derive(Deserialize)]
struct Row {
    plugin: String,
    name: String,
    title: String,
    description: String,
    permission: String,
    mutating: bool,
    arguments: serde_json::Map<String, Value>,
}

/// What every tool answers: its name and its arguments.
#[derive(Serialize, JsonSchema)]
struct Done {
    /// The tool called.
    tool: String,
    /// The arguments it was called with.
    arguments: Value,
}

fn tool(row: Row) -> Tool {
    let (resource, action) = row
        .permission
        .split_once(':')
        .expect("generate.py writes resource:action");
    let schema = serde_json::json!({
        "type": "object",
        "properties": row.arguments,
        "additionalProperties": false,
    });
    let name = row.name.clone();
    let t = Tool::new(
        row.name,
        row.description,
        move |_ctx: &Ctx, arguments: Value| {
            Ok(Done {
                tool: name.clone(),
                arguments,
            })
        },
    )
    .title(row.title)
    .permission(resource, action)
    .input_schema(schema.to_string());
    if row.mutating { t } else { t.read_only() }
}

/// This plugin's tools: the rows that name it.
pub(crate) fn tools() -> Vec<Tool> {
    let rows: Vec<Row> = serde_json::from_str(TOOLS).expect("tools.json is the generator's");
    (rows.into_iter())
        .filter(|r| r.plugin == env!("CARGO_PKG_NAME"))
        .map(tool)
        .collect()
}
