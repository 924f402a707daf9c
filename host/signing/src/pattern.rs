//! Plugin name patterns: which plugin names a trusted signer may sign.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use toolhost_types::PluginName;

use crate::SigningError;

/// A plugin name pattern a signer is pinned to: an exact plugin name
/// (`hello`) or a name prefix ending in `*` (`acme-*`, which matches
/// `acme-` followed by anything, including nothing). The part before `*`
/// must itself be a valid plugin name, so a bare `*` (every plugin) is
/// refused: pinning a signer to everything should not be one keystroke.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct PluginPattern(String);

impl PluginPattern {
    /// True if `plugin` is the pinned name, or starts with the pinned prefix.
    pub fn matches(&self, plugin: &str) -> bool {
        match self.0.strip_suffix('*') {
            Some(prefix) => plugin.starts_with(prefix),
            None => plugin == self.0,
        }
    }

    /// The pattern as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for PluginPattern {
    type Err = SigningError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let name = s.strip_suffix('*').unwrap_or(s);
        match name.parse::<PluginName>() {
            Ok(_) => Ok(Self(s.to_owned())),
            Err(reason) => Err(SigningError::Pattern {
                value: s.to_owned(),
                reason,
            }),
        }
    }
}

impl TryFrom<String> for PluginPattern {
    type Error = SigningError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<PluginPattern> for String {
    fn from(p: PluginPattern) -> String {
        p.0
    }
}

impl fmt::Display for PluginPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_patterns_match_names_or_prefixes() {
        let cases = [
            ("hello", "hello", true),
            ("hello", "hello-2", false),
            ("hello", "hell", false),
            ("acme-*", "acme-x", true),
            ("acme-*", "acme-", true),
            ("acme-*", "acmex", false),
            ("acme-*", "xacme-y", false),
        ];
        for (pattern, plugin, matches) in cases {
            let p: PluginPattern = pattern.parse().expect("valid pattern");
            assert_eq!(p.matches(plugin), matches, "{pattern} vs {plugin}");
            assert_eq!(p.to_string(), pattern);
        }
    }

    #[test]
    fn plugin_patterns_refuse_what_is_not_a_name_or_a_prefix() {
        let long = "a".repeat(65);
        for bad in [
            "",
            "*",
            "**",
            "Acme-*",
            "ac*me",
            "*acme",
            "a b",
            long.as_str(),
        ] {
            let err = bad.parse::<PluginPattern>().expect_err("refused");
            assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
        }
    }

    #[test]
    fn plugin_patterns_are_strings_in_serde() {
        let p: PluginPattern = serde_json::from_str(r#""acme-*""#).expect("valid");
        assert_eq!(
            serde_json::to_string(&p).expect("serialises"),
            r#""acme-*""#
        );
        assert!(serde_json::from_str::<PluginPattern>(r#""ACME""#).is_err());
    }
}
