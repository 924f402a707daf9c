//! The digest of a tool's reviewed definition: what a client pins.
//!
//! `tools/list` names, for each tool, the SHA-256 of its definition
//! (`_meta["toolhost/definition"]`), and each call's audit row names the
//! one it served. A client or a test that keeps the digests it saw can tell
//! that a definition changed, and since only an approved revision changes
//! what the catalog serves, that it changed through a review.
//!
//! The digest is taken of the canonical JSON
//! ([`canonical_json`]: keys sorted, no whitespace) of one object:
//!
//! | key | value | when |
//! |---|---|---|
//! | `name` | the tool's name | always |
//! | `title` | its display title | when set |
//! | `description` | its description, as the plugin gave it | always |
//! | `inputSchema` | its input schema, as the plugin gave it | always |
//! | `outputSchema` | its output schema, as the plugin gave it | when set |
//! | `annotations` | `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`, each when set | always (`{}` when none is set) |
//! | `permission` | the permission a caller needs, `resource:action` | always |
//! | `risk` | the risk the plugin describes: `low`, `medium` or `high` | always |
//! | `mutating` | whether calls change state | always |
//! | `riskFloor` | the reviewer's floor (`[tools.NAME] risk`) | when set |
//! | `resolves` | the entity kinds it resolves names of, sorted, once each | when any |
//! | `run` | `true`: it is served as an exploration run (`run = {…}`) | when so |
//! | `tags` | the words a catalog search finds it by (`tags`), sorted, once each | when any |
//! | `deprecated` | `{"replacement": NAME or null, "until": VERSION}` | when a newer revision retired it |
//!
//! That is what the client is served, and the reviewed facts the host
//! serves it from: the permission and risk decide who sees it and whether
//! a call is gated; the floor, the kinds and the run table decide what the
//! host adds to it. The host's own additions (the `gate_id` and
//! `idempotency_key` arguments of a gated tool, the clarification,
//! approval and artifact answers in an output schema, a run tool's note
//! and answer, a deprecated tool's description prefix) are not in it: they
//! follow from those facts and the host's release, and no review decides
//! them. Budgets (`[limits]`, a run's budget), backends and imports are the
//! plugin's, not a tool's definition, and the component's bytes are not in
//! it either: a revision that changes only them keeps every digest.
//!
//! A key that is absent when unset lets a later host add an optional fact
//! without changing the digest of any tool that does not use it. Digests
//! depend on nothing else (not the time, the replica, the order of a
//! schema's keys or of the kinds), so every replica and every restart serves
//! the same digest for the same definition.

use serde_json::{Map, Value, json};
use toolhost_runtime::ToolSpec;
use toolhost_types::{Digest, canonical_json};

use crate::{Deprecation, LoadedPlugin, ToolSection};

/// The digest of `spec`'s definition, with the facts `reviewed` (its
/// manifest entry, for a catalog tool) and `deprecation` (when a newer
/// revision retired it) add. A host tool has neither: its definition is
/// its spec, reviewed with the host's release.
pub fn definition_digest(
    spec: &ToolSpec,
    reviewed: Option<&ToolSection>,
    deprecation: Option<&Deprecation>,
) -> Digest {
    Digest::of(canonical_json(&definition(spec, reviewed, deprecation)).as_bytes())
}

/// The digest of the definition of `plugin`'s tool `spec`, with its
/// manifest entry and its `deprecation`: what the catalog's index keeps.
pub(crate) fn of(
    plugin: &LoadedPlugin,
    spec: &ToolSpec,
    deprecation: Option<&Deprecation>,
) -> Digest {
    definition_digest(spec, plugin.manifest.tools.get(&spec.name), deprecation)
}

/// The object [`definition_digest`] is the SHA-256 of (see the module docs).
fn definition(
    spec: &ToolSpec,
    reviewed: Option<&ToolSection>,
    deprecation: Option<&Deprecation>,
) -> Value {
    let mut d = Map::new();
    d.insert("name".into(), json!(spec.name.as_str()));
    set(&mut d, "title", spec.title.as_ref().map(|t| json!(t)));
    d.insert("description".into(), json!(spec.description));
    d.insert("inputSchema".into(), spec.input_schema.clone());
    set(&mut d, "outputSchema", spec.output_schema.clone());
    d.insert("annotations".into(), annotations(spec));
    d.insert("permission".into(), json!(spec.permission.to_string()));
    d.insert("risk".into(), json!(spec.risk.to_string()));
    d.insert("mutating".into(), json!(spec.mutating));
    if let Some(s) = reviewed {
        set(&mut d, "riskFloor", s.risk.map(|r| json!(r.to_string())));
        let kinds: std::collections::BTreeSet<&str> =
            s.resolves.iter().map(String::as_str).collect();
        set(
            &mut d,
            "resolves",
            (!kinds.is_empty()).then(|| json!(kinds)),
        );
        set(&mut d, "run", s.run.is_some().then_some(Value::Bool(true)));
        let tags: std::collections::BTreeSet<&str> = s.tags.iter().map(String::as_str).collect();
        set(&mut d, "tags", (!tags.is_empty()).then(|| json!(tags)));
    }
    set(
        &mut d,
        "deprecated",
        deprecation.map(|x| json!({"replacement": x.replacement, "until": x.until})),
    );
    Value::Object(d)
}

/// MCP's four hints, each only when the plugin set it.
fn annotations(spec: &ToolSpec) -> Value {
    let a = &spec.annotations;
    let mut hints = Map::new();
    for (key, hint) in [
        ("readOnlyHint", a.read_only),
        ("destructiveHint", a.destructive),
        ("idempotentHint", a.idempotent),
        ("openWorldHint", a.open_world),
    ] {
        set(&mut hints, key, hint.map(Value::Bool));
    }
    Value::Object(hints)
}

fn set(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        map.insert(key.into(), v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolhost_runtime::Annotations;
    use toolhost_types::Risk;

    fn greet() -> ToolSpec {
        ToolSpec {
            name: "greet".parse().expect("a tool name"),
            title: Some("Greet".into()),
            description: "Greets someone.".into(),
            input_schema: json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            output_schema: Some(json!({"type": "object"})),
            annotations: Annotations {
                read_only: Some(true),
                ..Annotations::default()
            },
            permission: "hello:read".parse().expect("a permission"),
            risk: Risk::Low,
            mutating: false,
        }
    }

    fn section() -> ToolSection {
        ToolSection {
            permission: "hello:read".parse().expect("a permission"),
            resolves: Vec::new(),
            invalidates: Vec::new(),
            risk: None,
            replaces: None,
            run: None,
            takes_from: None,
            tags: Vec::new(),
        }
    }

    fn digest(spec: &ToolSpec, s: &ToolSection) -> Digest {
        definition_digest(spec, Some(s), None)
    }

    #[test]
    fn the_digest_is_the_sha256_of_the_canonical_definition_and_never_moves() {
        // Pinned: a change of the encoding changes every client's pins, so
        // it must be deliberate (and said in the release notes).
        let d = definition(&greet(), Some(&section()), None);
        assert_eq!(
            canonical_json(&d),
            r#"{"annotations":{"readOnlyHint":true},"description":"Greets someone.","inputSchema":{"properties":{"name":{"type":"string"}},"type":"object"},"mutating":false,"name":"greet","outputSchema":{"type":"object"},"permission":"hello:read","risk":"low","title":"Greet"}"#
        );
        assert_eq!(
            digest(&greet(), &section()),
            Digest::of(canonical_json(&d).as_bytes())
        );
        assert_eq!(
            digest(&greet(), &section()).to_string(),
            "76a7b6d1639f563ec3cfe64225e757808c89868fbfae339df62d640e2eff138f"
        );
    }

    #[test]
    fn every_served_or_reviewed_fact_changes_the_digest() {
        let base = digest(&greet(), &section());
        let spec_edits: [fn(&mut ToolSpec); 10] = [
            |s| s.name = "hail".parse().expect("a tool name"),
            |s| s.title = None,
            |s| s.description.push('!'),
            |s| s.input_schema["required"] = json!(["name"]),
            |s| s.output_schema = None,
            |s| s.annotations.read_only = None,
            |s| s.annotations.open_world = Some(false),
            |s| s.permission = "hello:write".parse().expect("a permission"),
            |s| s.risk = Risk::Medium,
            |s| s.mutating = true,
        ];
        for edit in spec_edits {
            let mut spec = greet();
            edit(&mut spec);
            assert_ne!(digest(&spec, &section()), base, "{spec:?}");
        }
        let section_edits: [fn(&mut ToolSection); 4] = [
            |s| s.risk = Some(Risk::High),
            |s| s.tags = vec!["greeting".into()],
            |s| s.resolves = vec!["project".into()],
            |s| s.run = Some(Default::default()),
        ];
        for edit in section_edits {
            let mut s = section();
            edit(&mut s);
            assert_ne!(digest(&greet(), &s), base, "{s:?}");
        }
        let retired = Deprecation {
            replacement: Some("hail".into()),
            until: "2.1.0".into(),
        };
        assert_ne!(
            definition_digest(&greet(), Some(&section()), Some(&retired)),
            base
        );
    }

    #[test]
    fn what_is_not_the_definition_leaves_the_digest() {
        let base = digest(&greet(), &section());
        // A schema's key order, the kinds' order and repeats.
        let mut spec = greet();
        spec.input_schema = serde_json::from_str(
            r#"{"properties": {"name": {"type": "string"}}, "type": "object"}"#,
        )
        .expect("JSON");
        assert_eq!(digest(&spec, &section()), base);
        let kinds = |k: &[&str]| ToolSection {
            resolves: k.iter().map(|s| s.to_string()).collect(),
            ..section()
        };
        assert_eq!(
            digest(&greet(), &kinds(&["project", "environment"])),
            digest(&greet(), &kinds(&["environment", "project", "project"]))
        );
        let tags = |t: &[&str]| ToolSection {
            tags: t.iter().map(|s| s.to_string()).collect(),
            ..section()
        };
        assert_eq!(
            digest(&greet(), &tags(&["a", "b"])),
            digest(&greet(), &tags(&["b", "a", "a"]))
        );
        // What the host does with a call, not what it serves: the kinds a
        // call invalidates, the tool it replaces, the run's budget.
        let s = ToolSection {
            invalidates: vec!["scenario".into()],
            replaces: Some("hello".parse().expect("a tool name")),
            ..section()
        };
        assert_eq!(digest(&greet(), &s), base);
        let run = |timeout| ToolSection {
            run: Some(toolhost_limits::RunOverride {
                timeout,
                ..Default::default()
            }),
            ..section()
        };
        assert_eq!(
            digest(&greet(), &run(None)),
            digest(&greet(), &run(Some(std::time::Duration::from_secs(600))))
        );
    }
}
