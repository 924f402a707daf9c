//! The index of tools: one name, one plugin, deterministic order; and the
//! catalog's version, which every audit row of a call it served names.

use std::collections::BTreeMap;
use std::sync::Arc;

use toolhost_limits::CallBudget;
use toolhost_runtime::{Plugin, ToolSpec};
use toolhost_types::ToolName;

use crate::Manifest;

/// The version a catalog has before anything was activated.
pub const INITIAL_VERSION: &str = "1.0.0";

/// A plugin the catalog accepted: the reviewed manifest, the loaded
/// component and the budget its calls get.
pub struct LoadedPlugin {
    /// The manifest as reviewed.
    pub manifest: Manifest,
    /// Where it was loaded from (a manifest's path, or `revision <id>`).
    pub source: String,
    /// The stored revision it is, when it came from the store.
    pub revision: Option<String>,
    /// The compiled, pre-instantiated component.
    pub plugin: Plugin,
    /// Defaults with the manifest's overrides applied.
    pub budget: CallBudget,
}

/// A tool a newer revision renamed or removed: still listed and callable
/// until the catalog's next minor version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deprecation {
    /// The tool that replaces it, if it was renamed.
    pub replacement: Option<String>,
    /// The catalog version that stops listing it.
    pub until: String,
}

/// A tool in the catalog.
#[derive(Clone)]
pub struct ToolRef {
    plugin: Arc<LoadedPlugin>,
    index: usize,
    deprecation: Option<Arc<Deprecation>>,
}

impl ToolRef {
    /// The tool as its plugin described it (and the manifest confirmed).
    pub fn spec(&self) -> &ToolSpec {
        &self.plugin.plugin.tools()[self.index]
    }
    /// The plugin that provides it.
    pub fn plugin(&self) -> &LoadedPlugin {
        &self.plugin
    }
    /// [`plugin`](Self::plugin), shared: for what outlives the borrow.
    pub fn shared_plugin(&self) -> &Arc<LoadedPlugin> {
        &self.plugin
    }
    /// Set when a newer revision retired the tool: it goes at `until`.
    pub fn deprecation(&self) -> Option<&Deprecation> {
        self.deprecation.as_deref()
    }
}

/// The tools the host serves, by name, at one catalog version.
#[derive(Clone)]
pub struct Catalog {
    tools: BTreeMap<ToolName, ToolRef>,
    plugins: Vec<Arc<LoadedPlugin>>,
    version: String,
    generation: i64,
}

impl Default for Catalog {
    fn default() -> Self {
        Self {
            tools: BTreeMap::new(),
            plugins: Vec::new(),
            version: INITIAL_VERSION.to_owned(),
            generation: 0,
        }
    }
}

impl Catalog {
    /// An empty catalog at `version` and store `generation`.
    pub fn at(version: &str, generation: i64) -> Self {
        Self {
            version: version.to_owned(),
            generation,
            ..Self::default()
        }
    }

    /// The catalog's semantic version (`MAJOR.MINOR.PATCH`).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The store generation this catalog was built from (0: not from a store).
    pub fn generation(&self) -> i64 {
        self.generation
    }

    /// The tool called `name`.
    pub fn lookup(&self, name: &str) -> Option<&ToolRef> {
        let name: ToolName = name.parse().ok()?;
        self.tools.get(&name)
    }

    /// Every tool, in name order (stable across restarts: cursors rely on it).
    pub fn tools(&self) -> impl Iterator<Item = &ToolRef> {
        self.tools.values()
    }

    /// Every accepted plugin, in load order.
    pub fn plugins(&self) -> impl Iterator<Item = &LoadedPlugin> {
        self.plugins.iter().map(|p| p.as_ref())
    }

    /// Every plugin served, shared.
    pub fn plugins_arc(&self) -> impl Iterator<Item = Arc<LoadedPlugin>> + '_ {
        self.plugins.iter().cloned()
    }

    /// The plugin providing a tool called `name`, if any.
    pub(crate) fn provider(&self, name: &ToolName) -> Option<&str> {
        self.tools
            .get(name)
            .map(|t| t.plugin.manifest.plugin.name.as_str())
    }

    /// Whether a plugin of this name is loaded.
    pub(crate) fn has_plugin(&self, name: &str) -> bool {
        self.plugins
            .iter()
            .any(|p| p.manifest.plugin.name.as_str() == name)
    }

    /// Adds a plugin whose tools the caller checked do not collide.
    pub(crate) fn insert(&mut self, plugin: Arc<LoadedPlugin>) {
        for (index, spec) in plugin.plugin.tools().iter().enumerate() {
            let r = ToolRef {
                plugin: plugin.clone(),
                index,
                deprecation: None,
            };
            self.tools.insert(spec.name.clone(), r);
        }
        self.plugins.push(plugin);
    }

    /// Adds the tools of a replaced revision that are still listed,
    /// deprecated; a name the catalog already serves is skipped.
    pub(crate) fn insert_retired(
        &mut self,
        plugin: Arc<LoadedPlugin>,
        retired: &BTreeMap<String, Deprecation>,
    ) {
        for (index, spec) in plugin.plugin.tools().iter().enumerate() {
            let Some(d) = retired.get(spec.name.as_str()) else {
                continue;
            };
            if self.tools.contains_key(&spec.name) {
                continue;
            }
            let r = ToolRef {
                plugin: plugin.clone(),
                index,
                deprecation: Some(Arc::new(d.clone())),
            };
            self.tools.insert(spec.name.clone(), r);
        }
    }
}
