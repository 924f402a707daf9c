//! The index of tools: one name, one plugin, deterministic order; and the
//! catalog's version, which every audit row of a call it served names.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use toolhost_limits::CallBudget;
use toolhost_runtime::{Plugin, PromptSpec, ResourceSpec, TemplateSpec, ToolSpec};
use toolhost_types::ToolName;

use crate::Manifest;
use crate::claims::{Claims, NameTaken};

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
    definition: toolhost_types::Digest,
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
    /// The digest of its reviewed definition, taken when the catalog was
    /// built ([`definition_digest`](crate::definition_digest)).
    pub fn definition_digest(&self) -> &toolhost_types::Digest {
        &self.definition
    }
}

/// One prompt, resource or template the catalog serves: its plugin and
/// its place in the plugin's list.
#[derive(Clone)]
struct Held {
    plugin: Arc<LoadedPlugin>,
    index: usize,
}

/// The tools, prompts, resources and templates the host serves, each by
/// its name (or URI) from the one plugin that owns it, at one catalog
/// version.
#[derive(Clone)]
pub struct Catalog {
    tools: BTreeMap<ToolName, ToolRef>,
    prompts: BTreeMap<String, Held>,
    resources: BTreeMap<String, Held>,
    templates: BTreeMap<String, Held>,
    plugins: Vec<Arc<LoadedPlugin>>,
    /// What each served plugin answers for, by plugin name.
    claims: Vec<(String, Claims)>,
    version: String,
    generation: i64,
}

impl Default for Catalog {
    fn default() -> Self {
        Self {
            tools: BTreeMap::new(),
            prompts: BTreeMap::new(),
            resources: BTreeMap::new(),
            templates: BTreeMap::new(),
            plugins: Vec::new(),
            claims: Vec::new(),
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

    /// Every prompt served, by name, with its plugin.
    pub fn prompts(&self) -> impl Iterator<Item = (&Arc<LoadedPlugin>, &PromptSpec)> {
        (self.prompts.values()).map(|h| (&h.plugin, &h.plugin.plugin.prompts()[h.index]))
    }

    /// The prompt called `name`, with its plugin.
    pub fn prompt(&self, name: &str) -> Option<(&Arc<LoadedPlugin>, &PromptSpec)> {
        let h = self.prompts.get(name)?;
        Some((&h.plugin, &h.plugin.plugin.prompts()[h.index]))
    }

    /// Every resource at a fixed URI served, by URI, with its plugin.
    pub fn resources(&self) -> impl Iterator<Item = (&Arc<LoadedPlugin>, &ResourceSpec)> {
        (self.resources.values()).map(|h| (&h.plugin, &h.plugin.plugin.resources()[h.index]))
    }

    /// Every resource template served, by template, with its plugin.
    pub fn resource_templates(&self) -> impl Iterator<Item = (&Arc<LoadedPlugin>, &TemplateSpec)> {
        (self.templates.values())
            .map(|h| (&h.plugin, &h.plugin.plugin.resource_templates()[h.index]))
    }

    /// A digest of what a client is served from this catalog: each tool's
    /// name, definition digest and deprecation, and each prompt, resource
    /// and template by name or URI with the revision serving it. Equal for
    /// two catalogs exactly when a client listing both would see the same
    /// (its version aside): what tells a session whether its own catalog
    /// changed, never that another tenant's did.
    pub fn contents_digest(&self) -> toolhost_types::Digest {
        let mut text = String::new();
        for t in self.tools() {
            let d = t.deprecation();
            let gone = d.map(|d| (d.replacement.as_deref(), d.until.as_str()));
            text.push_str(&format!(
                "tool\0{}\0{}\0{gone:?}\n",
                t.spec().name,
                t.definition
            ));
        }
        let served_by = |p: &LoadedPlugin| {
            let revision = p.revision.as_deref().unwrap_or_default();
            format!("{revision}\0{}", p.plugin.digest())
        };
        for (p, spec) in self.prompts() {
            text.push_str(&format!("prompt\0{}\0{}\n", spec.name, served_by(p)));
        }
        for (p, spec) in self.resources() {
            text.push_str(&format!("resource\0{}\0{}\n", spec.uri, served_by(p)));
        }
        for (p, spec) in self.resource_templates() {
            let uri = &spec.uri_template;
            text.push_str(&format!("template\0{uri}\0{}\n", served_by(p)));
        }
        toolhost_types::Digest::of(text.as_bytes())
    }

    /// Whether a plugin of this name is loaded.
    pub(crate) fn has_plugin(&self, name: &str) -> bool {
        self.plugins
            .iter()
            .any(|p| p.manifest.plugin.name.as_str() == name)
    }

    /// The first of `claims` (of `plugin`) another served plugin already
    /// answers for: the incumbent keeps it.
    pub(crate) fn taken(&self, plugin: &str, claims: &Claims) -> Option<NameTaken> {
        self.claims.iter().find_map(|(owner, theirs)| {
            let (subject, claim, owner_subject) = claims.overlap(theirs)?;
            Some(NameTaken {
                plugin: plugin.to_owned(),
                subject: subject.to_owned(),
                claim: claim.to_string(),
                owner: owner.clone(),
                owner_subject: owner_subject.to_owned(),
            })
        })
    }

    /// Adds a plugin whose claims the caller checked do not overlap the
    /// served ones, serving all it exports but the `withheld` subjects
    /// (`"tool greet"`: names another plugin took from it).
    pub(crate) fn insert(&mut self, plugin: Arc<LoadedPlugin>, withheld: &BTreeSet<String>) {
        let kept = |kind: &str, name: &str| !withheld.contains(&format!("{kind} {name}"));
        let p = &plugin.plugin;
        for (index, spec) in p.tools().iter().enumerate() {
            if kept("tool", spec.name.as_str()) {
                let r = ToolRef {
                    definition: crate::definition::of(&plugin, spec, None),
                    plugin: plugin.clone(),
                    index,
                    deprecation: None,
                };
                self.tools.insert(spec.name.clone(), r);
            }
        }
        let held = |index| Held {
            plugin: plugin.clone(),
            index,
        };
        for (index, spec) in p.prompts().iter().enumerate() {
            if kept("prompt", &spec.name) {
                self.prompts.insert(spec.name.clone(), held(index));
            }
        }
        for (index, spec) in p.resources().iter().enumerate() {
            if kept("resource", &spec.name) {
                self.resources.insert(spec.uri.clone(), held(index));
            }
        }
        for (index, spec) in p.resource_templates().iter().enumerate() {
            if kept("resource", &spec.name) {
                self.templates
                    .insert(spec.uri_template.clone(), held(index));
            }
        }
        let claims = Claims::of_loaded(&plugin).without(withheld);
        self.claims
            .push((plugin.manifest.plugin.name.to_string(), claims));
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
                definition: crate::definition::of(&plugin, spec, Some(d)),
                plugin: plugin.clone(),
                index,
                deprecation: Some(Arc::new(d.clone())),
            };
            self.tools.insert(spec.name.clone(), r);
        }
    }
}
