//! Scopes: the first-party vocabulary and space-separated scope strings.
//!
//! `mcp` is the one scope `/mcp` requires: it lets a token reach the tool
//! endpoint, where the policy room decides per tool from live state. A
//! service client's scope set may also name permissions (`hello:read`),
//! which bound what that machine principal can do.

use std::collections::BTreeSet;

/// The scope `/mcp` requires.
pub const MCP: &str = "mcp";

/// The scopes any client may ask for through registration or a metadata
/// document: reviewed, first-party, and granting nothing beyond the user's
/// own live permissions.
pub const FIRST_PARTY: &[&str] = &[MCP];

/// A normalised scope set: no duplicates, in first-seen order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Scopes(Vec<String>);

impl Scopes {
    /// Parses a space-separated scope string (RFC 6749 §3.3). Empty tokens
    /// are ignored; characters outside the RFC's set are refused.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for token in s.split(' ').filter(|t| !t.is_empty()) {
            if !token
                .bytes()
                .all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b))
            {
                return Err(format!("scope {token:?} has characters RFC 6749 forbids"));
            }
            if seen.insert(token.to_owned()) {
                out.push(token.to_owned());
            }
        }
        Ok(Scopes(out))
    }

    /// True if every scope of `self` is in `other`.
    pub fn is_subset_of(&self, other: &Scopes) -> bool {
        self.0.iter().all(|s| other.contains(s))
    }

    /// The scopes of `self` not in `other`.
    pub fn missing_from<'a>(&'a self, other: &Scopes) -> Vec<&'a str> {
        self.0
            .iter()
            .filter(|s| !other.contains(s))
            .map(String::as_str)
            .collect()
    }

    /// True if `scope` is in the set.
    pub fn contains(&self, scope: &str) -> bool {
        self.0.iter().any(|s| s == scope)
    }

    /// True if the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The scopes, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    /// The scopes as owned strings.
    pub fn into_vec(self) -> Vec<String> {
        self.0
    }
}

impl std::fmt::Display for Scopes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing_normalises_and_refuses_bad_characters() {
        let s = Scopes::parse("mcp  hello:read mcp").expect("valid");
        assert_eq!(s.to_string(), "mcp hello:read");
        assert!(Scopes::parse("mcp \"quoted\"").is_err());
        assert!(Scopes::parse("a\\b").is_err());
        assert!(Scopes::parse("").expect("empty is valid").is_empty());
    }

    #[test]
    fn subsets() {
        let all = Scopes::parse("mcp hello:read").expect("valid");
        let one = Scopes::parse("mcp").expect("valid");
        let other = Scopes::parse("mcp admin").expect("valid");
        assert!(one.is_subset_of(&all));
        assert!(!other.is_subset_of(&all));
        assert_eq!(other.missing_from(&all), vec!["admin"]);
    }
}
