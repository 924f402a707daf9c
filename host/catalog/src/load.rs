//! Loading a directory of manifests: every check that can refuse a plugin,
//! in order, each naming the value it refused.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolhost_limits::CallBudget;
use toolhost_runtime::{LoadReport, Payer, Plugin, PromptSpec, Runtime, ToolSpec};
use toolhost_types::{Digest, Permission};

use crate::claims::{Claim, Claims, RESERVED_SCHEMES};
use crate::{Catalog, CatalogError, LoadedPlugin, Manifest};

/// How plugins are loaded.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The budget a call gets when its manifest says nothing.
    pub defaults: CallBudget,
    /// The most a manifest may ask for.
    pub ceiling: CallBudget,
    /// Who a compile is charged to in the runtime's compile queue: the
    /// host, or the tenant whose draft it is.
    pub payer: Payer,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            defaults: CallBudget::DEFAULT,
            ceiling: CallBudget::CEILING,
            payer: Payer::Host,
        }
    }
}

/// The result of loading a directory: the catalog of what loaded, and why
/// each refused plugin was refused.
pub struct Loaded {
    /// The accepted plugins' tools.
    pub catalog: Catalog,
    /// One error per refused plugin.
    pub errors: Vec<CatalogError>,
    /// One report per accepted plugin, in load order.
    pub reports: Vec<(String, LoadReport)>,
}

impl Catalog {
    /// Loads every `*.toml` manifest in `dir` (in file-name order, so the
    /// first of two plugins claiming one name keeps it, every time).
    pub async fn load_dir(dir: &Path, runtime: &Runtime, opts: &LoadOptions) -> Loaded {
        let mut loaded = Loaded {
            catalog: Catalog::default(),
            errors: Vec::new(),
            reports: Vec::new(),
        };
        let paths = match manifests_in(dir) {
            Ok(p) => p,
            Err(source) => {
                loaded.errors.push(CatalogError::Io {
                    path: dir.into(),
                    source,
                });
                return loaded;
            }
        };
        for path in paths {
            let admitted = match load_one(&path, runtime, opts).await {
                Ok((plugin, report)) => {
                    let name = plugin.manifest.plugin.name.to_string();
                    (admit(
                        &mut loaded.catalog,
                        Arc::new(plugin),
                        &BTreeSet::new(),
                        &path,
                    ))
                    .map(|p| (p, name, report))
                }
                Err(e) => Err(e),
            };
            match admitted {
                Ok((plugin, name, report)) => {
                    tracing::info!(plugin = %name, digest = %plugin.plugin.digest().short(),
                        tools = plugin.plugin.tools().len(), cache = ?report.cache, "plugin loaded");
                    loaded.reports.push((name, report));
                }
                Err(e) => {
                    tracing::error!(error = %e, "plugin refused");
                    loaded.errors.push(e);
                }
            }
        }
        loaded
    }
}

fn manifests_in(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "toml") && path.is_file() {
            paths.push(path);
        }
    }
    paths.sort();
    Ok(paths)
}

fn read(path: &Path) -> Result<Vec<u8>, CatalogError> {
    std::fs::read(path).map_err(|source| CatalogError::Io {
        path: path.into(),
        source,
    })
}

async fn load_one(
    path: &Path,
    runtime: &Runtime,
    opts: &LoadOptions,
) -> Result<(LoadedPlugin, LoadReport), CatalogError> {
    let text = String::from_utf8_lossy(&read(path)?).into_owned();
    let manifest = Manifest::parse(&text, path)?;
    let expected = manifest
        .plugin
        .sha256
        .ok_or_else(|| CatalogError::Unpinned { path: path.into() })?;
    let component = path.with_file_name(&manifest.plugin.component);
    let bytes = read(&component)?;
    let actual = Digest::of(&bytes);
    if actual != expected {
        return Err(CatalogError::DigestMismatch {
            path: path.into(),
            component,
            expected,
            actual,
        });
    }
    let mut loaded = check_plugin(manifest, &bytes, path, runtime, opts).await?;
    loaded.0.source = path.display().to_string();
    Ok(loaded)
}

/// Serves `plugin` in `catalog`, all but its `withheld` subjects, unless
/// a plugin of its name is served or another served plugin answers for
/// something it claims: the incumbent keeps its names and this one is
/// refused whole (`path` names it). Returns it, served.
pub(crate) fn admit(
    catalog: &mut Catalog,
    plugin: Arc<LoadedPlugin>,
    withheld: &BTreeSet<String>,
    path: &Path,
) -> Result<Arc<LoadedPlugin>, CatalogError> {
    let name = plugin.manifest.plugin.name.to_string();
    if catalog.has_plugin(&name) {
        return Err(CatalogError::DuplicatePlugin {
            path: path.into(),
            plugin: name,
        });
    }
    let claims = Claims::of_loaded(&plugin).without(withheld);
    if let Some(taken) = catalog.taken(&name, &claims) {
        return Err(CatalogError::NameTaken {
            path: path.into(),
            taken: Box::new(taken),
        });
    }
    catalog.insert(plugin.clone(), withheld);
    Ok(plugin)
}

/// No resource or template of `plugin` is in a scheme the host answers
/// itself (`toolhost:`).
fn check_schemes(plugin: &Plugin, path: &Path) -> Result<(), CatalogError> {
    let uris = (plugin.resources().iter())
        .map(|r| (&r.name, &r.uri))
        .chain((plugin.resource_templates().iter()).map(|t| (&t.name, &t.uri_template)));
    for (name, uri) in uris {
        let claim = Claim::of_uri(uri);
        if let Some(scheme) = claim.scheme().filter(|s| RESERVED_SCHEMES.contains(s)) {
            return Err(CatalogError::ReservedScheme {
                path: path.into(),
                subject: format!("resource {name}"),
                uri: uri.clone(),
                scheme: scheme.to_owned(),
            });
        }
    }
    Ok(())
}

/// The budget of a run tool's runs: the run defaults with its manifest
/// entry's `run` table, within the host's run ceiling.
pub fn run_budget(
    run: &toolhost_limits::RunOverride,
) -> Result<toolhost_limits::RunBudget, toolhost_limits::LimitError> {
    let (defaults, ceiling) = (
        toolhost_limits::RunBudget::DEFAULT,
        toolhost_limits::RunBudget::CEILING,
    );
    defaults.with_override(run, &ceiling)
}

/// Every check of one plugin's component against its manifest: the budget
/// within the ceiling, the component compiled and linked, no resource in
/// the host's own scheme, and exactly the reviewed tools, permissions and
/// resolver kinds described. `path` names the plugin in errors.
pub(crate) async fn check_plugin(
    manifest: Manifest,
    bytes: &[u8],
    path: &Path,
    runtime: &Runtime,
    opts: &LoadOptions,
) -> Result<(LoadedPlugin, LoadReport), CatalogError> {
    let budget = opts
        .defaults
        .with_override(&manifest.limits, &opts.ceiling)
        .map_err(|source| CatalogError::Limit {
            path: path.into(),
            source,
        })?;
    for (tool, section) in &manifest.tools {
        if let Some(run) = &section.run {
            run_budget(run).map_err(|e| CatalogError::Manifest {
                path: path.into(),
                detail: format!("tools.{}.run: {e}", tool.as_str()),
            })?;
        }
    }
    let (plugin, report) = runtime
        .load_within(manifest.plugin.name.clone(), bytes, &budget, &opts.payer)
        .await
        .map_err(|source| CatalogError::Load {
            path: path.into(),
            source,
        })?;
    check_schemes(&plugin, path)?;
    check_reviewed(&manifest, plugin.tools()).map_err(|detail| CatalogError::Mismatch {
        path: path.into(),
        detail,
    })?;
    check_kinds(&manifest, plugin.kinds()).map_err(|detail| CatalogError::Mismatch {
        path: path.into(),
        detail,
    })?;
    check_prompts(&manifest, plugin.prompts()).map_err(|detail| CatalogError::Mismatch {
        path: path.into(),
        detail,
    })?;
    let exported: Vec<(&str, &Permission)> = (plugin.resources().iter())
        .map(|r| (r.name.as_str(), &r.permission))
        .chain((plugin.resource_templates().iter()).map(|t| (t.name.as_str(), &t.permission)))
        .collect();
    check_named("resource", &manifest.resources, &exported).map_err(|detail| {
        CatalogError::Mismatch {
            path: path.into(),
            detail,
        }
    })?;
    Ok((
        LoadedPlugin {
            manifest,
            source: path.display().to_string(),
            revision: None,
            plugin,
            budget,
        },
        report,
    ))
}

/// The component must export exactly the reviewed prompts, with the
/// reviewed permissions, as for tools.
fn check_prompts(manifest: &Manifest, listed: &[PromptSpec]) -> Result<(), String> {
    for p in listed {
        let Some(reviewed) = manifest.prompts.get(&p.name) else {
            return Err(format!(
                "the component exports prompt {:?}, which the manifest does not declare",
                p.name
            ));
        };
        if reviewed.permission != p.permission {
            return Err(format!(
                "prompt {:?}: the component asks for permission {:?}, the manifest declares {:?}",
                p.name,
                p.permission.to_string(),
                reviewed.permission.to_string()
            ));
        }
    }
    if let Some(name) = manifest
        .prompts
        .keys()
        .find(|n| !listed.iter().any(|p| &&p.name == n))
    {
        return Err(format!(
            "the manifest declares prompt {name:?}, which the component does not export"
        ));
    }
    Ok(())
}

/// The component must export exactly the reviewed resources and templates
/// (`what`, by name), with the reviewed permissions.
fn check_named(
    what: &str,
    reviewed: &std::collections::BTreeMap<String, crate::manifest::PromptSection>,
    exported: &[(&str, &Permission)],
) -> Result<(), String> {
    for (name, permission) in exported {
        let Some(section) = reviewed.get(*name) else {
            return Err(format!(
                "the component exports {what} {name:?}, which the manifest does not declare"
            ));
        };
        if section.permission != **permission {
            return Err(format!(
                "{what} {name:?}: the component asks for permission {:?}, the manifest declares {:?}",
                permission.to_string(),
                section.permission.to_string()
            ));
        }
    }
    if let Some(name) = reviewed
        .keys()
        .find(|n| !exported.iter().any(|(e, _)| e == n))
    {
        return Err(format!(
            "the manifest declares {what} {name:?}, which the component does not export"
        ));
    }
    Ok(())
}

/// Every kind a tool resolves or invalidates must be one the component's
/// `entities` export lists.
fn check_kinds(manifest: &Manifest, kinds: &[String]) -> Result<(), String> {
    for (tool, section) in &manifest.tools {
        for kind in section.resolves.iter().chain(&section.invalidates) {
            if !kinds.contains(kind) {
                return Err(format!(
                    "tool {:?} resolves kind {kind:?}, which the component's entities export does not list (it lists {kinds:?})",
                    tool.as_str()
                ));
            }
        }
    }
    Ok(())
}

/// The component must describe exactly the reviewed tools, with the
/// reviewed permissions: a plugin cannot add a tool or weaken a permission
/// without a new review.
fn check_reviewed(manifest: &Manifest, described: &[ToolSpec]) -> Result<(), String> {
    for spec in described {
        let Some(reviewed) = manifest.tools.get(&spec.name) else {
            return Err(format!(
                "the component describes tool {:?}, which the manifest does not declare",
                spec.name.as_str()
            ));
        };
        if reviewed.permission != spec.permission {
            return Err(format!(
                "tool {:?}: the component asks for permission {:?}, the manifest declares {:?}",
                spec.name.as_str(),
                spec.permission.to_string(),
                reviewed.permission.to_string()
            ));
        }
    }
    for name in manifest.tools.keys() {
        if !described.iter().any(|s| &s.name == name) {
            return Err(format!(
                "the manifest declares tool {:?}, which the component does not describe",
                name.as_str()
            ));
        }
    }
    Ok(())
}
