//! Upstream identity providers (an organisation's OpenID Connect provider,
//! `host/sso`), each one adapter behind [`UpstreamIdentity`]. The login page
//! offers every configured provider next to the password form; when one is
//! down, local login keeps working.
//!
//! The authorization server owns the browser side of the trip: it makes the
//! `state`, the nonce and the PKCE pair for each attempt, keeps them in the
//! store bound to the browser ([`SsoAttempt`](crate::SsoAttempt)), and takes
//! them back once at the callback. The adapter owns the provider side: where
//! to send the browser, and turning the code it returns into a local user
//! (the provider proves who the person is; the host still decides what they
//! may do, and the identity must end at an existing, enabled local user).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// What one attempt sends and expects back; made fresh for every attempt.
#[derive(Debug, Clone, Copy)]
pub struct UpstreamLogin<'a> {
    /// The `state` sent and echoed back.
    pub state: &'a str,
    /// The nonce the ID token must carry.
    pub nonce: &'a str,
    /// The PKCE verifier (RFC 7636) the code is redeemed with.
    pub code_verifier: &'a str,
    /// Its S256 challenge, sent with the authorization request.
    pub code_challenge: &'a str,
    /// This host's callback for the provider.
    pub redirect_uri: &'a str,
}

/// Who the provider vouched for, as a local user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    /// The local user's login name.
    pub username: String,
    /// The provider's subject (`sub`), for the events.
    pub subject: String,
    /// What the sign-in changed on the way, each a security event:
    /// (`sso.linked`, `sso.user.created`, `sso.roles`…, a detail).
    pub changes: Vec<(&'static str, String)>,
}

/// Why a provider could not vouch for anyone. The message is for the
/// operator's events and log; the person sees a page chosen by the kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpstreamError {
    /// The provider could not be reached or answered with an error status.
    #[error("the provider is unavailable: {0}")]
    Unavailable(String),
    /// The provider's answer failed a check (issuer, audience, signature,
    /// expiry, nonce…) or the provider said no (`error=` at the callback).
    #[error("the provider's answer was refused: {0}")]
    Refused(String),
    /// The identity maps to no enabled local account (or may not be linked).
    #[error("no account: {0}")]
    NoAccount(String),
}

/// What an identity assertion authorization grant (an ID-JAG, presented
/// with RFC 7523's JWT-bearer grant) must be for.
#[derive(Debug, Clone, Copy)]
pub struct GrantExpect<'a> {
    /// Our issuer: the assertion's `aud`.
    pub audience: &'a str,
    /// Our MCP endpoint: the assertion's `resource`.
    pub resource: &'a str,
    /// The client presenting it, authenticated: the assertion's `client_id`.
    pub client_id: &'a str,
    /// Now, in unix seconds.
    pub now: i64,
}

/// What a verified ID-JAG vouches for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssertedGrant {
    /// The local user it names, and what linking them changed.
    pub signed_in: SignedIn,
    /// Its `jti`, spent once.
    pub jti: String,
    /// Its `exp`.
    pub expires_at: i64,
    /// Its `scope`, if it carries one: the most a token from it may have.
    pub scope: Option<String>,
}

/// A boxed future, so adapters can be trait objects.
pub type UpstreamFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, UpstreamError>> + Send + 'a>>;

/// An upstream identity provider.
pub trait UpstreamIdentity: Send + Sync {
    /// Its configured name: the path segment of its routes
    /// (`/oauth/sso/{name}/start`, `/oauth/sso/{name}/callback`).
    fn name(&self) -> &str;
    /// The button label on the login page ("Sign in with {label}").
    fn label(&self) -> &str;
    /// Where to send the browser for `login`.
    fn authorization_url<'a>(&'a self, login: UpstreamLogin<'a>) -> UpstreamFuture<'a, String>;
    /// Redeems the code the provider returned, checks what it says, and
    /// links it to a local user.
    fn sign_in<'a>(
        &'a self,
        code: &'a str,
        login: UpstreamLogin<'a>,
    ) -> UpstreamFuture<'a, SignedIn>;

    /// The issuer whose identity assertion grants (ID-JAGs) this provider
    /// vouches for, if the operator trusts it for them; `None` (the
    /// default) if not.
    fn assertion_issuer(&self) -> Option<&str> {
        None
    }

    /// Checks an ID-JAG this provider issued against `expect` and links
    /// the person it names to a local user.
    fn verify_assertion_grant<'a>(
        &'a self,
        assertion: &'a str,
        expect: GrantExpect<'a>,
    ) -> UpstreamFuture<'a, AssertedGrant> {
        let _ = (assertion, expect);
        Box::pin(async {
            Err(UpstreamError::Refused(
                "this provider is not trusted for identity assertion grants".into(),
            ))
        })
    }
}

/// Where an SSO event is also recorded besides the auth events: the host's
/// hash-chained audit trail (the server implements it over its store).
pub trait SsoAudit: Send + Sync {
    /// Records `event` for `tenant` (the user's, when known); `ok` false for
    /// a refusal. A failure is the implementation's to log.
    fn record<'a>(
        &'a self,
        event: &'a crate::AuthEvent,
        tenant: Option<&'a str>,
        ok: bool,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>>;
}

/// The single sign-on an authorization server offers: its providers, in the
/// order the login page lists them, and the audit their events also reach.
#[derive(Clone, Default)]
pub struct Sso {
    /// The providers; names are unique.
    pub providers: Vec<Arc<dyn UpstreamIdentity>>,
    /// The audit trail, if the host keeps one.
    pub audit: Option<Arc<dyn SsoAudit>>,
}
