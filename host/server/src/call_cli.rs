//! The tool author's commands that need no server: `toolhost call` runs one
//! tool in the sandbox, resolving names over entity snapshots from a
//! fixture file or from the plugin's own `entities` export against a
//! backend; `toolhost plugin inspect` shows what a component imports and
//! exports and the tools, entity kinds and authoring kinds it declares.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_backend::Backends;
use toolhost_catalog::{Catalog, LoadOptions, LoadedPlugin};
use toolhost_resolver::{Entity, Parent};
use toolhost_runtime::{BackendGrant, CallContext, Reply, Runtime, RuntimeConfig, Snapshots};
use toolhost_types::PluginName;

/// The exit code of a call answered with a question instead of a result.
const NEEDS_CLARIFICATION: u8 = 2;

/// What `toolhost call` runs, and over what.
#[derive(clap::Args)]
pub(crate) struct CallArgs {
    /// The plugin directory (pinned manifests and their components).
    #[arg(long, env = "TOOLHOST_PLUGINS")]
    plugins: PathBuf,
    /// Where precompiled components are cached.
    #[arg(long, env = "TOOLHOST_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
    /// The tool's name.
    tool: String,
    /// Its arguments, a JSON object.
    #[arg(default_value = "{}")]
    arguments: String,
    /// The tenant passed to the plugin.
    #[arg(long, default_value = "local")]
    tenant: String,
    /// The principal passed to the plugin.
    #[arg(long, default_value = "cli")]
    principal: String,
    /// Entity snapshots to resolve names over, a JSON file:
    /// `{"project": [{"id": 1, "name": "payments"}, …], …}` (each row may
    /// add `tenant`, default --tenant, `parents` and `detail`). Without it,
    /// the kinds the tool resolves are listed by the plugin's `entities`
    /// export against --backend.
    #[arg(long, value_name = "FILE")]
    entities: Option<PathBuf>,
    /// A backend the plugin may reach, `NAME=URL` (repeatable).
    #[arg(long = "backend", value_name = "NAME=URL")]
    backends: Vec<String>,
    /// The file holding a backend's bearer token, `NAME=PATH` (repeatable).
    #[arg(long = "backend-token-file", value_name = "NAME=PATH")]
    backend_token_files: Vec<String>,
}

/// One row of an entities fixture.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FixtureEntity {
    id: i64,
    name: String,
    #[serde(default)]
    tenant: Option<String>,
    #[serde(default)]
    parents: Vec<FixtureParent>,
    #[serde(default)]
    detail: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FixtureParent {
    kind: String,
    id: i64,
}

/// `toolhost call`: prints the tool's structured answer (exit 0), or the
/// question it asked as `{"needs_clarification": …}` (exit 2), or the
/// error's code and message (exit 1).
pub(crate) async fn call(args: CallArgs) -> anyhow::Result<ExitCode> {
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: args.cache_dir.clone(),
        ..RuntimeConfig::default()
    })?;
    let loaded = Catalog::load_dir(&args.plugins, &runtime, &LoadOptions::default()).await;
    let entry = loaded
        .catalog
        .lookup(&args.tool)
        .with_context(|| format!("no tool {:?} in {}", args.tool, args.plugins.display()))?;
    let plugin = entry.plugin();
    let backends = Backends::new(crate::config::backends(
        BTreeMap::new(),
        &args.backends,
        &args.backend_token_files,
        &crate::config::BackendMarks::default(),
    )?)
    .context("configuring backends")?;
    let grant = (!plugin.manifest.backends.is_empty()).then(|| BackendGrant {
        backends: backends.clone(),
        declared: Arc::new(plugin.manifest.backend_names()),
    });
    let resolves = plugin
        .manifest
        .tools
        .get(&entry.spec().name)
        .map(|s| s.resolves.clone())
        .unwrap_or_default();
    let snapshots = match &args.entities {
        Some(path) => from_fixture(path, &resolves, &args.tenant)?,
        None => from_plugin(&runtime, plugin, &resolves, &args, grant.clone()).await?,
    };
    let ctx = CallContext::new(&args.tenant, &args.principal)
        .with_snapshots(Arc::new(snapshots))
        .with_backends(grant);
    match runtime
        .call(
            &plugin.plugin,
            &ctx,
            &args.tool,
            &args.arguments,
            &plugin.budget,
        )
        .await
    {
        Ok(Reply::Output(out)) => {
            println!("{}", serde_json::to_string_pretty(&out.structured)?);
            // The answer's content blocks, one line each, beside the JSON.
            for block in &out.content {
                eprintln!("content: {}", content_line(block));
            }
            Ok(ExitCode::SUCCESS)
        }
        Ok(Reply::Clarify(c)) => {
            let question = json!({"needs_clarification": toolhost_mcp::clarification_json(&c)});
            println!("{}", serde_json::to_string_pretty(&question)?);
            eprintln!("NEEDS_CLARIFICATION: {}", c.ask_user);
            Ok(ExitCode::from(NEEDS_CLARIFICATION))
        }
        // No client is linked here: a plugin's ask is `unsupported`.
        Ok(Reply::NeedsInput(_)) => {
            eprintln!("INPUT_REQUIRED: the call asked for a client's input");
            Ok(ExitCode::FAILURE)
        }
        Err(e) => {
            eprintln!("{}: {e}", e.code());
            Ok(ExitCode::FAILURE)
        }
    }
}

/// The snapshots of `kinds` from the fixture at `path`; a kind the tool
/// resolves that the file does not list is an error (a typo would
/// otherwise look like an empty catalog).
fn from_fixture(path: &Path, kinds: &[String], tenant: &str) -> anyhow::Result<Snapshots> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the entities fixture {}", path.display()))?;
    let fixture: BTreeMap<String, Vec<FixtureEntity>> = serde_json::from_str(&text)
        .with_context(|| format!("{}: not an entities fixture", path.display()))?;
    let mut snapshots = Snapshots::new();
    for kind in kinds {
        let rows = fixture.get(kind).with_context(|| {
            format!(
                "{}: the tool resolves {kind:?}, which the file does not list",
                path.display()
            )
        })?;
        let rows: Vec<Entity> = rows
            .iter()
            .map(|r| Entity {
                id: r.id,
                name: r.name.clone(),
                tenant: r.tenant.clone().unwrap_or_else(|| tenant.to_owned()),
                parents: r
                    .parents
                    .iter()
                    .map(|p| Parent {
                        kind: p.kind.clone(),
                        id: p.id,
                    })
                    .collect(),
                detail: r.detail.clone(),
            })
            .collect();
        snapshots.insert(kind.clone(), rows.into());
    }
    Ok(snapshots)
}

/// The snapshots of `kinds` as the plugin's `entities` export lists them
/// (against the backends given), with the tenancy floor the host applies:
/// rows of another tenant are dropped.
async fn from_plugin(
    runtime: &Runtime,
    plugin: &LoadedPlugin,
    kinds: &[String],
    args: &CallArgs,
    grant: Option<BackendGrant>,
) -> anyhow::Result<Snapshots> {
    let mut snapshots = Snapshots::new();
    for kind in kinds {
        let ctx = CallContext::new(&args.tenant, &args.principal).with_backends(grant.clone());
        let rows = runtime
            .snapshot(&plugin.plugin, &ctx, kind, &plugin.budget)
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "listing {kind:?} entities: {}: {e} (pass --backend, or a fixture with --entities)",
                    e.code()
                )
            })?;
        let rows: Vec<Entity> = rows
            .into_iter()
            .filter(|e| e.tenant == args.tenant)
            .collect();
        snapshots.insert(kind.clone(), rows.into());
    }
    Ok(snapshots)
}

/// `toolhost plugin inspect COMPONENT`: what the component is, as JSON.
pub(crate) async fn inspect(
    component: &Path,
    cache_dir: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let bytes =
        std::fs::read(component).with_context(|| format!("reading {}", component.display()))?;
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir,
        ..RuntimeConfig::default()
    })?;
    let stem = component
        .file_stem()
        .map(|s| s.to_string_lossy().replace('_', "-"))
        .unwrap_or_default();
    let name: PluginName = stem
        .parse()
        .or_else(|_| "inspected".parse())
        .context("a plugin name")?;
    let (plugin, _) = runtime
        .load(name, &bytes)
        .await
        .with_context(|| format!("loading {}", component.display()))?;
    let tools: Vec<Value> = plugin
        .tools()
        .iter()
        .map(|t| {
            json!({
                "name": t.name.as_str(),
                "title": t.title,
                "description": t.description,
                "permission": t.permission.to_string(),
                "risk": t.risk,
                "mutating": t.mutating,
                "input_schema": t.input_schema,
                "output_schema": t.output_schema,
            })
        })
        .collect();
    let shown = json!({
        "component": component.display().to_string(),
        "sha256": plugin.digest().to_string(),
        "size": bytes.len(),
        "imports": plugin.imports(),
        "exports": plugin.exports(),
        "tools": tools,
        "entity_kinds": plugin.kinds(),
        "authoring_kinds": plugin.authoring_kinds(),
    });
    println!("{}", serde_json::to_string_pretty(&shown)?);
    Ok(ExitCode::SUCCESS)
}

/// Loads the plugin `manifest` pins (checked as the catalog checks it) with
/// the compile cache at `cache_dir`, so its native code is there before
/// any host starts.
pub(crate) async fn prewarm(manifest: &Path, cache_dir: PathBuf) -> anyhow::Result<()> {
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(cache_dir),
        ..RuntimeConfig::default()
    })?;
    let dir = manifest.parent().unwrap_or(Path::new("."));
    let loaded = Catalog::load_dir(dir, &runtime, &LoadOptions::default()).await;
    // Only this plugin's refusal matters here; others in the directory
    // are theirs to fix.
    let ours = manifest.display().to_string();
    if let Some(e) = loaded.errors.iter().find(|e| e.to_string().contains(&ours)) {
        anyhow::bail!("{e}");
    }
    for (plugin, report) in &loaded.reports {
        eprintln!("{plugin}: {:?} in {:?}", report.cache, report.compile);
    }
    Ok(())
}

/// One content block as `toolhost call` shows it: its kind, MIME type,
/// size or URI.
fn content_line(block: &toolhost_runtime::ContentBlock) -> String {
    use toolhost_runtime::ContentBlock as B;
    match block {
        B::Text { text } => format!("text ({} bytes)", text.len()),
        B::Image { mime_type, data } => format!("image ({mime_type}, {} bytes)", data.len()),
        B::Audio { mime_type, data } => format!("audio ({mime_type}, {} bytes)", data.len()),
        B::ResourceLink(l) => format!("resource link {} ({})", l.uri, l.name),
        B::Resource { uri, body, .. } => {
            format!("resource {uri} ({} bytes)", body.bytes().len())
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn content_blocks_are_shown_one_line_each() {
        use toolhost_runtime::ContentBlock as B;
        let image = B::Image {
            mime_type: "image/png".into(),
            data: vec![0; 69],
        };
        assert_eq!(super::content_line(&image), "image (image/png, 69 bytes)");
        let text = B::Text { text: "hi".into() };
        assert_eq!(super::content_line(&text), "text (2 bytes)");
    }
}
