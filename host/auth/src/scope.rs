//! Scopes: the first-party vocabulary and space-separated scope strings.
//!
//! `mcp` is the one scope `/mcp` requires: it lets a token reach the tool
//! endpoint, where the policy room decides per tool from live state. A
//! service client's scope set may also name permissions (`hello:read`),
//! which bound what that machine principal can do.

use std::collections::BTreeSet;

use toolhost_policy::{TOOLSET_SCOPE, is_toolset_name};

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

    /// The toolsets the set binds to: each `toolset:NAME` scope's name.
    pub fn toolsets(&self) -> impl Iterator<Item = &str> {
        self.iter().filter_map(|s| s.strip_prefix(TOOLSET_SCOPE))
    }

    /// `self` with the toolset binding of `bound` added: asking for less
    /// never drops a binding (a refresh, a service's token, a client
    /// registered with one).
    pub fn keeping_toolsets(mut self, bound: &Scopes) -> Scopes {
        for s in bound.iter().filter(|s| is_toolset_scope(s)) {
            if !self.contains(s) {
                self.0.push(s.to_owned());
            }
        }
        self
    }

    /// `self` with the binding to toolset `name` added.
    pub fn with_toolset(mut self, name: &str) -> Scopes {
        let scope = format!("{TOOLSET_SCOPE}{name}");
        if !self.contains(&scope) {
            self.0.push(scope);
        }
        self
    }

    /// What a client registered for `allowed` may be granted when it asks
    /// for `self`: its scopes beyond toolsets must be allowed; a toolset
    /// binding (which only narrows) any client may ask for, unless its
    /// registration binds it, when it may name only those; and the
    /// registration's binding is always kept. `Err` names what is refused.
    pub fn granted_within(self, allowed: &Scopes) -> Result<Scopes, String> {
        let bound = allowed.toolsets().next().is_some();
        let refused: Vec<&str> = (self.iter())
            .filter(|s| match s.strip_prefix(TOOLSET_SCOPE) {
                Some(name) => !is_toolset_name(name) || (bound && !allowed.contains(s)),
                None => !allowed.contains(s),
            })
            .collect();
        if !refused.is_empty() {
            return Err(format!(
                "scope {} is not allowed for this client",
                refused.join(" ")
            ));
        }
        Ok(self.keeping_toolsets(allowed))
    }
}

/// Whether `scope` binds a token to a toolset (`toolset:NAME`): such a
/// scope only narrows what its token reaches, so it is kept whatever its
/// client's registration says.
pub fn is_toolset_scope(scope: &str) -> bool {
    scope.starts_with(TOOLSET_SCOPE)
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
    fn toolset_bindings_are_asked_for_freely_kept_always_and_bound_by_registration() {
        let parse = |s: &str| Scopes::parse(s).expect("valid");
        let open = parse("mcp");
        let asked = parse("mcp toolset:crm")
            .granted_within(&open)
            .expect("narrowing");
        assert_eq!(asked.to_string(), "mcp toolset:crm");
        assert!(parse("mcp toolset:Bad!").granted_within(&open).is_err());
        assert!(parse("mcp admin").granted_within(&open).is_err());
        let bound = parse("mcp toolset:crm");
        let kept = parse("mcp").granted_within(&bound).expect("allowed");
        assert_eq!(kept.to_string(), "mcp toolset:crm");
        let other = parse("mcp toolset:finance").granted_within(&bound);
        assert!(
            other
                .expect_err("bound elsewhere")
                .contains("toolset:finance")
        );
        assert_eq!(parse("mcp").keeping_toolsets(&bound), bound);
        assert_eq!(parse("mcp").with_toolset("crm"), bound);
        assert_eq!(bound.toolsets().collect::<Vec<_>>(), ["crm"]);
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
