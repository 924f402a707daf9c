//! What the authorization server is configured with: its issuer and the
//! lifetimes of everything it hands out, each with a default and a reason.

use std::time::Duration;

/// Settings of the authorization and resource server.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// The issuer URL, without a trailing slash (`https://tools.example.com`).
    /// The protected resource is `{issuer}/mcp`.
    pub issuer: String,
    /// Access tokens: short, because a stolen one works until it expires
    /// unless its grant is revoked (which the resource server checks live).
    pub access_ttl: Duration,
    /// Refresh tokens: rotated on every use; one unused this long expires.
    pub refresh_ttl: Duration,
    /// A grant ends this long after the sign-in (or code) that made it,
    /// however often it is refreshed: the person signs in again, where a
    /// person removed at a single-sign-on provider fails. The longest such
    /// a person keeps access (plus one access token's lifetime).
    pub grant_max_age: Duration,
    /// Authorization codes: only the redirect back to the client needs it.
    pub code_ttl: Duration,
    /// A browser login lasts a working day.
    pub session_ttl: Duration,
    /// The login and consent forms of one authorization request.
    pub pending_ttl: Duration,
    /// Registered and metadata-document clients unused this long are deleted.
    pub client_idle_expiry: Duration,
    /// Signing keys rotate this often.
    pub key_rotation: Duration,
    /// Dynamic registrations allowed per source (an IPv4 address or an
    /// IPv6 /64) per minute, on all replicas together.
    pub registrations_per_minute: u32,
    /// Login attempts allowed per source per minute, on all replicas
    /// together.
    pub logins_per_minute: u32,
    /// Sign-in forms (pending authorization requests) a source may open per
    /// minute, on all replicas together: each stores a row until it is
    /// used or expires.
    pub authorizations_per_minute: u32,
    /// Most pending authorization requests stored at once, expired ones
    /// included until purged: past it, new sign-ins wait (429).
    pub max_pending: u64,
    /// Whether people may sign in with a local password. Off, the login
    /// page offers only the single-sign-on providers.
    pub password_login: bool,
}

impl AuthConfig {
    /// Defaults for an issuer.
    pub fn new(issuer: impl Into<String>) -> Self {
        let issuer = issuer.into().trim_end_matches('/').to_owned();
        AuthConfig {
            issuer,
            access_ttl: Duration::from_secs(10 * 60),
            refresh_ttl: Duration::from_secs(30 * 24 * 3600),
            grant_max_age: Duration::from_secs(30 * 24 * 3600),
            code_ttl: Duration::from_secs(60),
            session_ttl: Duration::from_secs(12 * 3600),
            pending_ttl: Duration::from_secs(10 * 60),
            client_idle_expiry: Duration::from_secs(90 * 24 * 3600),
            key_rotation: Duration::from_secs(30 * 24 * 3600),
            registrations_per_minute: 10,
            logins_per_minute: 20,
            // One a second sustained: far above a person starting sign-ins
            // by hand (or an office behind one address), and with the
            // 10-minute form lifetime at most 600 live rows per source.
            authorizations_per_minute: 60,
            // About 80 MB of rows at their ~4 KB worst case: thousands of
            // people signing in within ten minutes, and a bound a flood
            // from many sources cannot pass.
            max_pending: 20_000,
            password_login: true,
        }
    }

    /// The protected resource's canonical URI (RFC 8707): the only audience
    /// our access tokens carry.
    pub fn resource(&self) -> String {
        format!("{}/mcp", self.issuer)
    }

    /// What resource indicator `r` names (RFC 8707): `Some(None)` for
    /// [`resource`](Self::resource), `Some(Some(name))` for toolset
    /// `name`'s endpoint (`/mcp/toolsets/NAME`), `None` for anything else.
    pub fn toolset_of_resource<'r>(&self, r: &'r str) -> Option<Option<&'r str>> {
        let rest = r.strip_prefix(self.issuer.as_str())?.strip_prefix("/mcp")?;
        match rest.strip_prefix(TOOLSET_PATH) {
            None if rest.is_empty() => Some(None),
            None => None,
            Some(name) => toolhost_policy::is_toolset_name(name).then_some(Some(name)),
        }
    }

    /// True when cookies must be `Secure` (the issuer is https).
    pub fn secure_cookies(&self) -> bool {
        self.issuer.starts_with("https://")
    }
}

/// The path under `/mcp` of the toolsets' endpoints: `/mcp/toolsets/NAME`
/// serves the MCP endpoint narrowed to toolset `NAME`.
pub const TOOLSET_PATH: &str = "/toolsets/";
