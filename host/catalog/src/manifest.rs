//! The manifest file: parsed once into typed values, unknown keys refused.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toolhost_limits::{BudgetOverride, RunOverride};
use toolhost_types::{Digest, Permission, PluginName, Risk, ToolName};

/// A plugin manifest (`*.toml` in the plugin directory).
///
/// ```toml
/// [plugin]
/// name = "hello"
/// version = "0.1.0"
/// description = "Greetings."
/// component = "hello.wasm"
/// sha256 = "…64 hex…"
///
/// [limits]
/// timeout = "2s"
///
/// [backends.testbench]
/// purpose = "Projects and test runs."
///
/// [tools.greet]
/// permission = "hello:read"
/// resolves = ["project"]
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Who the plugin is and which component it is.
    pub plugin: PluginSection,
    /// Budget overrides, each up to the host ceiling.
    #[serde(default)]
    pub limits: BudgetOverride,
    /// The backends the plugin may reach through the `backend` import, by
    /// name. The operator's configuration says where each is and holds its
    /// credential; a name the operator did not configure is unreachable.
    #[serde(default)]
    pub backends: BTreeMap<String, BackendSection>,
    /// Rules that raise a call's risk (and so gate it).
    #[serde(default)]
    pub risk: RiskSection,
    /// Every tool the component exports, with the permission a caller needs.
    pub tools: BTreeMap<ToolName, ToolSection>,
    /// `[sampling]`: the plugin may ask the client's model (the `client`
    /// import), within this budget per call. Absent: every sampling
    /// request is refused.
    #[serde(default)]
    pub sampling: Option<SamplingSection>,
    /// `[prompts.<name>]`: every prompt the component's `prompts` export
    /// lists, with the permission a caller needs.
    #[serde(default)]
    pub prompts: BTreeMap<String, PromptSection>,
    /// `[resources.<name>]`: every resource and resource template the
    /// component's `resources` export lists, by name, with the permission
    /// a caller needs (the same shape as a prompt's).
    #[serde(default)]
    pub resources: BTreeMap<String, PromptSection>,
}

/// `[prompts.<name>]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptSection {
    /// The permission a caller needs to list and get the prompt.
    pub permission: Permission,
    /// The plugin that serves this name (or, for a resource, its URI) now,
    /// which this plugin takes it over from: a breaking transfer, shown in
    /// the review and approved only explicitly. Without it, a name another
    /// plugin serves is refused at intake.
    #[serde(default)]
    pub takes_from: Option<PluginName>,
}

/// `[sampling]`: what one call may ask of the client's model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplingSection {
    /// Most messages one call sends, over all its sampling requests (1–64).
    pub messages: u32,
    /// Most tokens one call asks for, summed over its requests' `max-tokens`
    /// (1–100000).
    pub max_tokens: u32,
}

/// `[risk]`: what makes a call of this plugin high-risk beyond the
/// plugin's own classification (which can only be raised, never lowered).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskSection {
    /// A call whose plan names a target carrying any of these tags is
    /// high-risk (`["prod"]`: any production environment).
    #[serde(default)]
    pub high_when_tagged: Vec<String>,
}

/// `[backends.<name>]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackendSection {
    /// What the plugin uses it for, for the reviewer.
    pub purpose: String,
}

/// `[plugin]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginSection {
    /// The plugin's name.
    pub name: PluginName,
    /// The plugin's own version, for people and the audit trail.
    pub version: String,
    /// What the plugin is for.
    #[serde(default)]
    pub description: String,
    /// The component's file name, in the manifest's directory.
    pub component: String,
    /// The component's SHA-256; the plugin is refused if the file differs.
    pub sha256: Option<Digest>,
}

/// `[tools.<name>]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSection {
    /// The permission a caller needs to see and call the tool.
    pub permission: Permission,
    /// The entity kinds the tool resolves names of; the host fetches their
    /// snapshots (once per conversation) before the call. Each must be a
    /// kind the component's `entities` export lists.
    #[serde(default)]
    pub resolves: Vec<String>,
    /// The kinds a successful call changes (a new scenario): their
    /// snapshots are fetched again on the conversation's next call.
    #[serde(default)]
    pub invalidates: Vec<String>,
    /// The reviewer's floor for this tool's risk (`"high"`: every call is
    /// gated); the plugin and the risk rules may raise it further.
    #[serde(default)]
    pub risk: Option<Risk>,
    /// The tool of the previous revision this one renames: the catalog
    /// keeps the old name listed, deprecated, for one minor version, and
    /// the review shows a rename rather than a removal and an addition.
    #[serde(default)]
    pub replaces: Option<ToolName>,
    /// `run = { timeout = "10m", … }`: the tool is an exploration run. A
    /// call queues it durably and answers with the run; a worker on any
    /// replica runs it in the exploration sandbox under this budget.
    #[serde(default)]
    pub run: Option<RunOverride>,
    /// The plugin that serves a tool of this name now, which this plugin
    /// takes it over from: a breaking transfer, shown in the review and
    /// approved only explicitly. Without it, a tool name another plugin
    /// serves is refused at intake.
    #[serde(default)]
    pub takes_from: Option<PluginName>,
    /// Words a search of the catalog finds the tool by (`find_tools`),
    /// beside its name, title, description and arguments: at most 16
    /// ([`MAX_TAGS`]), each 1–32 of `[a-z0-9-]`. Part of the reviewed
    /// definition (a changed tag shows in the review and the digest), since
    /// a model reads them.
    #[serde(default)]
    pub tags: Vec<String>,
}

/// The most tags one tool carries: enough to name its domain, objects and
/// synonyms, few enough that a tag list cannot stuff the search index.
pub const MAX_TAGS: usize = 16;

impl Manifest {
    /// Parses manifest text; `path` only names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, crate::CatalogError> {
        let refuse = |detail: String| crate::CatalogError::Manifest {
            path: path.into(),
            detail,
        };
        let m: Manifest = toml::from_str(text).map_err(|e| refuse(e.message().to_owned()))?;
        let c = &m.plugin.component;
        let plain = !c.is_empty() && !c.contains(['/', '\\']) && c != "." && c != "..";
        if !plain || !c.ends_with(".wasm") {
            return Err(refuse(format!(
                "plugin.component {c:?} must be a .wasm file name in the manifest's directory"
            )));
        }
        if m.tools.is_empty() {
            return Err(refuse("declares no [tools.*]".into()));
        }
        if let Some((tool, old)) = m.tools.iter().find_map(|(t, s)| {
            s.replaces
                .as_ref()
                .filter(|o| m.tools.contains_key(*o))
                .map(|o| (t, o))
        }) {
            return Err(refuse(format!(
                "tools.{}.replaces names {:?}, which this manifest still declares",
                tool.as_str(),
                old.as_str()
            )));
        }
        if let Some((tool, s)) = m.tools.iter().find(|(_, s)| !tags_fit(&s.tags)) {
            return Err(refuse(format!(
                "tools.{}.tags {:?}: at most {MAX_TAGS} tags, each 1–32 of [a-z0-9-]",
                tool.as_str(),
                s.tags
            )));
        }
        if let Some(name) = m.backends.keys().find(|n| !is_name(n)) {
            return Err(refuse(format!(
                "backends.{name:?}: a backend name is 1–64 of [a-z0-9_-]"
            )));
        }
        if let Some(s) = &m.sampling {
            let fits = (1..=64).contains(&s.messages) && (1..=100_000).contains(&s.max_tokens);
            if !fits {
                return Err(refuse(format!(
                    "sampling: messages {} and max_tokens {} must be 1–64 and 1–100000",
                    s.messages, s.max_tokens
                )));
            }
        }
        Ok(m)
    }
}

/// Whether `tags` are few and each a plain word (see [`ToolSection::tags`]).
fn tags_fit(tags: &[String]) -> bool {
    tags.len() <= MAX_TAGS
        && tags.iter().all(|t| {
            (1..=32).contains(&t.len())
                && t.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        })
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

impl Manifest {
    /// The names of the backends this plugin declares.
    pub fn backend_names(&self) -> std::collections::BTreeSet<String> {
        self.backends.keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
        [plugin]
        name = "hello"
        version = "0.1.0"
        component = "hello.wasm"
        sha256 = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        [limits]
        timeout = "2s"
        [tools.greet]
        permission = "hello:read"
    "#;

    #[test]
    fn sampling_is_granted_within_bounds_only() {
        let path = Path::new("m.toml");
        let with = |section: &str| Manifest::parse(&format!("{GOOD}\n{section}"), path);
        let granted = with("[sampling]\nmessages = 4\nmax_tokens = 500").expect("valid");
        assert_eq!(
            granted.sampling,
            Some(SamplingSection {
                messages: 4,
                max_tokens: 500
            })
        );
        assert_eq!(Manifest::parse(GOOD, path).expect("valid").sampling, None);
        for bad in [
            "[sampling]\nmessages = 0\nmax_tokens = 5",
            "[sampling]\nmessages = 65\nmax_tokens = 5",
            "[sampling]\nmessages = 1\nmax_tokens = 0",
            "[sampling]\nmessages = 1",
            "[sampling]\nmessages = 1\nmax_tokens = 5\nmodel = \"x\"",
        ] {
            assert!(with(bad).is_err(), "{bad}");
        }
    }

    fn err(text: &str) -> String {
        Manifest::parse(text, Path::new("m.toml"))
            .expect_err("refused")
            .to_string()
    }

    #[test]
    fn a_good_manifest_parses_into_typed_values() {
        let m = Manifest::parse(GOOD, Path::new("m.toml")).expect("valid");
        assert_eq!(m.plugin.name.as_str(), "hello");
        assert_eq!(m.limits.timeout, Some(std::time::Duration::from_secs(2)));
        let greet: ToolName = "greet".parse().expect("valid");
        assert_eq!(m.tools[&greet].permission.to_string(), "hello:read");
    }

    #[test]
    fn an_unknown_key_is_refused_by_name() {
        let e = err(&GOOD.replace("[limits]", "[limits]\nfuel = 9"));
        assert!(e.contains("m.toml") && e.contains("fuel"), "{e}");
        let e = err(&GOOD.replace("[plugin]", "[plugin]\nnetwork = true"));
        assert!(e.contains("network"), "{e}");
    }

    #[test]
    fn a_component_path_outside_the_directory_is_refused() {
        for bad in ["../x.wasm", "/etc/passwd", "sub/x.wasm", "x.so"] {
            let e = err(&GOOD.replace("hello.wasm", bad));
            assert!(e.contains(bad), "{e}");
        }
    }

    #[test]
    fn backends_and_resolved_kinds_are_read_and_bad_backend_names_refused() {
        let text = GOOD.replace(
            "[tools.greet]\n        permission = \"hello:read\"",
            "[backends.testbench]\npurpose = \"runs\"\n[tools.greet]\npermission = \"hello:read\"\nresolves = [\"project\"]\ninvalidates = [\"scenario\"]",
        );
        let m = Manifest::parse(&text, Path::new("m.toml")).expect("valid");
        assert_eq!(
            m.backend_names().into_iter().collect::<Vec<_>>(),
            ["testbench"]
        );
        let greet: ToolName = "greet".parse().expect("valid");
        assert_eq!(m.tools[&greet].resolves, ["project"]);
        assert_eq!(m.tools[&greet].invalidates, ["scenario"]);
        let e = err(&text.replace("[backends.testbench]", "[backends.\"Test Bench\"]"));
        assert!(e.contains("Test Bench"), "{e}");
        let e = err(&text.replace(
            "purpose = \"runs\"",
            "purpose = \"runs\"\nurl = \"http://x\"",
        ));
        assert!(e.contains("url"), "the manifest never names a host: {e}");
    }

    #[test]
    fn tags_are_read_and_bad_ones_refused_by_value() {
        let with = |tags: &str| {
            GOOD.replace(
                "permission = \"hello:read\"",
                &format!("permission = \"hello:read\"\ntags = {tags}"),
            )
        };
        let m = Manifest::parse(&with(r#"["greeting", "small-talk"]"#), Path::new("m.toml"))
            .expect("valid");
        let greet: ToolName = "greet".parse().expect("valid");
        assert_eq!(m.tools[&greet].tags, ["greeting", "small-talk"]);
        let many = format!("{:?}", (0..17).map(|i| format!("t{i}")).collect::<Vec<_>>());
        for bad in [
            r#"["Greeting"]"#,
            r#"[""]"#,
            r#"["two words"]"#,
            many.as_str(),
        ] {
            let e = err(&with(bad));
            assert!(e.contains("tools.greet.tags"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_bad_digest_or_permission_is_refused_by_value() {
        let e = err(&GOOD.replace("2cf24dba", "zzzz"));
        assert!(e.contains("zzzz"), "{e}");
        let e = err(&GOOD.replace("hello:read", "hello"));
        assert!(e.contains("\"hello\""), "{e}");
    }
}
