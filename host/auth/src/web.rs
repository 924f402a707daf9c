//! The web session beyond the authorization flow: the host's own pages
//! (the admin console) ask who this browser is signed in as
//! ([`AuthServer::web_user`]), get a CSRF token bound to that session, and
//! send a stranger to `/oauth/signin` ([`sign_in_path`]), whose form posts
//! to the one password sign-in handler `/oauth/login` has too
//! (`authorize::login`), and which returns them to a plain path.
//!
//! The session cookie stays scoped to `/oauth`; signing in also sets a
//! second cookie with the same session for the console under `/admin`.
//! Sign-in returns only to those two places: a return path anywhere else
//! would arrive without the session, and is refused; that also rules out
//! open redirects.
//!
//! ```
//! assert_eq!(
//!     toolhost_auth::sign_in_path("/admin/approvals"),
//!     "/oauth/signin?return_to=%2Fadmin%2Fapprovals"
//! );
//! ```

use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum_extra::extract::cookie::CookieJar;
use serde::{Deserialize, Serialize};

use crate::authorize::{
    CONSOLE_COOKIE, CONSOLE_PATH, SESSION_COOKIE, cookie, logged_in, open_pending, see_other,
    session_user,
};
use crate::pages;
use crate::routes::Source;
use crate::secret;
use crate::server::AuthServer;
use crate::store::PendingAuthorization;

/// The only paths `/oauth/signin` returns to: those a session cookie reaches.
const RETURN_PREFIXES: [&str; 2] = ["/oauth/", "/admin"];
/// The longest return path accepted: the host's pages have short addresses.
const MAX_RETURN: usize = 256;
/// Separates the session's CSRF token from every other digest of its cookie.
const CSRF_LABEL: &str = "toolhost web csrf v1\0";

/// The person a browser is signed in as, for the host's own pages.
#[derive(Debug, Clone)]
pub struct WebUser {
    /// Their stable id (a token's `sub`).
    pub subject: String,
    /// Their login name.
    pub username: String,
    /// Their tenant.
    pub tenant: String,
    csrf: String,
}

impl WebUser {
    /// The token the page's forms carry. It is derived from the session
    /// cookie (SHA-256 of a label and the cookie's 256 random bits): a page
    /// of another origin can neither read nor compute it, it reveals
    /// nothing of the cookie, and it ends with the session.
    pub fn csrf(&self) -> &str {
        &self.csrf
    }

    /// Whether a form's token is this session's (constant time).
    pub fn csrf_matches(&self, presented: &str) -> bool {
        secret::same(presented, &self.csrf)
    }
}

impl AuthServer {
    /// Who the browser sending `headers` is signed in as: an unexpired web
    /// session of an enabled user, read from the store on every request.
    /// `None` without one (send them to [`sign_in_path`]).
    pub async fn web_user(&self, headers: &HeaderMap) -> Option<WebUser> {
        let jar = CookieJar::from_headers(headers);
        let cookie = jar.get(SESSION_COOKIE).or(jar.get(CONSOLE_COOKIE))?.value();
        let user = session_user(self, cookie).await?;
        Some(WebUser {
            subject: user.id,
            username: user.username,
            tenant: user.tenant,
            csrf: session_csrf(cookie),
        })
    }
}

impl AuthServer {
    /// Signs `user` out: every web session of theirs ends (in every
    /// browser: the store keeps no way to tell this browser's row apart
    /// without its cookie, and ending all is the safer reading), both
    /// session cookies are cleared, and the browser goes to `then`.
    pub async fn sign_out(&self, user: &WebUser, then: &str) -> Response {
        if let Err(e) = self.store.delete_user_sessions(&user.subject).await {
            tracing::error!(error = %e, "signing out");
            return pages::error(
                StatusCode::SERVICE_UNAVAILABLE,
                "signing out failed; try again",
            );
        }
        self.event("logout", None, Some(&user.subject), None, "web sign-out")
            .await;
        let jar = CookieJar::new()
            .add(gone(self, SESSION_COOKIE, "/oauth"))
            .add(gone(self, CONSOLE_COOKIE, CONSOLE_PATH));
        (jar, see_other(then)).into_response()
    }
}

/// A cookie that tells the browser to forget `name` at `path`.
fn gone(
    auth: &AuthServer,
    name: &'static str,
    path: &'static str,
) -> axum_extra::extract::cookie::Cookie<'static> {
    let mut c = cookie(auth, name, String::new());
    c.set_path(path);
    c.make_removal();
    c
}

/// Where to send a browser that is not signed in, so that it comes back
/// to `return_to` (a path under `/oauth/` or `/admin`, else the sign-in
/// page refuses).
pub fn sign_in_path(return_to: &str) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("return_to", return_to)
        .finish();
    format!("/oauth/signin?{query}")
}

pub(crate) fn routes() -> Router<Arc<AuthServer>> {
    Router::new().route(
        "/oauth/signin",
        get(sign_in_page).post(crate::authorize::login),
    )
}

fn session_csrf(cookie: &str) -> String {
    secret::digest(&format!("{CSRF_LABEL}{cookie}"))
}

/// `s` if it is a plain path under `/oauth/` or `/admin`: no scheme, no
/// authority, no `..`, nothing a browser could read as another site.
fn return_path(s: &str) -> Option<&str> {
    let console = s == CONSOLE_PATH
        || s.strip_prefix(CONSOLE_PATH)
            .is_some_and(|rest| rest.starts_with('/') || rest.starts_with('?'));
    let ok = (console || s.starts_with(RETURN_PREFIXES[0]))
        && s.len() <= MAX_RETURN
        && !s.contains("//")
        && !s.contains("..")
        && s.bytes().all(|b| b.is_ascii_graphic() && b != b'\\');
    ok.then_some(s)
}

/// What a sign-in's pending row holds.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignIn {
    return_to: String,
}

#[derive(Deserialize)]
struct SignInQuery {
    #[serde(default)]
    return_to: String,
}

async fn sign_in_page(
    State(auth): State<Arc<AuthServer>>,
    Source(source): Source,
    jar: CookieJar,
    Query(q): Query<SignInQuery>,
) -> Response {
    let Some(return_to) = return_path(&q.return_to) else {
        return pages::error(StatusCode::BAD_REQUEST, "nowhere to return to");
    };
    if logged_in(&auth, &jar).await.is_some() {
        // Signed in before the console cookie existed: give it the same
        // session, or `/admin` would send the browser here forever.
        let session = jar.get(SESSION_COOKIE).map(|c| c.value().to_owned());
        let jar = match session {
            Some(id) if return_to.starts_with(CONSOLE_PATH) => {
                let mut c = cookie(&auth, CONSOLE_COOKIE, id);
                c.set_path(CONSOLE_PATH);
                jar.add(c)
            }
            _ => jar,
        };
        return (jar, see_other(return_to)).into_response();
    }
    let request = SignIn {
        return_to: return_to.to_owned(),
    };
    match open_pending(&auth, source, jar, &request).await {
        Ok((jar, pending)) => (jar, form(&auth, &pending, None, StatusCode::OK)).into_response(),
        Err(r) => r.into_response(),
    }
}

pub(crate) fn form(
    auth: &AuthServer,
    pending: &PendingAuthorization,
    error: Option<&str>,
    status: StatusCode,
) -> Response {
    crate::authorize::sign_in_form(auth, pending, "/oauth/signin", None, error, status)
}

/// The return path of a sign-in's pending row; refused (why, for the
/// page) for a row of another flow: an authorization request does not
/// parse as a sign-in.
pub(crate) fn sign_in_return(pending: &PendingAuthorization) -> Result<String, &'static str> {
    let request: SignIn = serde_json::from_str(&pending.request)
        .map_err(|_| "this sign-in form belongs to another flow")?;
    return_path(&request.return_to)
        .map(str::to_owned)
        .ok_or("nowhere to return to")
}

// Signing in over HTTP (the redirect, the single-use form, the session
// the page then reads) is tested end to end in tests/e2e_gates_web.rs:
// a unit test here cannot use `toolhost_storage`, which depends on this
// crate.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_paths_under_oauth_are_returned_to() {
        for ok in [
            "/oauth/approvals",
            "/oauth/approvals?decided=gate_1",
            "/admin",
            "/admin/",
            "/admin/approvals?decided=gate_1",
        ] {
            assert_eq!(return_path(ok), Some(ok), "{ok}");
        }
        for bad in [
            "",
            "/mcp",
            "https://evil.example/oauth/",
            "//evil.example/oauth/",
            "/oauth//evil.example",
            "/oauth/../mcp",
            "/oauth/\\evil.example",
            "/oauth/a b",
            "/oauth/\u{e9}",
            "/administrator",
            "/admin//evil.example",
            "/admin/../mcp",
        ] {
            assert_eq!(return_path(bad), None, "{bad:?}");
        }
        assert_eq!(return_path(&format!("/oauth/{}", "a".repeat(300))), None);
    }

    #[test]
    fn the_csrf_token_is_bound_to_the_session_and_reveals_nothing_of_it() {
        let (a, b) = (secret::random(32), secret::random(32));
        assert_eq!(session_csrf(&a), session_csrf(&a));
        assert_ne!(session_csrf(&a), session_csrf(&b));
        // Not the stored form of the cookie either.
        assert_ne!(session_csrf(&a), secret::digest(&a));
    }
}
