//! The index of tools: one name, one plugin, deterministic order.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use toolhost_limits::CallBudget;
use toolhost_runtime::{Plugin, ToolSpec};
use toolhost_types::ToolName;

use crate::Manifest;

/// A plugin the catalog accepted: the reviewed manifest, the loaded
/// component and the budget its calls get.
pub struct LoadedPlugin {
    /// The manifest as reviewed.
    pub manifest: Manifest,
    /// Where it was loaded from.
    pub path: PathBuf,
    /// The compiled, pre-instantiated component.
    pub plugin: Plugin,
    /// Defaults with the manifest's overrides applied.
    pub budget: CallBudget,
}

/// A tool in the catalog.
#[derive(Clone)]
pub struct ToolRef {
    plugin: Arc<LoadedPlugin>,
    index: usize,
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
}

/// The tools the host serves, by name.
#[derive(Default, Clone)]
pub struct Catalog {
    tools: BTreeMap<ToolName, ToolRef>,
    plugins: Vec<Arc<LoadedPlugin>>,
}

impl Catalog {
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
    pub(crate) fn insert(&mut self, plugin: LoadedPlugin) {
        let plugin = Arc::new(plugin);
        for (index, spec) in plugin.plugin.tools().iter().enumerate() {
            let r = ToolRef {
                plugin: plugin.clone(),
                index,
            };
            self.tools.insert(spec.name.clone(), r);
        }
        self.plugins.push(plugin);
    }
}
