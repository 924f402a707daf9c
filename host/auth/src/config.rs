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
            code_ttl: Duration::from_secs(60),
            session_ttl: Duration::from_secs(12 * 3600),
            pending_ttl: Duration::from_secs(10 * 60),
            client_idle_expiry: Duration::from_secs(90 * 24 * 3600),
            key_rotation: Duration::from_secs(30 * 24 * 3600),
            registrations_per_minute: 10,
            logins_per_minute: 20,
            password_login: true,
        }
    }

    /// The protected resource's canonical URI (RFC 8707): the only audience
    /// our access tokens carry.
    pub fn resource(&self) -> String {
        format!("{}/mcp", self.issuer)
    }

    /// True when cookies must be `Secure` (the issuer is https).
    pub fn secure_cookies(&self) -> bool {
        self.issuer.starts_with("https://")
    }
}
