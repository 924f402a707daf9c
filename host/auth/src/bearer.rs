//! The resource server: every `/mcp` request presents a bearer token in
//! the `Authorization` header (never the query or body), which must be ours,
//! unexpired, for exactly our `/mcp` resource, carry the `mcp` scope, and
//! belong to a grant that is live in the database right now.

use std::sync::Arc;

use tracing::Instrument;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use toolhost_types::Principal;

use crate::config::TOOLSET_PATH;
use crate::dpop::{self, DpopError, Expected};
use crate::scope;
use crate::server::AuthServer;
use crate::token::{self, TokenError};
use toolhost_policy::{TOOLSET_SCOPE, is_toolset_name};

/// Why a request was not let through.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BearerError {
    /// No `Authorization: Bearer` header: the client should discover how to
    /// get a token.
    #[error("an access token is required")]
    Missing,
    /// The token is not valid.
    #[error("{0}")]
    Invalid(String),
    /// The token is valid but lacks a scope.
    #[error("the access token lacks scope {0}")]
    InsufficientScope(&'static str),
    /// A DPoP-bound token without a valid proof by its key for this
    /// request (RFC 9449 §7.1: `invalid_dpop_proof`).
    #[error("{0}")]
    Proof(DpopError),
    /// A token presented under the `DPoP` scheme that is not valid, a
    /// DPoP-bound token sent as `Bearer`, or an unbound one as `DPoP`:
    /// `invalid_token` under the DPoP scheme (RFC 9449 §7.1), so a DPoP
    /// client reads the challenge of the scheme it used.
    #[error("{0}")]
    DpopToken(String),
    /// The store could not be read; the request cannot be judged.
    #[error("authorization could not be checked; try again")]
    Unavailable,
}

impl From<DpopError> for BearerError {
    fn from(e: DpopError) -> Self {
        match e {
            DpopError::Unavailable => BearerError::Unavailable,
            e => BearerError::Proof(e),
        }
    }
}

/// What a request to the resource server presents, and where it went.
#[derive(Debug, Clone, Copy)]
pub struct Presented<'a> {
    /// Its `Authorization` header.
    pub authorization: Option<&'a str>,
    /// Its `DPoP` headers (exactly one is taken, with a bound token).
    pub dpop: &'a [&'a str],
    /// Its HTTP method.
    pub method: &'a str,
    /// The URL the client addressed: our issuer and the request's path.
    pub url: &'a str,
}

/// How the `Authorization` header presents its token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    Bearer,
    Dpop,
}

impl From<TokenError> for BearerError {
    fn from(e: TokenError) -> Self {
        BearerError::Invalid(e.to_string())
    }
}

impl AuthServer {
    /// Turns an `Authorization` header into the live principal it names:
    /// a bearer token only (a DPoP-bound one needs
    /// [`authenticate_request`](Self::authenticate_request) and its proof).
    pub async fn authenticate(
        &self,
        authorization: Option<&str>,
    ) -> Result<Principal, BearerError> {
        self.authenticate_request(&Presented {
            authorization,
            dpop: &[],
            method: "POST",
            url: "",
        })
        .await
    }

    /// Turns what a request presents into the live principal its token
    /// names; a DPoP-bound token also needs a fresh proof by its key for
    /// this request (RFC 9449 §7).
    pub async fn authenticate_request(
        &self,
        presented: &Presented<'_>,
    ) -> Result<Principal, BearerError> {
        let (scheme, token) = match presented.authorization.and_then(|h| h.split_once(' ')) {
            Some((s, token)) if s.eq_ignore_ascii_case("bearer") => (Scheme::Bearer, token.trim()),
            Some((s, token)) if s.eq_ignore_ascii_case("dpop") => (Scheme::Dpop, token.trim()),
            Some(_) => {
                return Err(BearerError::Invalid(
                    "only Bearer and DPoP tokens are accepted".into(),
                ));
            }
            None => return Err(BearerError::Missing),
        };
        let now = crate::server::now();
        let checked = async {
            let claims = self.verified_claims(token, now).await?;
            self.check_binding(scheme, token, &claims, presented, now)
                .await?;
            self.live_principal(claims).await
        };
        match (checked.await, scheme) {
            (Err(BearerError::Invalid(why)), Scheme::Dpop) => Err(BearerError::DpopToken(why)),
            (checked, _) => checked,
        }
    }

    /// The claims of a token whose signature, issuer and audience verify.
    async fn verified_claims(
        &self,
        token: &str,
        now: i64,
    ) -> Result<token::AccessClaims, BearerError> {
        let claims = match self.verified.get(token, now) {
            Some(claims) => claims,
            None => {
                let verify = || {
                    token::verify(
                        &self.keys,
                        token,
                        &self.config.issuer,
                        &self.config.resource(),
                    )
                };
                // A key id this replica has not loaded: another replica
                // rotated (or made the first key) since; read the keys again.
                let claims = match verify() {
                    Err(token::TokenError::UnknownKey) if self.reload_keys().await => verify()?,
                    verified => verified?,
                };
                self.verified.insert(token, &claims, now);
                claims
            }
        };
        Ok(claims)
    }

    /// RFC 9449 §7: a bound token is presented as `DPoP` with a proof by
    /// its key for this method and URL, carrying the token's hash, never
    /// seen before; an unbound one as `Bearer`.
    async fn check_binding(
        &self,
        scheme: Scheme,
        token: &str,
        claims: &token::AccessClaims,
        presented: &Presented<'_>,
        now: i64,
    ) -> Result<(), BearerError> {
        let jkt = match (claims.jkt(), scheme) {
            (None, Scheme::Bearer) => return Ok(()),
            (None, Scheme::Dpop) => {
                return Err(BearerError::DpopToken(
                    "this access token is not DPoP-bound: send it as Bearer".into(),
                ));
            }
            (Some(_), Scheme::Bearer) => {
                return Err(BearerError::DpopToken(
                    "this access token is DPoP-bound: send it as DPoP, with a proof by its key"
                        .into(),
                ));
            }
            (Some(jkt), Scheme::Dpop) => jkt,
        };
        let proof = dpop::one(presented.dpop)?.ok_or(DpopError::Missing)?;
        let expected = Expected {
            method: presented.method,
            url: presented.url,
            access_token: Some(token),
        };
        self.dpop(proof, &expected, Some(jkt), now).await?;
        Ok(())
    }

    /// The principal a verified token names, read live from the store.
    async fn live_principal(&self, claims: token::AccessClaims) -> Result<Principal, BearerError> {
        let grant = self
            .store
            .live_grant(&claims.sid)
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "reading a grant");
                BearerError::Unavailable
            })?
            .filter(|g| g.family.subject == claims.sub && g.family.client_id == claims.client_id)
            .ok_or_else(|| {
                BearerError::Invalid("the access token's grant does not exist".into())
            })?;
        if grant.family.revoked_at.is_some() {
            return Err(BearerError::Invalid("the access token was revoked".into()));
        }
        if grant.client_revoked_at.is_some() {
            return Err(BearerError::Invalid("the client was revoked".into()));
        }
        if grant.disabled {
            return Err(BearerError::Invalid("the user is disabled".into()));
        }
        // The token's scopes, less any its client has lost since it was
        // issued (an operator narrowing a service takes effect at once);
        // a toolset binding only narrows, so it is kept whatever the
        // client's registration says (a person may pick one at consent).
        let live: Vec<&str> = grant.client_scope.split(' ').collect();
        let scopes = claims
            .scope
            .split(' ')
            .filter(|s| !s.is_empty() && (live.contains(s) || scope::is_toolset_scope(s)))
            .map(Into::into)
            .collect();
        let principal = Principal {
            subject: claims.sub,
            kind: grant.family.subject_kind,
            name: grant.name,
            tenant: grant.tenant,
            client_id: claims.client_id,
            scopes,
            session: claims.sid,
        };
        if !principal.has_scope(scope::MCP) {
            return Err(BearerError::InsufficientScope(scope::MCP));
        }
        Ok(principal)
    }

    /// The `WWW-Authenticate` challenge and status for a refusal (RFC 6750
    /// §3, RFC 9728 §5.1).
    pub fn challenge(&self, e: &BearerError) -> Response {
        self.challenge_at(e, None)
    }

    /// [`challenge`](Self::challenge) at toolset `toolset`'s endpoint
    /// (`/mcp/toolsets/NAME`), whose metadata names that endpoint.
    fn challenge_at(&self, e: &BearerError, toolset: Option<&str>) -> Response {
        let endpoint = toolset.map_or_else(String::new, |t| format!("{TOOLSET_PATH}{t}"));
        let metadata = format!(
            "{}/.well-known/oauth-protected-resource/mcp{endpoint}",
            self.config.issuer
        );
        let (status, code, value) = match e {
            BearerError::Missing => (
                StatusCode::UNAUTHORIZED,
                "invalid_request",
                format!(
                    "Bearer resource_metadata=\"{metadata}\", scope=\"{}\"",
                    scope::MCP
                ),
            ),
            BearerError::Invalid(d) => (
                StatusCode::UNAUTHORIZED,
                "invalid_token",
                format!(
                    "Bearer error=\"invalid_token\", error_description=\"{}\", resource_metadata=\"{metadata}\", scope=\"{}\"",
                    quoted(d),
                    scope::MCP
                ),
            ),
            BearerError::InsufficientScope(s) => (
                StatusCode::FORBIDDEN,
                "insufficient_scope",
                format!(
                    "Bearer error=\"insufficient_scope\", scope=\"{s}\", resource_metadata=\"{metadata}\""
                ),
            ),
            BearerError::Proof(_) | BearerError::DpopToken(_) => {
                let code = match e {
                    BearerError::Proof(_) => "invalid_dpop_proof",
                    _ => "invalid_token",
                };
                (
                    StatusCode::UNAUTHORIZED,
                    code,
                    format!(
                        "DPoP error=\"{code}\", error_description=\"{}\", algs=\"{}\", resource_metadata=\"{metadata}\"",
                        quoted(&e.to_string()),
                        dpop::ALGORITHMS.join(" ")
                    ),
                )
            }
            BearerError::Unavailable => {
                // The store is unreachable: nothing was decided, try again.
                let body =
                    json!({"error": "temporarily_unavailable", "error_description": e.to_string()});
                let retry = [(header::RETRY_AFTER, HeaderValue::from_static("1"))];
                return (StatusCode::SERVICE_UNAVAILABLE, retry, axum::Json(body)).into_response();
            }
        };
        let body = json!({"error": code, "error_description": e.to_string()});
        let mut response = (status, axum::Json(body)).into_response();
        if let Ok(v) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        response
    }
}

/// Middleware for `/mcp`: authenticates, then hands the [`Principal`] to
/// the MCP handler through the request's extensions.
pub async fn require_bearer(
    State(auth): State<Arc<AuthServer>>,
    mut request: Request,
    next: Next,
) -> Response {
    // A toolset's endpoint narrows whatever the token reaches to it; a
    // name no toolset can have is no endpoint (the same for every tenant,
    // so saying so names nothing of anyone's).
    let toolset = endpoint_toolset(request.uri().path()).map(str::to_owned);
    if toolset.as_deref().is_some_and(|t| !is_toolset_name(t)) {
        let body = json!({
            "error": "not_found",
            "error_description": "no MCP endpoint here: a toolset's name is 1–64 of a–z, 0–9 and -",
        });
        return drained(
            request,
            (StatusCode::NOT_FOUND, axum::Json(body)).into_response(),
        )
        .await;
    }
    let headers = request.headers();
    let dpop = crate::routes::dpop_headers(headers);
    // The URL the client addressed: our public URL and the path (the
    // routes this guards are not nested, so the path is whole).
    let path = request.uri().path();
    let url = format!("{}{path}", auth.config.issuer);
    let presented = Presented {
        authorization: headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok()),
        dpop: &dpop,
        method: request.method().as_str(),
        url: &url,
    };
    let checked = auth
        .authenticate_request(&presented)
        .instrument(tracing::info_span!("auth"))
        .await;
    match checked {
        Ok(mut principal) => {
            if let Some(t) = &toolset {
                let scope = format!("{TOOLSET_SCOPE}{t}");
                if !principal.has_scope(&scope) {
                    principal.scopes.push(scope);
                }
            }
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        Err(e) => drained(request, auth.challenge_at(&e, toolset.as_deref())).await,
    }
}

/// `refusal`, once what the refused `request` still sends is read, so its
/// connection stays usable: answering before the body is read would have
/// the connection closed under a client that reuses it at once (its retry
/// with a fresh token then fails as "disconnected"). A body too large to
/// drain closes the connection, and says so.
async fn drained(request: Request, mut refusal: Response) -> Response {
    if axum::body::to_bytes(request.into_body(), DRAIN_LIMIT)
        .await
        .is_err()
    {
        refusal
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    refusal
}

/// The toolset whose endpoint `path` is (`/mcp/toolsets/NAME`), if any,
/// well-formed or not ([`require_bearer`] answers 404 for a name no
/// toolset can have).
pub fn endpoint_toolset(path: &str) -> Option<&str> {
    path.strip_prefix("/mcp")?.strip_prefix(TOOLSET_PATH)
}

/// The most of a refused request's body read before answering.
const DRAIN_LIMIT: usize = 256 * 1024;

/// A description safe inside a quoted-string.
fn quoted(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '"' && *c != '\\' && !c.is_control())
        .collect()
}
