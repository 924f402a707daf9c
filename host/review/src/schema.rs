//! Whether a tool's JSON Schema changed in meaning, and whether the change
//! breaks callers: [`input`] for what callers send, [`output`] for what
//! they read.
//!
//! The classifier understands the keywords schemars and the SDKs emit:
//! `type`, `properties`, `required`, `enum`/`const`, `items`,
//! `additionalProperties`, `anyOf`/`oneOf`, local `$ref`s into `$defs` or
//! `definitions` (with a cap on chains and cycles compared once) and an
//! `allOf` of one schema (schemars' draft-07 `$ref` with a description).
//! It ignores annotations (`description`, `title`, `examples`,
//! `$comment`, `$schema`): changing only those is no schema change. Any other
//! keyword that differs, or a shape it cannot read, is breaking, with a
//! detail saying so: a reviewer reads it rather than trusting a guess.
//!
//! The rules, as a caller sees them (input / output):
//!
//! | change                               | input    | output   |
//! |--------------------------------------|----------|----------|
//! | property added, optional             | additive | additive |
//! | property added, required             | breaking | additive |
//! | property removed                     | breaking | breaking |
//! | required → optional                  | additive | breaking |
//! | optional → required                  | breaking | additive |
//! | enum values / alternatives added     | additive | breaking |
//! | enum values / alternatives removed   | breaking | additive |
//! | type widened (`integer` → `[integer, null]`) | additive | breaking |
//! | type narrowed                        | breaking | additive |
//! | type changed otherwise               | breaking | breaking |
//! | additional properties allowed        | additive | breaking |
//! | additional properties refused        | breaking | additive |

mod keywords;
mod view;

use serde_json::{Map, Value};

use crate::SchemaClass::{self, Additive, Breaking};
use view::{View, alternatives, brief, same, view};

/// The class and the detail lines of a schema change; `None`: no change in meaning.
pub(crate) type Classified = Option<(SchemaClass, Vec<String>)>;

/// Deeper than this, two differing subschemas are breaking without a look.
const MAX_DEPTH: usize = 32;
/// Node comparisons one classification may make (the `anyOf` matching is
/// quadratic): past it, differing subschemas are breaking without a look, so
/// a hostile schema cannot stall the review page.
const MAX_STEPS: usize = 20_000;

/// Classifies an input schema change: callers that sent valid arguments
/// must still be able to.
pub(crate) fn input(old: &Value, new: &Value) -> Classified {
    Walker::new(Flow::Input, old, new).run()
}

/// Classifies an output schema change: callers that read answers must still
/// be able to. A schema appearing is additive; disappearing is breaking.
pub(crate) fn output(old: Option<&Value>, new: Option<&Value>) -> Classified {
    match (old, new) {
        (None, None) => None,
        (None, Some(_)) => Some((Additive, vec!["schema: added".into()])),
        (Some(_), None) => Some((Breaking, vec!["schema: removed".into()])),
        (Some(old), Some(new)) => Walker::new(Flow::Output, old, new).run(),
    }
}

/// Which way values cross the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    /// Callers send them: accepting more is additive.
    Input,
    /// Callers read them: producing more is breaking.
    Output,
}

/// One difference, at a path such as `owner.tags[]`.
struct Finding {
    path: String,
    class: SchemaClass,
    what: String,
}

impl Finding {
    fn new(path: &str, class: SchemaClass, what: impl Into<String>) -> Finding {
        let (path, what) = (path.to_owned(), what.into());
        Finding { path, class, what }
    }

    fn render(&self) -> String {
        match self.path.as_str() {
            "" => format!("schema: {}", self.what),
            path => format!("property `{path}`: {}", self.what),
        }
    }
}

struct Walker<'a> {
    flow: Flow,
    old_root: &'a Value,
    new_root: &'a Value,
    steps: usize,
    /// The `$ref` pairs being compared on the current path: meeting one again
    /// is a cycle, already being compared further up.
    refs: Vec<(Option<String>, Option<String>)>,
}

impl<'a> Walker<'a> {
    fn new(flow: Flow, old_root: &'a Value, new_root: &'a Value) -> Self {
        let refs = Vec::new();
        Walker {
            flow,
            old_root,
            new_root,
            steps: MAX_STEPS,
            refs,
        }
    }

    fn run(mut self) -> Classified {
        let (old, new) = (self.old_root, self.new_root);
        let found = self.node("", old, new, 0);
        if found.is_empty() {
            return None;
        }
        let breaking = found.iter().any(|f| f.class == Breaking);
        let class = if breaking { Breaking } else { Additive };
        Some((class, found.iter().map(Finding::render).collect()))
    }

    /// The class of a change that lets more values through (`grew`) or fewer.
    fn grew(&self, grew: bool) -> SchemaClass {
        match (self.flow, grew) {
            (Flow::Input, true) | (Flow::Output, false) => Additive,
            _ => Breaking,
        }
    }

    /// A subschema pair the classifier will not look into: breaking unless
    /// equal as written, `$ref` targets included.
    fn unless_same(&self, path: &str, old: &Value, new: &Value, why: &str) -> Vec<Finding> {
        match same(self.old_root, self.new_root, old, new) {
            true => Vec::new(),
            false => vec![Finding::new(
                path,
                Breaking,
                format!("{why} (treated as breaking)"),
            )],
        }
    }

    fn node(&mut self, path: &str, old: &Value, new: &Value, depth: usize) -> Vec<Finding> {
        if self.steps == 0 {
            return self.unless_same(path, old, new, "too large to compare");
        }
        self.steps -= 1;
        if depth > MAX_DEPTH {
            return self.unless_same(path, old, new, &format!("nested deeper than {MAX_DEPTH}"));
        }
        let (o, n) = match (view(self.old_root, old), view(self.new_root, new)) {
            (Ok(o), Ok(n)) => (o, n),
            (Err(why), _) | (_, Err(why)) => return self.unless_same(path, old, new, &why),
        };
        let pair = (o.via.clone(), n.via.clone());
        if pair != (None, None) && self.refs.contains(&pair) {
            return Vec::new();
        }
        self.refs.push(pair);
        let found = self.views(path, &o, &n, depth);
        self.refs.pop();
        found
    }

    fn views(&mut self, path: &str, o: &View, n: &View, depth: usize) -> Vec<Finding> {
        let (o, n) = (&o.map, &n.map);
        match (alternatives(o), alternatives(n)) {
            (Ok(None), Ok(None)) => self.keywords(path, o, n, depth),
            (Ok(a), Ok(b)) => self.choice(path, (o, a), (n, b), depth),
            _ => self.differs(path, &["anyOf", "oneOf"], o, n),
        }
    }

    /// Nodes with `anyOf`/`oneOf` on either side: the rest of the keywords
    /// compared as usual, then the alternatives (a plain node is a choice of one).
    fn choice(&mut self, path: &str, old: Side, new: Side, depth: usize) -> Vec<Finding> {
        let ((base_o, alts_o, kw_o), (base_n, alts_n, kw_n)) = (split(old), split(new));
        let mut found = self.keywords(path, &base_o, &base_n, depth);
        if let (Some(a), Some(b)) = (kw_o, kw_n)
            && a != b
        {
            found.push(Finding::new(
                path,
                self.grew(b == "anyOf"),
                format!("`{a}` became `{b}`"),
            ));
        }
        let kw = kw_n.or(kw_o).unwrap_or("anyOf");
        found.extend(self.branches(path, kw, &alts_o, &alts_n, depth));
        found
    }

    /// Matches alternatives by meaning; what is left over was added or
    /// removed, or, as many on each side, changed in place.
    fn branches(
        &mut self,
        path: &str,
        kw: &str,
        old: &[Value],
        new: &[Value],
        depth: usize,
    ) -> Vec<Finding> {
        let mut open: Vec<usize> = (0..new.len()).collect();
        let mut lost = Vec::new();
        for (i, o) in old.iter().enumerate() {
            match open
                .iter()
                .position(|&j| self.node(path, o, &new[j], depth + 1).is_empty())
            {
                Some(k) => {
                    open.remove(k);
                }
                None => lost.push(i),
            }
        }
        let named = |i: &usize, vs: &[Value]| brief(&vs[*i]);
        match (lost.len(), open.len()) {
            (0, 0) => Vec::new(),
            (0, _) => open
                .iter()
                .map(|j| {
                    Finding::new(
                        path,
                        self.grew(true),
                        format!("alternative added: {}", named(j, new)),
                    )
                })
                .collect(),
            (_, 0) => lost
                .iter()
                .map(|i| {
                    Finding::new(
                        path,
                        self.grew(false),
                        format!("alternative removed: {}", named(i, old)),
                    )
                })
                .collect(),
            (a, b) if a == b => {
                let pairs: Vec<(usize, usize)> = lost.into_iter().zip(open).collect();
                pairs
                    .into_iter()
                    .flat_map(|(i, j)| {
                        let at = join(path, &format!("{kw}[{j}]"));
                        self.node(&at, &old[i], &new[j], depth + 1)
                    })
                    .collect()
            }
            (a, b) => vec![Finding::new(
                path,
                Breaking,
                format!("alternatives changed: {a} no longer matched, {b} new"),
            )],
        }
    }
}

type Obj = Map<String, Value>;
type Side<'m> = (&'m Obj, Option<(&'static str, &'m [Value])>);

/// A node's keywords besides its alternatives, the alternatives, and their keyword.
fn split((map, alts): Side<'_>) -> (Obj, Vec<Value>, Option<&'static str>) {
    match alts {
        None => (Map::new(), vec![Value::Object(map.clone())], None),
        Some((kw, list)) => {
            let mut base = map.clone();
            base.remove(kw);
            (base, list.to_vec(), Some(kw))
        }
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An object schema with these properties and required names.
    fn obj(properties: Value, required: &[&str]) -> Value {
        json!({"type": "object", "properties": properties, "required": required})
    }

    #[test]
    fn an_output_schema_appearing_is_additive_and_disappearing_is_breaking() {
        let s = json!({"type": "object"});
        assert_eq!(output(None, None), None);
        assert_eq!(
            output(None, Some(&s)),
            Some((Additive, vec!["schema: added".into()]))
        );
        assert_eq!(
            output(Some(&s), None),
            Some((Breaking, vec!["schema: removed".into()]))
        );
    }

    #[test]
    fn recursive_and_hostile_schemas_end_with_a_conservative_answer() {
        let tree = |extra: Value| {
            let mut node = json!({"type": "object", "properties": {
                "label": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
            }});
            if let (Some(props), Value::Object(extra)) = (node["properties"].as_object_mut(), extra)
            {
                props.extend(extra);
            }
            json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/Tree"}}, "$defs": {"Tree": node}})
        };
        let weight = json!({"weight": {"type": "number"}});
        assert_eq!(
            input(&tree(json!({})), &tree(json!({}))),
            None,
            "a recursive type equal to itself"
        );
        assert_eq!(
            input(&tree(json!({})), &tree(weight)),
            Some((
                Additive,
                vec!["property `root.weight`: added (optional)".into()]
            )),
            "a recursive type is compared once, not at every level"
        );

        let looped = |tag: &str| json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "x": tag});
        assert_eq!(input(&looped("same"), &looped("same")), None);
        let (class, details) = input(&looped("one"), &looped("two")).expect("a change");
        assert_eq!(class, Breaking);
        assert!(details[0].contains("chain longer than"), "{details:?}");

        let mut deep_old = json!({"type": "string"});
        let mut deep_new = json!({"type": "integer"});
        for _ in 0..100 {
            deep_old = obj(json!({"x": deep_old}), &[]);
            deep_new = obj(json!({"x": deep_new}), &[]);
        }
        let (class, details) = input(&deep_old, &deep_new).expect("a change");
        assert_eq!(class, Breaking);
        assert!(details[0].contains("nested deeper than 32"), "{details:?}");

        let hidden = |leaf: &str| {
            let mut s = json!({"$ref": "#/$defs/Leaf"});
            for _ in 0..40 {
                s = obj(json!({"x": s}), &[]);
            }
            s["$defs"] = json!({"Leaf": {"type": leaf}});
            s
        };
        let (class, details) = input(&hidden("string"), &hidden("integer")).expect("a change");
        assert_eq!(
            class, Breaking,
            "a deep $ref written the same way but defined otherwise"
        );
        assert!(details[0].contains("nested deeper than 32"), "{details:?}");
        assert_eq!(input(&hidden("string"), &hidden("string")), None);

        let many = |tag: &str| {
            let alts: Vec<Value> = (0..300)
                .map(|i| json!({"const": format!("{tag}{i}")}))
                .collect();
            obj(json!({"mode": {"anyOf": alts}}), &[])
        };
        let (class, _) = input(&many("a"), &many("b")).expect("a change");
        assert_eq!(
            class, Breaking,
            "300 alternatives against 300 others end within the step budget"
        );
    }
}
