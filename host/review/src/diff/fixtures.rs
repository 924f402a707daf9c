//! The revisions the diff tests start from, and the table runner.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use crate::{Bump, Capabilities, Change, Effect, ToolCapabilities, What, diff};

pub(crate) fn s(v: &str) -> String {
    v.to_owned()
}

pub(crate) fn set<const N: usize>(names: [&str; N]) -> BTreeSet<String> {
    names.into_iter().map(s).collect()
}

pub(crate) fn a_tool() -> ToolCapabilities {
    ToolCapabilities {
        permission: s("hello:read"),
        description: s("Greets someone."),
        input_schema: json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        output_schema: Some(
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        ),
        risk: s("low"),
        risk_floor: None,
        mutating: false,
        resolves: set(["project"]),
        replaces: None,
        texts: BTreeMap::new(),
    }
}

/// The active revision most rows start from.
pub(crate) fn hello() -> Capabilities {
    Capabilities {
        plugin: s("hello"),
        version: s("0.1.0"),
        signer: Some(s("alice (sha256:ab12)")),
        tools: BTreeMap::from([(s("greet"), a_tool())]),
        backends: BTreeMap::from([(s("testbench"), s("Projects and test runs."))]),
        limits: BTreeMap::from([(s("memory_bytes"), 67_108_864), (s("timeout_ms"), 2_000)]),
        high_risk_tags: set(["prod"]),
        imports: set(["toolhost:plugin/backend@0.1.0", "toolhost:plugin/log@0.1.0"]),
        entity_kinds: set(["project"]),
        prompts: BTreeMap::from([(s("review_plan"), s("hello:read"))]),
        resources: BTreeMap::new(),
        texts: BTreeMap::new(),
        uris: BTreeMap::new(),
        component: None,
        takes: BTreeMap::new(),
    }
}

pub(crate) fn change(what: What, effect: Effect, bump: Bump) -> Change {
    Change::new(what, effect, bump)
}

/// Adds tool `wave`, which names `replaced` as the tool it replaces.
pub(crate) fn add_wave_replacing(c: &mut Capabilities, replaced: &str) {
    let mut t = a_tool();
    t.replaces = Some(s(replaced));
    c.tools.insert(s("wave"), t);
}

/// The changes of adding tool `wave`: the tool, then its description.
pub(crate) fn wave_added() -> Vec<Change> {
    vec![
        change(
            What::ToolAdded { tool: s("wave") },
            Effect::Widens,
            Bump::Minor,
        ),
        text("tool wave", "description", None, Some("Greets someone.")),
    ]
}

/// The change of one text of `subject` (no flags).
pub(crate) fn text(subject: &str, field: &str, from: Option<&str>, to: Option<&str>) -> Change {
    change(
        What::Text {
            subject: s(subject),
            field: s(field),
            from: from.map(s),
            to: to.map(s),
            flags: Vec::new(),
        },
        Effect::Neutral,
        Bump::Patch,
    )
}

/// The one change of moving tool greet's risk floor `from` → `to`.
pub(crate) fn risk_floor(from: Option<String>, to: Option<String>, effect: Effect) -> Vec<Change> {
    vec![change(
        What::RiskFloor {
            tool: "greet".into(),
            from,
            to,
        },
        effect,
        Bump::Patch,
    )]
}

pub(crate) fn greet_mut(c: &mut Capabilities) -> &mut ToolCapabilities {
    c.tools.get_mut("greet").expect("the fixture has greet")
}

pub(crate) fn keep(_: &mut Capabilities) {}

pub(crate) type Edit = fn(&mut Capabilities);

/// (sentence, edit of the active revision, edit of the proposed one, the changes, the diff's bump)
pub(crate) type Row = (&'static str, Edit, Edit, Vec<Change>, Bump);

/// Runs each row: the proposed revision is the edited active one with the
/// proposed edit on top, so a row says only what differs.
pub(crate) fn check(rows: Vec<Row>) {
    for (sentence, edit_active, edit_proposed, want, bump) in rows {
        let (mut active, mut proposed) = (hello(), hello());
        edit_active(&mut active);
        edit_active(&mut proposed);
        edit_proposed(&mut proposed);
        let got = diff(Some(&active), &proposed);
        assert_eq!(got.changes, want, "{sentence}");
        assert_eq!(got.bump, bump, "{sentence}: the bump");
    }
}
