//! Single sign-on: people sign in at the host's login page through their
//! organisation's OpenID Connect provider (Entra ID / ADFS, Okta, Keycloak,
//! Google Workspace…), and the host then issues its own identity-only
//! tokens as for a password login.
//!
//! [`OidcProvider`] is a relying party behind the authorization server's
//! seam ([`UpstreamIdentity`]): the server makes each attempt's `state`,
//! nonce and PKCE pair and keeps them bound to the browser; this crate
//! sends the browser to the provider's authorization endpoint, redeems the
//! code at its token endpoint (client secret, PKCE verifier), checks the ID
//! token against the provider's published keys ([`id_token`]), and links
//! the person to a local user and roles ([`link`]).
//!
//! The protocol's two exchanges are plain JSON over HTTP (`reqwest`); the
//! part that needs cryptography, the ID token's signature and claims, is
//! `jsonwebtoken`'s, the crate the host's own tokens already use.

mod config;
pub mod connections;
mod discovery;
mod http;
mod id_jag;
mod id_token;
mod link;
mod person_tokens;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use toolhost_auth::AuthStore;
use toolhost_auth::upstream::{
    AssertedGrant, GrantExpect, SignedIn, UpstreamError, UpstreamFuture, UpstreamIdentity,
    UpstreamLogin,
};
use toolhost_policy::PolicyStore;

pub use config::{
    ClientSecret, ConfigError, DEFAULT_CLAIM, DEFAULT_GROUPS_CLAIM, DEFAULT_SCOPES, ProviderConfig,
    Provision,
};

use discovery::Discovery;
pub use person_tokens::PersonTokens;

/// An OpenID Connect provider people sign in through.
pub struct OidcProvider {
    config: ProviderConfig,
    discovery: Discovery,
    http: reqwest::Client,
    auth: Arc<dyn AuthStore>,
    policy: Arc<dyn PolicyStore>,
}

impl std::fmt::Debug for OidcProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcProvider")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The token endpoint's answer (RFC 6749 §5.1, Core §3.1.3.3).
#[derive(Deserialize)]
struct TokenAnswer {
    id_token: Option<String>,
}

impl OidcProvider {
    /// A provider, checked without contacting it: the host starts even
    /// while the provider is down.
    pub fn new(
        mut config: ProviderConfig,
        auth: Arc<dyn AuthStore>,
        policy: Arc<dyn PolicyStore>,
    ) -> Result<OidcProvider, ConfigError> {
        config.check()?;
        let http = http::client().map_err(|problem| ConfigError {
            name: config.name.clone(),
            problem,
        })?;
        Ok(OidcProvider {
            discovery: Discovery::new(&config.issuer, http.clone()),
            config,
            http,
            auth,
            policy,
        })
    }

    /// Its configuration.
    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    async fn authorization_url_for(
        &self,
        login: UpstreamLogin<'_>,
    ) -> Result<String, UpstreamError> {
        let metadata = self.discovery.metadata().await?;
        let mut url =
            http::allowed_url(&metadata.authorization_endpoint).map_err(UpstreamError::Refused)?;
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.config.client_id)
            .append_pair("redirect_uri", login.redirect_uri)
            .append_pair("scope", &self.config.scopes.join(" "))
            .append_pair("state", login.state)
            .append_pair("nonce", login.nonce)
            .append_pair("code_challenge", login.code_challenge)
            .append_pair("code_challenge_method", "S256");
        Ok(url.into())
    }

    /// Redeems `code` for an ID token (Core §3.1.3.1).
    async fn redeem(&self, code: &str, login: UpstreamLogin<'_>) -> Result<String, UpstreamError> {
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", login.redirect_uri),
            ("code_verifier", login.code_verifier),
        ];
        let answer = self.post_token(&form, "the code").await?;
        serde_json::from_slice::<TokenAnswer>(&answer.body)
            .ok()
            .and_then(|a| a.id_token)
            .ok_or_else(|| UpstreamError::Refused("the token endpoint returned no id_token".into()))
    }

    /// POSTs `form` to the provider's token endpoint as this host's client
    /// (client_secret_basic unless the provider supports only _post): a
    /// 2xx answer, a 4xx as [`UpstreamError::Refused`] with its error
    /// code (`what` is what was refused), anything else
    /// [`UpstreamError::Unavailable`].
    pub(crate) async fn post_token(
        &self,
        form: &[(&str, &str)],
        what: &str,
    ) -> Result<http::Answer, UpstreamError> {
        let metadata = self.discovery.metadata().await?;
        let client = http::TokenClient {
            endpoint: &metadata.token_endpoint,
            auth_methods: metadata.token_endpoint_auth_methods_supported.as_deref(),
            client_id: &self.config.client_id,
            client_secret: &self.config.client_secret,
        };
        client.post(&self.http, form, what).await
    }

    async fn sign_in_with(
        &self,
        code: &str,
        login: UpstreamLogin<'_>,
    ) -> Result<SignedIn, UpstreamError> {
        let token = self.redeem(code, login).await?;
        let now = now();
        let expected = id_token::Expected {
            issuer: &self.config.issuer,
            client_id: &self.config.client_id,
            nonce: login.nonce,
            now,
        };
        let claims = id_token::verify(&token, &self.discovery, &expected).await?;
        let stores = link::Stores {
            auth: self.auth.as_ref(),
            policy: self.policy.as_ref(),
        };
        link::link(&self.config, &claims, &stores, now, true).await
    }

    async fn verify_assertion_grant_with(
        &self,
        assertion: &str,
        expect: GrantExpect<'_>,
    ) -> Result<AssertedGrant, UpstreamError> {
        let checked =
            id_jag::verify(assertion, &self.discovery, &self.config.issuer, &expect).await?;
        let stores = link::Stores {
            auth: self.auth.as_ref(),
            policy: self.policy.as_ref(),
        };
        let signed_in =
            link::link(&self.config, &checked.claims, &stores, expect.now, false).await?;
        Ok(AssertedGrant {
            signed_in,
            jti: checked.jti,
            expires_at: checked.expires_at,
            scope: checked.scope,
        })
    }
}

impl UpstreamIdentity for OidcProvider {
    fn name(&self) -> &str {
        &self.config.name
    }

    fn label(&self) -> &str {
        &self.config.label
    }

    fn authorization_url<'a>(&'a self, login: UpstreamLogin<'a>) -> UpstreamFuture<'a, String> {
        Box::pin(self.authorization_url_for(login))
    }

    fn sign_in<'a>(
        &'a self,
        code: &'a str,
        login: UpstreamLogin<'a>,
    ) -> UpstreamFuture<'a, SignedIn> {
        Box::pin(self.sign_in_with(code, login))
    }

    fn assertion_issuer(&self) -> Option<&str> {
        self.config.id_jag.then_some(self.config.issuer.as_str())
    }

    fn verify_assertion_grant<'a>(
        &'a self,
        assertion: &'a str,
        expect: GrantExpect<'a>,
    ) -> UpstreamFuture<'a, AssertedGrant> {
        Box::pin(self.verify_assertion_grant_with(assertion, expect))
    }
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}
