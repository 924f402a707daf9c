//! People's own connections to backends (issue 46): where a person
//! connects a backend that acts with each person's own account, sees their
//! connections and revokes them; a tenant admin sees and revokes anyone's
//! in the tenant.
//!
//! - `GET /admin/connections`: the page.
//! - `GET /admin/connections/{backend}/connect`: what a call's connect
//!   question opens; it asks the signed-in person to confirm (a stranger
//!   signs in first and comes back here).
//! - `GET /admin/connections/{backend}/start?csrf=…`: the confirmation's
//!   link (a link, not a form: the console's `form-action 'self'` would
//!   stop a form's redirect to another origin), which starts the flow at
//!   the backend's authorization server. The session's CSRF token makes
//!   it the person's own click, not another site's.
//! - `GET /admin/connections/{backend}/callback`: where that server sends
//!   the browser back; only the browser of the person who started the
//!   flow finishes it (`toolhost_sso::connections` checks the `state`,
//!   the person, the backend and the issuer).
//! - `POST /admin/connections/{backend}/revoke`: a person's connection
//!   revoked; their next call asks them to connect again.
//!
//! The page never holds a token: the connections room keeps them sealed
//! and shows only whose connection it is, to what, and since when.

use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::json;
use toolhost_auth::sign_in_path;
use toolhost_sso::connections::ConnectError;

use crate::pages::Page;
use crate::people::refusal;
use crate::render::see_other;
use crate::viewer::Viewer;
use crate::{Console, Refusal, done_on};

pub(crate) fn routes() -> Router<Console> {
    Router::new()
        .route(Page::Connections.path(), get(show))
        .route("/admin/connections/{backend}/connect", get(confirm))
        .route("/admin/connections/{backend}/start", get(start))
        .route("/admin/connections/{backend}/callback", get(callback))
        .route("/admin/connections/{backend}/revoke", post(revoke))
}

/// The notices the page shows after an action.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Shown {
    done: Option<String>,
    backend: Option<String>,
}

async fn show(State(c): State<Console>, headers: HeaderMap, Query(q): Query<Shown>) -> Response {
    let viewer = viewer_of!(c, headers, Page::Connections);
    let backend = q.backend.as_deref().unwrap_or_default();
    let notice = match q.done.as_deref() {
        Some("connected") => Some(format!(
            "{backend} is connected. Go back to your client: the call goes on."
        )),
        Some("revoked") => Some(format!("The connection to {backend} is revoked.")),
        _ => None,
    };
    render(&c, &viewer, notice, None, StatusCode::OK).await
}

async fn render(
    c: &Console,
    viewer: &Viewer,
    notice: Option<String>,
    refused: Option<Refusal>,
    status: StatusCode,
) -> Response {
    let Some(connections) = c.connections.as_ref() else {
        let context =
            json!({"backends": [], "connections": [], "notice": notice, "error": refused});
        return c
            .show(
                viewer,
                Page::Connections,
                "connections.html",
                status,
                None,
                context,
            )
            .await;
    };
    // A tenant admin sees everyone's in the tenant; anyone else their own.
    let whose = (!viewer.is_tenant_admin()).then_some(viewer.user.subject.as_str());
    let listed = connections.list(viewer.tenant(), whose).await;
    let listed = match listed {
        Ok(listed) => listed,
        Err(e) => return c.unreadable(viewer, Page::Connections, "the connections", &e),
    };
    let rows: Vec<_> = listed
        .iter()
        .map(|l| {
            json!({
                "user_id": l.user_id,
                "mine": l.user_id == viewer.user.subject,
                "backend": l.backend,
                "connected_ms": l.connected_at.saturating_mul(1000),
                "expires_ms": l.expires_at.map(|t| t.saturating_mul(1000)),
            })
        })
        .collect();
    let backends: Vec<_> = connections
        .backend_names()
        .into_iter()
        .map(|b| {
            let connected = listed
                .iter()
                .any(|l| l.backend == b && l.user_id == viewer.user.subject);
            json!({"name": b, "connected": connected})
        })
        .collect();
    let context = json!({
        "backends": backends,
        "connections": rows,
        "admin": viewer.is_tenant_admin(),
        "notice": notice,
        "error": refused,
    });
    c.show(
        viewer,
        Page::Connections,
        "connections.html",
        status,
        None,
        context,
    )
    .await
}

/// The page saying this host has no connection backend.
fn no_room(c: &Console, viewer: &Viewer) -> Response {
    let r = refusal(
        "NOT_FOUND",
        "this host has no backend that takes people's connections",
    );
    c.refused(viewer, Page::Connections, StatusCode::NOT_FOUND, r)
}

/// The person signed in to this browser, or a trip to sign in that
/// returns to `back` (the page a call's question opened).
async fn signed_in(c: &Console, headers: &HeaderMap, back: &str) -> Result<Viewer, Response> {
    if c.auth.web_user(headers).await.is_none() {
        return Err(see_other(&sign_in_path(back)));
    }
    c.viewer(headers, Page::Connections).await
}

/// A backend name as routes carry it: what backend names are (the words
/// of `[a-z0-9_-]`), so a path never echoes anything else.
fn backend_name(backend: &str) -> Option<&str> {
    let word = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-';
    (!backend.is_empty() && backend.len() <= 64 && backend.chars().all(word)).then_some(backend)
}

async fn confirm(
    State(c): State<Console>,
    headers: HeaderMap,
    Path(backend): Path<String>,
) -> Response {
    let Some(backend) = backend_name(&backend) else {
        return see_other(Page::Connections.path());
    };
    let back = format!("/admin/connections/{backend}/connect");
    let viewer = match signed_in(&c, &headers, &back).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let Some(connections) = c.connections.as_ref() else {
        return no_room(&c, &viewer);
    };
    if !connections.backend_names().iter().any(|b| b == backend) {
        let r = refusal(
            "NOT_FOUND",
            format!("no backend {backend:?} takes people's connections"),
        );
        return c.refused(&viewer, Page::Connections, StatusCode::NOT_FOUND, r);
    }
    let context = json!({"confirm": backend});
    c.show(
        &viewer,
        Page::Connections,
        "connect.html",
        StatusCode::OK,
        None,
        context,
    )
    .await
}

/// The confirmation link's query: the session's CSRF token.
#[derive(Deserialize)]
pub(crate) struct StartQuery {
    #[serde(default)]
    csrf: String,
}

async fn start(
    State(c): State<Console>,
    headers: HeaderMap,
    Path(backend): Path<String>,
    Query(f): Query<StartQuery>,
) -> Response {
    let viewer = acting_on!(c, headers, Page::Connections, &f.csrf);
    let Some(connections) = c.connections.as_ref() else {
        return no_room(&c, &viewer);
    };
    let started = connections.start(viewer.tenant(), &viewer.user.subject, &backend);
    match started.await {
        Ok(url) => see_other(&url),
        Err(e) => refused(&c, &viewer, &backend, &e).await,
    }
}

/// What the backend's server sends back (RFC 6749 §4.1.2, RFC 9207).
#[derive(Deserialize)]
pub(crate) struct Callback {
    code: Option<String>,
    state: Option<String>,
    iss: Option<String>,
    error: Option<String>,
}

async fn callback(
    State(c): State<Console>,
    headers: HeaderMap,
    Path(backend): Path<String>,
    Query(q): Query<Callback>,
) -> Response {
    let viewer = viewer_of!(c, headers, Page::Connections);
    let Some(connections) = c.connections.as_ref() else {
        return no_room(&c, &viewer);
    };
    let (Some(code), Some(state)) = (q.code.as_deref(), q.state.as_deref()) else {
        let why = q
            .error
            .as_deref()
            .unwrap_or("no code")
            .chars()
            .take(100)
            .collect::<String>();
        let e = ConnectError::Refused(format!("the server sent the browser back with {why:?}"));
        return refused(&c, &viewer, &backend, &e).await;
    };
    let who = (
        viewer.tenant(),
        viewer.user.subject.as_str(),
        backend.as_str(),
    );
    match connections.finish(who, state, code, q.iss.as_deref()).await {
        Ok(()) => see_other(&format!(
            "{}?done=connected&backend={}",
            Page::Connections.path(),
            url::form_urlencoded::byte_serialize(backend.as_bytes()).collect::<String>()
        )),
        Err(e) => refused(&c, &viewer, &backend, &e).await,
    }
}

/// A revocation: whose (the viewer's own unless a tenant admin names
/// another person of the tenant), and its CSRF token.
#[derive(Deserialize)]
pub(crate) struct RevokeForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    user_id: String,
}

async fn revoke(
    State(c): State<Console>,
    headers: HeaderMap,
    Path(backend): Path<String>,
    Form(f): Form<RevokeForm>,
) -> Response {
    let viewer = acting_on!(c, headers, Page::Connections, &f.csrf);
    let Some(connections) = c.connections.as_ref() else {
        return no_room(&c, &viewer);
    };
    let own = f.user_id.is_empty() || f.user_id == viewer.user.subject;
    if !own && !viewer.is_tenant_admin() {
        let r = refusal(
            "PERMISSION_DENIED",
            "only an administrator of your tenant revokes another person's connection",
        );
        return render(&c, &viewer, None, Some(r), StatusCode::FORBIDDEN).await;
    }
    let user_id = if own {
        viewer.user.subject.as_str()
    } else {
        f.user_id.as_str()
    };
    let whose = (viewer.tenant(), user_id, backend.as_str());
    match connections.revoke(whose, &viewer.user.username).await {
        Ok(true) => done_on(Page::Connections, "done", "revoked"),
        Ok(false) => {
            let r = refusal(
                "NOT_FOUND",
                format!("no connection to {backend:?} to revoke"),
            );
            render(&c, &viewer, None, Some(r), StatusCode::NOT_FOUND).await
        }
        Err(e) => refused(&c, &viewer, &backend, &e).await,
    }
}

/// The page again, saying why a connect step failed (the log has the
/// server's words in full).
async fn refused(c: &Console, viewer: &Viewer, backend: &str, e: &ConnectError) -> Response {
    tracing::warn!(error = %e, backend, "a connection step failed");
    let (status, code) = match e {
        ConnectError::UnknownBackend(_) => (StatusCode::NOT_FOUND, "NOT_FOUND"),
        ConnectError::UnknownAttempt => (StatusCode::BAD_REQUEST, "CONNECTION_ATTEMPT_UNKNOWN"),
        ConnectError::Refused(_) => (StatusCode::BAD_GATEWAY, "CONNECTION_REFUSED"),
        ConnectError::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE"),
    };
    let message = match e {
        ConnectError::Unavailable(_) => {
            "the store or the backend's server did not answer; try again".to_owned()
        }
        other => other.to_string(),
    };
    render(c, viewer, None, Some(refusal(code, message)), status).await
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::backend_name;
    use crate::testing::{CSRF, HOSTILE, assert_escaped, render};

    #[test]
    fn a_route_names_a_backend_only_in_a_backends_words() {
        for ok in ["crm", "k8s-api", "billing_v2"] {
            assert_eq!(backend_name(ok), Some(ok));
        }
        for bad in ["", "CRM", "a/b", "x\"y", &"x".repeat(65)] {
            assert_eq!(backend_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_page_shows_whose_connection_as_text_and_revokes_ones_own_without_naming_it() {
        let page = json!({
            "backends": [{"name": "crm", "connected": true}, {"name": "wiki", "connected": false}],
            "connections": [
                {"user_id": "u-ann", "mine": true, "backend": "crm", "connected_ms": 1, "expires_ms": 2},
                {"user_id": HOSTILE, "mine": false, "backend": "crm", "connected_ms": 1},
            ],
            "admin": true,
        });
        let html = render("connections.html", page);
        assert_escaped(&html);
        assert!(html.contains("/admin/connections/wiki/connect"), "{html}");
        assert!(!html.contains("/admin/connections/crm/connect"), "{html}");
        // One's own revoke form names nobody; another's names them.
        assert_eq!(html.matches("name=\"user_id\"").count(), 1, "{html}");
        assert_eq!(
            html.matches(CSRF).count(),
            2 + 1,
            "two forms and the layout's: {html}"
        );
    }

    #[test]
    fn the_confirmation_links_to_the_start_with_the_sessions_token() {
        let html = render("connect.html", json!({"confirm": "crm"}));
        let start = format!("href=\"/admin/connections/crm/start?csrf={CSRF}\"");
        assert!(html.contains(&start), "{html}");
        assert!(html.contains("as <strong>ann</strong>"), "{html}");
    }
}
