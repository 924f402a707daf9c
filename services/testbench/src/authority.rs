//! Row authority: who acts, from the host's signed identity assertion, and
//! which projects that person may see (issue 46).
//!
//! Off by default. Once a test (or `--assertion-issuer`) calls
//! [`Handle::require_assertions`](crate::Handle::require_assertions),
//! every `/api` request must carry `X-Toolhost-Assertion`: an EdDSA JWT of
//! `typ` `toolhost-assertion+jwt` that verifies against the host's JWKS
//! (fetched from the issuer's `/.well-known/backend-assertion-jwks.json`,
//! again when a key id is unknown), whose `iss` is the host's, `aud` this
//! backend's name, `exp` not past, and `tenant` the request's `X-Tenant`.
//! Anything else is a 401, and nothing is counted.
//!
//! A project with `people` in the seed is seen only by those people (by
//! the `sub` the host asserts); without an assertion nobody sees it. Its
//! rows (applications, tests, pipelines, its own environments) go with it,
//! a path naming it is a 404, as a foreign project's is, and its tests can
//! neither be run nor added to.
//!
//! The claims are read into types of this crate, not the host's: the
//! testbench stands for a backend of another organisation, which knows
//! the host only by its published JWKS and the claims' documented names
//! (docs/operator/configuration.md), never by its code.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::http::HeaderMap;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::{Deserialize, Serialize};

/// The header the host sends the assertion in.
pub const ASSERTION_HEADER: &str = "x-toolhost-assertion";

/// Where the host publishes its assertion keys, under its issuer.
pub const ASSERTION_JWKS_PATH: &str = "/.well-known/backend-assertion-jwks.json";

const ASSERTION_TYP: &str = "toolhost-assertion+jwt";

/// What this backend requires of an assertion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssertionCheck {
    /// The host's issuer URL (`iss`); the JWKS is fetched under it.
    pub issuer: String,
    /// This backend's name as the host's operator configured it (`aud`).
    pub audience: String,
}

/// The client acting for the subject (RFC 8693 `act`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    /// The OAuth client id.
    pub sub: String,
}

/// An assertion this backend accepted: who acted, as the host said.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Asserted {
    /// The user id or service client id.
    pub sub: String,
    /// `user` or `service`.
    pub sub_kind: String,
    /// The tenant.
    pub tenant: String,
    /// The client acting for `sub`.
    pub act: Actor,
    /// The tool called.
    pub tool: String,
    /// The call's id (its audit row's).
    pub call_id: String,
    /// The assertion's id.
    pub jti: String,
    /// Issued at, expires (Unix seconds).
    pub iat: i64,
    /// Expiry (Unix seconds).
    pub exp: i64,
}

/// The projects hidden from the caller of one request, by id; put in the
/// request's extensions by the guard.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sees {
    hidden: Arc<BTreeSet<u64>>,
}

impl Sees {
    pub(crate) fn new(hidden: BTreeSet<u64>) -> Self {
        Sees {
            hidden: Arc::new(hidden),
        }
    }

    /// Whether the caller may see project `id` (and its rows).
    pub(crate) fn project(&self, id: u64) -> bool {
        !self.hidden.contains(&id)
    }

    /// Whether the caller may see a row of project `id`, or a row of no
    /// project (a shared environment).
    pub(crate) fn row(&self, project_id: Option<u64>) -> bool {
        project_id.is_none_or(|id| self.project(id))
    }
}

/// The host's published keys, fetched on first use and again for a key
/// id not among them.
#[derive(Default)]
pub(crate) struct Keys {
    set: tokio::sync::Mutex<Option<JwkSet>>,
}

impl Keys {
    /// The assertion in `headers`, verified as `check` requires and for
    /// `tenant`; `None` for anything else (the reason is logged).
    pub(crate) async fn verify(
        &self,
        check: &AssertionCheck,
        headers: &HeaderMap,
        tenant: Option<&str>,
    ) -> Option<Asserted> {
        let token = headers.get(ASSERTION_HEADER)?.to_str().ok()?;
        match self.decode(check, token).await {
            Ok(a) if Some(a.tenant.as_str()) == tenant => Some(a),
            Ok(a) => {
                tracing::warn!(asserted = %a.tenant, "an assertion for another tenant");
                None
            }
            Err(e) => {
                tracing::warn!(error = %e, "an identity assertion was refused");
                None
            }
        }
    }

    async fn decode(&self, check: &AssertionCheck, token: &str) -> Result<Asserted, String> {
        let header = jsonwebtoken::decode_header(token).map_err(|e| e.to_string())?;
        if header.alg != Algorithm::EdDSA || header.typ.as_deref() != Some(ASSERTION_TYP) {
            return Err(format!(
                "not an assertion: {:?} {:?}",
                header.alg, header.typ
            ));
        }
        let kid = header.kid.ok_or("no key id")?;
        let jwks = format!(
            "{}{ASSERTION_JWKS_PATH}",
            check.issuer.trim_end_matches('/')
        );
        let key = self.key(&jwks, &kid).await?;
        let mut validation = Validation::new(Algorithm::EdDSA);
        validation.leeway = 5;
        validation.set_audience(&[&check.audience]);
        validation.set_issuer(&[&check.issuer]);
        validation.set_required_spec_claims(&["exp", "iat", "aud", "iss", "sub"]);
        let data = jsonwebtoken::decode::<Asserted>(token, &key, &validation);
        data.map(|d| d.claims).map_err(|e| e.to_string())
    }

    /// The key `kid` of the set at `jwks`, fetching the set when the key
    /// is not known yet.
    pub(crate) async fn key(&self, jwks: &str, kid: &str) -> Result<DecodingKey, String> {
        let mut set = self.set.lock().await;
        let known = |set: &Option<JwkSet>| set.as_ref().and_then(|s| s.find(kid)).cloned();
        let jwk = match known(&set) {
            Some(jwk) => jwk,
            None => {
                *set = Some(fetch(jwks).await?);
                known(&set).ok_or_else(|| format!("unknown key id {kid:?}"))?
            }
        };
        DecodingKey::from_jwk(&jwk).map_err(|e| e.to_string())
    }
}

async fn fetch(url: &str) -> Result<JwkSet, String> {
    let answer = reqwest::get(url).await.map_err(|e| format!("{url}: {e}"))?;
    let text = answer.text().await.map_err(|e| format!("{url}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{url}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_sees_every_project_but_the_hidden_and_their_rows() {
        let sees = Sees::new([2].into());
        assert!(sees.project(1) && !sees.project(2));
        assert!(sees.row(None) && sees.row(Some(1)) && !sees.row(Some(2)));
        assert!(Sees::default().project(2));
    }
}
