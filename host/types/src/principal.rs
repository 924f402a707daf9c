//! Who is calling: the identity a verified access token names, resolved live.

use std::fmt;

/// What kind of principal a token names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrincipalKind {
    /// A person who logged in (authorization code grant).
    User,
    /// A machine client acting as itself (client credentials grant). It has
    /// its own scope set and can never act as a user.
    Service,
}

impl PrincipalKind {
    /// The stable lower-case name (`user`, `service`).
    pub fn as_str(self) -> &'static str {
        match self {
            PrincipalKind::User => "user",
            PrincipalKind::Service => "service",
        }
    }

    /// The kind named by [`PrincipalKind::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "user" => Some(PrincipalKind::User),
            "service" => Some(PrincipalKind::Service),
            _ => None,
        }
    }
}

impl fmt::Display for PrincipalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The caller of one request: identity from the token, tenant and standing
/// from the database at the time of the request. Carries no roles or
/// permissions; the policy room resolves those.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The stable subject id (`sub`): a user id, or a service client's id.
    pub subject: String,
    /// User or service.
    pub kind: PrincipalKind,
    /// A readable name for logs and audit: the username or the client's name.
    pub name: String,
    /// The tenant the principal belongs to.
    pub tenant: String,
    /// The OAuth client the token was issued to.
    pub client_id: String,
    /// The granted scopes, in token order.
    pub scopes: Vec<String>,
    /// The grant (token family) the token belongs to; revoking it ends the session.
    pub session: String,
}

impl Principal {
    /// True if the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}
