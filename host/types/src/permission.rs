//! Permissions `(resource, action)` and risk classes.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A permission `(resource, action)`, written `resource:action`.
///
/// The resource may contain colons (`dataset:lineage:refresh` is resource
/// `dataset:lineage`, action `refresh`); the action may not.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Permission {
    resource: String,
    action: String,
}

/// Why a permission was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "permission {value:?} must be `resource:action` with lowercase letters, digits, '_', '-', '*'"
)]
pub struct PermissionError {
    /// The refused value.
    pub value: String,
}

fn part_ok(part: &str) -> bool {
    !part.is_empty()
        && part.len() <= 64
        && part
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-' | '*'))
}

impl Permission {
    /// A permission from its two parts, validated as `FromStr` does.
    pub fn new(resource: &str, action: &str) -> Result<Self, PermissionError> {
        format!("{resource}:{action}").parse()
    }

    /// The resource, e.g. `scenario`.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The action, e.g. `view`.
    pub fn action(&self) -> &str {
        &self.action
    }
}

impl FromStr for Permission {
    type Err = PermissionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let refuse = || PermissionError {
            value: s.to_owned(),
        };
        let (resource, action) = s.rsplit_once(':').ok_or_else(refuse)?;
        if !part_ok(action) || !resource.split(':').all(part_ok) {
            return Err(refuse());
        }
        Ok(Self {
            resource: resource.to_owned(),
            action: action.to_owned(),
        })
    }
}

impl TryFrom<String> for Permission {
    type Error = PermissionError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Permission> for String {
    fn from(p: Permission) -> String {
        p.to_string()
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&format!("{}:{}", self.resource, self.action))
    }
}

/// How risky an invocation is. Ordered: `Low < Medium < High`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Reads, or writes nobody would need to approve.
    Low,
    /// Writes to non-production targets.
    Medium,
    /// Production targets, publications, policy changes: approval material.
    High,
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_splits_at_the_last_colon() {
        let p: Permission = "dataset:lineage:refresh".parse().expect("valid");
        assert_eq!((p.resource(), p.action()), ("dataset:lineage", "refresh"));
        assert_eq!(p.to_string(), "dataset:lineage:refresh");
    }

    #[test]
    fn permission_refuses_missing_or_empty_parts() {
        for bad in [
            "scenario",
            ":view",
            "scenario:",
            "a::b",
            "Scenario:View",
            "a:b c",
        ] {
            assert!(bad.parse::<Permission>().is_err(), "{bad}");
        }
    }

    #[test]
    fn risk_orders_low_to_high_and_reads_lowercase() {
        assert!(Risk::Low < Risk::Medium && Risk::Medium < Risk::High);
        let r: Risk = serde_json::from_str("\"high\"").expect("valid");
        assert_eq!(r, Risk::High);
    }
}
