//! A clarification on the wire (seeds 000 and 003): a normal result, not an
//! error. `structuredContent` carries the contract's shape, the text block
//! is `ask_user` (a client relays it verbatim), and `isError` is false.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};
use toolhost_resolver::Clarification;

/// The prefix of the `$defs` keys under which a tool's output schema holds
/// the host's own answers.
const DEF: &str = "toolhost_answer";

/// The clarification as `structuredContent`.
pub(crate) fn structured(c: &Clarification) -> Value {
    json!({
        "reason": c.reason.as_str(),
        "ask_user": c.ask_user,
        "candidates": c.candidates.iter().map(|c| json!({
            "id": c.id, "name": c.name, "label": c.label,
        })).collect::<Vec<_>>(),
        "scoped_by": c.scoped_by,
        "field": c.field,
    })
}

/// The call's result: the question, for a person to answer.
pub(crate) fn result(c: &Clarification) -> CallToolResult {
    let mut result = CallToolResult::structured(structured(c));
    result.content = vec![ContentBlock::text(c.ask_user.clone())];
    result
}

/// The JSON Schema of a clarification.
pub(crate) fn schema() -> Value {
    json!({
        "type": "object",
        "description": "The call needs a choice first: relay ask_user to the person verbatim, then call again with the chosen candidate's id in `field`.",
        "required": ["reason", "ask_user", "candidates", "scoped_by", "field"],
        "properties": {
            "reason": {"enum": ["ambiguous", "not_found", "missing_required"]},
            "ask_user": {"type": "string"},
            "candidates": {
                "type": "array",
                "maxItems": toolhost_resolver::MAX_CANDIDATES,
                "items": {
                    "type": "object",
                    "required": ["id", "name", "label"],
                    "properties": {
                        "id": {"type": "integer"},
                        "name": {"type": "string"},
                        "label": {"type": "string"},
                    },
                },
            },
            "scoped_by": {"type": "object", "additionalProperties": {"type": "string"}},
            "field": {"type": "string"},
        },
    })
}

/// A tool's output schema when the host may answer for it: the plugin's,
/// or one of the host's `answers` (a clarification, an approval gate).
/// Clients validate `structuredContent` against the listed schema, so every
/// answer must fit it. The plugin's `$defs` are hoisted to the root so its
/// `#/$defs/…` references still resolve.
pub(crate) fn output_schema(plugin: Option<&Value>, answers: Vec<Value>) -> Value {
    let mut defs = Map::new();
    let mut branches = Vec::new();
    if let Some(Value::Object(schema)) = plugin {
        let mut schema = schema.clone();
        schema.remove("$schema");
        if let Some(Value::Object(d)) = schema.remove("$defs") {
            defs.extend(d);
        }
        branches.push(Value::Object(schema));
    } else {
        branches.push(json!({"type": "object"}));
    }
    for (i, answer) in answers.into_iter().enumerate() {
        let name = format!("{DEF}_{i}");
        defs.insert(name.clone(), answer);
        branches.push(json!({"$ref": format!("#/$defs/{name}")}));
    }
    json!({"type": "object", "$defs": defs, "anyOf": branches})
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolhost_resolver::{Candidate, Reason};

    fn question() -> Clarification {
        Clarification {
            reason: Reason::MissingRequired,
            ask_user: "Which environment? Available: dev, staging.".into(),
            candidates: vec![
                Candidate {
                    id: 11,
                    name: "dev".into(),
                    label: "dev".into(),
                },
                Candidate {
                    id: 12,
                    name: "staging".into(),
                    label: "staging".into(),
                },
            ],
            scoped_by: Default::default(),
            field: "environment".into(),
        }
    }

    #[test]
    fn a_clarification_is_a_normal_result_in_the_contracts_shape() {
        let r = result(&question());
        assert_eq!(r.is_error, Some(false));
        let v = r.structured_content.expect("structured");
        assert_eq!(v["reason"], "missing_required");
        assert_eq!(
            v["candidates"][1],
            json!({"id": 12, "name": "staging", "label": "staging"})
        );
        assert_eq!(v["scoped_by"], json!({}));
        assert_eq!(v["field"], "environment");
    }

    #[test]
    fn the_wrapped_schema_keeps_the_plugins_refs_and_admits_both_answers() {
        let plugin = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"queued": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
            "$defs": {"Item": {"type": "object"}},
        });
        let s = output_schema(Some(&plugin), vec![schema()]);
        assert!(s["$defs"]["Item"].is_object() && s["$defs"][format!("{DEF}_0")].is_object());
        assert_eq!(
            s["anyOf"][0]["properties"]["queued"]["items"]["$ref"],
            "#/$defs/Item"
        );
        assert!(s["anyOf"][0].get("$defs").is_none() && s.get("$schema").is_none());
        assert_eq!(s["type"], "object");
    }
}
