//! A capability diff laid out for a person: the reviews page shows a
//! revision's diff against the active one, the authoring page a
//! proposal's. Both render it with the `diff` macro of `macros.html`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// A capability diff (`toolhost_review::Diff`, or a domain object's
/// `{changes: [{op, item, before?, after?}]}`) grouped for a reviewer:
/// `added`, `removed` and `changed` entries, each a line of text with
/// whether it widens access and whether it breaks callers.
pub(crate) fn lay_out(diff: &Value) -> Value {
    let mut groups: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    let changes = diff["changes"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    for change in changes {
        let (group, entry) = entry(change);
        groups.entry(group).or_default().push(entry);
    }
    let breaking = changes.iter().filter(|c| is_breaking(c)).count();
    let widens = changes.iter().any(|c| c["effect"] == "widens");
    let transfers = changes.iter().filter(|c| c["kind"] == "transfer").count();
    json!({
        "count": changes.len(),
        "bump": diff["bump"],
        "widens": widens,
        "breaking": breaking,
        "transfers": transfers,
        "added": groups.remove("added").unwrap_or_default(),
        "removed": groups.remove("removed").unwrap_or_default(),
        "changed": groups.remove("changed").unwrap_or_default(),
    })
}

/// The fields that name what a change is about, by preference.
const NAMES: [&str; 9] = [
    "tool",
    "name",
    "prompt",
    "resource",
    "subject",
    "tag",
    "entity_kind",
    "interface",
    "item",
];

/// The fields shown apart from a change's detail line.
const APART: [&str; 11] = [
    "kind",
    "op",
    "effect",
    "bump",
    "class",
    "details",
    "before",
    "after",
    "needs_review",
    "flags",
    "field",
];

/// Whether a change may break callers: it bumps the catalog's major
/// version, or is a breaking schema change.
fn is_breaking(change: &Value) -> bool {
    change["bump"] == "major" || change["class"] == "breaking"
}

/// One change as a line: its group, a label from its kind, what it names,
/// and the rest of its fields as a detail.
fn entry(change: &Value) -> (&'static str, Value) {
    let kind = change["kind"]
        .as_str()
        .or(change["op"].as_str())
        .unwrap_or("changed");
    let (group, label) = if let Some(what) = kind.strip_suffix("_added") {
        ("added", what)
    } else if let Some(what) = kind.strip_suffix("_removed") {
        ("removed", what)
    } else {
        match kind {
            "added" => ("added", ""),
            "removed" => ("removed", ""),
            "changed" => ("changed", ""),
            other => ("changed", other),
        }
    };
    let name = NAMES.iter().find(|k| change[**k].is_string()).copied();
    let text = (kind == "text").then(|| text(change));
    let detail = if text.is_some() {
        String::new()
    } else {
        detail(change, name)
    };
    let pretty = |v: &Value| match v {
        Value::Null => Value::Null,
        v => Value::String(serde_json::to_string_pretty(v).unwrap_or_default()),
    };
    let entry = json!({
        "label": capitalized(&label.replace('_', " ")),
        "name": name.map(|k| &change[k]),
        "detail": detail,
        "details": change["details"],
        "class": change["class"],
        "effect": change["effect"],
        "bump": change["bump"],
        "breaking": is_breaking(change),
        "before": pretty(&change["before"]),
        "after": pretty(&change["after"]),
        "needs_review": change["needs_review"] == true,
        "text": text,
    });
    (group, entry)
}

/// A model-facing string's change, for the side-by-side view: which
/// string, its old and new text (the template escapes both), and the
/// highlighter's flags with a reader's words for each.
fn text(change: &Value) -> Value {
    let flags: Vec<Value> = (change["flags"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .map(|f| json!({"flag": f, "words": flag_words(f)}))
        .collect();
    json!({
        "field": change["field"],
        "before": change["from"],
        "after": change["to"],
        "flags": flags,
    })
}

/// What a highlighter flag means, for the reviewer.
fn flag_words(flag: &str) -> &'static str {
    match flag {
        "instruction" => "reads like an instruction to the model",
        "other_tool" => "names another tool",
        "secret" => "speaks of a secret",
        "file" => "names a file",
        "url" => "carries a URL",
        _ => "marked",
    }
}

/// `from → to` when the change has them, then its other fields.
fn detail(change: &Value, name: Option<&str>) -> String {
    let Some(fields) = change.as_object() else {
        return String::new();
    };
    let shown = |v: &Value| match v {
        Value::Null => "none".to_owned(),
        Value::String(s) => s.clone(),
        v => v.to_string(),
    };
    let mut parts = Vec::new();
    if fields.contains_key("from") || fields.contains_key("to") {
        parts.push(format!(
            "{} → {}",
            shown(&change["from"]),
            shown(&change["to"])
        ));
    }
    for (key, value) in fields {
        let apart = APART.contains(&key.as_str()) || Some(key.as_str()) == name;
        if apart || key == "from" || key == "to" || value.is_object() || value.is_array() {
            continue;
        }
        parts.push(format!("{}: {}", key.replace('_', " "), shown(value)));
    }
    parts.join("; ")
}

fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
