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
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
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
use crate::upstream::{UpstreamError, UpstreamIdentity, UpstreamLogin};
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

#[derive(Deserialize)]
struct StartQuery {
    pending: String,
}

async fn start(
    State(auth): State<Arc<AuthServer>>,
    Path(name): Path<String>,
    Source(source): Source,
    jar: CookieJar,
    Query(q): Query<StartQuery>,
) -> Response {
    let Some(provider) = auth.provider(&name) else {
        return pages::error(StatusCode::NOT_FOUND, "no such sign-in provider");
    };
    let pending = match pending_row(&auth, &jar, &q.pending, None).await {
        Ok(p) => p,
        Err(r) => return r.into_response(),
    };
    let state = secret::random(32);
    let nonce = secret::random(32);
    let verifier = secret::random(48);
    let attempt = SsoAttempt {
        state_hash: secret::digest(&state),
        provider: name.clone(),
        pending_id: pending.id.clone(),
        browser_hash: pending.browser_hash.clone(),
        nonce: nonce.clone(),
        code_verifier: verifier.clone(),
        expires_at: now() + secs(auth.config.pending_ttl),
    };
    if let Err(e) = auth.store.insert_sso_attempt(&attempt).await {
        return crate::authorize::store_failed("insert sso attempt")(e).into_response();
    }
    let (challenge, redirect_uri) = (
        pkce::s256(&verifier),
        callback_url(&auth.config.issuer, &name),
    );
    let login = UpstreamLogin {
        state: &state,
        nonce: &nonce,
        code_verifier: &verifier,
        code_challenge: &challenge,
        redirect_uri: &redirect_uri,
    };
    match provider.authorization_url(login).await {
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
    Path(name): Path<String>,
    Source(source): Source,
    jar: CookieJar,
    Query(q): Query<CallbackQuery>,
) -> Response {
    let Some(provider) = auth.provider(&name) else {
        return pages::error(StatusCode::NOT_FOUND, "no such sign-in provider");
    };
    if let Err(e) = auth.allow_login(source).await {
        let page = pages::error(StatusCode::TOO_MANY_REQUESTS, &e.description);
        return pages::retry_after(page, e.retry_after);
    }
    let attempt = match take_attempt(&auth, &name, &jar, q.state.as_deref()).await {
        Ok(a) => a,
        Err(why) => {
            failed(&auth, &name, None, source, why).await;
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
    let code = match (&q.error, &q.code) {
        (None, Some(code)) => code,
        (error, _) => {
            let said = match error {
                Some(e) => provider_said(e, q.error_description.as_deref()),
                None => "no code".to_owned(),
            };
            let e = UpstreamError::Refused(format!("the provider answered {said}"));
            return refuse(&auth, provider.as_ref(), &pending, source, &e).await;
        }
    };
    let state = q.state.unwrap_or_default();
    let (challenge, redirect_uri) = (
        pkce::s256(&attempt.code_verifier),
        callback_url(&auth.config.issuer, &name),
    );
    let login = UpstreamLogin {
        state: &state,
        nonce: &attempt.nonce,
        code_verifier: &attempt.code_verifier,
        code_challenge: &challenge,
        redirect_uri: &redirect_uri,
    };
    let signed = match provider.sign_in(code, login).await {
        Ok(s) => s,
        Err(e) => return refuse(&auth, provider.as_ref(), &pending, source, &e).await,
    };
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
        return refuse(&auth, provider.as_ref(), &pending, source, &e).await;
    };
    let client = pending_client(&pending);
    for (kind, detail) in &signed.changes {
        let detail = format!("{name}: {detail}");
        record(
            &auth,
            kind,
            client.as_deref(),
            Some(&user),
            source,
            detail,
            true,
        )
        .await;
    }
    let jar = match start_session(&auth, jar, &user).await {
        Ok(jar) => jar,
        Err(r) => return r.into_response(),
    };
    let detail = format!("{name}: subject {:?}", signed.subject);
    record(
        &auth,
        "sso.login",
        client.as_deref(),
        Some(&user),
        source,
        detail,
        true,
    )
    .await;
    match signed_in_next(&auth, &pending).await {
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

/// An auth event, mirrored into the audit trail.
async fn record(
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
