//! [`Audience`]: the tenants an approved revision is served to, and
//! [`Pin`]: a tenant held to one revision of a plugin while the catalog
//! moves on for the others.

use std::collections::BTreeSet;
use std::fmt;

/// Most tenants one revision names: a longer list is a typing accident
/// or an attempt to grow the row, and an operator serving that many
/// tenants serves every tenant.
pub const MAX_AUDIENCE: usize = 64;

/// Longest tenant id an audience or a pin names.
pub const MAX_TENANT_LEN: usize = 128;

/// Who an active revision is served to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Audience {
    /// Every tenant of the host.
    #[default]
    Everyone,
    /// These tenants only: the others never learn the revision exists.
    Tenants(BTreeSet<String>),
}

/// Why an audience or a pin cannot be stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AudienceError {
    /// An empty list names nobody: serve it to nobody by not approving it.
    #[error("an audience names at least one tenant (leave it out to serve every tenant)")]
    Empty,
    /// Too many tenants.
    #[error("an audience names at most {MAX_AUDIENCE} tenants, not {0}")]
    TooMany(usize),
    /// A tenant id that cannot be one.
    #[error("{0:?} is not a tenant id")]
    BadTenant(String),
    /// A stored audience that does not read back.
    #[error("stored audience {0:?} does not parse")]
    Corrupt(String),
}

/// Whether `tenant` is shaped like a tenant id: 1 to [`MAX_TENANT_LEN`]
/// bytes, no control characters or spaces.
pub fn valid_tenant(tenant: &str) -> Result<(), AudienceError> {
    let bad = tenant.is_empty()
        || tenant.len() > MAX_TENANT_LEN
        || tenant.chars().any(|c| c.is_control() || c.is_whitespace());
    if bad {
        let shown: String = tenant.chars().take(MAX_TENANT_LEN).collect();
        return Err(AudienceError::BadTenant(shown));
    }
    Ok(())
}

impl Audience {
    /// The tenants named, checked; none at all: every tenant.
    pub fn of<I, S>(tenants: I) -> Result<Self, AudienceError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let named: Vec<String> = tenants.into_iter().map(Into::into).collect();
        if named.is_empty() {
            return Ok(Audience::Everyone);
        }
        if named.len() > MAX_AUDIENCE {
            return Err(AudienceError::TooMany(named.len()));
        }
        for t in &named {
            valid_tenant(t)?;
        }
        Ok(Audience::Tenants(named.into_iter().collect()))
    }

    /// Whether `tenant` is served.
    pub fn includes(&self, tenant: &str) -> bool {
        match self {
            Audience::Everyone => true,
            Audience::Tenants(t) => t.contains(tenant),
        }
    }

    /// The tenants named, if only some are served.
    pub fn tenants(&self) -> Option<&BTreeSet<String>> {
        match self {
            Audience::Everyone => None,
            Audience::Tenants(t) => Some(t),
        }
    }

    /// As stored: `None` for every tenant, else a JSON array.
    pub fn stored(&self) -> Option<String> {
        self.tenants()
            .map(|t| serde_json::to_string(t).expect("a set of strings always serializes"))
    }

    /// From its stored form.
    pub fn from_stored(text: Option<&str>) -> Result<Self, AudienceError> {
        let Some(text) = text else {
            return Ok(Audience::Everyone);
        };
        let tenants: Vec<String> =
            serde_json::from_str(text).map_err(|_| AudienceError::Corrupt(text.to_owned()))?;
        match Audience::of(tenants) {
            Ok(Audience::Tenants(t)) => Ok(Audience::Tenants(t)),
            _ => Err(AudienceError::Corrupt(text.to_owned())),
        }
    }
}

impl fmt::Display for Audience {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Audience::Everyone => f.write_str("every tenant"),
            Audience::Tenants(t) => {
                let names: Vec<&str> = t.iter().map(String::as_str).collect();
                write!(f, "{}", names.join(", "))
            }
        }
    }
}

/// A tenant held to one revision of a plugin: it is served that revision
/// (while its signature verifies) whatever the plugin's active revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// The tenant.
    pub tenant: String,
    /// The plugin.
    pub plugin: String,
    /// The revision it is served.
    pub revision: String,
    /// Who pinned it.
    pub pinned_by: String,
    /// When, unix milliseconds.
    pub pinned_at_ms: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_tenants_is_everyone_and_stores_as_null() {
        let a = Audience::of(Vec::<String>::new()).expect("valid");
        assert_eq!(a, Audience::Everyone);
        assert_eq!(a.stored(), None);
        assert!(a.includes("anyone"));
        assert_eq!(Audience::from_stored(None), Ok(Audience::Everyone));
    }

    #[test]
    fn named_tenants_round_trip_and_include_only_themselves() {
        let a = Audience::of(["acme", "beta", "acme"]).expect("valid");
        assert!(a.includes("acme") && a.includes("beta"));
        assert!(!a.includes("demo"));
        let stored = a.stored().expect("named");
        assert_eq!(stored, r#"["acme","beta"]"#);
        assert_eq!(Audience::from_stored(Some(&stored)), Ok(a.clone()));
        assert_eq!(a.to_string(), "acme, beta");
    }

    #[test]
    fn bad_audiences_are_refused() {
        assert_eq!(
            Audience::of([""]),
            Err(AudienceError::BadTenant(String::new()))
        );
        assert!(matches!(
            Audience::of(["a b"]),
            Err(AudienceError::BadTenant(_))
        ));
        let long = "x".repeat(MAX_TENANT_LEN + 1);
        assert!(
            matches!(Audience::of([long]), Err(AudienceError::BadTenant(t)) if t.len() == MAX_TENANT_LEN)
        );
        let many: Vec<String> = (0..=MAX_AUDIENCE).map(|i| format!("t{i}")).collect();
        assert_eq!(
            Audience::of(many),
            Err(AudienceError::TooMany(MAX_AUDIENCE + 1))
        );
        assert!(Audience::from_stored(Some("[]")).is_err());
        assert!(Audience::from_stored(Some("{")).is_err());
    }
}
