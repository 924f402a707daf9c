//! What one provider is configured with (`[sso.NAME]` in the host's file),
//! checked once when the host starts.

use std::collections::BTreeMap;
use std::fmt;

/// A provider's client secret: never printed, never logged.
#[derive(Clone)]
pub struct ClientSecret(String);

impl ClientSecret {
    /// Wraps a secret (read from a file; surrounding whitespace dropped).
    pub fn new(secret: impl Into<String>) -> Self {
        ClientSecret(secret.into().trim().to_owned())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClientSecret(…)")
    }
}

/// People the provider vouches for who have no account yet get one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provision {
    /// The tenant new accounts are made in (created if missing).
    pub tenant: String,
    /// A role every new account starts with, if any (it must exist).
    pub role: Option<String>,
}

/// One OpenID Connect provider.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// The name in its routes, events and the link table (`corp`).
    pub name: String,
    /// The login page's button: "Sign in with {label}".
    pub label: String,
    /// The issuer, exactly as the provider's discovery document names it.
    pub issuer: String,
    /// This host's client id at the provider.
    pub client_id: String,
    /// Its secret.
    pub client_secret: ClientSecret,
    /// The scopes asked for; `openid` is always among them.
    pub scopes: Vec<String>,
    /// The ID-token claim whose value is the local username (`email`,
    /// `preferred_username`, `sub`…).
    pub claim: String,
    /// The claim listing the person's groups.
    pub groups_claim: String,
    /// Provider group → local roles (in the user's tenant). At every login
    /// each role named here is given when one of its groups is present and
    /// taken away when none is; roles named nowhere here are left alone.
    pub roles: BTreeMap<String, Vec<String>>,
    /// Whether unknown people get an account, and where.
    pub provision: Option<Provision>,
    /// Whether this provider's identity assertion grants (ID-JAGs) get
    /// people tokens at the host's token endpoint without a consent page
    /// (MCP's enterprise-managed authorization).
    pub id_jag: bool,
}

/// The scopes asked for when none are configured.
pub const DEFAULT_SCOPES: [&str; 3] = ["openid", "email", "profile"];
/// The claim naming the local user when none is configured.
pub const DEFAULT_CLAIM: &str = "email";
/// The groups claim when none is configured.
pub const DEFAULT_GROUPS_CLAIM: &str = "groups";

/// A configuration that cannot work.
#[derive(Debug, thiserror::Error)]
#[error("sso provider {name:?}: {problem}")]
pub struct ConfigError {
    /// The provider.
    pub name: String,
    /// What is wrong.
    pub problem: String,
}

impl ProviderConfig {
    /// A provider with the defaults for everything optional.
    pub fn new(
        name: impl Into<String>,
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: ClientSecret,
    ) -> Self {
        let name = name.into();
        ProviderConfig {
            label: name.clone(),
            name,
            issuer: issuer.into(),
            client_id: client_id.into(),
            client_secret,
            scopes: DEFAULT_SCOPES.iter().map(|s| s.to_string()).collect(),
            claim: DEFAULT_CLAIM.into(),
            groups_claim: DEFAULT_GROUPS_CLAIM.into(),
            roles: BTreeMap::new(),
            provision: None,
            id_jag: false,
        }
    }

    /// Checks what can be checked without the network.
    pub(crate) fn check(&mut self) -> Result<(), ConfigError> {
        let bad = |problem: String| ConfigError {
            name: self.name.clone(),
            problem,
        };
        let slug = (1..=32).contains(&self.name.len())
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !slug {
            return Err(bad("the name must be 1-32 of a-z, 0-9, '-', '_'".into()));
        }
        crate::http::allowed_url(&self.issuer).map_err(|e| bad(format!("issuer: {e}")))?;
        if self.client_id.is_empty() {
            return Err(bad("client_id is empty".into()));
        }
        if self.client_secret.expose().is_empty() {
            return Err(bad("the client secret is empty".into()));
        }
        if self.claim.is_empty() || self.groups_claim.is_empty() {
            return Err(bad("claim and groups_claim must name a claim".into()));
        }
        if !self.scopes.iter().any(|s| s == "openid") {
            self.scopes.insert(0, "openid".into());
        }
        Ok(())
    }
}
