//! The words of a capability diff (a change, its effect, the bump it implies)
//! and the one table that judges each change: [`judge`].
//!
//! The serde shape is a contract (the admin page and tests read it): a
//! change is one flat JSON object, `{"kind": "backend_added", "name": …,
//! "purpose": …, "effect": "widens", "bump": "patch"}`.

use serde::{Deserialize, Serialize};
use toolhost_types::Risk;

use crate::Flag;

/// The capability diff of a proposed revision against the active one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    /// Every change, in a fixed order: tools by name (each tool's changes in
    /// [`What`]'s order, its texts last), then backends, prompts, resources,
    /// limits, risk rules, entity kinds, imports (each by name), the texts
    /// of prompts and resources (by subject, then field), the names taken
    /// from other plugins, the component's digest, then the signer.
    pub changes: Vec<Change>,
    /// The largest bump of the changes; [`Bump::None`] when nothing changed.
    /// A plugin's first revision bumps at least [`Bump::Minor`].
    pub bump: Bump,
}

impl Diff {
    /// Whether any change widens what the plugin may do (a reviewer's red flag).
    ///
    /// A diff that does not widen is narrowing-or-neutral: the only kind a
    /// policy may auto-approve (and only from the same signer).
    pub fn widens(&self) -> bool {
        self.changes.iter().any(|c| c.effect == Effect::Widens)
    }

    /// Whether any change needs a reviewer's look ([`Change::needs_review`]).
    pub fn needs_review(&self) -> bool {
        self.changes.iter().any(|c| c.needs_review)
    }

    /// The names the revision takes over from other plugins:
    /// `(subject, from_plugin)`, in the diff's order.
    pub fn transfers(&self) -> Vec<(&str, &str)> {
        (self.changes.iter())
            .filter_map(|c| match &c.what {
                What::Transfer {
                    subject,
                    from_plugin,
                } => Some((subject.as_str(), from_plugin.as_str())),
                _ => None,
            })
            .collect()
    }

    /// The tools of the active revision that the proposed one drops: removed or renamed (with the new name).
    /// The catalog keeps these listed, deprecated, for one minor cycle.
    ///
    /// Ordered by the dropped tool's name.
    pub fn retired(&self) -> Vec<Retired> {
        let mut out: Vec<Retired> = self
            .changes
            .iter()
            .filter_map(|c| match &c.what {
                What::ToolRemoved { tool } => Some(Retired {
                    tool: tool.clone(),
                    replacement: None,
                }),
                What::ToolRenamed { from, to } => Some(Retired {
                    tool: from.clone(),
                    replacement: Some(to.clone()),
                }),
                _ => None,
            })
            .collect();
        out.sort_by(|a, b| a.tool.cmp(&b.tool));
        out
    }
}

/// A tool the proposed revision drops.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retired {
    /// The active revision's tool.
    pub tool: String,
    /// The tool that replaces it (a declared rename); `None`: removed.
    pub replacement: Option<String>,
}

/// How a revision bumps the catalog's semantic version. Ordered:
/// `None < Patch < Minor < Major`, so a diff's bump is the max of its changes'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bump {
    /// Nothing changed.
    None,
    /// Something changed that callers need not adapt to.
    Patch,
    /// Callers gain something (a tool, an optional input field).
    Minor,
    /// Callers may break (a tool removed or renamed, a breaking schema change).
    Major,
}

/// One change between two revisions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// What changed; flattened, so its `kind` tag and fields sit beside
    /// `effect` and `bump`.
    #[serde(flatten)]
    pub what: What,
    /// Whether it widens what the plugin may do.
    pub effect: Effect,
    /// The bump this change alone implies.
    pub bump: Bump,
    /// Whether a reviewer must look at it before approving: every widening
    /// change, every model-facing text, the component's bytes and every
    /// transfer of a name.
    #[serde(default)]
    pub needs_review: bool,
}

/// Whether a change lets the plugin do more, less, or the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// The plugin may do something it could not: the reviewer must look.
    Widens,
    /// The plugin may do less.
    Narrows,
    /// Neither (a description, a rename, an interface change).
    Neutral,
}

/// How a JSON Schema change affects callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchemaClass {
    /// Some caller that worked may now fail: bumps major.
    Breaking,
    /// Every caller that worked still works: bumps minor.
    Additive,
}

/// What changed. Serialized with a `kind` tag in snake case
/// (`"tool_added"`, `"limit_raised"`, …); the fields named `kind` (an entity
/// kind) serialize as `entity_kind`, since `kind` is the tag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum What {
    /// A tool the active revision does not have (widens, minor).
    ToolAdded {
        /// The new tool.
        tool: String,
    },
    /// A tool the proposed revision drops without a replacement (narrows, major).
    ToolRemoved {
        /// The dropped tool.
        tool: String,
    },
    /// A declared rename (`replaces`): neutral, major. The two tools'
    /// other changes follow under the new name.
    ToolRenamed {
        /// The active revision's name.
        from: String,
        /// The proposed revision's name.
        to: String,
    },
    /// The input schema changed in meaning (neutral; breaking → major, additive → minor).
    InputSchema {
        /// The tool.
        tool: String,
        /// Breaking if any detail is.
        class: SchemaClass,
        /// One line per difference, e.g. "property `name`: added (optional)".
        details: Vec<String>,
    },
    /// The output schema changed in meaning (neutral; breaking → major, additive → minor).
    OutputSchema {
        /// The tool.
        tool: String,
        /// Breaking if any detail is.
        class: SchemaClass,
        /// One line per difference.
        details: Vec<String>,
    },
    /// The permission a caller needs changed: who can see the tool changes
    /// (widens, patch: always a reviewer's look).
    Permission {
        /// The tool.
        tool: String,
        /// The active permission.
        from: String,
        /// The proposed permission.
        to: String,
    },
    /// Whether calls change state (false → true widens, true → false narrows; patch).
    Mutating {
        /// The tool.
        tool: String,
        /// Before.
        from: bool,
        /// After.
        to: bool,
    },
    /// The plugin's typical risk (lowered widens, raised narrows; patch).
    ToolRisk {
        /// The tool.
        tool: String,
        /// Before.
        from: String,
        /// After.
        to: String,
    },
    /// The reviewer's floor (lowered or removed widens, raised or added narrows; patch).
    RiskFloor {
        /// The tool.
        tool: String,
        /// Before; `None`: no floor.
        from: Option<String>,
        /// After; `None`: no floor.
        to: Option<String>,
    },
    /// The tool now resolves this kind (widens, patch).
    ResolvesAdded {
        /// The tool.
        tool: String,
        /// The resolver kind (JSON `entity_kind`: `kind` is the tag).
        #[serde(rename = "entity_kind")]
        kind: String,
    },
    /// The tool no longer resolves this kind (narrows, patch).
    ResolvesRemoved {
        /// The tool.
        tool: String,
        /// The resolver kind (JSON `entity_kind`: `kind` is the tag).
        #[serde(rename = "entity_kind")]
        kind: String,
    },
    /// A declared backend (widens, patch).
    BackendAdded {
        /// The backend's name.
        name: String,
        /// Its declared purpose.
        purpose: String,
    },
    /// A backend no longer declared (narrows, patch).
    BackendRemoved {
        /// The backend's name.
        name: String,
    },
    /// A backend's declared purpose (neutral, patch).
    BackendPurpose {
        /// The backend's name.
        name: String,
        /// Before.
        from: String,
        /// After.
        to: String,
    },
    /// A limit went up, or appeared (widens, patch).
    LimitRaised {
        /// The limit's name, which says its unit.
        name: String,
        /// Before; `None`: absent.
        from: Option<u64>,
        /// After.
        to: Option<u64>,
    },
    /// A limit went down, or disappeared (narrows, patch).
    LimitLowered {
        /// The limit's name, which says its unit.
        name: String,
        /// Before.
        from: Option<u64>,
        /// After; `None`: absent.
        to: Option<u64>,
    },
    /// A tag that makes calls high-risk (narrows, patch).
    RiskRuleAdded {
        /// The tag.
        tag: String,
    },
    /// A tag no longer makes calls high-risk (widens, patch).
    RiskRuleRemoved {
        /// The tag.
        tag: String,
    },
    /// An entity kind the component lists (widens, patch).
    EntityKindAdded {
        /// The kind (JSON `entity_kind`: `kind` is the tag).
        #[serde(rename = "entity_kind")]
        kind: String,
    },
    /// An entity kind no longer listed (narrows, patch).
    EntityKindRemoved {
        /// The kind (JSON `entity_kind`: `kind` is the tag).
        #[serde(rename = "entity_kind")]
        kind: String,
    },
    /// A WIT interface the component imports (widens, patch). An
    /// interface whose version alone moved is [`What::ImportVersion`].
    ImportAdded {
        /// The WIT name, e.g. "wasi:cli/environment@0.2.6".
        name: String,
    },
    /// An import the component no longer has (narrows, patch).
    ImportRemoved {
        /// The WIT name.
        name: String,
    },
    /// An interface imported at another version, e.g. a rebuild against
    /// `toolhost:plugin@0.2.0` (neutral, patch: the host grants the same
    /// interface, with the same rules, at either version).
    ImportVersion {
        /// The interface without its version, e.g. "toolhost:plugin/backend".
        interface: String,
        /// The version the active revision imports.
        from: String,
        /// The version the proposed revision imports.
        to: String,
    },
    /// A prompt the active revision does not export (widens, minor).
    PromptAdded {
        /// Its name.
        prompt: String,
        /// The permission a caller needs.
        permission: String,
    },
    /// A prompt no longer exported (narrows, major).
    PromptRemoved {
        /// Its name.
        prompt: String,
    },
    /// The permission a prompt needs changed (widens, patch: a reviewer's look).
    PromptPermission {
        /// Its name.
        prompt: String,
        /// Before.
        from: String,
        /// After.
        to: String,
    },
    /// A resource or resource template the active revision does not export
    /// (widens, minor).
    ResourceAdded {
        /// Its name.
        resource: String,
        /// The permission a caller needs.
        permission: String,
    },
    /// A resource or template no longer exported (narrows, major).
    ResourceRemoved {
        /// Its name.
        resource: String,
    },
    /// The permission a resource or template needs changed (widens, patch).
    ResourcePermission {
        /// Its name.
        resource: String,
        /// Before.
        from: String,
        /// After.
        to: String,
    },
    /// A string a client's model reads appeared, went or changed: a
    /// description, a title, an annotation, a word inside a schema, a
    /// prompt's argument, a resource's URI or MIME type (neutral, patch;
    /// always needs review: meaning can change with no capability changing).
    Text {
        /// Whose text: `"tool greet"`, `"prompt NAME"`, `"resource NAME"`.
        subject: String,
        /// Which of its texts: `"description"`, `"title"`,
        /// `"annotations idempotentHint"`, `"input /properties/name/description"`, …
        field: String,
        /// Before; `None`: it had none.
        from: Option<String>,
        /// After; `None`: it has none.
        to: Option<String>,
        /// Why the new text reads like an instruction to the model, if it
        /// does (a highlighter's hints, not a verdict).
        flags: Vec<Flag>,
    },
    /// Other component bytes (neutral, patch; always needs review: the
    /// same manifest over other code is a different plugin).
    Component {
        /// The active revision's digest; `None`: none known.
        from: Option<String>,
        /// The proposed revision's digest.
        to: String,
    },
    /// The revision takes over a name another plugin serves: a tool, a
    /// prompt, or a resource's URI (widens, major: a breaking transfer,
    /// approved only explicitly).
    Transfer {
        /// What moves: `"tool greet"`, `"prompt NAME"`, `"resource NAME"`.
        subject: String,
        /// The plugin that serves it now.
        from_plugin: String,
    },
    /// Someone else signs (widens, patch: always red, even to or from unsigned).
    SignerChanged {
        /// Before; `None`: unsigned.
        from: Option<String>,
        /// After; `None`: unsigned.
        to: Option<String>,
    },
}

/// The rules table: each change's effect and bump, from the change alone.
pub(crate) fn judge(what: What) -> Change {
    use Effect::{Narrows, Neutral, Widens};
    let patch = Bump::Patch;
    let (effect, bump) = match &what {
        What::ToolAdded { .. } => (Widens, Bump::Minor),
        What::ToolRemoved { .. } => (Narrows, Bump::Major),
        What::ToolRenamed { .. } => (Neutral, Bump::Major),
        // The schema is the tool's interface, not its authority: what it may
        // do is bounded by its permission, backends and imports, diffed on
        // their own. So a schema change only bumps.
        What::InputSchema { class, .. } | What::OutputSchema { class, .. } => {
            (Neutral, class_bump(*class))
        }
        What::Text { .. } | What::Component { .. } => (Neutral, patch),
        What::Transfer { .. } => (Widens, Bump::Major),
        What::Permission { .. } => (Widens, patch),
        What::Mutating { to, .. } => (if *to { Widens } else { Narrows }, patch),
        What::ToolRisk { from, to, .. } => (risk_effect(Some(from), Some(to)), patch),
        What::RiskFloor { from, to, .. } => (risk_effect(from.as_deref(), to.as_deref()), patch),
        What::ResolvesAdded { .. } => (Widens, patch),
        What::ResolvesRemoved { .. } => (Narrows, patch),
        What::BackendAdded { .. } => (Widens, patch),
        What::BackendRemoved { .. } => (Narrows, patch),
        What::BackendPurpose { .. } => (Neutral, patch),
        What::LimitRaised { .. } => (Widens, patch),
        What::LimitLowered { .. } => (Narrows, patch),
        What::RiskRuleAdded { .. } => (Narrows, patch),
        What::RiskRuleRemoved { .. } => (Widens, patch),
        What::EntityKindAdded { .. } => (Widens, patch),
        What::EntityKindRemoved { .. } => (Narrows, patch),
        What::ImportAdded { .. } => (Widens, patch),
        What::ImportRemoved { .. } => (Narrows, patch),
        What::ImportVersion { .. } => (Neutral, patch),
        What::PromptAdded { .. } => (Widens, Bump::Minor),
        What::PromptRemoved { .. } => (Narrows, Bump::Major),
        What::PromptPermission { .. } => (Widens, patch),
        What::ResourceAdded { .. } => (Widens, Bump::Minor),
        What::ResourceRemoved { .. } => (Narrows, Bump::Major),
        What::ResourcePermission { .. } => (Widens, patch),
        What::SignerChanged { .. } => (Widens, patch),
    };
    Change::new(what, effect, bump)
}

impl Change {
    /// A change judged `effect` and `bump`, marked for review when it
    /// widens, or is a model-facing text, new bytes or a transfer.
    pub(crate) fn new(what: What, effect: Effect, bump: Bump) -> Change {
        let needs_review = effect == Effect::Widens
            || matches!(
                what,
                What::Text { .. } | What::Component { .. } | What::Transfer { .. }
            );
        Change {
            what,
            effect,
            bump,
            needs_review,
        }
    }
}

fn class_bump(class: SchemaClass) -> Bump {
    match class {
        SchemaClass::Breaking => Bump::Major,
        SchemaClass::Additive => Bump::Minor,
    }
}

/// A lower risk level widens, a higher one narrows (`None`: no floor, below
/// "low"). A level this host does not know widens: the reviewer looks.
fn risk_effect(from: Option<&str>, to: Option<&str>) -> Effect {
    match (level(from), level(to)) {
        (Some(a), Some(b)) if b < a => Effect::Widens,
        (Some(a), Some(b)) if b > a => Effect::Narrows,
        (Some(_), Some(_)) => Effect::Neutral,
        _ => Effect::Widens,
    }
}

/// `Some(None)`: no level; `None`: a level this host does not know.
fn level(s: Option<&str>) -> Option<Option<Risk>> {
    match s {
        None => Some(None),
        Some(s) => [Risk::Low, Risk::Medium, Risk::High]
            .into_iter()
            .find(|r| r.to_string() == s)
            .map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> String {
        v.to_owned()
    }

    #[test]
    fn every_kind_of_change_round_trips_through_its_flat_json() {
        let whats = [
            What::ToolRenamed {
                from: s("a"),
                to: s("b"),
            },
            What::InputSchema {
                tool: s("a"),
                class: SchemaClass::Breaking,
                details: vec![s("property `x`: removed")],
            },
            What::Mutating {
                tool: s("a"),
                from: false,
                to: true,
            },
            What::ResolvesAdded {
                tool: s("a"),
                kind: s("project"),
            },
            What::EntityKindRemoved { kind: s("project") },
            What::RiskFloor {
                tool: s("a"),
                from: None,
                to: Some(s("high")),
            },
            What::LimitLowered {
                name: s("timeout_ms"),
                from: Some(9),
                to: None,
            },
            What::SignerChanged {
                from: Some(s("alice")),
                to: None,
            },
        ];
        for what in whats {
            let change = judge(what);
            let json = serde_json::to_value(&change).expect("serializes");
            assert!(json.get("kind").is_some_and(|k| k.is_string()), "{json}");
            let back: Change = serde_json::from_value(json.clone()).expect("reads back");
            assert_eq!(back, change, "{json}");
        }
    }

    #[test]
    fn a_risk_level_this_host_does_not_know_widens() {
        let rows = [
            ("low", "high", Effect::Narrows),
            ("high", "medium", Effect::Widens),
            ("low", "critical", Effect::Widens),
            ("critical", "low", Effect::Widens),
        ];
        for (from, to, want) in rows {
            let what = What::ToolRisk {
                tool: s("t"),
                from: s(from),
                to: s(to),
            };
            assert_eq!(judge(what).effect, want, "{from} → {to}");
        }
    }

    #[test]
    fn retired_lists_removals_and_renames_by_the_dropped_name() {
        let diff = Diff {
            changes: [
                What::ToolRenamed {
                    from: s("zeta"),
                    to: s("alpha"),
                },
                What::ToolRemoved { tool: s("beta") },
                What::ToolAdded { tool: s("gamma") },
            ]
            .into_iter()
            .map(judge)
            .collect(),
            bump: Bump::Major,
        };
        let want = [
            Retired {
                tool: s("beta"),
                replacement: None,
            },
            Retired {
                tool: s("zeta"),
                replacement: Some(s("alpha")),
            },
        ];
        assert_eq!(diff.retired(), want);
    }
}
