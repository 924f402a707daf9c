//! Checking an identity assertion authorization grant (ID-JAG, the
//! draft-ietf-oauth-identity-assertion-authz-grant profile of RFC 7523 that
//! MCP's enterprise-managed authorization uses): `typ`
//! `oauth-id-jag+jwt`, signed by the provider's key with a public-key
//! algorithm, issued by it, for this host (`aud`), for this host's MCP
//! endpoint (`resource`) and for the client presenting it (`client_id`),
//! unexpired and short-lived, with a `jti`.

use jsonwebtoken::decode_header;
use serde_json::{Map, Value};
use toolhost_auth::upstream::{GrantExpect, UpstreamError};

use crate::discovery::Discovery;
use crate::id_token::{LEEWAY, Signed};

/// The `typ` an ID-JAG carries.
pub(crate) const TYP: &str = "oauth-id-jag+jwt";

/// The longest an ID-JAG may be valid for from now: it is exchanged at
/// once, and its `jti` is remembered until it expires.
const MAX_LIFETIME: i64 = 600;

/// A verified ID-JAG.
pub(crate) struct Checked {
    /// Its claims, for account linking.
    pub claims: Map<String, Value>,
    pub jti: String,
    pub expires_at: i64,
    pub scope: Option<String>,
}

/// The assertion's claims, once every check passed.
pub(crate) async fn verify(
    assertion: &str,
    keys: &Discovery,
    issuer: &str,
    expect: &GrantExpect<'_>,
) -> Result<Checked, UpstreamError> {
    let refused = |why: String| UpstreamError::Refused(format!("identity assertion: {why}"));
    let header =
        decode_header(assertion).map_err(|e| refused(format!("unreadable header: {e}")))?;
    if !header
        .typ
        .as_deref()
        .is_some_and(|t| t.eq_ignore_ascii_case(TYP))
    {
        return Err(refused(format!("typ must be {TYP}")));
    }
    let signed = Signed {
        what: "identity assertion",
        issuer,
        audience: expect.audience,
        other_audience: "for another authorization server",
    };
    let claims = signed.claims(assertion, keys).await?;
    let text = |name: &str| claims.get(name).and_then(Value::as_str);
    if text("client_id") != Some(expect.client_id) {
        return Err(refused("issued to another client".into()));
    }
    let resource_fits = match claims.get("resource") {
        Some(Value::String(r)) => r == expect.resource,
        Some(Value::Array(rs)) => rs.iter().any(|r| r.as_str() == Some(expect.resource)),
        _ => false,
    };
    if !resource_fits {
        return Err(refused("for another resource".into()));
    }
    let jti = match text("jti") {
        Some(jti) if !jti.is_empty() && jti.len() <= 256 => jti.to_owned(),
        _ => return Err(refused("its jti is missing or malformed".into())),
    };
    let expires_at = claims.get("exp").and_then(Value::as_i64).unwrap_or(0);
    if expires_at > expect.now + MAX_LIFETIME + LEEWAY as i64 {
        return Err(refused(format!(
            "valid for too long: at most {MAX_LIFETIME} seconds ahead"
        )));
    }
    if !text("sub").is_some_and(|s| !s.is_empty() && s.len() <= 255) {
        return Err(refused("its sub is missing or malformed".into()));
    }
    let scope = text("scope").map(str::to_owned);
    Ok(Checked {
        claims,
        jti,
        expires_at,
        scope,
    })
}
