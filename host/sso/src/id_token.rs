//! Checking an ID token (OpenID Connect Core 1.0 §3.1.3.7): signed by the
//! provider's key with an asymmetric algorithm, issued by the configured
//! issuer to this client, unexpired, and carrying this attempt's nonce.
//! A token from an earlier attempt (a replay) carries that attempt's
//! nonce, which no later attempt has.

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde_json::{Map, Value};
use toolhost_auth::upstream::UpstreamError;

use crate::discovery::Discovery;

/// Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds.
pub(crate) const LEEWAY: u64 = 60;

/// The algorithms an ID token may be signed with: public-key ones only
/// (a shared-secret `HS256` would let anyone holding the client secret
/// mint tokens; `none` is not an algorithm jsonwebtoken verifies).
pub(crate) const ALLOWED: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Who must have signed a JWT, and for whom.
pub(crate) struct Signed<'a> {
    /// What it is, in refusals ("ID token").
    pub what: &'a str,
    /// Its `iss`, whose JWKS signed it.
    pub issuer: &'a str,
    /// Its `aud`.
    pub audience: &'a str,
    /// What a wrong `aud` is called in a refusal.
    pub other_audience: &'a str,
}

impl Signed<'_> {
    /// The JWT's claims, checked: a public-key algorithm, a key of the
    /// issuer's JWKS, `iss`, `aud`, `exp`, `iat` and `sub` present, `exp`
    /// and `nbf` within [`LEEWAY`].
    pub(crate) async fn claims(
        &self,
        token: &str,
        keys: &Discovery,
    ) -> Result<Map<String, Value>, UpstreamError> {
        let what = self.what;
        let refused = |why: String| UpstreamError::Refused(format!("{what}: {why}"));
        let header =
            decode_header(token).map_err(|e| refused(format!("unreadable header: {e}")))?;
        if !ALLOWED.contains(&header.alg) {
            return Err(refused(format!(
                "algorithm {:?} is not accepted",
                header.alg
            )));
        }
        let jwk = keys.key(header.kid.as_deref(), header.alg).await?;
        let key = DecodingKey::from_jwk(&jwk).map_err(|e| refused(format!("the key: {e}")))?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[self.issuer]);
        validation.set_audience(&[self.audience]);
        validation.set_required_spec_claims(&["exp", "iat", "iss", "aud", "sub"]);
        validation.leeway = LEEWAY;
        validation.validate_nbf = true;
        let decoded = decode::<Map<String, Value>>(token, &key, &validation).map_err(|e| {
            refused(match e.kind() {
                ErrorKind::ExpiredSignature => "it has expired".into(),
                ErrorKind::InvalidIssuer => "issued by another issuer".into(),
                ErrorKind::InvalidAudience => self.other_audience.into(),
                ErrorKind::InvalidSignature => "the signature does not verify".into(),
                ErrorKind::ImmatureSignature => "not valid yet".into(),
                other => format!("{other:?}"),
            })
        })?;
        Ok(decoded.claims)
    }
}

/// What the token must say.
pub(crate) struct Expected<'a> {
    pub issuer: &'a str,
    pub client_id: &'a str,
    pub nonce: &'a str,
    pub now: i64,
}

/// The token's claims, once every check passed.
pub(crate) async fn verify(
    token: &str,
    keys: &Discovery,
    expected: &Expected<'_>,
) -> Result<Map<String, Value>, UpstreamError> {
    let refused = |why: String| UpstreamError::Refused(format!("ID token: {why}"));
    let signed = Signed {
        what: "ID token",
        issuer: expected.issuer,
        audience: expected.client_id,
        other_audience: "issued to another client",
    };
    let claims = signed.claims(token, keys).await?;
    let nonce = claims.get("nonce").and_then(Value::as_str);
    if !nonce.is_some_and(|n| toolhost_auth::secret::same(n, expected.nonce)) {
        return Err(refused(
            "its nonce is not this sign-in's (a replayed or foreign token)".into(),
        ));
    }
    // Several audiences: the authorized party must be this client (§2).
    if let Some(Value::Array(audiences)) = claims.get("aud")
        && audiences.len() > 1
        && claims.get("azp").and_then(Value::as_str) != Some(expected.client_id)
    {
        return Err(refused(
            "several audiences and azp is not this client".into(),
        ));
    }
    let issued = claims
        .get("iat")
        .and_then(Value::as_i64)
        .unwrap_or(i64::MAX);
    if issued > expected.now + LEEWAY as i64 {
        return Err(refused("issued in the future".into()));
    }
    match claims.get("sub").and_then(Value::as_str) {
        Some(sub) if !sub.is_empty() && sub.len() <= 255 => Ok(claims),
        _ => Err(refused("its sub is missing or malformed".into())),
    }
}
