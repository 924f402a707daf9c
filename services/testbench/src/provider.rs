//! Row authority from the organisation's identity provider (issue 46's
//! token exchange): a backend that accepts only tokens its provider
//! issued for the person who acts.
//!
//! Off by default. Once a test calls
//! [`Handle::require_provider_tokens`](crate::Handle::require_provider_tokens),
//! every `/api` request's `Authorization: Bearer` must be a JWT access
//! token (`typ` `at+jwt`, RFC 9068) that verifies against the provider's
//! JWKS, whose `iss` is the provider's, `aud` this backend's audience and
//! `exp` not past; the static token is no longer enough. The person is the
//! token's `sub` (the provider's subject for them), so projects with
//! `people` name provider subjects. Anything else is a 401.

use axum::http::{HeaderMap, header};
use jsonwebtoken::{Algorithm, Validation};
use serde::{Deserialize, Serialize};

use crate::authority::Keys;

/// What this backend requires of the provider's tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderCheck {
    /// The provider's issuer (`iss`).
    pub issuer: String,
    /// Where the provider publishes its keys.
    pub jwks_uri: String,
    /// How the provider names this backend (`aud`).
    pub audience: String,
}

/// An actor in the token (RFC 8693 §4.1): who acts for the subject, and
/// through whom before them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderActor {
    /// The actor.
    pub sub: String,
    /// The actor before this one, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act: Option<Box<ProviderActor>>,
}

/// A provider token this backend accepted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderToken {
    /// The provider.
    pub iss: String,
    /// The person, as the provider knows them.
    pub sub: String,
    /// This backend, as the provider knows it.
    pub aud: String,
    /// The client the provider issued it to.
    pub client_id: String,
    /// Who acts for the person.
    #[serde(default)]
    pub act: Option<ProviderActor>,
    /// The scope granted, if any.
    #[serde(default)]
    pub scope: Option<String>,
    /// The token's id.
    pub jti: String,
    /// Expiry (Unix seconds).
    pub exp: i64,
}

const ACCESS_TOKEN_TYP: &str = "at+jwt";

impl Keys {
    /// The bearer token in `headers`, verified as `check` requires; `None`
    /// for anything else (the reason is logged).
    pub(crate) async fn verify_provider_token(
        &self,
        check: &ProviderCheck,
        headers: &HeaderMap,
    ) -> Option<ProviderToken> {
        let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
        let token = value.strip_prefix("Bearer ")?;
        match self.decode_provider_token(check, token).await {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::warn!(error = %e, "a provider token was refused");
                None
            }
        }
    }

    async fn decode_provider_token(
        &self,
        check: &ProviderCheck,
        token: &str,
    ) -> Result<ProviderToken, String> {
        let header = jsonwebtoken::decode_header(token).map_err(|e| e.to_string())?;
        let public = [
            Algorithm::RS256,
            Algorithm::PS256,
            Algorithm::ES256,
            Algorithm::EdDSA,
        ];
        if !public.contains(&header.alg) || header.typ.as_deref() != Some(ACCESS_TOKEN_TYP) {
            return Err(format!(
                "not an access token: {:?} {:?}",
                header.alg, header.typ
            ));
        }
        let kid = header.kid.ok_or("no key id")?;
        let key = self.key(&check.jwks_uri, &kid).await?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = 5;
        validation.set_audience(&[&check.audience]);
        validation.set_issuer(&[&check.issuer]);
        validation.set_required_spec_claims(&["exp", "aud", "iss", "sub"]);
        let data = jsonwebtoken::decode::<ProviderToken>(token, &key, &validation);
        data.map(|d| d.claims).map_err(|e| e.to_string())
    }
}
