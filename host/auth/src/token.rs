//! Access tokens: short-lived EdDSA JWTs (RFC 9068 shape) carrying identity
//! only. Never roles or permissions: those are resolved live per request.

use jsonwebtoken::{Algorithm, Header, Validation};
use serde::{Deserialize, Serialize};

use crate::keys::KeyRing;
use crate::secret;

/// The claims of an access token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessClaims {
    /// The issuer (our canonical issuer URL).
    pub iss: String,
    /// The subject: user id or service client id.
    pub sub: String,
    /// The audience: our canonical `/mcp` URI, nothing else.
    pub aud: String,
    /// Expiry (Unix seconds).
    pub exp: i64,
    /// Issued at (Unix seconds).
    pub iat: i64,
    /// Unique token id.
    pub jti: String,
    /// Granted scopes, space-separated.
    pub scope: String,
    /// The grant (token family) this token belongs to.
    pub sid: String,
    /// The client the token was issued to.
    pub client_id: String,
    /// The DPoP key the token is bound to (RFC 9449 §6); absent on a
    /// bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cnf: Option<Confirmation>,
}

/// A token's confirmation claim (RFC 7800): the key its holder must prove.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confirmation {
    /// The RFC 7638 SHA-256 thumbprint of the DPoP key.
    pub jkt: String,
}

impl AccessClaims {
    /// Claims for a new token: a fresh `jti`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        issuer: &str,
        audience: &str,
        subject: &str,
        client_id: &str,
        family: &str,
        scope: &str,
        now: i64,
        ttl_secs: i64,
    ) -> Self {
        AccessClaims {
            iss: issuer.into(),
            sub: subject.into(),
            aud: audience.into(),
            exp: now + ttl_secs,
            iat: now,
            jti: secret::random(16),
            scope: scope.into(),
            sid: family.into(),
            client_id: client_id.into(),
            cnf: None,
        }
    }

    /// The same claims bound to the DPoP key `jkt`, if any.
    pub fn bound_to(mut self, jkt: Option<&str>) -> Self {
        self.cnf = jkt.map(|jkt| Confirmation { jkt: jkt.into() });
        self
    }

    /// The DPoP key thumbprint the token is bound to, if it is.
    pub fn jkt(&self) -> Option<&str> {
        self.cnf.as_ref().map(|c| c.jkt.as_str())
    }
}

/// Why a presented token is not valid. Messages are safe to send back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not a JWT, or not one of ours.
    #[error("the access token is malformed or not signed by this server")]
    Malformed,
    /// Signed by a key that is not (or no longer) published.
    #[error("the access token's signing key is unknown")]
    UnknownKey,
    /// `exp` has passed.
    #[error("the access token expired")]
    Expired,
    /// Issued for another resource (`aud` is not our `/mcp` URI).
    #[error("the access token was issued for another resource")]
    WrongAudience,
    /// Issued by another server.
    #[error("the access token was issued by another server")]
    WrongIssuer,
}

/// Signs claims with the ring's current key.
pub fn sign(ring: &KeyRing, claims: &AccessClaims) -> String {
    ring.with_signing(|kid, key| {
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(kid.to_owned());
        header.typ = Some("at+jwt".into());
        jsonwebtoken::encode(&header, claims, key).expect("EdDSA signing does not fail")
    })
}

/// Verifies a token's signature, expiry (no leeway: we are the issuer),
/// issuer and audience.
pub fn verify(
    ring: &KeyRing,
    token: &str,
    issuer: &str,
    audience: &str,
) -> Result<AccessClaims, TokenError> {
    let header = jsonwebtoken::decode_header(token).map_err(|_| TokenError::Malformed)?;
    if header.alg != Algorithm::EdDSA || header.typ.as_deref() != Some("at+jwt") {
        return Err(TokenError::Malformed);
    }
    let kid = header.kid.ok_or(TokenError::Malformed)?;
    let key = ring.verifying(&kid).ok_or(TokenError::UnknownKey)?;
    let mut validation = Validation::new(Algorithm::EdDSA);
    validation.leeway = 0;
    validation.set_audience(&[audience]);
    validation.set_issuer(&[issuer]);
    validation.set_required_spec_claims(&["exp", "aud", "iss", "sub"]);
    jsonwebtoken::decode::<AccessClaims>(token, &key, &validation)
        .map(|data| data.claims)
        .map_err(|e| match e.kind() {
            jsonwebtoken::errors::ErrorKind::ExpiredSignature => TokenError::Expired,
            jsonwebtoken::errors::ErrorKind::InvalidAudience => TokenError::WrongAudience,
            jsonwebtoken::errors::ErrorKind::InvalidIssuer => TokenError::WrongIssuer,
            _ => TokenError::Malformed,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISSUER: &str = "https://tools.example";
    const AUDIENCE: &str = "https://tools.example/mcp";

    fn claims(now: i64, ttl: i64) -> AccessClaims {
        AccessClaims::new(ISSUER, AUDIENCE, "u_1", "client", "family", "mcp", now, ttl)
    }

    fn now() -> i64 {
        crate::server::now()
    }

    #[test]
    fn a_token_verifies_with_its_claims() {
        let ring = KeyRing::ephemeral();
        let c = claims(now(), 60);
        let token = sign(&ring, &c);
        assert_eq!(verify(&ring, &token, ISSUER, AUDIENCE), Ok(c));
    }

    #[test]
    fn wrong_audience_issuer_expiry_key_and_tampering_are_refused() {
        let ring = KeyRing::ephemeral();
        let token = sign(&ring, &claims(now(), 60));
        assert_eq!(
            verify(&ring, &token, ISSUER, "https://other.example/mcp"),
            Err(TokenError::WrongAudience)
        );
        assert_eq!(
            verify(&ring, &token, "https://other.example", AUDIENCE),
            Err(TokenError::WrongIssuer)
        );
        let expired = sign(&ring, &claims(now() - 120, 60));
        assert_eq!(
            verify(&ring, &expired, ISSUER, AUDIENCE),
            Err(TokenError::Expired)
        );
        let other_ring = KeyRing::ephemeral();
        assert_eq!(
            verify(&other_ring, &token, ISSUER, AUDIENCE),
            Err(TokenError::UnknownKey)
        );
        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        parts[1] = parts[1].chars().rev().collect();
        assert_eq!(
            verify(&ring, &parts.join("."), ISSUER, AUDIENCE),
            Err(TokenError::Malformed)
        );
        assert_eq!(
            verify(&ring, "not-a-token", ISSUER, AUDIENCE),
            Err(TokenError::Malformed)
        );
    }

    #[test]
    fn tokens_carry_identity_only() {
        let ring = KeyRing::ephemeral();
        let token = sign(&ring, &claims(now(), 60));
        let payload = token.split('.').nth(1).expect("a payload");
        use base64::Engine as _;
        let json: serde_json::Value = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(payload)
                .expect("base64url"),
        )
        .expect("JSON");
        let mut keys: Vec<&str> = json
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "aud",
                "client_id",
                "exp",
                "iat",
                "iss",
                "jti",
                "scope",
                "sid",
                "sub"
            ]
        );
    }
}
