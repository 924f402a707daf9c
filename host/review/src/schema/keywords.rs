//! The keyword rules: how a change of `type`, `enum`, `properties`,
//! `required`, `items` or `additionalProperties` reads for callers (the table
//! in the parent module), and the conservative answer for everything else.

use std::collections::BTreeSet;

use serde_json::Value;

use super::view::{ANY, covers, fields, list, same, types, values};
use super::{Finding, Flow, Obj, Walker, join};
use crate::SchemaClass::{Additive, Breaking};

/// Keywords that say nothing about which values are valid.
const IGNORED: &[&str] = &["description", "title", "examples", "$comment", "$schema"];
/// Keywords compared by their own rule (`$defs` through the `$ref`s into it).
const UNDERSTOOD: &[&str] = &[
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "items",
    "additionalProperties",
    "anyOf",
    "oneOf",
    "$defs",
    "definitions",
];

impl Walker<'_> {
    pub(super) fn keywords(&mut self, path: &str, o: &Obj, n: &Obj, depth: usize) -> Vec<Finding> {
        let mut found = self.types(path, o, n);
        found.extend(self.enums(path, o, n));
        found.extend(self.properties(path, o, n, depth));
        found.extend(self.items(path, o, n, depth));
        found.extend(self.additional(path, o, n, depth));
        found.extend(self.unknown(path, o, n));
        found
    }

    fn types(&self, path: &str, o: &Obj, n: &Obj) -> Vec<Finding> {
        let (Ok(a), Ok(b)) = (types(o), types(n)) else {
            return self.differs(path, &["type"], o, n);
        };
        let grew = match (&a, &b) {
            (None, None) => return Vec::new(),
            (None, Some(_)) => Some(false),
            (Some(_), None) => Some(true),
            (Some(a), Some(b)) => match (covers(b, a), covers(a, b)) {
                (true, true) => return Vec::new(),
                (true, false) => Some(true),
                (false, true) => Some(false),
                (false, false) => None,
            },
        };
        let show = |m: &Obj| m.get("type").map_or("any".into(), |t| t.to_string());
        let (from, to) = (show(o), show(n));
        let (class, verb) = match grew {
            Some(true) => (self.grew(true), "widened"),
            Some(false) => (self.grew(false), "narrowed"),
            None => (Breaking, "changed"),
        };
        vec![Finding::new(
            path,
            class,
            format!("type {verb} from {from} to {to}"),
        )]
    }

    fn enums(&self, path: &str, o: &Obj, n: &Obj) -> Vec<Finding> {
        let (Ok(a), Ok(b)) = (values(o), values(n)) else {
            return self.differs(path, &["enum", "const"], o, n);
        };
        match (a, b) {
            (None, None) => Vec::new(),
            (None, Some(b)) => vec![Finding::new(
                path,
                self.grew(false),
                format!("restricted to {}", list(&b)),
            )],
            (Some(_), None) => vec![Finding::new(
                path,
                self.grew(true),
                "no longer restricted to listed values",
            )],
            (Some(a), Some(b)) => {
                let added: Vec<&Value> = b.iter().filter(|v| !a.contains(v)).copied().collect();
                let removed: Vec<&Value> = a.iter().filter(|v| !b.contains(v)).copied().collect();
                let mut found = Vec::new();
                if !added.is_empty() {
                    found.push(Finding::new(
                        path,
                        self.grew(true),
                        format!("enum values added: {}", list(&added)),
                    ));
                }
                if !removed.is_empty() {
                    found.push(Finding::new(
                        path,
                        self.grew(false),
                        format!("enum values removed: {}", list(&removed)),
                    ));
                }
                found
            }
        }
    }

    fn properties(&mut self, path: &str, o: &Obj, n: &Obj, depth: usize) -> Vec<Finding> {
        let keys = ["properties", "required"];
        if !keys
            .iter()
            .any(|k| o.contains_key(*k) || n.contains_key(*k))
        {
            return Vec::new();
        }
        let (Ok((po, ro)), Ok((pn, rn))) = (fields(o), fields(n)) else {
            return self.differs(path, &keys, o, n);
        };
        let names: BTreeSet<&str> = po.keys().chain(pn.keys()).copied().collect();
        let mut found = Vec::new();
        for name in names {
            let at = join(path, name);
            let (was, is) = (ro.contains(name), rn.contains(name));
            match (po.get(name), pn.get(name)) {
                (Some(a), Some(b)) => {
                    if was != is {
                        let what = if is { "made required" } else { "made optional" };
                        found.push(Finding::new(&at, self.grew(!is), what));
                    }
                    found.extend(self.node(&at, a, b, depth + 1));
                }
                (Some(_), None) => found.push(Finding::new(&at, Breaking, "removed")),
                (None, Some(_)) => {
                    let class = if is && self.flow == Flow::Input {
                        Breaking
                    } else {
                        Additive
                    };
                    let what = if is {
                        "added (required)"
                    } else {
                        "added (optional)"
                    };
                    found.push(Finding::new(&at, class, what));
                }
                (None, None) => {}
            }
        }
        found
    }

    fn items(&mut self, path: &str, o: &Obj, n: &Obj, depth: usize) -> Vec<Finding> {
        let (a, b) = (o.get("items"), n.get("items"));
        if a.is_none() && b.is_none() {
            return Vec::new();
        }
        let (a, b) = (a.unwrap_or(&ANY), b.unwrap_or(&ANY));
        if a.is_array() || b.is_array() {
            return self.differs(path, &["items"], o, n);
        }
        self.node(&format!("{path}[]"), a, b, depth + 1)
    }

    fn additional(&mut self, path: &str, o: &Obj, n: &Obj, depth: usize) -> Vec<Finding> {
        let key = "additionalProperties";
        if !o.contains_key(key) && !n.contains_key(key) {
            return Vec::new();
        }
        let (a, b) = (o.get(key).unwrap_or(&ANY), n.get(key).unwrap_or(&ANY));
        match (a, b) {
            (Value::Bool(x), Value::Bool(y)) if x == y => Vec::new(),
            (Value::Bool(false), _) => vec![Finding::new(
                path,
                self.grew(true),
                "additional properties allowed",
            )],
            (_, Value::Bool(false)) => vec![Finding::new(
                path,
                self.grew(false),
                "additional properties refused",
            )],
            _ => self.node(&join(path, "*"), a, b, depth + 1),
        }
    }
}

impl Walker<'_> {
    /// Keywords whose values the classifier cannot read: breaking if any
    /// differs, as written or in a `$ref` target it reaches.
    pub(super) fn differs(&self, path: &str, keys: &[&str], o: &Obj, n: &Obj) -> Vec<Finding> {
        let what = |k| format!("keyword `{k}` changed (not understood, treated as breaking)");
        keys.iter()
            .filter(|k| !self.same_keyword(o.get(**k), n.get(**k)))
            .map(|k| Finding::new(path, Breaking, what(k)))
            .collect()
    }

    fn same_keyword(&self, a: Option<&Value>, b: Option<&Value>) -> bool {
        match (a, b) {
            (None, None) => true,
            (Some(a), Some(b)) => same(self.old_root, self.new_root, a, b),
            _ => false,
        }
    }

    /// Keywords the classifier has no rule for.
    fn unknown(&self, path: &str, o: &Obj, n: &Obj) -> Vec<Finding> {
        let keys: BTreeSet<&str> = o.keys().chain(n.keys()).map(String::as_str).collect();
        let other: Vec<&str> = keys
            .into_iter()
            .filter(|k| !IGNORED.contains(k) && !UNDERSTOOD.contains(k))
            .collect();
        self.differs(path, &other, o, n)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Classified, input, output};
    use super::*;
    use crate::SchemaClass;
    use serde_json::json;

    /// An object schema with these properties and required names.
    fn obj(properties: Value, required: &[&str]) -> Value {
        json!({"type": "object", "properties": properties, "required": required})
    }

    fn classify(flow: Flow, old: &Value, new: &Value) -> Classified {
        match flow {
            Flow::Input => input(old, new),
            Flow::Output => output(Some(old), Some(new)),
        }
    }

    type Want = Option<(SchemaClass, &'static [&'static str])>;

    fn check(rows: Vec<(&str, Flow, Value, Value, Want)>) {
        for (sentence, flow, old, new, want) in rows {
            let got = classify(flow, &old, &new);
            let want = want.map(|(c, d)| (c, d.iter().map(|s| s.to_string()).collect::<Vec<_>>()));
            assert_eq!(got, want, "{sentence}");
        }
    }

    fn person(extra: Value) -> Value {
        let mut p = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
        if let (Some(props), Value::Object(extra)) = (p["properties"].as_object_mut(), extra) {
            props.extend(extra);
        }
        p
    }

    /// `with_owner`, its `$ref` wrapped as schemars does for draft-07.
    fn wrapped(person: Value) -> Value {
        let mut s = with_owner("definitions", "Person", person);
        s["properties"]["owner"] =
            json!({"allOf": [{"$ref": "#/definitions/Person"}], "description": "Who."});
        s
    }

    fn with_owner(defs: &str, name: &str, person: Value) -> Value {
        let mut s = obj(
            json!({"owner": {"$ref": format!("#/{defs}/{name}")}}),
            &["owner"],
        );
        s[defs] = json!({ name: person });
        s
    }

    #[test]
    fn input_changes_are_additive_when_every_valid_call_stays_valid() {
        use Flow::Input;
        let name = || obj(json!({"name": {"type": "string"}}), &["name"]);
        let mode = |vs: Value| obj(json!({"mode": {"type": "string", "enum": vs}}), &[]);
        let count = |t: Value| obj(json!({"count": {"type": t}}), &[]);
        let email = json!({"email": {"type": "string"}});
        check(vec![
            (
                "identical schemas are no change",
                Input,
                name(),
                name(),
                None,
            ),
            (
                "a changed description, title or examples is no change",
                Input,
                name(),
                obj(
                    json!({"name": {"type": "string", "description": "Who.", "title": "Name", "examples": ["ada"]}}),
                    &["name"],
                ),
                None,
            ),
            (
                "an optional property added is additive",
                Input,
                name(),
                obj(
                    json!({"name": {"type": "string"}, "nickname": {"type": "string"}}),
                    &["name"],
                ),
                Some((Additive, &["property `nickname`: added (optional)"])),
            ),
            (
                "a required property added is breaking",
                Input,
                name(),
                obj(
                    json!({"name": {"type": "string"}, "nickname": {"type": "string"}}),
                    &["name", "nickname"],
                ),
                Some((Breaking, &["property `nickname`: added (required)"])),
            ),
            (
                "a property removed is breaking",
                Input,
                name(),
                obj(json!({}), &[]),
                Some((Breaking, &["property `name`: removed"])),
            ),
            (
                "a property's type changed is breaking",
                Input,
                name(),
                obj(json!({"name": {"type": "integer"}}), &["name"]),
                Some((
                    Breaking,
                    &["property `name`: type changed from \"string\" to \"integer\""],
                )),
            ),
            (
                "a type narrowed is breaking",
                Input,
                count(json!(["integer", "null"])),
                count(json!("integer")),
                Some((
                    Breaking,
                    &["property `count`: type narrowed from [\"integer\",\"null\"] to \"integer\""],
                )),
            ),
            (
                "a type widened is additive",
                Input,
                count(json!("integer")),
                count(json!(["integer", "null"])),
                Some((
                    Additive,
                    &["property `count`: type widened from \"integer\" to [\"integer\",\"null\"]"],
                )),
            ),
            (
                "an integer that may now be any number is widened",
                Input,
                count(json!("integer")),
                count(json!("number")),
                Some((
                    Additive,
                    &["property `count`: type widened from \"integer\" to \"number\""],
                )),
            ),
            (
                "a required property made optional is additive",
                Input,
                name(),
                obj(json!({"name": {"type": "string"}}), &[]),
                Some((Additive, &["property `name`: made optional"])),
            ),
            (
                "an optional property made required is breaking",
                Input,
                obj(json!({"name": {"type": "string"}}), &[]),
                name(),
                Some((Breaking, &["property `name`: made required"])),
            ),
            (
                "enum values added are additive",
                Input,
                mode(json!(["a", "b"])),
                mode(json!(["a", "b", "c"])),
                Some((Additive, &["property `mode`: enum values added: \"c\""])),
            ),
            (
                "enum values removed are breaking",
                Input,
                mode(json!(["a", "b"])),
                mode(json!(["a"])),
                Some((Breaking, &["property `mode`: enum values removed: \"b\""])),
            ),
            (
                "a property removed from a $ref'd object is breaking, at its nested path",
                Input,
                with_owner("$defs", "Person", person(email.clone())),
                with_owner("$defs", "Person", person(json!({}))),
                Some((Breaking, &["property `owner.email`: removed"])),
            ),
            (
                "a definition renamed with the same content is no change",
                Input,
                with_owner("$defs", "Person", person(email.clone())),
                with_owner("$defs", "Human", person(email.clone())),
                None,
            ),
            (
                "draft-07 definitions are followed like $defs",
                Input,
                with_owner("definitions", "Person", person(json!({}))),
                with_owner(
                    "definitions",
                    "Person",
                    person(json!({"phone": {"type": "string"}})),
                ),
                Some((Additive, &["property `owner.phone`: added (optional)"])),
            ),
            (
                "a dangling $ref that changes is breaking, saying why",
                Input,
                obj(json!({"owner": {"$ref": "#/$defs/Missing"}}), &[]),
                obj(json!({"owner": {"$ref": "#/$defs/Other"}}), &[]),
                Some((
                    Breaking,
                    &[
                        "property `owner`: `$ref` \"#/$defs/Missing\" is not a local definition (treated as breaking)",
                    ],
                )),
            ),
            (
                "a keyword the classifier has no rule for is breaking when it changes",
                Input,
                name(),
                obj(
                    json!({"name": {"type": "string", "pattern": "^a"}}),
                    &["name"],
                ),
                Some((
                    Breaking,
                    &[
                        "property `name`: keyword `pattern` changed (not understood, treated as breaking)",
                    ],
                )),
            ),
            (
                "an array's item type change is found under the array",
                Input,
                obj(
                    json!({"tags": {"type": "array", "items": {"type": "string"}}}),
                    &[],
                ),
                obj(
                    json!({"tags": {"type": "array", "items": {"type": "integer"}}}),
                    &[],
                ),
                Some((
                    Breaking,
                    &["property `tags[]`: type changed from \"string\" to \"integer\""],
                )),
            ),
            (
                "a value wrapped as optional (anyOf with null) is additive",
                Input,
                with_owner("$defs", "Person", person(json!({}))),
                {
                    let mut s = with_owner("$defs", "Person", person(json!({})));
                    s["properties"]["owner"] =
                        json!({"anyOf": [{"$ref": "#/$defs/Person"}, {"type": "null"}]});
                    s
                },
                Some((
                    Additive,
                    &["property `owner`: alternative added: {\"type\":\"null\"}"],
                )),
            ),
            (
                "a string that may now also be an integer id (the SDK's NameOrId) is additive",
                Input,
                obj(json!({"project": {"type": "string"}}), &["project"]),
                obj(
                    json!({"project": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}),
                    &["project"],
                ),
                Some((
                    Additive,
                    &["property `project`: alternative added: {\"type\":\"integer\"}"],
                )),
            ),
            (
                "a oneOf alternative removed is breaking",
                Input,
                obj(
                    json!({"mode": {"oneOf": [{"const": "a"}, {"const": "b"}]}}),
                    &[],
                ),
                obj(json!({"mode": {"oneOf": [{"const": "a"}]}}), &[]),
                Some((
                    Breaking,
                    &["property `mode`: alternative removed: {\"const\":\"b\"}"],
                )),
            ),
            (
                "additional properties allowed where they were refused is additive",
                Input,
                json!({"type": "object", "additionalProperties": false}),
                json!({"type": "object"}),
                Some((Additive, &["schema: additional properties allowed"])),
            ),
            (
                "an allOf of one (a described $ref in draft-07) is followed like the $ref",
                Input,
                wrapped(person(json!({}))),
                wrapped(person(json!({"phone": {"type": "string"}}))),
                Some((Additive, &["property `owner.phone`: added (optional)"])),
            ),
            (
                "a keyword without a rule is breaking when a $ref inside it points at a changed definition",
                Input,
                {
                    let mut s = with_owner("$defs", "Person", person(json!({})));
                    s["properties"]["owner"] = json!({"not": {"$ref": "#/$defs/Person"}});
                    s
                },
                {
                    let mut s = with_owner("$defs", "Person", person(email.clone()));
                    s["properties"]["owner"] = json!({"not": {"$ref": "#/$defs/Person"}});
                    s
                },
                Some((
                    Breaking,
                    &[
                        "property `owner`: keyword `not` changed (not understood, treated as breaking)",
                    ],
                )),
            ),
        ]);
    }

    #[test]
    fn output_changes_are_additive_when_every_reader_still_understands_the_answer() {
        use Flow::Output;
        let id = || obj(json!({"id": {"type": "string"}}), &["id"]);
        let state = |vs: Value| obj(json!({"state": {"enum": vs}}), &["state"]);
        check(vec![
            (
                "a property added is additive, even a required one",
                Output,
                id(),
                obj(
                    json!({"id": {"type": "string"}, "url": {"type": "string"}}),
                    &["id", "url"],
                ),
                Some((Additive, &["property `url`: added (required)"])),
            ),
            (
                "a property removed is breaking",
                Output,
                id(),
                obj(json!({}), &[]),
                Some((Breaking, &["property `id`: removed"])),
            ),
            (
                "a type changed is breaking",
                Output,
                id(),
                obj(json!({"id": {"type": "integer"}}), &["id"]),
                Some((
                    Breaking,
                    &["property `id`: type changed from \"string\" to \"integer\""],
                )),
            ),
            (
                "a type widened to admit null is breaking",
                Output,
                id(),
                obj(json!({"id": {"type": ["string", "null"]}}), &["id"]),
                Some((
                    Breaking,
                    &["property `id`: type widened from \"string\" to [\"string\",\"null\"]"],
                )),
            ),
            (
                "a required property made optional is breaking",
                Output,
                id(),
                obj(json!({"id": {"type": "string"}}), &[]),
                Some((Breaking, &["property `id`: made optional"])),
            ),
            (
                "an optional property made required is additive",
                Output,
                obj(json!({"id": {"type": "string"}}), &[]),
                id(),
                Some((Additive, &["property `id`: made required"])),
            ),
            (
                "enum values added are breaking",
                Output,
                state(json!(["ok"])),
                state(json!(["ok", "failed"])),
                Some((
                    Breaking,
                    &["property `state`: enum values added: \"failed\""],
                )),
            ),
            (
                "enum values removed are additive",
                Output,
                state(json!(["ok", "failed"])),
                state(json!(["ok"])),
                Some((
                    Additive,
                    &["property `state`: enum values removed: \"failed\""],
                )),
            ),
        ]);
    }
}
