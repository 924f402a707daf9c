//! Validated names of tools and plugins.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Why a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Empty or longer than the limit for its kind.
    #[error("{kind} name {value:?} must be 1 to {max} characters long")]
    Length {
        /// What was being named.
        kind: &'static str,
        /// The refused value.
        value: String,
        /// The longest name allowed.
        max: usize,
    },
    /// Contains a character outside the allowed set.
    #[error("{kind} name {value:?} may only contain {allowed}")]
    Character {
        /// What was being named.
        kind: &'static str,
        /// The refused value.
        value: String,
        /// The allowed characters, for the message.
        allowed: &'static str,
    },
}

fn check(
    kind: &'static str,
    value: &str,
    max: usize,
    allowed: &'static str,
    ok: impl Fn(char) -> bool,
) -> Result<(), NameError> {
    if value.is_empty() || value.len() > max {
        return Err(NameError::Length {
            kind,
            value: value.to_owned(),
            max,
        });
    }
    if !value.chars().all(ok) {
        return Err(NameError::Character {
            kind,
            value: value.to_owned(),
            allowed,
        });
    }
    Ok(())
}

macro_rules! name_type {
    ($(#[$doc:meta])* $ty:ident, $kind:literal, $max:expr, $allowed:literal, $ok:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $ty(String);

        impl $ty {
            /// The name as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl FromStr for $ty {
            type Err = NameError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                check($kind, s, $max, $allowed, $ok)?;
                Ok(Self(s.to_owned()))
            }
        }

        impl TryFrom<String> for $ty {
            type Error = NameError;
            fn try_from(s: String) -> Result<Self, Self::Error> {
                check($kind, &s, $max, $allowed, $ok)?;
                Ok(Self(s))
            }
        }

        impl From<$ty> for String {
            fn from(n: $ty) -> String {
                n.0
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.pad(&self.0)
            }
        }
    };
}

name_type!(
    /// An MCP tool name: 1–64 of `[A-Za-z0-9_.-]`, unique across the catalog.
    /// (MCP allows up to 128; 64 keeps names readable in client UIs.)
    ToolName,
    "tool",
    64,
    "ASCII letters, digits, '_', '-' and '.'",
    |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
);

name_type!(
    /// A plugin's name: 1–64 of `[a-z0-9_-]`, used in file names and logs.
    PluginName,
    "plugin",
    64,
    "lowercase ASCII letters, digits, '_' and '-'",
    |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-')
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_accept_the_mcp_character_set() {
        for ok in ["greet", "run_by_tag", "a.b-c", "X9"] {
            assert!(ok.parse::<ToolName>().is_ok(), "{ok}");
        }
    }

    #[test]
    fn tool_names_refuse_empty_long_and_odd_characters() {
        let long = "x".repeat(65);
        for bad in ["", long.as_str(), "has space", "slash/y", "ünï"] {
            assert!(bad.parse::<ToolName>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_error_names_the_refused_value() {
        let err = "no way"
            .parse::<PluginName>()
            .expect_err("space is refused");
        assert!(err.to_string().contains("\"no way\""), "{err}");
    }

    #[test]
    fn plugin_names_are_lowercase() {
        assert!("hello-2".parse::<PluginName>().is_ok());
        assert!("Hello".parse::<PluginName>().is_err());
    }
}
