//! Service clients that authenticate with a signed assertion instead of a
//! secret: RFC 7523 §2.2 and §3 (`private_key_jwt`, OpenID Connect's name
//! for it), at the token endpoint and the revocation endpoint.
//!
//! The operator registers a service client's public keys (a JWK Set,
//! `toolhost client add-service --jwks FILE`, replaced with `toolhost
//! client keys`); the private key stays with the workload. Each token
//! request carries a fresh JWT the client signed: issued by and about the
//! client (`iss` = `sub` = its id), for this authorization server (`aud`:
//! our issuer, or our token endpoint's URL), expiring within
//! [`MAX_LIFETIME`], with a `jti` accepted once across every replica (kept
//! in the store until the assertion expires). A client with keys is never
//! taken on a secret.

use std::time::Duration;

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

use crate::secret;

/// `client_assertion_type` for a JWT (RFC 7523 §2.2).
pub const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// The algorithms an assertion may be signed with, as metadata advertises
/// them (`token_endpoint_auth_signing_alg_values_supported`).
pub const ALGORITHMS: [&str; 3] = ["EdDSA", "ES256", "RS256"];

/// The longest an assertion may be valid for, from now: a client makes a
/// fresh one per token request (the MCP Python SDK's default is five
/// minutes), and each is remembered until it expires.
pub const MAX_LIFETIME: Duration = Duration::from_secs(300);

/// Clock skew allowed between the client and the host, on `exp`, `nbf`
/// and [`MAX_LIFETIME`].
const LEEWAY: u64 = 60;

/// Why an assertion was refused: each is `invalid_client` at the token
/// endpoint, with this text as its description.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientAssertionError {
    /// Not a JWT, or `iss`, `sub`, `aud`, `exp` or `jti` missing.
    #[error("the client assertion is not a JWT with iss, sub, aud, exp and jti")]
    Malformed,
    /// `alg` is not one of [`ALGORITHMS`].
    #[error("the client assertion's alg must be one of EdDSA, ES256, RS256")]
    Algorithm,
    /// `iss` and `sub` are not both the client's id (or `client_id` names
    /// another client).
    #[error("the client assertion's iss and sub must both be the client's id")]
    Subject,
    /// The client has no registered keys: it authenticates with a secret.
    #[error("this client has no registered keys: it authenticates with its secret")]
    NoKeys,
    /// No registered key of the assertion's kind (and `kid`) verifies it.
    #[error("the client assertion's signature does not verify with the client's keys")]
    Signature,
    /// `aud` is neither our issuer nor our token endpoint.
    #[error("the client assertion's aud is not this authorization server")]
    Audience,
    /// Expired, or not yet valid.
    #[error("the client assertion has expired or is not yet valid")]
    Expired,
    /// `exp` further ahead than [`MAX_LIFETIME`].
    #[error("the client assertion is valid for too long: at most 300 seconds ahead")]
    TooLong,
    /// This client presented this `jti` before.
    #[error("this client assertion was used before")]
    Replayed,
    /// The replay record could not be written.
    #[error("client assertions cannot be checked right now")]
    Unavailable,
}

/// The claims a verified assertion carries that the host uses.
#[derive(Debug, Deserialize)]
struct Claims {
    jti: String,
    exp: i64,
    #[serde(default)]
    nbf: Option<i64>,
}

/// An assertion that passed [`verify`]: what its replay record needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Its `jti`.
    pub jti: String,
    /// Until when it must be remembered: its `exp` plus the leeway.
    pub remember_until: i64,
}

/// The client an assertion says it is (its `iss`), read before anything is
/// verified, so that the client's keys can be found; [`verify`] then
/// checks it was that client who signed.
pub fn claimed_client(assertion: &str) -> Result<String, ClientAssertionError> {
    #[derive(Deserialize)]
    struct Issuer {
        iss: String,
    }
    jsonwebtoken::dangerous::insecure_decode::<Issuer>(assertion)
        .map(|data| data.claims.iss)
        .map_err(|_| ClientAssertionError::Malformed)
}

/// RFC 7523 §3: the assertion is `client_id`'s, signed by one of `jwks`
/// (the client's registered JWK Set, as JSON), for one of `audiences`,
/// valid at `now` and for at most [`MAX_LIFETIME`]. Replay is the caller's
/// (the store's) to check, with [`replay_key`].
pub fn verify(
    assertion: &str,
    client_id: &str,
    jwks: &str,
    audiences: &[&str],
    now: i64,
) -> Result<Verified, ClientAssertionError> {
    let header =
        jsonwebtoken::decode_header(assertion).map_err(|_| ClientAssertionError::Malformed)?;
    if !matches!(
        header.alg,
        Algorithm::EdDSA | Algorithm::ES256 | Algorithm::RS256
    ) {
        return Err(ClientAssertionError::Algorithm);
    }
    let set: JwkSet = serde_json::from_str(jwks).map_err(|_| ClientAssertionError::NoKeys)?;
    let candidates = set.keys.iter().filter(|jwk| {
        let named = match (&header.kid, &jwk.common.key_id) {
            (Some(kid), Some(id)) => kid == id,
            (Some(_), None) | (None, _) => true,
        };
        named && crate::dpop::key_fits(jwk, header.alg)
    });
    // Time is checked against `now` in [`within_lifetime`], not the
    // library's own clock.
    let mut validation = Validation::new(header.alg);
    validation.set_required_spec_claims(&["iss", "sub", "aud", "exp"]);
    validation.set_issuer(&[client_id]);
    validation.sub = Some(client_id.to_owned());
    validation.set_audience(audiences);
    validation.validate_exp = false;
    validation.validate_nbf = false;
    let mut refusal = ClientAssertionError::Signature;
    for jwk in candidates {
        match verified_with(assertion, jwk, &validation) {
            Ok(claims) => return within_lifetime(claims, now),
            Err(ClientAssertionError::Signature) => {}
            Err(other) => refusal = other,
        }
    }
    Err(refusal)
}

/// The assertion checked against one key.
fn verified_with(
    assertion: &str,
    jwk: &Jwk,
    validation: &Validation,
) -> Result<Claims, ClientAssertionError> {
    use jsonwebtoken::errors::ErrorKind;
    let key = DecodingKey::from_jwk(jwk).map_err(|_| ClientAssertionError::Signature)?;
    jsonwebtoken::decode::<Claims>(assertion, &key, validation)
        .map(|data| data.claims)
        .map_err(|e| match e.kind() {
            ErrorKind::InvalidIssuer | ErrorKind::InvalidSubject => ClientAssertionError::Subject,
            ErrorKind::InvalidAudience => ClientAssertionError::Audience,
            ErrorKind::MissingRequiredClaim(_) | ErrorKind::Json(_) => {
                ClientAssertionError::Malformed
            }
            _ => ClientAssertionError::Signature,
        })
}

/// Valid at `now` (`exp` not past, `nbf` not ahead, each give or take
/// [`LEEWAY`]) and for at most [`MAX_LIFETIME`] more.
fn within_lifetime(claims: Claims, now: i64) -> Result<Verified, ClientAssertionError> {
    let leeway = i64::try_from(LEEWAY).unwrap_or(i64::MAX);
    let longest = i64::try_from(MAX_LIFETIME.as_secs()).unwrap_or(i64::MAX);
    let started = claims
        .nbf
        .is_none_or(|nbf| nbf <= now.saturating_add(leeway));
    if claims.exp.saturating_add(leeway) < now || !started {
        return Err(ClientAssertionError::Expired);
    }
    if claims.exp > now.saturating_add(longest).saturating_add(leeway) {
        return Err(ClientAssertionError::TooLong);
    }
    if claims.jti.is_empty() || claims.jti.len() > 256 {
        return Err(ClientAssertionError::Malformed);
    }
    Ok(Verified {
        jti: claims.jti,
        remember_until: claims.exp.saturating_add(leeway),
    })
}

/// The replay store's key for `client_id`'s assertion `jti`: a digest that
/// names the kind too, so that it never meets a DPoP proof's.
pub fn replay_key(client_id: &str, jti: &str) -> String {
    secret::digest(&format!("client-assertion.{client_id}.{jti}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::{Value, json};

    const ISSUER: &str = "https://tools.example";
    const TOKEN_URL: &str = "https://tools.example/oauth/token";
    const NOW: i64 = 1_800_000_000;

    /// A client's Ed25519 key pair: the signing key and its JWK Set.
    fn client_key(kid: &str) -> (EncodingKey, String) {
        let key = EncodingKey::from_ed_der(&crate::keys::fresh_ed25519_der());
        let mut jwk = Jwk::from_encoding_key(&key, Algorithm::EdDSA).expect("a JWK");
        jwk.common.key_id = Some(kid.into());
        (key, json!({ "keys": [jwk] }).to_string())
    }

    fn claims() -> Value {
        json!({
            "iss": "svc-1", "sub": "svc-1", "aud": ISSUER,
            "iat": NOW, "exp": NOW + 300, "jti": "j-1",
        })
    }

    fn sign(key: &EncodingKey, kid: Option<&str>, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = kid.map(Into::into);
        jsonwebtoken::encode(&header, claims, key).expect("signed")
    }

    fn check(assertion: &str, jwks: &str) -> Result<Verified, ClientAssertionError> {
        verify(assertion, "svc-1", jwks, &[ISSUER, TOKEN_URL], NOW)
    }

    #[test]
    fn a_fresh_assertion_by_a_registered_key_verifies_for_either_audience() {
        let (key, jwks) = client_key("k1");
        let verified = check(&sign(&key, Some("k1"), &claims()), &jwks).expect("verifies");
        assert_eq!(verified.jti, "j-1");
        assert_eq!(verified.remember_until, NOW + 300 + 60);
        let mut at_token = claims();
        at_token["aud"] = TOKEN_URL.into();
        assert!(
            check(&sign(&key, None, &at_token), &jwks).is_ok(),
            "no kid: any key"
        );
        assert_eq!(
            claimed_client(&sign(&key, None, &claims())).as_deref(),
            Ok("svc-1")
        );
    }

    #[test]
    fn every_rule_refuses_with_its_error() {
        let (key, jwks) = client_key("k1");
        let (other, _) = client_key("k1");
        let with = |f: fn(&mut Value)| {
            let mut c = claims();
            f(&mut c);
            c
        };
        let cases: Vec<(&str, String, ClientAssertionError)> = vec![
            (
                "another key",
                sign(&other, Some("k1"), &claims()),
                ClientAssertionError::Signature,
            ),
            (
                "an unknown kid",
                sign(&key, Some("k2"), &claims()),
                ClientAssertionError::Signature,
            ),
            (
                "iss another client",
                sign(&key, None, &with(|c| c["iss"] = "svc-2".into())),
                ClientAssertionError::Subject,
            ),
            (
                "sub another client",
                sign(&key, None, &with(|c| c["sub"] = "svc-2".into())),
                ClientAssertionError::Subject,
            ),
            (
                "aud another server",
                sign(
                    &key,
                    None,
                    &with(|c| c["aud"] = "https://other.example".into()),
                ),
                ClientAssertionError::Audience,
            ),
            (
                "expired",
                sign(&key, None, &with(|c| c["exp"] = (NOW - 61).into())),
                ClientAssertionError::Expired,
            ),
            (
                "not yet valid",
                sign(&key, None, &with(|c| c["nbf"] = (NOW + 120).into())),
                ClientAssertionError::Expired,
            ),
            (
                "an hour long",
                sign(&key, None, &with(|c| c["exp"] = (NOW + 3600).into())),
                ClientAssertionError::TooLong,
            ),
            (
                "no jti",
                sign(
                    &key,
                    None,
                    &with(|c| drop(c.as_object_mut().map(|o| o.remove("jti")))),
                ),
                ClientAssertionError::Malformed,
            ),
            (
                "no exp",
                sign(
                    &key,
                    None,
                    &with(|c| drop(c.as_object_mut().map(|o| o.remove("exp")))),
                ),
                ClientAssertionError::Malformed,
            ),
            ("not a JWT", "a.b.c".into(), ClientAssertionError::Malformed),
        ];
        for (what, assertion, want) in cases {
            assert_eq!(check(&assertion, &jwks).err(), Some(want), "{what}");
        }
        assert_eq!(
            check(&sign(&key, None, &claims()), "not a key set").err(),
            Some(ClientAssertionError::NoKeys)
        );
    }

    #[test]
    fn a_symmetric_or_unsigned_assertion_is_refused() {
        let (_, jwks) = client_key("k1");
        let hs = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims(),
            &EncodingKey::from_secret(b"guessable").expect("a key"),
        )
        .expect("signed");
        assert_eq!(
            check(&hs, &jwks).err(),
            Some(ClientAssertionError::Algorithm)
        );
        let unsigned = format!(
            "{}.{}.",
            base64_url(r#"{"alg":"none"}"#),
            base64_url(&claims().to_string())
        );
        assert_eq!(
            check(&unsigned, &jwks).err(),
            Some(ClientAssertionError::Malformed)
        );
    }

    fn base64_url(text: &str) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
    }

    #[test]
    fn the_replay_key_is_per_client_and_never_a_dpop_proofs() {
        assert_ne!(replay_key("svc-1", "j"), replay_key("svc-2", "j"));
        let proof = crate::dpop::Proof {
            jkt: "svc-1".into(),
            jti: "j".into(),
            iat: NOW,
        };
        assert_ne!(replay_key("svc-1", "j"), proof.replay_key());
    }
}
