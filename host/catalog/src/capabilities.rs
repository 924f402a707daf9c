//! What a loaded plugin may do, in the review room's words: the manifest's
//! grants and the component's own facts (its tools as described, its
//! imports), ready to diff against the active revision.

use toolhost_review::{Capabilities, ToolCapabilities};

use crate::LoadedPlugin;

/// The capabilities of `loaded`, signed by `signer` (`None`: unsigned).
pub fn capabilities(loaded: &LoadedPlugin, signer: Option<String>) -> Capabilities {
    let manifest = &loaded.manifest;
    let tools = loaded
        .plugin
        .tools()
        .iter()
        .map(|spec| {
            let section = manifest.tools.get(&spec.name);
            let tool = ToolCapabilities {
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
            };
            (spec.name.to_string(), tool)
        })
        .collect();
    let b = &loaded.budget;
    let mut limits: std::collections::BTreeMap<String, u64> = [
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
    .collect();
    // A run tool's runs: each number of their budget, under the tool's name
    // (a tool that becomes a run tool shows as these limits raised).
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
    // Sampling is a grant with a budget: the review shows it as two limits
    // raised from absent (a widening change).
    if let Some(s) = &manifest.sampling {
        limits.insert("sampling.messages".into(), u64::from(s.messages));
        limits.insert("sampling.max_tokens".into(), u64::from(s.max_tokens));
    }
    Capabilities {
        plugin: manifest.plugin.name.to_string(),
        version: manifest.plugin.version.clone(),
        signer,
        tools,
        backends: manifest
            .backends
            .iter()
            .map(|(n, b)| (n.clone(), b.purpose.clone()))
            .collect(),
        limits,
        high_risk_tags: manifest.risk.high_when_tagged.iter().cloned().collect(),
        imports: loaded.plugin.imports().iter().cloned().collect(),
        entity_kinds: loaded.plugin.kinds().iter().cloned().collect(),
        prompts: (loaded.plugin.prompts().iter())
            .map(|p| (p.name.clone(), p.permission.to_string()))
            .collect(),
        resources: (loaded.plugin.resources().iter())
            .map(|r| (r.name.clone(), r.permission.to_string()))
            .chain(
                (loaded.plugin.resource_templates().iter())
                    .map(|t| (t.name.clone(), t.permission.to_string())),
            )
            .collect(),
    }
}
