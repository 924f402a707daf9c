//! `/oauth/authorize` and the browser flow behind it: validate the request,
//! log the person in (or reuse their web session), ask for consent (or
//! reuse an earlier one), and send the browser back with a code.
//!
//! Where an error goes (RFC 6749 §4.1.2.1, RFC 9700 §4.11.2: the
//! authorization server must not be an open redirector):
//!
//! - Until the client and its exact redirect URI are verified (an unknown,
//!   revoked or service client, a missing or unregistered redirect URI, a
//!   metadata document that cannot be used), errors are our own page, never
//!   a redirect, even for a person already signed in.
//! - After that, an error (`unsupported_response_type`, `invalid_request`,
//!   `invalid_target`, `invalid_scope`) goes back to the client with
//!   `error`, `state` and `iss` only if its redirect URI is trusted: the
//!   operator registered the client, or the person signed in on this
//!   browser has consented to it before. Any other client (dynamically
//!   registered or a metadata document, which anyone can make a second
//!   earlier with any https redirect URI) gets our page, naming the error,
//!   with no link to the redirect URI: the person starts again from their
//!   application.
//! - A person's "Deny" on the consent page goes back with `access_denied`:
//!   they saw the client's name and redirect host and chose to leave.
//! - Success (a code) always goes back, after sign-in and consent.

use std::net::IpAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Form, Query, RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum_extra::extract::cookie::{Cookie, CookieJar, SameSite};
use serde::{Deserialize, Serialize};

use crate::error::log_detail;
use crate::pages::{self, ConsentPage, LoginPage};
use crate::params::Params;
use crate::routes::Source;
use crate::scope::Scopes;
use crate::server::{AuthServer, now, secs};
use crate::store::{
    AuthCode, AuthStoreError, Client, ClientKind, ClientOrigin, PendingAuthorization, User,
    WebSession,
};
use crate::{cimd, client_metadata};
use crate::{password, pkce, secret};

/// The browser's login session.
pub(crate) const SESSION_COOKIE: &str = "toolhost_session";
/// Binds pending authorization requests to the browser that started them.
pub(crate) const BROWSER_COOKIE: &str = "toolhost_browser";
/// The same session's id for the console's pages under `/admin` (a second
/// cookie: one cookie has one path, and `/oauth` must not widen to `/`,
/// which would send it with every `/mcp` request).
pub(crate) const CONSOLE_COOKIE: &str = "toolhost_console";
/// Where the console cookie is sent.
pub(crate) const CONSOLE_PATH: &str = "/admin";
/// What a password sign-in is told when the operator turned passwords off.
pub(crate) const PASSWORDS_OFF: &str = "Password sign-in is turned off; use single sign-on.";
/// How long a fetched metadata document is trusted before it is fetched again.
const DOCUMENT_TTL: i64 = 3600;

pub(crate) fn routes() -> Router<Arc<AuthServer>> {
    Router::new()
        .route("/oauth/authorize", get(authorize))
        .route("/oauth/login", post(login))
        .route("/oauth/consent", get(consent_page).post(consent))
}

/// A validated authorization request, kept server-side while the person
/// logs in and decides.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Request {
    client_id: String,
    client_name: String,
    redirect_uri: String,
    state: Option<String>,
    code_challenge: String,
    scope: String,
    resource: String,
    force_consent: bool,
    /// The DPoP key the code is bound to (RFC 9449 §10), if the request
    /// named one. Absent from requests kept by an older build.
    #[serde(default)]
    dpop_jkt: Option<String>,
}

/// A refusal on the way: a page, a page saying how long to wait (429
/// with `Retry-After`), or a redirect back to the client.
pub(crate) enum Refusal {
    Page(StatusCode, String),
    Wait(String, u64),
    Redirect(Response),
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Page(status, message) => pages::error(status, &message),
            Refusal::Wait(message, secs) => pages::retry_after(
                pages::error(StatusCode::TOO_MANY_REQUESTS, &message),
                Some(secs),
            ),
            Refusal::Redirect(r) => r,
        }
    }
}

pub(crate) fn page(message: impl Into<String>) -> Refusal {
    Refusal::Page(StatusCode::BAD_REQUEST, message.into())
}

/// What a page says when the store (or our own encoding) failed: nothing
/// about the store, which an unauthenticated caller must not learn.
pub(crate) const FAILED: &str = "The sign-in service failed; try again in a moment.";

/// Maps a store failure met while doing `operation` to a page: 503 while
/// the store is unreachable, else 500, saying only [`FAILED`]. The error
/// goes to the operator's log, cut to [`LOG_DETAIL_CHARS`].
pub(crate) fn store_failed(operation: &'static str) -> impl FnOnce(AuthStoreError) -> Refusal {
    move |e| {
        let status = match e {
            AuthStoreError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        tracing::error!(operation, error = %log_detail(&e), "authorization page: store failed");
        Refusal::Page(status, FAILED.to_owned())
    }
}

/// [`store_failed`] for an error of our own (a pending row that does not
/// encode or decode): 500, [`FAILED`], the detail logged.
pub(crate) fn failed<E: std::fmt::Display>(operation: &'static str) -> impl FnOnce(E) -> Refusal {
    move |e| {
        tracing::error!(operation, error = %log_detail(&e), "authorization page failed");
        Refusal::Page(StatusCode::INTERNAL_SERVER_ERROR, FAILED.to_owned())
    }
}

async fn authorize(
    State(auth): State<Arc<AuthServer>>,
    Source(source): Source,
    jar: CookieJar,
    RawQuery(query): RawQuery,
) -> Response {
    match start(&auth, source, jar, query.unwrap_or_default()).await {
        Ok(r) | Err(Refusal::Redirect(r)) => r,
        Err(refusal) => refusal.into_response(),
    }
}

async fn start(
    auth: &AuthServer,
    source: Option<IpAddr>,
    jar: CookieJar,
    query: String,
) -> Result<Response, Refusal> {
    let params = Params::parse(query.as_bytes()).map_err(|e| page(e.description))?;
    let client_id = params
        .get("client_id")
        .ok_or_else(|| page("client_id is missing"))?;
    let client = client_for(auth, client_id).await?;
    if client.kind == ClientKind::Service {
        return Err(page(
            "service clients use client_credentials, not the browser flow",
        ));
    }
    let redirect_uri = params
        .get("redirect_uri")
        .ok_or_else(|| page("redirect_uri is missing"))?;
    if !client
        .redirect_uris
        .iter()
        .any(|u| client_metadata::redirect_uri_matches(u, redirect_uri))
    {
        return Err(page(
            "redirect_uri is not registered for this client (exact match required, \
             except the port of a loopback IP literal)",
        ));
    }
    let state = params.get("state").map(str::to_owned);
    let request = match checked(auth, &client, redirect_uri, state.clone(), &params) {
        Ok(request) => request,
        Err((code, description)) => {
            return Err(refuse(auth, &jar, &client, redirect_uri, state, code, &description).await);
        }
    };
    let (jar, pending) = open_pending(auth, source, jar, &request).await?;
    match logged_in(auth, &jar).await {
        Some(user) => {
            Ok((jar, continue_as(auth, &user, &pending, &request).await?).into_response())
        }
        None => Ok((
            jar,
            login_page(auth, &pending, &request, None, StatusCode::OK),
        )
            .into_response()),
    }
}

/// The authorization request, once its client and redirect URI are known
/// good; else the RFC's error code and a description.
fn checked(
    auth: &AuthServer,
    client: &Client,
    redirect_uri: &str,
    state: Option<String>,
    params: &Params,
) -> Result<Request, (&'static str, String)> {
    let refuse = |code: &'static str, description: &str| (code, description.to_owned());
    if params.get("response_type") != Some("code") {
        return Err(refuse(
            "unsupported_response_type",
            "response_type must be code",
        ));
    }
    let challenge = params
        .get("code_challenge")
        .ok_or_else(|| refuse("invalid_request", "code_challenge is required (PKCE S256)"))?;
    if params.get("code_challenge_method") != Some("S256") {
        return Err(refuse(
            "invalid_request",
            "code_challenge_method must be S256; plain is not accepted",
        ));
    }
    if !pkce::valid_challenge(challenge) {
        return Err(refuse(
            "invalid_request",
            "code_challenge is not a base64url SHA-256",
        ));
    }
    // `/mcp`, or one toolset's endpoint under it (which binds the token
    // to that toolset): either way the token's audience is `/mcp`.
    let endpoint_toolset = match params.get("resource") {
        None => None,
        Some(r) => auth.config.toolset_of_resource(r).ok_or_else(|| {
            refuse(
                "invalid_target",
                "this server issues tokens only for its /mcp resource and its toolsets' endpoints",
            )
        })?,
    };
    let allowed = Scopes::parse(&client.scope).unwrap_or_default();
    let scope = match params.get("scope") {
        Some(s) => Scopes::parse(s).map_err(|e| refuse("invalid_scope", &e))?,
        None => allowed.clone(),
    };
    if scope.is_empty() {
        return Err(refuse("invalid_scope", "the requested scope is empty"));
    }
    let scope = (scope.granted_within(&allowed)).map_err(|e| refuse("invalid_scope", &e))?;
    let scope = match endpoint_toolset {
        Some(name) => scope.with_toolset(name),
        None => scope,
    };
    // A JWK SHA-256 thumbprint is base64url of 32 bytes, as a PKCE S256
    // challenge is.
    let dpop_jkt = params.get("dpop_jkt");
    if dpop_jkt.is_some_and(|jkt| !pkce::valid_challenge(jkt)) {
        return Err(refuse(
            "invalid_request",
            "dpop_jkt is not a base64url JWK SHA-256 thumbprint",
        ));
    }
    Ok(Request {
        client_id: client.client_id.clone(),
        client_name: client.name.clone(),
        redirect_uri: redirect_uri.to_owned(),
        state,
        code_challenge: challenge.to_owned(),
        scope: scope.to_string(),
        resource: auth.config.resource(),
        force_consent: params
            .get("prompt")
            .is_some_and(|p| p.split(' ').any(|v| v == "consent")),
        dpop_jkt: dpop_jkt.map(str::to_owned),
    })
}

/// An error in a request whose client and redirect URI are known good: back
/// to the client with `error`, `state` and `iss` (RFC 6749 §4.1.2.1) if its
/// redirect URI is trusted, else our own page naming the error, with no
/// link (RFC 9700 §4.11.2: the authorization server must not become an
/// open redirector for a client anyone could have registered).
async fn refuse(
    auth: &AuthServer,
    jar: &CookieJar,
    client: &Client,
    redirect_uri: &str,
    state: Option<String>,
    code: &str,
    description: &str,
) -> Refusal {
    if trusted_redirect(auth, jar, client).await {
        let pairs = [("error", code), ("error_description", description)];
        return Refusal::Redirect(back(auth, redirect_uri, state.as_deref(), &pairs));
    }
    page(format!(
        "The application's request cannot be used ({code}): {description}."
    ))
}

/// Whether an error may be sent to `client`'s redirect URI without a person
/// choosing to go there: the operator registered the client, or the person
/// signed in on this browser has consented to it before. A dynamically
/// registered or metadata-document client is anyone's until then.
async fn trusted_redirect(auth: &AuthServer, jar: &CookieJar, client: &Client) -> bool {
    if client.origin == ClientOrigin::Admin {
        return true;
    }
    let Some(user) = logged_in(auth, jar).await else {
        return false;
    };
    auth.store
        .consent(&user.id, &client.client_id)
        .await
        .ok()
        .flatten()
        .is_some()
}

/// The client named by `client_id`: registered, or described by a metadata
/// document at that URL (fetched safely, cached for an hour).
async fn client_for(auth: &AuthServer, client_id: &str) -> Result<Client, Refusal> {
    let known = auth
        .usable_client(client_id)
        .await
        .map_err(|e| page(e.description))?;
    let fresh = |c: &Client| {
        c.origin != ClientOrigin::MetadataDocument || c.refresh_at.is_some_and(|t| now() < t)
    };
    match known {
        Some(c) if fresh(&c) => return Ok(c),
        _ if !cimd::is_document_url(client_id) => {
            return Err(page("unknown, revoked or expired client"));
        }
        _ => {}
    }
    let revoked = auth
        .store
        .client(client_id)
        .await
        .ok()
        .flatten()
        .is_some_and(|c| c.revoked_at.is_some());
    if revoked {
        return Err(page("unknown, revoked or expired client"));
    }
    let meta = auth
        .fetcher
        .fetch(client_id, crate::scope::FIRST_PARTY, crate::scope::MCP)
        .await
        .map_err(|e| {
            tracing::warn!(client_id = %client_metadata::clip(client_id), error = %log_detail(&e),
                "a client's metadata document cannot be used");
            page(format!(
                "the client's metadata document cannot be used: {}",
                e.public_message()
            ))
        })?;
    let client = Client {
        client_id: client_id.to_owned(),
        secret_hash: None,
        kind: ClientKind::Public,
        origin: ClientOrigin::MetadataDocument,
        name: meta.client_name,
        redirect_uris: meta.redirect_uris,
        scope: meta.scope,
        tenant: None,
        owner: None,
        created_at: now(),
        last_used_at: None,
        revoked_at: None,
        refresh_at: Some(now() + DOCUMENT_TTL),
    };
    auth.store
        .upsert_document_client(&client)
        .await
        .map_err(store_failed("upsert document client"))?;
    auth.event(
        "client.document.fetched",
        Some(client_id),
        None,
        None,
        format!("{:?}", client.name),
    )
    .await;
    Ok(client)
}

/// Stores the request (an authorization request, or a plain sign-in's
/// return path), bound to this browser and a CSRF token: within the
/// per-source limit and the cap on stored rows, else a 429 page.
pub(crate) async fn open_pending<T: Serialize>(
    auth: &AuthServer,
    source: Option<IpAddr>,
    jar: CookieJar,
    request: &T,
) -> Result<(CookieJar, PendingAuthorization), Refusal> {
    auth.allow_pending(source).await.map_err(|e| {
        Refusal::Wait(
            format!("Too many sign-ins: {}.", e.description),
            e.retry_after.unwrap_or(1),
        )
    })?;
    let (jar, browser) = match jar.get(BROWSER_COOKIE) {
        Some(c) if c.value().len() >= 32 => {
            let v = c.value().to_owned();
            (jar, v)
        }
        _ => {
            let v = secret::token(secret::COOKIE);
            let jar = jar.add(cookie(auth, BROWSER_COOKIE, v.clone()));
            (jar, v)
        }
    };
    let pending = PendingAuthorization {
        id: secret::random(18),
        browser_hash: secret::digest(&browser),
        csrf: secret::random(24),
        request: serde_json::to_string(request).map_err(failed("encode a pending request"))?,
        expires_at: now() + secs(auth.config.pending_ttl),
    };
    auth.store
        .insert_pending(&pending)
        .await
        .map_err(store_failed("insert pending"))?;
    Ok((jar, pending))
}

/// The pending authorization request `id`: see [`pending_row`].
async fn pending_for(
    auth: &AuthServer,
    jar: &CookieJar,
    id: &str,
    csrf: Option<&str>,
) -> Result<(PendingAuthorization, Request), Refusal> {
    let pending = pending_row(auth, jar, id, csrf).await?;
    let request: Request =
        serde_json::from_str(&pending.request).map_err(failed("decode a pending request"))?;
    Ok((pending, request))
}

/// The pending row `id`, if it is unexpired and was opened by this
/// browser (and, when `csrf` is given, the form echoes its token).
pub(crate) async fn pending_row(
    auth: &AuthServer,
    jar: &CookieJar,
    id: &str,
    csrf: Option<&str>,
) -> Result<PendingAuthorization, Refusal> {
    let expired = || page("this sign-in form expired or was opened in another browser");
    let pending = auth
        .store
        .pending(id)
        .await
        .map_err(store_failed("read pending"))?
        .ok_or_else(expired)?;
    let browser = jar.get(BROWSER_COOKIE).map(|c| secret::digest(c.value()));
    let same_browser = browser.is_some_and(|b| secret::same(&b, &pending.browser_hash));
    let csrf_ok = csrf.is_none_or(|c| secret::same(c, &pending.csrf));
    if now() >= pending.expires_at || !same_browser || !csrf_ok {
        return Err(expired());
    }
    Ok(pending)
}

/// The user this browser is logged in as, if any.
pub(crate) async fn logged_in(auth: &AuthServer, jar: &CookieJar) -> Option<User> {
    session_user(auth, jar.get(SESSION_COOKIE)?.value()).await
}

/// The enabled user whose unexpired session cookie is `id`.
pub(crate) async fn session_user(auth: &AuthServer, id: &str) -> Option<User> {
    let session = auth
        .store
        .session(&secret::digest(id))
        .await
        .ok()
        .flatten()?;
    if now() >= session.expires_at {
        return None;
    }
    auth.store
        .user_by_id(&session.user_id)
        .await
        .ok()
        .flatten()
        .filter(|u| !u.disabled)
}

/// A logged-in user: straight back with a code if they already approved
/// this client for these scopes, else to the consent page.
async fn continue_as(
    auth: &AuthServer,
    user: &User,
    pending: &PendingAuthorization,
    request: &Request,
) -> Result<Response, Refusal> {
    let approved = auth
        .store
        .consent(&user.id, &request.client_id)
        .await
        .map_err(store_failed("read consent"))?
        .and_then(|s| Scopes::parse(&s).ok());
    let wanted = Scopes::parse(&request.scope).unwrap_or_default();
    if let Some(approved) = approved.filter(|a| !request.force_consent && wanted.is_subset_of(a)) {
        take_pending(auth, pending).await?;
        // The toolset the person picked when they approved still binds.
        let mut request = request.clone();
        if wanted.toolsets().next().is_none() {
            request.scope = wanted.keeping_toolsets(&approved).to_string();
        }
        return issue_code(auth, user, &request).await;
    }
    Ok(see_other(&format!("/oauth/consent?pending={}", pending.id)))
}

/// Takes `pending` (single use): a request completed once is refused the
/// second time.
async fn take_pending(auth: &AuthServer, pending: &PendingAuthorization) -> Result<(), Refusal> {
    if !auth
        .store
        .take_pending(&pending.id)
        .await
        .map_err(store_failed("take pending"))?
    {
        return Err(page("this sign-in was already completed"));
    }
    Ok(())
}

fn login_page(
    auth: &AuthServer,
    pending: &PendingAuthorization,
    request: &Request,
    error: Option<&str>,
    status: StatusCode,
) -> Response {
    let asked_by = Some(request.client_name.as_str());
    sign_in_form(auth, pending, "/oauth/login", asked_by, error, status)
}

/// The sign-in form of `pending`, posted to `action`, naming the client
/// that asked (an authorization request's) if any.
pub(crate) fn sign_in_form(
    auth: &AuthServer,
    pending: &PendingAuthorization,
    action: &'static str,
    client_name: Option<&str>,
    error: Option<&str>,
    status: StatusCode,
) -> Response {
    pages::login(
        status,
        &LoginPage {
            action,
            pending: &pending.id,
            csrf: &pending.csrf,
            client_name,
            error,
            providers: auth.providers(),
            password: auth.config.password_login,
        },
    )
}

/// The sign-in form of `pending` again, with `error`: the authorization
/// request's login page, or the host pages' sign-in page.
pub(crate) fn login_again(
    auth: &AuthServer,
    pending: &PendingAuthorization,
    error: &str,
    status: StatusCode,
) -> Response {
    match serde_json::from_str::<Request>(&pending.request) {
        Ok(request) => login_page(auth, pending, &request, Some(error), status),
        Err(_) => crate::web::form(auth, pending, Some(error), status),
    }
}

/// Where a pending request continues once its browser is signed in: the
/// consent step of an authorization request, or a sign-in's return path.
pub(crate) async fn signed_in_next(
    auth: &AuthServer,
    pending: &PendingAuthorization,
) -> Result<String, Refusal> {
    if serde_json::from_str::<Request>(&pending.request).is_ok() {
        return Ok(format!("/oauth/consent?pending={}", pending.id));
    }
    let return_to = crate::web::sign_in_return(pending).map_err(page)?;
    take_pending(auth, pending).await?;
    Ok(return_to)
}

#[derive(Deserialize)]
pub(crate) struct LoginForm {
    pending: String,
    csrf: String,
    username: String,
    password: String,
}

/// A password sign-in, from either form that shows one: `/oauth/login` in
/// an authorization request, `/oauth/signin` for the host's own pages. The
/// pending row says which flow it is: where a refusal shows the form again
/// ([`login_again`]) and where a sign-in goes next ([`signed_in_next`]:
/// the consent step, or the page's return path).
pub(crate) async fn login(
    State(auth): State<Arc<AuthServer>>,
    Source(source): Source,
    jar: CookieJar,
    Form(form): Form<LoginForm>,
) -> Response {
    if !auth.config.password_login {
        return pages::error(StatusCode::FORBIDDEN, PASSWORDS_OFF);
    }
    let answer = async {
        let pending = pending_row(&auth, &jar, &form.pending, Some(&form.csrf)).await?;
        let client = pending_client(&pending);
        let client = client.as_deref();
        let user = match check_password(&auth, source, client, &form.username, form.password).await
        {
            Ok(u) => u,
            Err(no) => {
                let page = login_again(&auth, &pending, &no.message, no.status);
                return Ok::<Response, Refusal>(pages::retry_after(page, no.retry_after));
            }
        };
        let next = signed_in_next(&auth, &pending).await?;
        let jar = start_session(&auth, jar, &user).await?;
        let how = if client.is_some() {
            "password"
        } else {
            "password (web)"
        };
        auth.event("login", client, Some(&user.id), source, how)
            .await;
        Ok((jar, see_other(&next)).into_response())
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

/// The OAuth client of a pending authorization request (`None` for a
/// sign-in to the host's own pages).
pub(crate) fn pending_client(pending: &PendingAuthorization) -> Option<String> {
    serde_json::from_str::<serde_json::Value>(&pending.request)
        .ok()?
        .get("client_id")?
        .as_str()
        .map(str::to_owned)
}

/// Why a password sign-in was refused: the status and message for the
/// login page, and for 429 the seconds to wait (`Retry-After`).
pub(crate) struct LoginRefused {
    pub status: StatusCode,
    pub message: String,
    pub retry_after: Option<u64>,
}

impl LoginRefused {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        LoginRefused {
            status,
            message: message.into(),
            retry_after: None,
        }
    }
}

/// A password sign-in attempt: rate-limited per source, the same work
/// whether or not the user exists, a failure recorded as an event.
pub(crate) async fn check_password(
    auth: &AuthServer,
    source: Option<std::net::IpAddr>,
    client_id: Option<&str>,
    username: &str,
    password: String,
) -> Result<User, LoginRefused> {
    if !auth.config.password_login {
        return Err(LoginRefused::new(StatusCode::FORBIDDEN, PASSWORDS_OFF));
    }
    auth.allow_login(source).await.map_err(|e| LoginRefused {
        status: StatusCode::TOO_MANY_REQUESTS,
        message: e.description,
        retry_after: e.retry_after,
    })?;
    let user = auth.store.user_by_name(username).await.ok().flatten();
    let stored = user
        .as_ref()
        .map_or(password::DUMMY.to_owned(), |u| u.password_hash.clone());
    let matches = password::verify(password, stored).await;
    match user {
        Some(u) if matches && !u.disabled => Ok(u),
        _ => {
            auth.event(
                "login.failed",
                client_id,
                None,
                source,
                format!("username {username:?}"),
            )
            .await;
            let message = "Wrong username or password, or the account is disabled.";
            Err(LoginRefused::new(StatusCode::UNAUTHORIZED, message))
        }
    }
}

/// Logs this browser in as `user`: a new session row and its cookie.
pub(crate) async fn start_session(
    auth: &AuthServer,
    jar: CookieJar,
    user: &User,
) -> Result<CookieJar, Refusal> {
    let id = secret::token(secret::COOKIE);
    let session = WebSession {
        id_hash: secret::digest(&id),
        user_id: user.id.clone(),
        created_at: now(),
        expires_at: now() + secs(auth.config.session_ttl),
    };
    auth.store
        .insert_session(&session)
        .await
        .map_err(store_failed("insert session"))?;
    let mut console = cookie(auth, CONSOLE_COOKIE, id.clone());
    console.set_path(CONSOLE_PATH);
    Ok(jar.add(cookie(auth, SESSION_COOKIE, id)).add(console))
}

#[derive(Deserialize)]
struct PendingQuery {
    pending: String,
}

async fn consent_page(
    State(auth): State<Arc<AuthServer>>,
    jar: CookieJar,
    Query(q): Query<PendingQuery>,
) -> Response {
    let answer = async {
        let (pending, request) = pending_for(&auth, &jar, &q.pending, None).await?;
        let Some(user) = logged_in(&auth, &jar).await else {
            return Ok(login_page(&auth, &pending, &request, None, StatusCode::OK));
        };
        let approved = auth
            .store
            .consent(&user.id, &request.client_id)
            .await
            .ok()
            .flatten();
        let covered = approved
            .and_then(|a| Scopes::parse(&a).ok())
            .is_some_and(|a| {
                Scopes::parse(&request.scope)
                    .unwrap_or_default()
                    .is_subset_of(&a)
            });
        if covered && !request.force_consent {
            return continue_as(&auth, &user, &pending, &request).await;
        }
        let host = url::Url::parse(&request.redirect_uri)
            .ok()
            .map(|u| {
                u.host_str()
                    .map_or_else(|| u.scheme().to_owned(), str::to_owned)
            })
            .unwrap_or_default();
        let asked = Scopes::parse(&request.scope).unwrap_or_default();
        let bound: Vec<&str> = asked.toolsets().collect();
        let toolsets = match bound.is_empty() {
            true => (auth.store.toolset_names(&user.tenant).await)
                .map_err(store_failed("read toolsets"))?,
            false => Vec::new(),
        };
        Ok(pages::consent(&ConsentPage {
            pending: &pending.id,
            csrf: &pending.csrf,
            client_name: &request.client_name,
            redirect_host: &host,
            username: &user.username,
            scopes: &request.scope,
            bound,
            toolsets: &toolsets,
        }))
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

#[derive(Deserialize)]
struct ConsentForm {
    pending: String,
    csrf: String,
    decision: String,
    /// The toolset the person bound the client to (empty or absent: all
    /// their tools); only when the request bound it to none.
    #[serde(default)]
    toolset: String,
}

async fn consent(
    State(auth): State<Arc<AuthServer>>,
    jar: CookieJar,
    Form(form): Form<ConsentForm>,
) -> Response {
    let answer = async {
        let (pending, request) = pending_for(&auth, &jar, &form.pending, Some(&form.csrf)).await?;
        let user = logged_in(&auth, &jar)
            .await
            .ok_or_else(|| page("you are not signed in"))?;
        take_pending(&auth, &pending).await?;
        if form.decision != "allow" {
            let denied = [
                ("error", "access_denied"),
                ("error_description", "the user denied access"),
            ];
            return Ok(back(
                &auth,
                &request.redirect_uri,
                request.state.as_deref(),
                &denied,
            ));
        }
        let request = picked(&auth, &user, request, &form.toolset).await?;
        auth.store
            .save_consent(&user.id, &request.client_id, &request.scope, now())
            .await
            .map_err(store_failed("save consent"))?;
        issue_code(&auth, &user, &request).await
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

/// `request` bound to the toolset the person picked at consent: one their
/// tenant defines (anything else is refused, naming nothing of it), and
/// only when the request bound the client to none (a binding the client
/// asked for, or its registration made, is never replaced).
async fn picked(
    auth: &AuthServer,
    user: &User,
    mut request: Request,
    toolset: &str,
) -> Result<Request, Refusal> {
    let asked = Scopes::parse(&request.scope).unwrap_or_default();
    if toolset.is_empty() || asked.toolsets().next().is_some() {
        return Ok(request);
    }
    let defined =
        (auth.store.toolset_names(&user.tenant).await).map_err(store_failed("read toolsets"))?;
    if !defined.iter().any(|t| t == toolset) {
        return Err(page("that toolset is not one of your organisation's"));
    }
    request.scope = asked.with_toolset(toolset).to_string();
    Ok(request)
}

/// Issues a code and sends the browser back to the client with it.
async fn issue_code(
    auth: &AuthServer,
    user: &User,
    request: &Request,
) -> Result<Response, Refusal> {
    let code = secret::token(secret::AUTHORIZATION_CODE);
    let record = AuthCode {
        code_hash: secret::digest(&code),
        family_id: secret::random(16),
        client_id: request.client_id.clone(),
        user_id: user.id.clone(),
        redirect_uri: request.redirect_uri.clone(),
        code_challenge: request.code_challenge.clone(),
        scope: request.scope.clone(),
        resource: request.resource.clone(),
        expires_at: now() + secs(auth.config.code_ttl),
        dpop_jkt: request.dpop_jkt.clone(),
    };
    auth.store
        .insert_code(&record)
        .await
        .map_err(store_failed("insert code"))?;
    Ok(back(
        auth,
        &request.redirect_uri,
        request.state.as_deref(),
        &[("code", &code)],
    ))
}

/// A redirect to the client's `redirect_uri` with `pairs`, `state` (echoed)
/// and `iss` (RFC 9207).
fn back(
    auth: &AuthServer,
    redirect_uri: &str,
    state: Option<&str>,
    pairs: &[(&str, &str)],
) -> Response {
    let Ok(mut url) = url::Url::parse(redirect_uri) else {
        return pages::error(StatusCode::BAD_REQUEST, "the redirect_uri is not a URL");
    };
    {
        let mut q = url.query_pairs_mut();
        for (k, v) in pairs {
            q.append_pair(k, v);
        }
        if let Some(s) = state {
            q.append_pair("state", s);
        }
        q.append_pair("iss", &auth.config.issuer);
    }
    let mut r = StatusCode::FOUND.into_response();
    if let Ok(v) = HeaderValue::from_str(url.as_str()) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

pub(crate) fn see_other(location: &str) -> Response {
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

/// A browser-session cookie (no Max-Age: the server-side row's expiry is
/// what counts, and the browser forgets it when closed).
pub(crate) fn cookie(auth: &AuthServer, name: &'static str, value: String) -> Cookie<'static> {
    Cookie::build((name, value))
        .path("/oauth")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(auth.config.secure_cookies())
        .build()
}
