//! An upstream identity provider (an enterprise OIDC IdP) as one adapter
//! behind [`UpstreamIdentity`]. The login page offers it next to the local
//! password form; when it is down, local login keeps working.
//!
//! The upstream proves who the person is; the host still decides what they
//! may do: the identity must name an existing, enabled local user.

use std::future::Future;
use std::pin::Pin;

/// Who the upstream says logged in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalIdentity {
    /// The local username this identity maps to.
    pub username: String,
}

/// Why the upstream could not vouch for anyone.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("upstream identity provider: {0}")]
pub struct UpstreamError(pub String);

/// A boxed future, so adapters can be trait objects.
pub type UpstreamFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ExternalIdentity, UpstreamError>> + Send + 'a>>;

/// An upstream identity provider.
pub trait UpstreamIdentity: Send + Sync {
    /// The button label on the login page ("Company SSO").
    fn label(&self) -> &str;
    /// Where to send the browser, carrying `state` back to `redirect_uri`.
    fn authorization_url(&self, state: &str, redirect_uri: &str) -> String;
    /// Exchanges the code the upstream returned for an identity.
    fn exchange<'a>(&'a self, code: &'a str, redirect_uri: &'a str) -> UpstreamFuture<'a>;
}
