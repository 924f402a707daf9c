//! The browser's trip through a single-sign-on provider:
//! `/oauth/sso/{name}/start` and `/oauth/sso/{name}/callback`.
//!
//! `start` continues a pending sign-in (an authorization request's login
//! page, or the host pages' sign-in page) from the browser that opened it:
//! it makes a fresh `state`, nonce and PKCE pair, stores them bound to that
//! browser, and sends the browser to the provider. `callback` takes the
//! attempt back by its `state` (once: a replayed or forged state finds
//! nothing), checks it is the same browser and provider, and hands the code
//! to the provider's adapter, which checks the ID token and links the
//! person to a local user. Only then is the browser signed in, and the
//! pending request goes on (to consent, or back to the page).
//!
//! Whatever the provider sends is shown to the person only as escaped text
//! on a page, and every outcome is an auth event (`sso.login`,
//! `sso.login.failed`, `sso.linked`…) that also reaches the audit trail.

use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum_extra::extract::cookie::CookieJar;
use serde::Deserialize;

use crate::authorize::{
    login_again, pending_client, pending_row, see_other, signed_in_next, start_session,
};
use crate::pages;
use crate::routes::Source;
use crate::server::{AuthServer, now, secs};
use crate::store::{PendingAuthorization, SsoAttempt, User};
use crate::upstream::{SignedIn, UpstreamError, UpstreamIdentity, UpstreamLogin};
use crate::{pkce, secret};

/// The longest provider error text echoed (escaped) on the page.
const MAX_PROVIDER_ERROR: usize = 200;

pub(crate) fn routes() -> Router<Arc<AuthServer>> {
    Router::new()
        .route("/oauth/sso/{name}/start", get(start))
        .route("/oauth/sso/{name}/callback", get(callback))
}

/// This host's callback for provider `name`: registered at the provider.
pub fn callback_url(issuer: &str, name: &str) -> String {
    format!("{}/oauth/sso/{name}/callback", issuer.trim_end_matches('/'))
}

/// The provider a route's `{name}` names; a name no provider has is
/// answered 404 with a page.
struct Provider(Arc<dyn UpstreamIdentity>);

impl FromRequestParts<Arc<AuthServer>> for Provider {
    type Rejection = Response;
    async fn from_request_parts(
        parts: &mut Parts,
        auth: &Arc<AuthServer>,
    ) -> Result<Self, Self::Rejection> {
        let Path(name) = Path::<String>::from_request_parts(parts, auth)
            .await
            .map_err(IntoResponse::into_response)?;
        auth.provider(&name)
            .map(Provider)
            .ok_or_else(|| pages::error(StatusCode::NOT_FOUND, "no such sign-in provider"))
    }
}

/// What an attempt sends the provider besides its secrets: the PKCE
/// challenge of its verifier, and this host's callback for its provider.
struct Sent {
    challenge: String,
    redirect_uri: String,
}

impl Sent {
    fn for_attempt(auth: &AuthServer, attempt: &SsoAttempt) -> Sent {
        Sent {
            challenge: pkce::s256(&attempt.code_verifier),
            redirect_uri: callback_url(&auth.config.issuer, &attempt.provider),
        }
    }

    /// The login of `attempt`, whose `state` went (or goes) to the provider.
    fn login<'a>(&'a self, state: &'a str, attempt: &'a SsoAttempt) -> UpstreamLogin<'a> {
        UpstreamLogin {
            state,
            nonce: &attempt.nonce,
            code_verifier: &attempt.code_verifier,
            code_challenge: &self.challenge,
            redirect_uri: &self.redirect_uri,
        }
    }
}

#[derive(Deserialize)]
struct StartQuery {
    pending: String,
}

async fn start(
    State(auth): State<Arc<AuthServer>>,
    Source(source): Source,
    jar: CookieJar,
    Query(q): Query<StartQuery>,
    Provider(provider): Provider,
) -> Response {
    let pending = match pending_row(&auth, &jar, &q.pending, None).await {
        Ok(p) => p,
        Err(r) => return r.into_response(),
    };
    let state = secret::random(32);
    let attempt = SsoAttempt {
        state_hash: secret::digest(&state),
        provider: provider.name().to_owned(),
        pending_id: pending.id.clone(),
        browser_hash: pending.browser_hash.clone(),
        nonce: secret::random(32),
        code_verifier: secret::random(48),
        expires_at: now() + secs(auth.config.pending_ttl),
    };
    if let Err(e) = auth.store.insert_sso_attempt(&attempt).await {
        return crate::authorize::store_failed("insert sso attempt")(e).into_response();
    }
    let sent = Sent::for_attempt(&auth, &attempt);
    match provider
        .authorization_url(sent.login(&state, &attempt))
        .await
    {
        Ok(url) => see_other(&url),
        Err(e) => refuse(&auth, provider.as_ref(), &pending, source, &e).await,
    }
}

#[derive(Deserialize)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

async fn callback(
    State(auth): State<Arc<AuthServer>>,
    Source(source): Source,
    jar: CookieJar,
    Query(q): Query<CallbackQuery>,
    Provider(provider): Provider,
) -> Response {
    let name = provider.name();
    if let Err(e) = auth.allow_login(source).await {
        let page = pages::error(StatusCode::TOO_MANY_REQUESTS, &e.description);
        return pages::retry_after(page, e.retry_after);
    }
    let attempt = match take_attempt(&auth, name, &jar, q.state.as_deref()).await {
        Ok(a) => a,
        Err(why) => {
            failed(&auth, name, None, source, why).await;
            return pages::error(
                StatusCode::BAD_REQUEST,
                "This sign-in expired, was already used, or was started in another browser. \
                 Start again from your application.",
            );
        }
    };
    let pending = match pending_row(&auth, &jar, &attempt.pending_id, None).await {
        Ok(p) => p,
        Err(r) => return r.into_response(),
    };
    match vouched_user(&auth, provider.as_ref(), &attempt, &q).await {
        Ok((signed, user)) => sign_in(&auth, jar, &pending, source, name, &signed, &user).await,
        Err(e) => refuse(&auth, provider.as_ref(), &pending, source, &e).await,
    }
}

/// The code the provider returned to the callback, or what it said instead.
fn provider_code(q: &CallbackQuery) -> Result<&str, UpstreamError> {
    match (&q.error, &q.code) {
        (None, Some(code)) => Ok(code),
        (error, _) => {
            let said = match error {
                Some(e) => provider_said(e, q.error_description.as_deref()),
                None => "no code".to_owned(),
            };
            Err(UpstreamError::Refused(format!(
                "the provider answered {said}"
            )))
        }
    }
}

/// Who the provider vouches for at the callback `q` of `attempt`, and the
/// enabled local user that is.
async fn vouched_user(
    auth: &AuthServer,
    provider: &dyn UpstreamIdentity,
    attempt: &SsoAttempt,
    q: &CallbackQuery,
) -> Result<(SignedIn, User), UpstreamError> {
    let code = provider_code(q)?;
    let state = q.state.as_deref().unwrap_or_default();
    let sent = Sent::for_attempt(auth, attempt);
    let signed = provider.sign_in(code, sent.login(state, attempt)).await?;
    // The adapter linked an enabled user; the host checks it once more.
    let user = auth
        .store
        .user_by_name(&signed.username)
        .await
        .ok()
        .flatten()
        .filter(|u| !u.disabled);
    let Some(user) = user else {
        let e = UpstreamError::NoAccount(format!("{:?} is not an enabled user", signed.username));
        return Err(e);
    };
    Ok((signed, user))
}

/// Signs the browser in as `user`, whom provider `name` vouched for:
/// what the sign-in changed and the login itself become events, and the
/// pending request goes on.
async fn sign_in(
    auth: &AuthServer,
    jar: CookieJar,
    pending: &PendingAuthorization,
    source: Option<std::net::IpAddr>,
    name: &str,
    signed: &SignedIn,
    user: &User,
) -> Response {
    let client = pending_client(pending);
    for (kind, detail) in &signed.changes {
        let detail = format!("{name}: {detail}");
        record_ok(auth, kind, client.as_deref(), user, source, detail).await;
    }
    let jar = match start_session(auth, jar, user).await {
        Ok(jar) => jar,
        Err(r) => return r.into_response(),
    };
    let detail = format!("{name}: subject {:?}", signed.subject);
    record_ok(auth, "sso.login", client.as_deref(), user, source, detail).await;
    match signed_in_next(auth, pending).await {
        Ok(next) => (jar, see_other(&next)).into_response(),
        Err(r) => (jar, r).into_response(),
    }
}

/// The attempt `state` names, taken (single use), if it belongs to this
/// provider and this browser and has not expired; else why not.
async fn take_attempt(
    auth: &AuthServer,
    name: &str,
    jar: &CookieJar,
    state: Option<&str>,
) -> Result<SsoAttempt, String> {
    let state = state.ok_or("the callback carries no state")?;
    let attempt = auth
        .store
        .take_sso_attempt(&secret::digest(state))
        .await
        .map_err(|e| e.to_string())?
        .ok_or("an unknown or spent state")?;
    let browser = jar
        .get(crate::authorize::BROWSER_COOKIE)
        .map(|c| secret::digest(c.value()));
    if !browser.is_some_and(|b| secret::same(&b, &attempt.browser_hash)) {
        return Err("a state opened by another browser".into());
    }
    if attempt.provider != name {
        return Err(format!("a state of provider {:?}", attempt.provider));
    }
    if now() >= attempt.expires_at {
        return Err("an expired state".into());
    }
    Ok(attempt)
}

/// What a provider said at the callback, shortened for the page and events.
fn provider_said(error: &str, description: Option<&str>) -> String {
    let text = match description {
        Some(d) => format!("{error}: {d}"),
        None => error.to_owned(),
    };
    text.chars().take(MAX_PROVIDER_ERROR).collect()
}

/// The login form again, with what went wrong in a person's words (the
/// detail goes to the events), and the failure recorded.
async fn refuse(
    auth: &AuthServer,
    provider: &dyn UpstreamIdentity,
    pending: &PendingAuthorization,
    source: Option<std::net::IpAddr>,
    e: &UpstreamError,
) -> Response {
    tracing::warn!(provider = provider.name(), error = %e, "single sign-on failed");
    failed(
        auth,
        provider.name(),
        pending_client(pending),
        source,
        e.to_string(),
    )
    .await;
    let label = provider.label();
    let (status, message) = match e {
        UpstreamError::Unavailable(_) if auth.config.password_login => (
            StatusCode::BAD_GATEWAY,
            format!("{label} cannot be reached right now; use your password."),
        ),
        UpstreamError::Unavailable(_) => (
            StatusCode::BAD_GATEWAY,
            format!("{label} cannot be reached right now; try again later."),
        ),
        UpstreamError::Refused(why) => (
            StatusCode::UNAUTHORIZED,
            format!("{label} did not sign you in ({why}). Try again."),
        ),
        UpstreamError::NoAccount(_) => (
            StatusCode::FORBIDDEN,
            format!(
                "{label} signed you in, but no enabled account here may use that identity. \
                 Ask an administrator."
            ),
        ),
    };
    login_again(auth, pending, &message, status)
}

async fn failed(
    auth: &AuthServer,
    name: &str,
    client: Option<String>,
    source: Option<std::net::IpAddr>,
    why: String,
) {
    let detail = format!("{name}: {why}");
    record(
        auth,
        "sso.login.failed",
        client.as_deref(),
        None,
        source,
        detail,
        false,
    )
    .await;
}

/// The event of what signing `user` in did, for `client`.
async fn record_ok(
    auth: &AuthServer,
    kind: &str,
    client: Option<&str>,
    user: &User,
    source: Option<std::net::IpAddr>,
    detail: String,
) {
    record(auth, kind, client, Some(user), source, detail, true).await;
}

/// An auth event, mirrored into the audit trail.
pub(crate) async fn record(
    auth: &AuthServer,
    kind: &str,
    client_id: Option<&str>,
    user: Option<&User>,
    source: Option<std::net::IpAddr>,
    detail: String,
    ok: bool,
) {
    let event = auth
        .event(kind, client_id, user.map(|u| u.id.as_str()), source, detail)
        .await;
    if let Some(audit) = &auth.sso.audit {
        audit
            .record(&event, user.map(|u| u.tenant.as_str()), ok)
            .await;
    }
}
