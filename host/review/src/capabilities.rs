//! What one plugin revision may do, in this room's own words. The catalog
//! converts its manifest and the loaded component into these; nothing here
//! reads a manifest or a component itself.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// Everything a reviewer compares between two revisions of one plugin: the
/// manifest's grants and the component's own facts.
///
/// The catalog stores it as JSON next to the revision, so its serde shape is
/// the field names as written here. Collections are ordered, so two equal
/// revisions serialize, and diff, the same way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capabilities {
    /// The plugin's name. [`diff`](crate::diff) does not compare it: the
    /// caller pairs two revisions of the same plugin.
    pub plugin: String,
    /// The manifest's `plugin.version`, for people. Not compared either:
    /// whether a version increases is the catalog's rollback check.
    pub version: String,
    /// Who signed it: e.g. "alice (sha256:ab12…)"; None = an unsigned dev revision.
    pub signer: Option<String>,
    /// The tools the component describes, by name.
    pub tools: BTreeMap<String, ToolCapabilities>,
    /// Declared backends: name → purpose.
    pub backends: BTreeMap<String, String>,
    /// The effective budget of a call: limit name → value in the limit's unit, the name says the unit
    /// ("timeout_ms", "memory_bytes", "output_bytes", "log_bytes", "host_calls", ...). A missing name compares as absent.
    pub limits: BTreeMap<String, u64>,
    /// `[risk] high_when_tagged`.
    pub high_risk_tags: BTreeSet<String>,
    /// The component's imports as WIT names, e.g. "wasi:cli/environment@0.2.6", "toolhost:plugin/backend@0.2.0".
    pub imports: BTreeSet<String>,
    /// Entity kinds the component's `entities` export lists (the resolver's kinds).
    pub entity_kinds: BTreeSet<String>,
    /// The prompts the component exports: name → the permission a caller
    /// needs. Revisions stored before prompts have none.
    #[serde(default)]
    pub prompts: BTreeMap<String, String>,
    /// The resources and resource templates the component exports: name →
    /// the permission a caller needs. Revisions stored before them have none.
    #[serde(default)]
    pub resources: BTreeMap<String, String>,
    /// Every other string a client's model reads of the prompts and
    /// resources, by subject (`"prompt NAME"`, `"resource NAME"`), then by
    /// field (`"title"`, `"description"`, `"uri"`, `"mime type"`,
    /// `"argument NAME description"`, …). Revisions stored before these
    /// were kept have none (every text of their successor reads as new).
    #[serde(default)]
    pub texts: BTreeMap<String, BTreeMap<String, String>>,
    /// The URI (or URI template) of each resource and template, by name:
    /// what the revision claims to answer.
    #[serde(default)]
    pub uris: BTreeMap<String, String>,
    /// The component's digest (`sha256:…`): a change of bytes alone is a
    /// change a reviewer sees. `None` in revisions stored before it was kept.
    #[serde(default)]
    pub component: Option<String>,
    /// Names another plugin serves that this revision takes over, declared
    /// in its manifest (`takes_from`): `"tool greet"` → `"hello"`.
    #[serde(default)]
    pub takes: BTreeMap<String, String>,
}

/// One tool of a revision: what the component describes merged with what
/// the manifest grants it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCapabilities {
    /// The permission a caller needs to see and call the tool, e.g. "hello:read".
    pub permission: String,
    /// What the tool does, as the component describes it.
    pub description: String,
    /// JSON Schema of the arguments (what callers send).
    pub input_schema: serde_json::Value,
    /// JSON Schema of the structured answer (what callers read); `None`: the
    /// tool promises no structure.
    pub output_schema: Option<serde_json::Value>,
    /// The plugin's typical risk: "low" | "medium" | "high". A level this
    /// host does not know compares as a widening change.
    pub risk: String,
    /// The manifest's reviewer floor ("low" | "medium" | "high"); `None`: no floor.
    pub risk_floor: Option<String>,
    /// Whether calls change state.
    pub mutating: bool,
    /// The resolver kinds the tool resolves (their snapshots reach the tool).
    pub resolves: BTreeSet<String>,
    /// The manifest's declared rename: this tool replaces the named tool of the previous revision.
    pub replaces: Option<String>,
    /// Every other string a client's model reads of the tool, by field:
    /// `"title"`, the annotations (`"annotations readOnlyHint"`: `"true"`),
    /// and each title, description, default, example and comment inside its
    /// schemas (`"input /properties/name/description"`). Revisions stored
    /// before these were kept have none.
    #[serde(default)]
    pub texts: BTreeMap<String, String>,
}

impl Capabilities {
    /// A revision that may do nothing: what a plugin's first revision is
    /// compared against.
    pub(crate) fn nothing() -> Capabilities {
        Capabilities {
            plugin: String::new(),
            version: String::new(),
            signer: None,
            tools: BTreeMap::new(),
            backends: BTreeMap::new(),
            limits: BTreeMap::new(),
            high_risk_tags: BTreeSet::new(),
            imports: BTreeSet::new(),
            entity_kinds: BTreeSet::new(),
            prompts: BTreeMap::new(),
            resources: BTreeMap::new(),
            texts: BTreeMap::new(),
            uris: BTreeMap::new(),
            component: None,
            takes: BTreeMap::new(),
        }
    }
}
