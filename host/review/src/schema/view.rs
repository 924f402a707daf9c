//! One schema node as the classifier sees it: local `$ref`s followed, and
//! the keyword values read into sets, or a reason why they cannot be.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

/// The schema that accepts anything: what a missing `items` or
/// `additionalProperties` means, and what `true` means.
pub(super) static ANY: Value = Value::Bool(true);

/// How many `$ref`s (or `allOf`s of one) in a row one node may follow before it is refused (a
/// chain that long is a cycle or a hostile schema).
const MAX_HOPS: usize = 16;

/// A node with its `$ref`s followed.
pub(super) struct View {
    /// The target's keywords, with the referring nodes' siblings laid over
    /// them (the outermost wins), `$ref` and `allOf` themselves removed.
    pub map: Map<String, Value>,
    /// The first `$ref` followed, naming the node for cycle detection.
    pub via: Option<String>,
}

/// Follows `node`'s local `$ref`s (`#/$defs/…`, `#/definitions/…`, any JSON
/// pointer into `root`) and `allOf`s of one schema. Errs, naming the reason, on a remote or dangling
/// reference, a non-schema value, the `false` schema or a chain of more than
/// [`MAX_HOPS`].
pub(super) fn view(root: &Value, node: &Value) -> Result<View, String> {
    let mut overlay = Map::new();
    let mut via: Option<String> = None;
    let mut at = node;
    for _ in 0..MAX_HOPS {
        let map = match at {
            Value::Bool(true) => {
                return Ok(View {
                    map: laid(Map::new(), overlay),
                    via,
                });
            }
            Value::Bool(false) => return Err("the `false` schema is not understood".into()),
            Value::Object(map) => map,
            other => return Err(format!("{} is not a schema", brief(other))),
        };
        if let Some(Value::Array(all)) = map.get("allOf")
            && let [only] = all.as_slice()
            && !map.contains_key("$ref")
        {
            // `allOf` of one (schemars' way to describe a `$ref` in draft-07)
            // is that one schema with the siblings laid over it.
            lay(&mut overlay, map, "allOf");
            at = only;
            continue;
        }
        let Some(reference) = map.get("$ref") else {
            return Ok(View {
                map: laid(map.clone(), overlay),
                via,
            });
        };
        let reference = reference.as_str().ok_or("`$ref` is not a string")?;
        lay(&mut overlay, map, "$ref");
        via.get_or_insert_with(|| reference.to_owned());
        at = reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
            .ok_or_else(|| format!("`$ref` {reference:?} is not a local definition"))?;
    }
    Err(format!("`$ref` chain longer than {MAX_HOPS} hops"))
}

/// Whether two subschemas are equal as written, and every local `$ref` they
/// reach (transitively) names equal values in both roots: a `$ref` written
/// the same way may still point at a changed definition.
pub(super) fn same(old_root: &Value, new_root: &Value, old: &Value, new: &Value) -> bool {
    if old != new {
        return false;
    }
    let mut seen = BTreeSet::new();
    let mut todo = vec![old];
    while let Some(v) = todo.pop() {
        let mut found = Vec::new();
        refs_in(v, &mut found);
        for r in found.into_iter().filter(|r| seen.insert(*r)) {
            let target = |root| r.strip_prefix('#').and_then(|p| Value::pointer(root, p));
            match (target(old_root), target(new_root)) {
                (Some(a), Some(b)) if a == b => todo.push(a),
                (None, None) => {}
                _ => return false,
            }
        }
    }
    true
}

fn refs_in<'v>(v: &'v Value, out: &mut Vec<&'v str>) {
    match v {
        Value::Object(map) => {
            out.extend(map.get("$ref").and_then(Value::as_str));
            map.values().for_each(|v| refs_in(v, out));
        }
        Value::Array(vs) => vs.iter().for_each(|v| refs_in(v, out)),
        _ => {}
    }
}

/// Adds `map`'s keywords but `skip` to `overlay`, keeping those already there
/// (an outer node's keyword wins).
fn lay(overlay: &mut Map<String, Value>, map: &Map<String, Value>, skip: &str) {
    for (k, v) in map.iter().filter(|(k, _)| *k != skip) {
        overlay.entry(k.clone()).or_insert_with(|| v.clone());
    }
}

fn laid(mut base: Map<String, Value>, overlay: Map<String, Value>) -> Map<String, Value> {
    base.extend(overlay);
    base
}

/// `type` as a set of names; `Ok(None)`: absent (any type).
pub(super) fn types(map: &Map<String, Value>) -> Result<Option<BTreeSet<&str>>, ()> {
    match map.get("type") {
        None => Ok(None),
        Some(Value::String(t)) => Ok(Some(BTreeSet::from([t.as_str()]))),
        Some(Value::Array(ts)) => ts
            .iter()
            .map(|t| t.as_str().ok_or(()))
            .collect::<Result<_, _>>()
            .map(Some),
        Some(_) => Err(()),
    }
}

/// Whether every value of a type in `narrow` is of a type in `wide`
/// (an integer is a number).
pub(super) fn covers(wide: &BTreeSet<&str>, narrow: &BTreeSet<&str>) -> bool {
    narrow
        .iter()
        .all(|t| wide.contains(t) || (*t == "integer" && wide.contains("number")))
}

/// `enum` (or `const`, an enum of one); `Ok(None)`: not restricted.
pub(super) fn values(map: &Map<String, Value>) -> Result<Option<Vec<&Value>>, ()> {
    match (map.get("enum"), map.get("const")) {
        (None, None) => Ok(None),
        (Some(Value::Array(vs)), None) => Ok(Some(vs.iter().collect())),
        (None, Some(c)) => Ok(Some(vec![c])),
        _ => Err(()),
    }
}

/// An object's properties by name (a name only `required` mentions has the
/// schema [`ANY`]) and its required names.
pub(super) type Fields<'m> = (BTreeMap<&'m str, &'m Value>, BTreeSet<&'m str>);

/// Reads `properties` and `required`.
pub(super) fn fields(map: &Map<String, Value>) -> Result<Fields<'_>, ()> {
    let mut props: BTreeMap<&str, &Value> = match map.get("properties") {
        None => BTreeMap::new(),
        Some(Value::Object(p)) => p.iter().map(|(k, v)| (k.as_str(), v)).collect(),
        Some(_) => return Err(()),
    };
    let required: BTreeSet<&str> = match map.get("required") {
        None => BTreeSet::new(),
        Some(Value::Array(r)) => r
            .iter()
            .map(|n| n.as_str().ok_or(()))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(()),
    };
    for name in &required {
        props.entry(name).or_insert(&ANY);
    }
    Ok((props, required))
}

/// `anyOf` or `oneOf`: the keyword and its alternatives; `Ok(None)`: neither.
pub(super) fn alternatives(
    map: &Map<String, Value>,
) -> Result<Option<(&'static str, &[Value])>, ()> {
    match (map.get("anyOf"), map.get("oneOf")) {
        (None, None) => Ok(None),
        (Some(Value::Array(a)), None) => Ok(Some(("anyOf", a))),
        (None, Some(Value::Array(a))) => Ok(Some(("oneOf", a))),
        _ => Err(()),
    }
}

/// Compact JSON for a detail line, cut at 60 characters.
pub(super) fn brief(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Values as a detail line lists them: `"a", "b"`.
pub(super) fn list(vs: &[&Value]) -> String {
    vs.iter().map(|v| brief(v)).collect::<Vec<_>>().join(", ")
}
