//! What a loaded plugin may do, in the review room's words: the manifest's
//! grants and the component's own facts (its tools as described, its
//! imports), ready to diff against the active revision.

use std::collections::BTreeMap;

use toolhost_limits::CallBudget;
use toolhost_review::{Capabilities, ToolCapabilities};
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
    }
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
