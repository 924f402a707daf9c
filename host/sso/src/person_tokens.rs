//! Token exchange for the person (RFC 8693, issue 46): a backend that
//! trusts the organisation's identity provider gets a token that provider
//! issues for the person who acts, for that backend.
//!
//! The host proves who acts with a subject token it signs (its backend
//! assertion key, published at its assertion JWKS), naming the person by
//! the provider's own subject for them (their sign-in link) and the MCP
//! client acting for them (`act`). It authenticates to the token endpoint
//! as the client it is registered as for sign-in, so the provider can name
//! the host as the current actor in the token it issues. A person who has
//! never signed in through the provider has no subject there and gets no
//! token: the host never invents an identity for them.
//!
//! The backend crate decides when a token is asked for and keeps it; this
//! room only speaks to the provider.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use toolhost_auth::AuthStore;
use toolhost_auth::assertion::Assertions;
use toolhost_auth::upstream::UpstreamError;
use toolhost_backend::{
    ExchangeError, ExchangeFuture, Exchanged, Exchanger, Identity, TokenExchange,
};

use crate::OidcProvider;

/// RFC 8693 §2.1's grant type.
pub const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// RFC 8693 §3: a JWT (the host's subject token).
pub const JWT_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:jwt";
/// RFC 8693 §3: an OAuth access token (what the host asks for).
pub const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";

/// A lifetime the provider did not state is taken as this: the token is
/// then reused for half of it at most.
const UNSTATED_LIFETIME: Duration = Duration::from_secs(60);
/// The longest lifetime believed: a provider's day-long token is still
/// exchanged again within the day.
const MAX_LIFETIME: Duration = Duration::from_secs(24 * 3600);
/// The longest token sent on: a header, not a payload.
const MAX_TOKEN: usize = 8 * 1024;

/// The token endpoint's answer (RFC 8693 §2.2.1).
#[derive(Deserialize)]
struct Issued {
    access_token: String,
    issued_token_type: String,
    token_type: String,
    expires_in: Option<u64>,
}

/// The host's [`Exchanger`]: the configured providers, the subject-token
/// signer and the sign-in links.
pub struct PersonTokens {
    providers: BTreeMap<String, Arc<OidcProvider>>,
    assertions: Arc<Assertions>,
    auth: Arc<dyn AuthStore>,
}

impl PersonTokens {
    /// Exchanges at `providers`, proving who acts with `assertions`, and
    /// finding each person's subject in `auth`'s sign-in links.
    pub fn new(
        providers: impl IntoIterator<Item = Arc<OidcProvider>>,
        assertions: Arc<Assertions>,
        auth: Arc<dyn AuthStore>,
    ) -> Self {
        let providers = providers.into_iter();
        PersonTokens {
            providers: providers.map(|p| (p.config.name.clone(), p)).collect(),
            assertions,
            auth,
        }
    }

    async fn exchange_for(
        &self,
        who: &Identity,
        spec: &TokenExchange,
    ) -> Result<Exchanged, ExchangeError> {
        let provider = (self.providers.get(&spec.provider)).ok_or_else(|| {
            ExchangeError::Refused(format!("no provider {:?} is configured", spec.provider))
        })?;
        let link = self.auth.sso_link_of_user(&spec.provider, &who.subject);
        let link = link
            .await
            .map_err(|e| ExchangeError::Unavailable(e.to_string()))?;
        let Some(link) = link else {
            return Err(ExchangeError::NotLinked {
                provider: spec.provider.clone(),
            });
        };
        let issuer = &provider.config.issuer;
        let subject_token = self.assertions.subject_token(who, &link.subject, issuer);
        let mut form = vec![
            ("grant_type", TOKEN_EXCHANGE_GRANT),
            ("subject_token", subject_token.as_str()),
            ("subject_token_type", JWT_TOKEN_TYPE),
            ("requested_token_type", ACCESS_TOKEN_TYPE),
            ("audience", spec.audience.as_str()),
        ];
        if let Some(scope) = &spec.scope {
            form.push(("scope", scope));
        }
        let answer = provider.post_token(&form, "the token exchange").await;
        let answer = answer.map_err(|e| match e {
            UpstreamError::Unavailable(m) => ExchangeError::Unavailable(m),
            UpstreamError::Refused(m) | UpstreamError::NoAccount(m) => ExchangeError::Refused(m),
        })?;
        issued(&answer.body)
    }
}

impl Exchanger for PersonTokens {
    fn exchange<'a>(&'a self, who: &'a Identity, spec: &'a TokenExchange) -> ExchangeFuture<'a> {
        Box::pin(self.exchange_for(who, spec))
    }
}

/// The token in a 2xx answer, if it is a bearer access token the host can
/// send: any other answer is refused, never sent on.
fn issued(body: &[u8]) -> Result<Exchanged, ExchangeError> {
    let refused = |m: &str| ExchangeError::Refused(format!("the token exchange's answer {m}"));
    let issued: Issued =
        serde_json::from_slice(body).map_err(|_| refused("is not an RFC 8693 answer"))?;
    if issued.issued_token_type != ACCESS_TOKEN_TYPE {
        return Err(refused("is not an access token"));
    }
    if !issued.token_type.eq_ignore_ascii_case("bearer") {
        return Err(refused("is not a bearer token"));
    }
    let token = issued.access_token;
    let printable = token.bytes().all(|b| b.is_ascii_graphic());
    if token.is_empty() || token.len() > MAX_TOKEN || !printable {
        return Err(refused("has an empty, oversized or unprintable token"));
    }
    let stated = issued.expires_in.map(Duration::from_secs);
    let expires_in = stated.unwrap_or(UNSTATED_LIFETIME).min(MAX_LIFETIME);
    Ok(Exchanged { token, expires_in })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(v: serde_json::Value) -> Result<Exchanged, ExchangeError> {
        issued(v.to_string().as_bytes())
    }

    fn good() -> serde_json::Value {
        json!({
            "access_token": "eyJ.backend.token",
            "issued_token_type": ACCESS_TOKEN_TYPE,
            "token_type": "Bearer",
            "expires_in": 300,
        })
    }

    #[test]
    fn a_bearer_access_token_is_taken_with_its_lifetime() {
        let token = answer(good()).expect("a token");
        assert_eq!(token.token, "eyJ.backend.token");
        assert_eq!(token.expires_in, Duration::from_secs(300));
        let mut unstated = good();
        unstated
            .as_object_mut()
            .expect("an object")
            .remove("expires_in");
        assert_eq!(
            answer(unstated).expect("a token").expires_in,
            UNSTATED_LIFETIME
        );
        let mut forever = good();
        forever["expires_in"] = json!(u64::MAX);
        assert_eq!(answer(forever).expect("a token").expires_in, MAX_LIFETIME);
    }

    #[test]
    fn anything_but_a_sendable_bearer_access_token_is_refused() {
        let changed = |key: &str, value: serde_json::Value| {
            let mut v = good();
            v[key] = value;
            v
        };
        for bad in [
            changed("issued_token_type", json!(JWT_TOKEN_TYPE)),
            changed("token_type", json!("N_A")),
            changed("token_type", json!("DPoP")),
            changed("access_token", json!("")),
            changed("access_token", json!("two words")),
            changed("access_token", json!("line\nbreak")),
            changed("access_token", json!("x".repeat(MAX_TOKEN + 1))),
            json!({"access_token": "t", "token_type": "Bearer"}),
            json!("not an object"),
        ] {
            assert!(
                matches!(answer(bad.clone()), Err(ExchangeError::Refused(_))),
                "{bad}"
            );
        }
        let err = issued(b"<html>").expect_err("refused");
        assert!(matches!(err, ExchangeError::Refused(_)));
    }
}
