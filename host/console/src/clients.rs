//! Service clients: a tenant's own clients (`toolhost client add
//! --service`), newest first a page at a time, for the tenant's admins,
//! who revoke them here. Clients people sign in with (registered or
//! metadata-document clients) serve every tenant and stay the operator's
//! to manage with `toolhost client`.
//!
//! A revocation is written as the People page's changes are
//! ([`PeopleEffect::RevokeClient`] in the transaction of the viewer's
//! audit row), and only for a service client of the viewer's tenant: any
//! other client is as missing as one that never was.

use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_audit::PeopleEffect;
use toolhost_auth::{Client, ClientKind};
use toolhost_storage::{ClientKey, PageFrom, ServiceClientsQuery};

use crate::pages::Page;
use crate::paging::{self, Cursor, Pager};
use crate::people::{now_s, refusal, store_down};
use crate::viewer::Viewer;
use crate::{Console, Refusal, done_on};

/// How many clients a page shows.
const SHOWN: u32 = 50;

pub(crate) fn routes() -> Router<Console> {
    Router::new().route(Page::Clients.path(), get(show)).route(
        "/admin/people/clients/{client_id}/revoke",
        post(revoke_client),
    )
}

/// What the page shows: the notice of an action done, and which page
/// (`before` a client's key: older; `after` one: newer; the newest
/// without).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Shown {
    done: Option<String>,
    #[serde(flatten)]
    cursor: Cursor,
}

/// The one action's notice.
const REVOKED: &str = "The client is revoked: its tokens stopped working.";

async fn show(State(c): State<Console>, headers: HeaderMap, Query(q): Query<Shown>) -> Response {
    let viewer = viewer_of!(c, headers, Page::Clients);
    let notice = (q.done.as_deref() == Some("client-revoked")).then_some(REVOKED);
    render(&c, &viewer, &q.cursor, notice, None, StatusCode::OK).await
}

/// Where a page starts in the list (newest first): `before` a key is
/// after it in the list, `after` a key before it.
fn from(cursor: &Cursor) -> Result<PageFrom<ClientKey>, Refusal> {
    let key = |k: &str| {
        k.parse::<ClientKey>().map_err(|_| {
            refusal(
                "INVALID_ARGUMENTS",
                "that page's address is not one the console gave: start from the first page",
            )
        })
    };
    Ok(match (cursor.before.trim(), cursor.after.trim()) {
        ("", "") => PageFrom::Start,
        (before, "") => PageFrom::After(key(before)?),
        (_, after) => PageFrom::Before(key(after)?),
    })
}

async fn render(
    c: &Console,
    viewer: &Viewer,
    cursor: &Cursor,
    notice: Option<&str>,
    refused: Option<Refusal>,
    status: StatusCode,
) -> Response {
    let from = match from(cursor) {
        Ok(from) => from,
        Err(r) => return c.refused(viewer, Page::Clients, StatusCode::BAD_REQUEST, r),
    };
    let tenant = viewer.tenant();
    let read = paging::read_page(&from, SHOWN, ClientKey::of, |from, limit| {
        let query = ServiceClientsQuery {
            tenant: tenant.to_owned(),
            from,
            limit,
        };
        async move { c.store.service_clients_page(&query).await }
    });
    let (clients, read) = match read.await {
        Ok(r) => r,
        Err(e) => {
            return c.unreadable(viewer, Page::Clients, "the tenant's service clients", &e);
        }
    };
    let context = json!({
        "tenant": tenant,
        "clients": clients.iter().map(view).collect::<Vec<_>>(),
        "pager": Pager::of(&read, &[]),
        "notice": notice,
        "error": refused,
    });
    c.show(viewer, Page::Clients, "clients.html", status, None, context)
        .await
}

/// A service client as the page shows it.
fn view(cl: &Client) -> Value {
    json!({
        "client_id": cl.client_id,
        "name": cl.name,
        "scope": cl.scope,
        "created_ms": cl.created_at.saturating_mul(1000),
        "last_used_ms": cl.last_used_at.map(|t| t.saturating_mul(1000)),
        "revoked_ms": cl.revoked_at.map(|t| t.saturating_mul(1000)),
    })
}

/// The form of a revocation: its CSRF token.
#[derive(Deserialize)]
pub(crate) struct RevokeForm {
    #[serde(default)]
    csrf: String,
}

async fn revoke_client(
    State(c): State<Console>,
    headers: HeaderMap,
    Path(client_id): Path<String>,
    Form(f): Form<RevokeForm>,
) -> Response {
    let viewer = acting_on!(c, headers, Page::Clients, &f.csrf);
    let tenant = viewer.tenant().to_owned();
    let args = json!({"client_id": client_id});
    let decided = async {
        // Only a service client of this tenant: any other is not found.
        match c.auth.store().client(&client_id).await {
            Ok(Some(cl))
                if cl.kind == ClientKind::Service
                    && cl.tenant.as_deref() == Some(tenant.as_str()) => {}
            Ok(_) => {
                return Err(refusal(
                    "CLIENT_NOT_FOUND",
                    format!("no service client {client_id:?} in your tenant"),
                ));
            }
            Err(e) => return Err(store_down(&e)),
        }
        Ok(vec![PeopleEffect::RevokeClient {
            client_id: client_id.clone(),
            at_s: now_s(),
        }])
    };
    let lost = refusal(
        "CLIENT_NOT_FOUND",
        format!("an active client {client_id:?} does not exist (revoked already?)"),
    );
    match c.act(&viewer, ("revoke_client", args), decided, lost).await {
        Ok(()) => done_on(Page::Clients, "done", "client-revoked"),
        Err(r) => {
            let status = crate::status_of(r.code);
            render(&c, &viewer, &Cursor::default(), None, Some(r), status).await
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::from;
    use crate::paging::Cursor;
    use crate::testing::{HOSTILE, assert_escaped, render};

    #[test]
    fn a_page_is_read_from_a_key_the_console_gave_and_none_else() {
        let cursor = |before: &str, after: &str| Cursor {
            before: before.into(),
            after: after.into(),
        };
        assert!(from(&cursor("", "")).is_ok());
        assert!(from(&cursor("1764000000.svc-1", "")).is_ok());
        assert!(from(&cursor("", "1764000000.svc-1")).is_ok());
        let refused = from(&cursor("svc-1", "")).expect_err("not a key");
        assert_eq!(refused.code, "INVALID_ARGUMENTS");
    }

    #[test]
    fn names_and_scopes_are_text_and_only_an_active_client_is_revoked() {
        let page = json!({
            "tenant": "demo",
            "clients": [
                {"client_id": "svc 1", "name": HOSTILE, "scope": "mcp", "created_ms": 1},
                {"client_id": "svc-2", "name": "gone", "scope": HOSTILE, "created_ms": 1, "revoked_ms": 2},
            ],
            "pager": {"newer": null, "older": "before=1.svc-2"},
        });
        let html = render("clients.html", page);
        assert_escaped(&html);
        assert!(
            html.contains("/admin/people/clients/svc%201/revoke"),
            "{html}"
        );
        assert!(!html.contains("/admin/people/clients/svc-2/revoke"));
        assert!(
            html.contains("href=\"/admin/people/clients?before=1.svc-2\">Older</a>"),
            "{html}"
        );
    }
}
