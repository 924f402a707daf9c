//! What a loaded plugin may do, in the review room's words: the manifest's
//! grants and the component's own facts (its tools as described, its
//! imports), ready to diff against the active revision.

use std::collections::BTreeMap;

use toolhost_limits::CallBudget;
use toolhost_review::{Capabilities, ToolCapabilities, schema_texts};
use toolhost_runtime::{Plugin, ToolSpec};

use crate::{LoadedPlugin, Manifest, ToolSection};

/// The capabilities of `loaded`, signed by `signer` (`None`: unsigned).
pub fn capabilities(loaded: &LoadedPlugin, signer: Option<String>) -> Capabilities {
    let manifest = &loaded.manifest;
    let plugin = &loaded.plugin;
    Capabilities {
        plugin: manifest.plugin.name.to_string(),
        version: manifest.plugin.version.clone(),
        signer,
        tools: (plugin.tools().iter())
            .map(|spec| {
                (
                    spec.name.to_string(),
                    tool(spec, manifest.tools.get(&spec.name)),
                )
            })
            .collect(),
        backends: manifest
            .backends
            .iter()
            .map(|(n, b)| (n.clone(), b.purpose.clone()))
            .collect(),
        limits: limits(&loaded.budget, manifest),
        high_risk_tags: manifest.risk.high_when_tagged.iter().cloned().collect(),
        imports: plugin.imports().iter().cloned().collect(),
        entity_kinds: plugin.kinds().iter().cloned().collect(),
        prompts: (plugin.prompts().iter())
            .map(|p| (p.name.clone(), p.permission.to_string()))
            .collect(),
        resources: resources(plugin),
        texts: texts(plugin),
        uris: uris(plugin),
        component: Some(plugin.digest().to_string()),
        takes: takes(manifest),
    }
}

/// A tool as its component describes it, with its manifest `section`'s
/// grants, if it has one.
fn tool(spec: &ToolSpec, section: Option<&ToolSection>) -> ToolCapabilities {
    ToolCapabilities {
        permission: spec.permission.to_string(),
        description: spec.description.clone(),
        input_schema: spec.input_schema.clone(),
        output_schema: spec.output_schema.clone(),
        risk: spec.risk.to_string(),
        risk_floor: section.and_then(|s| s.risk).map(|r| r.to_string()),
        mutating: spec.mutating,
        resolves: section
            .map(|s| s.resolves.iter().cloned().collect())
            .unwrap_or_default(),
        replaces: section
            .and_then(|s| s.replaces.as_ref())
            .map(|t| t.to_string()),
        texts: tool_texts(spec, section),
    }
}

/// What the model reads of a tool beside its description: its title, its
/// annotations, the words inside its schemas, and its manifest's tags
/// (`"tags"`: sorted, comma-separated), which a catalog search answers by.
fn tool_texts(spec: &ToolSpec, section: Option<&ToolSection>) -> BTreeMap<String, String> {
    let mut texts = BTreeMap::new();
    let tags: std::collections::BTreeSet<&str> = (section.iter())
        .flat_map(|s| s.tags.iter().map(String::as_str))
        .collect();
    if !tags.is_empty() {
        let tags: Vec<&str> = tags.into_iter().collect();
        texts.insert("tags".to_owned(), tags.join(", "));
    }
    if let Some(title) = &spec.title {
        texts.insert("title".to_owned(), title.clone());
    }
    let a = &spec.annotations;
    for (hint, value) in [
        ("readOnlyHint", a.read_only),
        ("destructiveHint", a.destructive),
        ("idempotentHint", a.idempotent),
        ("openWorldHint", a.open_world),
    ] {
        if let Some(v) = value {
            texts.insert(format!("annotations {hint}"), v.to_string());
        }
    }
    let schemas = [
        ("input", Some(&spec.input_schema)),
        ("output", spec.output_schema.as_ref()),
    ];
    for (which, schema) in schemas {
        for (pointer, text) in schema.map(schema_texts).unwrap_or_default() {
            texts.insert(format!("{which} {pointer}"), text);
        }
    }
    texts
}

/// What the model reads of the prompts, resources and templates beside
/// their names and URIs, by subject (`"prompt NAME"`, `"resource NAME"`).
fn texts(plugin: &Plugin) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for p in plugin.prompts() {
        let mut t = described(p.title.as_ref(), &p.description, None);
        for arg in &p.arguments {
            let at = |field: &str| format!("argument {} {field}", arg.name);
            t.insert(at("required"), arg.required.to_string());
            if let Some(d) = &arg.description {
                t.insert(at("description"), d.clone());
            }
        }
        out.insert(format!("prompt {}", p.name), t);
    }
    for r in plugin.resources() {
        let t = described(r.title.as_ref(), &r.description, r.mime_type.as_ref());
        out.insert(format!("resource {}", r.name), t);
    }
    for r in plugin.resource_templates() {
        let t = described(r.title.as_ref(), &r.description, r.mime_type.as_ref());
        out.insert(format!("resource {}", r.name), t);
    }
    out
}

/// A title, a description and a MIME type, by field.
fn described(
    title: Option<&String>,
    description: &str,
    mime_type: Option<&String>,
) -> BTreeMap<String, String> {
    let mut t = BTreeMap::from([("description".to_owned(), description.to_owned())]);
    if let Some(title) = title {
        t.insert("title".into(), title.clone());
    }
    if let Some(mime) = mime_type {
        t.insert("mime type".into(), mime.clone());
    }
    t
}

/// Each resource's URI and each template's URI template, by name.
fn uris(plugin: &Plugin) -> BTreeMap<String, String> {
    (plugin.resources().iter())
        .map(|r| (r.name.clone(), r.uri.clone()))
        .chain(
            (plugin.resource_templates().iter()).map(|t| (t.name.clone(), t.uri_template.clone())),
        )
        .collect()
}

/// The names the manifest takes over from other plugins: `"tool greet"` →
/// the plugin it takes it from.
pub(crate) fn takes(manifest: &Manifest) -> BTreeMap<String, String> {
    let tools = (manifest.tools.iter())
        .filter_map(|(n, s)| Some((format!("tool {}", n.as_str()), s.takes_from.as_ref()?)));
    let prompts = (manifest.prompts.iter())
        .filter_map(|(n, s)| Some((format!("prompt {n}"), s.takes_from.as_ref()?)));
    let resources = (manifest.resources.iter())
        .filter_map(|(n, s)| Some((format!("resource {n}"), s.takes_from.as_ref()?)));
    (tools.chain(prompts).chain(resources))
        .map(|(subject, from)| (subject, from.to_string()))
        .collect()
}

/// Every number the plugin is held to: its call budget, its run tools'
/// budgets and its sampling grant.
fn limits(budget: &CallBudget, manifest: &Manifest) -> BTreeMap<String, u64> {
    let mut limits = call_limits(budget);
    run_limits(manifest, &mut limits);
    // Sampling is a grant with a budget: the review shows it as two limits
    // raised from absent (a widening change).
    if let Some(s) = &manifest.sampling {
        limits.insert("sampling.messages".into(), u64::from(s.messages));
        limits.insert("sampling.max_tokens".into(), u64::from(s.max_tokens));
    }
    limits
}

/// Each number of a call's budget, by name.
fn call_limits(b: &CallBudget) -> BTreeMap<String, u64> {
    [
        ("timeout_ms", b.timeout.as_millis() as u64),
        ("memory_bytes", b.memory.as_u64()),
        ("instances", u64::from(b.instances)),
        ("tables", u64::from(b.tables)),
        ("table_elements", u64::from(b.table_elements)),
        ("output_bytes", b.output.as_u64()),
        ("log_bytes", b.log.as_u64()),
        ("host_calls", u64::from(b.host_calls)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// A run tool's runs: each number of their budget, under the tool's name
/// (a tool that becomes a run tool shows as these limits raised).
fn run_limits(manifest: &Manifest, limits: &mut BTreeMap<String, u64>) {
    for (tool, section) in &manifest.tools {
        let Some(run) = section
            .run
            .as_ref()
            .and_then(|r| crate::load::run_budget(r).ok())
        else {
            continue;
        };
        let c = &run.call;
        for (k, v) in [
            ("timeout_ms", c.timeout.as_millis() as u64),
            ("memory_bytes", c.memory.as_u64()),
            ("output_bytes", c.output.as_u64()),
            ("host_calls", u64::from(c.host_calls)),
            ("artifacts", u64::from(run.artifacts)),
            ("artifact_bytes", run.artifact_bytes.as_u64()),
        ] {
            limits.insert(format!("run.{}.{k}", tool.as_str()), v);
        }
    }
}

/// The plugin's resources and resource templates, each with its permission.
fn resources(plugin: &Plugin) -> BTreeMap<String, String> {
    (plugin.resources().iter())
        .map(|r| (r.name.clone(), r.permission.to_string()))
        .chain(
            (plugin.resource_templates().iter())
                .map(|t| (t.name.clone(), t.permission.to_string())),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolhost_review::{Capabilities, What, diff};

    fn spec() -> ToolSpec {
        ToolSpec {
            name: "greet".parse().expect("a tool name"),
            title: None,
            description: "Greets.".into(),
            input_schema: serde_json::json!({"type": "object"}),
            output_schema: None,
            annotations: Default::default(),
            permission: "hello:read".parse().expect("a permission"),
            risk: toolhost_types::Risk::Low,
            mutating: false,
        }
    }

    fn tagged(tags: &[&str]) -> ToolSection {
        let text = format!("permission = \"hello:read\"\ntags = {tags:?}");
        toml::from_str(&text).expect("a tool section")
    }

    fn revision(tags: &[&str]) -> Capabilities {
        let mut c: Capabilities = serde_json::from_value(serde_json::json!({
            "plugin": "hello", "version": "1.0.0", "signer": null, "tools": {},
            "backends": {}, "limits": {}, "high_risk_tags": [], "imports": [], "entity_kinds": [],
        }))
        .expect("capabilities");
        c.tools
            .insert("greet".into(), tool(&spec(), Some(&tagged(tags))));
        c
    }

    #[test]
    fn a_tools_tags_are_texts_the_review_shows_when_they_change() {
        let t = tool(
            &spec(),
            Some(&tagged(&["small-talk", "greeting", "greeting"])),
        );
        assert_eq!(t.texts["tags"], "greeting, small-talk");
        assert!(!tool(&spec(), Some(&tagged(&[]))).texts.contains_key("tags"));
        let changes = diff(
            Some(&revision(&["greeting"])),
            &revision(&["greeting", "admin"]),
        );
        let shown = changes.changes.iter().any(|c| {
            matches!(&c.what, What::Text { subject, field, to, .. }
                if subject == "tool greet" && field == "tags" && to.as_deref() == Some("admin, greeting"))
        });
        assert!(shown, "{changes:?}");
    }
}
