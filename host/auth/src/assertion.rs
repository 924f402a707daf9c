//! Identity assertions to backends (issue 46): a short-lived EdDSA JWT the
//! host signs for each call and backend that asks who acts, so a backend
//! keeping its own row authority learns, verifiably, which person (or
//! service) and which client are acting.
//!
//! - Signed with a key ring of its own
//!   ([`KeyPurpose::BackendAssertion`](crate::KeyPurpose::BackendAssertion)),
//!   rotated like the access-token keys and published at
//!   [`ASSERTION_JWKS_PATH`]: never at `/oauth/jwks`. An assertion is not
//!   an access token (another key, `typ` and audience) and an access token
//!   is not an assertion.
//! - Valid for [`ASSERTION_TTL`] (60 s); the backend room reuses one per
//!   call and backend for half of that
//!   ([`toolhost_backend::ASSERTION_REUSE`]).
//! - Claims: `iss` (the host's issuer), `aud` (the backend's configured
//!   name), `sub` (the user id or the service client id), `sub_kind`
//!   (`user` or `service`), `tenant`, `act` (RFC 8693: `{"sub": client id}`),
//!   `tool`, `call_id` (the audit row's), `jti`, `iat`, `exp`.
//!
//! What a backend does with it: fetch the JWKS, check the signature, `typ`
//! ([`ASSERTION_TYP`]), `iss`, `aud` (its own name), `exp`, and act for
//! `sub` within `tenant`.

use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::{Algorithm, Header};
use serde::{Deserialize, Serialize};
use toolhost_backend::{Asserter, Identity};

use crate::keys::KeyRing;
use crate::secret;

/// How long an assertion is valid. Long enough for one request's exchange
/// after the per-call reuse window (30 s), short enough that a leaked one
/// is soon worthless; the issue's bound is a minute.
pub const ASSERTION_TTL: Duration = Duration::from_secs(60);

/// The JOSE `typ` of an assertion (an access token's is `at+jwt`).
pub const ASSERTION_TYP: &str = "toolhost-assertion+jwt";

/// Where the assertion keys' JWKS is served, under the issuer.
pub const ASSERTION_JWKS_PATH: &str = "/.well-known/backend-assertion-jwks.json";

/// The client acting for the subject (RFC 8693 §4.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    /// The OAuth client id.
    pub sub: String,
}

/// The claims of an identity assertion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssertionClaims {
    /// The host's issuer URL.
    pub iss: String,
    /// The backend, by the name the operator configured.
    pub aud: String,
    /// The user id, or the service client's id.
    pub sub: String,
    /// `user` or `service`.
    pub sub_kind: String,
    /// The caller's tenant.
    pub tenant: String,
    /// The client acting for `sub`.
    pub act: Actor,
    /// The tool called.
    pub tool: String,
    /// The call's id, as its audit row records it.
    pub call_id: String,
    /// Unique per assertion.
    pub jti: String,
    /// Issued at (Unix seconds).
    pub iat: i64,
    /// Expiry (Unix seconds): `iat` + [`ASSERTION_TTL`].
    pub exp: i64,
}

impl AssertionClaims {
    /// The claims that `who` acts, for backend `audience`, issued `now`.
    pub fn new(issuer: &str, audience: &str, who: &Identity, now: i64) -> Self {
        AssertionClaims {
            iss: issuer.to_owned(),
            aud: audience.to_owned(),
            sub: who.subject.clone(),
            sub_kind: who.kind.to_owned(),
            tenant: who.tenant.clone(),
            act: Actor {
                sub: who.client_id.clone(),
            },
            tool: who.tool.clone(),
            call_id: who.call_id.clone(),
            jti: secret::random(16),
            iat: now,
            exp: now + crate::server::secs(ASSERTION_TTL),
        }
    }
}

/// The host's signer of identity assertions: its issuer and the assertion
/// key ring. Installed in the backends by the composition root.
pub struct Assertions {
    issuer: String,
    ring: Arc<KeyRing>,
}

impl Assertions {
    /// A signer for `issuer` with `ring` (a
    /// [`KeyPurpose::BackendAssertion`](crate::KeyPurpose::BackendAssertion)
    /// ring).
    pub fn new(issuer: &str, ring: Arc<KeyRing>) -> Self {
        Assertions {
            issuer: issuer.to_owned(),
            ring,
        }
    }

    /// Signs `claims` with the ring's current key.
    pub fn sign(&self, claims: &AssertionClaims) -> String {
        self.ring.with_signing(|kid, key| {
            let mut header = Header::new(Algorithm::EdDSA);
            header.kid = Some(kid.to_owned());
            header.typ = Some(ASSERTION_TYP.into());
            jsonwebtoken::encode(&header, claims, key).expect("EdDSA signing does not fail")
        })
    }
}

impl Assertions {
    /// A subject token for RFC 8693 token exchange at the identity
    /// provider whose issuer is `provider_issuer` (its `aud`): the claims
    /// of a backend assertion, except that `sub` is the person's subject
    /// at that provider (`provider_subject`, from their sign-in link),
    /// since the host's user id means nothing there. Its audience is a
    /// URL, never a backend name, so a backend never accepts one.
    pub fn subject_token(
        &self,
        who: &Identity,
        provider_subject: &str,
        provider_issuer: &str,
    ) -> String {
        let now = crate::server::now();
        let mut claims = AssertionClaims::new(&self.issuer, provider_issuer, who, now);
        claims.sub = provider_subject.to_owned();
        self.sign(&claims)
    }
}

impl Asserter for Assertions {
    fn assert(&self, who: &Identity, audience: &str) -> Result<String, String> {
        let claims = AssertionClaims::new(&self.issuer, audience, who, crate::server::now());
        Ok(self.sign(&claims))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation, jwk::JwkSet};

    const ISSUER: &str = "https://tools.example";

    fn person() -> Identity {
        Identity {
            subject: "u_ann".into(),
            kind: "user",
            tenant: "demo".into(),
            client_id: "claude-desktop".into(),
            tool: "list_environments".into(),
            call_id: "0193-call".into(),
        }
    }

    fn signer() -> Assertions {
        Assertions::new(ISSUER, Arc::new(KeyRing::ephemeral()))
    }

    /// Verifies `token` as a backend would: against the published JWKS,
    /// for audience `aud`.
    fn verify(ring: &KeyRing, token: &str, aud: &str) -> Result<AssertionClaims, String> {
        let header = jsonwebtoken::decode_header(token).map_err(|e| e.to_string())?;
        if header.typ.as_deref() != Some(ASSERTION_TYP) {
            return Err(format!("typ {:?}", header.typ));
        }
        let jwks: JwkSet = serde_json::from_value(ring.jwks()).map_err(|e| e.to_string())?;
        let kid = header.kid.ok_or("no kid")?;
        let jwk = jwks.find(&kid).ok_or("unknown kid")?;
        let key = DecodingKey::from_jwk(jwk).map_err(|e| e.to_string())?;
        let mut validation = Validation::new(Algorithm::EdDSA);
        validation.leeway = 0;
        validation.set_audience(&[aud]);
        validation.set_issuer(&[ISSUER]);
        jsonwebtoken::decode::<AssertionClaims>(token, &key, &validation)
            .map(|d| d.claims)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn an_assertion_names_the_person_tenant_client_tool_and_call() {
        let signer = signer();
        let token = signer.assert(&person(), "testbench").expect("signed");
        let claims = verify(&signer.ring, &token, "testbench").expect("verifies");
        assert_eq!(
            (
                claims.iss.as_str(),
                claims.aud.as_str(),
                claims.sub.as_str()
            ),
            (ISSUER, "testbench", "u_ann")
        );
        assert_eq!(
            (claims.sub_kind.as_str(), claims.tenant.as_str()),
            ("user", "demo")
        );
        assert_eq!(
            claims.act,
            Actor {
                sub: "claude-desktop".into()
            }
        );
        assert_eq!(
            (claims.tool.as_str(), claims.call_id.as_str()),
            ("list_environments", "0193-call")
        );
        assert!(claims.jti.len() >= 16, "128 bits of randomness");
        let again = verify(
            &signer.ring,
            &signer.assert(&person(), "testbench").expect("signed"),
            "testbench",
        );
        assert_ne!(
            again.expect("verifies").jti,
            claims.jti,
            "a jti per assertion"
        );
    }

    #[test]
    fn an_assertion_lives_at_most_a_minute_and_outlives_its_reuse() {
        let claims = AssertionClaims::new(ISSUER, "testbench", &person(), 1_000);
        assert_eq!(claims.iat, 1_000);
        assert!(claims.exp - claims.iat <= 60);
        assert!(
            ASSERTION_TTL > toolhost_backend::ASSERTION_REUSE * 3 / 2,
            "a reused one still has time left"
        );
        let signer = signer();
        let expired = signer.sign(&claims);
        let refused = verify(&signer.ring, &expired, "testbench").expect_err("expired");
        assert!(refused.contains("Expired"), "{refused}");
    }

    #[test]
    fn a_subject_token_names_the_person_as_the_provider_knows_them() {
        let signer = signer();
        let provider = "https://login.example.com";
        let token = signer.subject_token(&person(), "alice-sub-1", provider);
        let claims = verify(&signer.ring, &token, provider).expect("verifies");
        assert_eq!(
            (claims.sub.as_str(), claims.aud.as_str()),
            ("alice-sub-1", provider)
        );
        assert_eq!(claims.act.sub, "claude-desktop");
        assert!(
            verify(&signer.ring, &token, "testbench").is_err(),
            "no backend takes it"
        );
    }

    #[test]
    fn a_services_assertion_names_the_service_itself() {
        let service = Identity {
            subject: "svc-nightly".into(),
            kind: "service",
            client_id: "svc-nightly".into(),
            ..person()
        };
        let signer = signer();
        let token = signer.assert(&service, "testbench").expect("signed");
        let claims = verify(&signer.ring, &token, "testbench").expect("verifies");
        assert_eq!(
            (claims.sub.as_str(), claims.sub_kind.as_str()),
            ("svc-nightly", "service")
        );
        assert_eq!(claims.act.sub, "svc-nightly");
    }

    #[test]
    fn an_assertion_is_for_its_backend_only_and_never_an_access_token() {
        let signer = signer();
        let token = signer.assert(&person(), "testbench").expect("signed");
        assert!(
            verify(&signer.ring, &token, "crm").is_err(),
            "another backend's"
        );
        let as_access = crate::token::verify(&signer.ring, &token, ISSUER, "testbench");
        assert_eq!(
            as_access,
            Err(crate::token::TokenError::Malformed),
            "typ is not at+jwt"
        );
    }
}
