//! The authorization server's HTTP surface (everything but `/mcp`, which
//! [`require_bearer`](crate::require_bearer) guards).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

use crate::client_metadata::{self, AuthMethod, MAX_REGISTRATION_BYTES};
use crate::error::OAuthError;
use crate::grant::BasicCredentials;
use crate::params::Params;
use crate::server::{AuthServer, now};
use crate::store::{Client, ClientKind, ClientOrigin};
use crate::{authorize, metadata, scope, secret, sso, token, web};

/// The routes: discovery, authorize (login and consent pages), token,
/// registration, revocation and JWKS.
pub fn router(auth: Arc<AuthServer>) -> Router {
    Router::new()
        .route("/.well-known/oauth-authorization-server", get(as_metadata))
        .route("/.well-known/openid-configuration", get(as_metadata))
        .route("/.well-known/oauth-protected-resource", get(pr_metadata))
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(pr_metadata),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp/toolsets/{name}",
            get(toolset_pr_metadata),
        )
        .route("/oauth/jwks", get(jwks))
        .route(crate::assertion::ASSERTION_JWKS_PATH, get(assertion_jwks))
        .route("/oauth/token", post(token_endpoint))
        .route("/oauth/revoke", post(revoke))
        .route("/oauth/register", post(register))
        .merge(authorize::routes())
        .merge(web::routes())
        .merge(sso::routes())
        // Registration reads its own (larger) limit to answer with the
        // RFC's error rather than a bare 413.
        .layer(DefaultBodyLimit::max(MAX_REGISTRATION_BYTES * 4))
        .with_state(auth)
}

/// The client's address as the host in front of the authorization server
/// resolved it (the peer, or the client behind a trusted proxy); put in a
/// request's extensions, it is what [`Source`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub IpAddr);

/// The request's source address: its [`ClientAddr`], else the peer when the
/// server was built with connect info.
pub(crate) struct Source(pub Option<IpAddr>);

impl<S: Send + Sync> FromRequestParts<S> for Source {
    type Rejection = std::convert::Infallible;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        if let Some(ClientAddr(ip)) = parts.extensions.get::<ClientAddr>() {
            return Ok(Source(Some(*ip)));
        }
        Ok(Source(
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|c| c.0.ip()),
        ))
    }
}

fn json_no_store(status: StatusCode, body: serde_json::Value) -> Response {
    let mut r = (status, axum::Json(body)).into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

async fn as_metadata(State(auth): State<Arc<AuthServer>>) -> Response {
    axum::Json(metadata::authorization_server(auth.config())).into_response()
}

async fn pr_metadata(State(auth): State<Arc<AuthServer>>) -> Response {
    axum::Json(metadata::protected_resource(auth.config(), None)).into_response()
}

/// A toolset endpoint's metadata; a name no toolset could have is not
/// found (whether a tenant defines it is the tenant's, told to nobody).
async fn toolset_pr_metadata(
    State(auth): State<Arc<AuthServer>>,
    axum::extract::Path(name): axum::extract::Path<String>,
) -> Response {
    if !toolhost_policy::is_toolset_name(&name) {
        return StatusCode::NOT_FOUND.into_response();
    }
    axum::Json(metadata::protected_resource(auth.config(), Some(&name))).into_response()
}

async fn jwks(State(auth): State<Arc<AuthServer>>) -> Response {
    axum::Json(auth.keys.jwks()).into_response()
}

/// The public keys of identity assertions to backends: never an
/// access-token key.
async fn assertion_jwks(State(auth): State<Arc<AuthServer>>) -> Response {
    axum::Json(auth.assertion_jwks().await).into_response()
}

/// `Authorization: Basic` client credentials (RFC 6749 §2.3.1: both parts
/// form-encoded before base64). `Ok(None)` when there is no Basic header.
fn basic(headers: &HeaderMap) -> Result<Option<BasicCredentials>, OAuthError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let bad = || OAuthError::invalid_client("malformed Basic credentials");
    let value = value.to_str().map_err(|_| bad())?;
    let Some((scheme, encoded)) = value.split_once(' ') else {
        return Err(bad());
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(OAuthError::invalid_client(
            "only Basic client authentication is accepted in the header",
        ));
    }
    let decoded = STANDARD.decode(encoded.trim()).map_err(|_| bad())?;
    let decoded = String::from_utf8(decoded).map_err(|_| bad())?;
    let (id, secret) = decoded.split_once(':').ok_or_else(bad)?;
    let decode = |s: &str| {
        url::form_urlencoded::parse(format!("x={s}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    Ok(Some(BasicCredentials {
        client_id: decode(id),
        secret: decode(secret),
    }))
}

fn form(headers: &HeaderMap, body: &[u8]) -> Result<Params, OAuthError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !content_type.starts_with("application/x-www-form-urlencoded") {
        return Err(OAuthError::invalid_request(
            "send the parameters as application/x-www-form-urlencoded",
        ));
    }
    Params::parse(body)
}

async fn token_endpoint(
    State(auth): State<Arc<AuthServer>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let answer = async {
        let params = form(&headers, &body)?;
        let dpop: Vec<&str> = dpop_headers(&headers);
        auth.token(&params, basic(&headers)?, &dpop).await
    };
    match answer.await {
        Ok(t) => json_no_store(StatusCode::OK, serde_json::to_value(t).unwrap_or_default()),
        Err(e) => e.into_response(),
    }
}

/// RFC 7009: revoking either token of a grant ends the whole grant. Unknown
/// or foreign tokens are answered 200 too (nothing to reveal).
async fn revoke(
    State(auth): State<Arc<AuthServer>>,
    Source(source): Source,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let answer = async {
        let params = form(&headers, &body)?;
        let client = auth.authenticate_client(&params, basic(&headers)?).await?;
        let presented = params.require("token")?;
        let family = match auth
            .store
            .refresh_token(&secret::digest(presented))
            .await
            .map_err(|e| OAuthError::from(&e))?
        {
            Some(t) if t.client_id == client.client_id => Some(t.family_id),
            Some(_) => None,
            None => token::verify(
                &auth.keys,
                presented,
                &auth.config.issuer,
                &auth.config.resource(),
            )
            .ok()
            .filter(|c| c.client_id == client.client_id)
            .map(|c| c.sid),
        };
        if let Some(family) = family
            && auth
                .store
                .revoke_family(&family, now())
                .await
                .map_err(|e| OAuthError::from(&e))?
        {
            auth.event(
                "family.revoked.request",
                Some(&client.client_id),
                None,
                source,
                format!("grant {family} revoked by its client"),
            )
            .await;
        }
        Ok::<_, OAuthError>(())
    };
    match answer.await {
        Ok(()) => json_no_store(StatusCode::OK, json!({})),
        Err(e) => e.into_response(),
    }
}

/// RFC 7591 dynamic registration: public (or secret-holding) clients for
/// the authorization code grant, first-party scopes only, rate-limited per
/// source and audited.
async fn register(
    State(auth): State<Arc<AuthServer>>,
    Source(source): Source,
    body: Bytes,
) -> Response {
    match registration(&auth, source, &body).await {
        Ok(body) => json_no_store(StatusCode::CREATED, body),
        Err(e) => {
            if e.status != StatusCode::TOO_MANY_REQUESTS {
                auth.event(
                    "client.registration.refused",
                    None,
                    None,
                    source,
                    e.description.clone(),
                )
                .await;
            }
            e.into_response()
        }
    }
}

/// Registers the client `body` describes, from `source`: the answer's
/// body, with the client's secret if it holds one.
async fn registration(
    auth: &AuthServer,
    source: Option<IpAddr>,
    body: &[u8],
) -> Result<serde_json::Value, OAuthError> {
    auth.allow_registration(source).await?;
    let meta = client_metadata::validate_registration(body, scope::FIRST_PARTY, scope::MCP)
        .map_err(|e| OAuthError::registration(e.error_code(), e.to_string()))?;
    let kind = match meta.auth_method {
        AuthMethod::None => ClientKind::Public,
        AuthMethod::ClientSecretBasic | AuthMethod::ClientSecretPost => ClientKind::Confidential,
    };
    let secret = AuthServer::new_secret(kind);
    let client = Client {
        client_id: secret::random(18),
        secret_hash: secret.as_ref().map(|(_, d)| d.clone()),
        kind,
        origin: ClientOrigin::Dynamic,
        name: meta.client_name.clone(),
        redirect_uris: meta.redirect_uris.clone(),
        scope: meta.scope.clone(),
        tenant: None,
        owner: source.map(|s| s.to_string()),
        created_at: now(),
        last_used_at: None,
        revoked_at: None,
        refresh_at: None,
    };
    auth.store
        .insert_client(&client)
        .await
        .map_err(|e| OAuthError::from(&e))?;
    auth.event(
        "client.registered",
        Some(&client.client_id),
        None,
        source,
        format!(
            "{:?} registered ({}) for {}",
            client.name,
            kind.as_str(),
            client.redirect_uris.join(" ")
        ),
    )
    .await;
    Ok(registered(&client, &meta, secret.map(|(s, _)| s)))
}

/// RFC 7591's answer for `client`, registered as `meta` asked; `secret`,
/// if it holds one, shown this once.
fn registered(
    client: &Client,
    meta: &client_metadata::ClientMetadata,
    secret: Option<String>,
) -> serde_json::Value {
    let mut body = json!({
        "client_id": client.client_id,
        "client_id_issued_at": client.created_at,
        "client_name": client.name,
        "redirect_uris": client.redirect_uris,
        "grant_types": meta.grant_types.iter().map(|g| g.as_str()).collect::<Vec<_>>(),
        "response_types": ["code"],
        "token_endpoint_auth_method": meta.auth_method.as_str(),
        "scope": client.scope,
    });
    if let Some(s) = secret {
        body["client_secret"] = json!(s);
        body["client_secret_expires_at"] = json!(0);
    }
    body
}

/// A request's `DPoP` headers (RFC 9449 §4.1); one that is not text is
/// kept as empty, so that it fails as a proof rather than vanish.
pub(crate) fn dpop_headers(headers: &HeaderMap) -> Vec<&str> {
    headers
        .get_all("dpop")
        .iter()
        .map(|v| v.to_str().unwrap_or(""))
        .collect()
}
