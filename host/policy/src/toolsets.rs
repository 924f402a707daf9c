//! [`Toolset`]: a named subset of a tenant's tools a client is bound to,
//! and [`Within`]: the toolsets one principal is narrowed to.
//!
//! A toolset only ever narrows. It names tools by name, by plugin or by
//! tag, less exclusions; a principal bound to one sees and calls only the
//! tools in it, and among those only what its permissions allow. A
//! principal is bound by its token's `toolset:NAME` scopes (from its
//! client's registration, the person's choice at consent, or the
//! per-toolset endpoint it reached): bound to several, it sees what is in
//! every one. A toolset named but not defined in the principal's tenant
//! (deleted since, or never there) holds nothing, so a binding fails
//! closed.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// The prefix of a scope binding a token to a toolset: `toolset:NAME`.
pub const TOOLSET_SCOPE: &str = "toolset:";

/// The most names in one of a toolset's lists.
pub const MAX_TOOLSET_ENTRIES: usize = 500;

/// The most toolsets one tenant defines.
pub const MAX_TOOLSETS: usize = 100;

/// The longest toolset name, and the longest entry of its lists.
pub const MAX_TOOLSET_NAME: usize = 64;

/// The longest entry of a toolset's lists (a tool's or plugin's name, a
/// tag).
pub const MAX_TOOLSET_ENTRY: usize = 128;

/// A named subset of a tenant's tools.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Toolset {
    /// Its name, unique in its tenant: 1–64 of `[a-z0-9-]`.
    pub name: String,
    /// Tools in it by name (a host tool is in a toolset only by name).
    #[serde(default)]
    pub tools: BTreeSet<String>,
    /// Every tool of these plugins.
    #[serde(default)]
    pub plugins: BTreeSet<String>,
    /// Every tool tagged with one of these in its manifest.
    #[serde(default)]
    pub tags: BTreeSet<String>,
    /// Tools left out, whatever named them.
    #[serde(default)]
    pub exclude: BTreeSet<String>,
}

/// Why a toolset's definition is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolsetError {
    /// The name is not 1–64 of `[a-z0-9-]`.
    #[error("toolset name {0:?}: 1–64 of [a-z0-9-], starting with a letter or digit")]
    Name(String),
    /// It names nothing.
    #[error("toolset {0:?} names no tool, plugin or tag")]
    Empty(String),
    /// One of its lists is too long.
    #[error("toolset {name:?}: {list} has {len} entries, at most {MAX_TOOLSET_ENTRIES}")]
    TooMany {
        /// The toolset.
        name: String,
        /// Which list.
        list: &'static str,
        /// How many it has.
        len: usize,
    },
    /// An entry is empty, too long or has characters no name has.
    #[error(
        "toolset {name:?}: {list} entry {entry:?} is not a name (1–{MAX_TOOLSET_ENTRY} printable characters, no spaces)"
    )]
    Entry {
        /// The toolset.
        name: String,
        /// Which list.
        list: &'static str,
        /// The entry, cut to the bound.
        entry: String,
    },
}

impl Toolset {
    /// Whether a tool called `name`, of `plugin` (a catalog tool's; `None`
    /// for the host's own) tagged `tags`, is in this toolset.
    pub fn includes(&self, name: &str, plugin: Option<&str>, tags: &[String]) -> bool {
        if self.exclude.contains(name) {
            return false;
        }
        self.tools.contains(name)
            || plugin.is_some_and(|p| self.plugins.contains(p))
            || (plugin.is_some() && tags.iter().any(|t| self.tags.contains(t)))
    }

    /// Checks the definition: a well-formed name, something named, every
    /// list bounded and every entry a plausible name.
    pub fn check(&self) -> Result<(), ToolsetError> {
        if !is_toolset_name(&self.name) {
            return Err(ToolsetError::Name(cut(&self.name)));
        }
        if self.tools.is_empty() && self.plugins.is_empty() && self.tags.is_empty() {
            return Err(ToolsetError::Empty(self.name.clone()));
        }
        let lists = [
            ("tools", &self.tools),
            ("plugins", &self.plugins),
            ("tags", &self.tags),
            ("exclude", &self.exclude),
        ];
        for (list, entries) in lists {
            if entries.len() > MAX_TOOLSET_ENTRIES {
                return Err(ToolsetError::TooMany {
                    name: self.name.clone(),
                    list,
                    len: entries.len(),
                });
            }
            if let Some(bad) = entries.iter().find(|e| !is_entry(e)) {
                return Err(ToolsetError::Entry {
                    name: self.name.clone(),
                    list,
                    entry: cut(bad),
                });
            }
        }
        Ok(())
    }

    /// The scope binding a token to this toolset.
    pub fn scope(&self) -> String {
        format!("{TOOLSET_SCOPE}{}", self.name)
    }
}

/// Whether `name` may name a toolset: 1–64 of `[a-z0-9-]`, starting with
/// a letter or digit.
pub fn is_toolset_name(name: &str) -> bool {
    (1..=MAX_TOOLSET_NAME).contains(&name.len())
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// The toolsets `scopes` bind to, by name, in scope order: each
/// `toolset:NAME` scope's name (well-formed or not: a malformed one binds
/// to a toolset that cannot exist, so to nothing).
pub fn bound_toolsets(scopes: &[String]) -> Vec<String> {
    scopes
        .iter()
        .filter_map(|s| s.strip_prefix(TOOLSET_SCOPE))
        .map(str::to_owned)
        .collect()
}

/// The toolsets one principal is narrowed to: those its scopes named, as
/// its tenant defines them now. A name its tenant does not define holds
/// nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Within {
    named: Vec<String>,
    defined: Vec<Toolset>,
}

impl Within {
    /// Narrowed to the toolsets `named`, of which the tenant defines
    /// `defined` (others among `defined` are ignored).
    pub fn new(named: Vec<String>, defined: Vec<Toolset>) -> Self {
        Within { named, defined }
    }

    /// The toolsets named, in scope order.
    pub fn named(&self) -> &[String] {
        &self.named
    }

    /// Whether the tool is in every toolset named (see
    /// [`Toolset::includes`]).
    pub fn includes(&self, name: &str, plugin: Option<&str>, tags: &[String]) -> bool {
        self.named.iter().all(|n| {
            self.defined
                .iter()
                .any(|t| &t.name == n && t.includes(name, plugin, tags))
        })
    }
}

impl Within {
    /// Whether every toolset named takes plugin `plugin` whole (its
    /// prompts and resources too, even with no tool of it listed).
    pub fn names_plugin(&self, plugin: &str) -> bool {
        self.named.iter().all(|n| {
            self.defined
                .iter()
                .any(|t| &t.name == n && t.plugins.contains(plugin))
        })
    }
}

fn is_entry(entry: &str) -> bool {
    (1..=MAX_TOOLSET_ENTRY).contains(&entry.len())
        && entry.chars().all(|c| !c.is_whitespace() && !c.is_control())
}

/// `s` cut to [`MAX_TOOLSET_ENTRY`] bytes at a character boundary, for an
/// error that must not repeat an unbounded input.
fn cut(s: &str) -> String {
    let mut end = s.len().min(MAX_TOOLSET_ENTRY);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(
        name: &str,
        tools: &[&str],
        plugins: &[&str],
        tags: &[&str],
        exclude: &[&str],
    ) -> Toolset {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect();
        Toolset {
            name: name.into(),
            tools: words(tools),
            plugins: words(plugins),
            tags: words(tags),
            exclude: words(exclude),
        }
    }

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_tool_is_in_by_name_plugin_or_tag_less_exclusions() {
        let crm = set(
            "crm",
            &["greet"],
            &["crm-core"],
            &["sales"],
            &["delete_account"],
        );
        assert!(crm.includes("greet", Some("hello"), &[]));
        assert!(crm.includes("find_account", Some("crm-core"), &[]));
        assert!(crm.includes("open_deal", Some("deals"), &tags(&["sales"])));
        assert!(!crm.includes("delete_account", Some("crm-core"), &tags(&["sales"])));
        assert!(!crm.includes("open_ticket", Some("support"), &tags(&["support"])));
        // The host's own tools are in a toolset by name only.
        assert!(!crm.includes("decide_approval", None, &tags(&["sales"])));
        let approvals = set("a", &["decide_approval"], &[], &[], &[]);
        assert!(approvals.includes("decide_approval", None, &[]));
    }

    #[test]
    fn within_several_a_tool_must_be_in_each_and_an_undefined_one_holds_nothing() {
        let crm = set("crm", &[], &["crm-core"], &[], &[]);
        let reads = set("reads", &["find_account"], &[], &[], &[]);
        let both = Within::new(vec!["crm".into(), "reads".into()], vec![crm.clone(), reads]);
        assert!(both.includes("find_account", Some("crm-core"), &[]));
        assert!(!both.includes("update_account", Some("crm-core"), &[]));
        let gone = Within::new(vec!["crm".into(), "gone".into()], vec![crm]);
        assert!(!gone.includes("find_account", Some("crm-core"), &[]));
        assert!(Within::new(vec![], vec![]).includes("anything", None, &[]));
    }

    #[test]
    fn definitions_are_checked_and_errors_stay_bounded() {
        assert!(set("crm-2", &["greet"], &[], &[], &[]).check().is_ok());
        let named = |n: &str| set(n, &["greet"], &[], &[], &[]).check();
        assert!(matches!(named(""), Err(ToolsetError::Name(_))));
        assert!(matches!(named("-x"), Err(ToolsetError::Name(_))));
        assert!(matches!(named("CRM"), Err(ToolsetError::Name(_))));
        assert!(matches!(named(&"a".repeat(65)), Err(ToolsetError::Name(_))));
        let huge = "x".repeat(4 << 20);
        match named(&huge) {
            Err(ToolsetError::Name(n)) => assert_eq!(n.len(), MAX_TOOLSET_ENTRY),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            set("e", &[], &[], &[], &["x"]).check(),
            Err(ToolsetError::Empty(_))
        ));
        let many: Vec<String> = (0..=MAX_TOOLSET_ENTRIES).map(|i| format!("t{i}")).collect();
        let mut wide = set("w", &[], &[], &[], &[]);
        wide.tools = many.into_iter().collect();
        assert!(matches!(
            wide.check(),
            Err(ToolsetError::TooMany { list: "tools", .. })
        ));
        let spaced = set("s", &["two words"], &[], &[], &[]);
        assert!(matches!(
            spaced.check(),
            Err(ToolsetError::Entry { list: "tools", .. })
        ));
        let long = set("l", &[&huge], &[], &[], &[]);
        match long.check() {
            Err(ToolsetError::Entry { entry, .. }) => assert_eq!(entry.len(), MAX_TOOLSET_ENTRY),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn scopes_name_the_toolsets_they_bind_to() {
        let scopes = tags(&["mcp", "toolset:crm", "hello:read", "toolset:reads"]);
        assert_eq!(bound_toolsets(&scopes), vec!["crm", "reads"]);
        assert_eq!(set("crm", &[], &[], &[], &[]).scope(), "toolset:crm");
    }
}
