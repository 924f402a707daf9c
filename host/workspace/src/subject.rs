//! What a session authors: its [`Subject`], parsed from the one string a
//! caller passes to `create_authoring_session`.
//!
//! - `plugin:NAME`: a new revision of plugin `NAME` (or a first one): the
//!   proposal is a candidate component and manifest, the diff is the
//!   catalog's capability diff, and promotion submits it for review.
//! - `PLUGIN/KIND:OBJECT`: an object of kind `KIND` in plugin `PLUGIN`'s
//!   domain, bound to the entity `OBJECT` names (a name or an id), e.g.
//!   `testbench/test_plan:payments`. The plugin's `authoring` export
//!   validates and diffs; its promoting tool promotes.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use toolhost_types::PluginName;

/// Longest object name a subject carries: a name or an id, never a document.
pub const MAX_OBJECT_CHARS: usize = 200;
/// Longest kind name (the runtime's bound on a plugin's authoring kinds).
const MAX_KIND_CHARS: usize = 64;

/// What a session authors.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Subject {
    /// A revision of a plugin.
    Plugin {
        /// The plugin.
        name: PluginName,
    },
    /// An object in a plugin's domain.
    Domain {
        /// The plugin whose `authoring` export owns the kind.
        plugin: PluginName,
        /// The kind, as the plugin lists it.
        kind: String,
        /// The entity the session is bound to, as the caller named it.
        object: String,
    },
}

impl Subject {
    /// The plugin the subject belongs to.
    pub fn plugin(&self) -> &PluginName {
        match self {
            Subject::Plugin { name } => name,
            Subject::Domain { plugin, .. } => plugin,
        }
    }
}

/// Why a subject did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "subject {subject:?}: {why}; write plugin:NAME for a plugin revision, or PLUGIN/KIND:OBJECT for an object in a plugin's domain"
)]
pub struct SubjectError {
    /// What was passed.
    pub subject: String,
    /// What is wrong with it.
    pub why: String,
}

impl FromStr for Subject {
    type Err = SubjectError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let refuse = |why: String| SubjectError {
            subject: s.chars().take(MAX_OBJECT_CHARS).collect(),
            why,
        };
        let (head, object) = s.split_once(':').ok_or_else(|| refuse("no ':'".into()))?;
        if head == "plugin" {
            let name = object.parse().map_err(|e| refuse(format!("{e}")))?;
            return Ok(Subject::Plugin { name });
        }
        let (plugin, kind) = head
            .split_once('/')
            .ok_or_else(|| refuse("neither plugin: nor PLUGIN/KIND:".into()))?;
        let plugin = plugin.parse().map_err(|e| refuse(format!("{e}")))?;
        let kind_ok = !kind.is_empty()
            && kind.len() <= MAX_KIND_CHARS
            && kind
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !kind_ok {
            return Err(refuse(format!(
                "kind {kind:?} is not 1–{MAX_KIND_CHARS} of [a-z0-9_]"
            )));
        }
        let object = object.trim();
        if object.is_empty()
            || object.chars().count() > MAX_OBJECT_CHARS
            || object.chars().any(char::is_control)
        {
            return Err(refuse(format!(
                "the object must be a name or an id of 1–{MAX_OBJECT_CHARS} printable characters"
            )));
        }
        Ok(Subject::Domain {
            plugin,
            kind: kind.to_owned(),
            object: object.to_owned(),
        })
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Plugin { name } => write!(f, "plugin:{name}"),
            Subject::Domain {
                plugin,
                kind,
                object,
            } => write!(f, "{plugin}/{kind}:{object}"),
        }
    }
}

impl Serialize for Subject {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Subject {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_parse_into_plugins_and_domain_objects_and_print_back() {
        let plugin: Subject = "plugin:hello".parse().expect("parses");
        assert_eq!(plugin.plugin().as_str(), "hello");
        assert!(matches!(plugin, Subject::Plugin { .. }));
        let domain: Subject = "testbench/test_plan: payments ".parse().expect("parses");
        assert_eq!(
            domain,
            Subject::Domain {
                plugin: "testbench".parse().expect("a name"),
                kind: "test_plan".into(),
                object: "payments".into(),
            }
        );
        assert_eq!(domain.to_string(), "testbench/test_plan:payments");
        assert_eq!(plugin.to_string(), "plugin:hello");
    }

    #[test]
    fn malformed_subjects_are_refused_with_the_reason() {
        for (bad, why) in [
            ("hello", "no ':'"),
            ("plugin:", "plugin name"),
            ("plugin:../etc", "plugin name"),
            ("testbench:payments", "neither"),
            ("testbench/Test-Plan:payments", "kind"),
            ("testbench/test_plan:", "object"),
            ("testbench/test_plan:a\nb", "object"),
        ] {
            let e = bad.parse::<Subject>().expect_err(bad);
            assert!(e.to_string().contains(why), "{bad:?}: {e}");
        }
        let long = format!("testbench/test_plan:{}", "x".repeat(MAX_OBJECT_CHARS + 1));
        assert!(long.parse::<Subject>().is_err());
    }
}
