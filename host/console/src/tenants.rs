//! Tenants: every tenant of the host with what it holds (users, disabled
//! ones, service clients), for the host's operators only (an admin of the
//! operator tenant, [`crate::viewer::Viewer::is_host_operator`]); anyone
//! else gets 403, as for any page not theirs. Read only: a tenant's people
//! are its own admins' to change (on their People page), and creating a
//! tenant stays `toolhost tenant add`.
//!
//! Paged by tenant id, [`SHOWN`] at a time, both ways: `?after=<id>` is
//! the page of the tenants whose ids sort after it, `?before=<id>` of
//! those before it (the primary key's index walked from there).

use axum::Router;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::get;
use serde_json::json;
use toolhost_storage::TenantCounts;

use crate::Console;
use crate::pages::Page;
use crate::paging::{self, BY_NAME, Cursor, Pager};

/// How many tenants a page shows.
const SHOWN: u32 = 100;

pub(crate) fn routes() -> Router<Console> {
    Router::new().route(Page::Tenants.path(), get(show))
}

async fn show(State(c): State<Console>, headers: HeaderMap, Query(q): Query<Cursor>) -> Response {
    let viewer = viewer_of!(c, headers, Page::Tenants);
    let (store, from) = (&c.store, q.by_name());
    let read = paging::read_page(
        &from,
        SHOWN,
        |t: &TenantCounts| t.id.clone(),
        |from, limit| async move { store.tenants_counted(&from, limit).await },
    );
    let (tenants, read) = match read.await {
        Ok(t) => t,
        Err(e) => {
            return c.unreadable(&viewer, Page::Tenants, "the tenants", &e);
        }
    };
    let shown: Vec<_> = tenants
        .iter()
        .map(|t| {
            json!({
                "id": t.id,
                "created_ms": t.created_at.saturating_mul(1000),
                "users": t.users,
                "disabled": t.disabled,
                "services": t.services,
                "yours": t.id == viewer.tenant(),
            })
        })
        .collect();
    let context = json!({
        "tenants": shown,
        "limit": SHOWN,
        "pager": Pager::linked(&read, &[], &BY_NAME),
    });
    c.page_ok(&viewer, Page::Tenants, "tenants.html", context)
        .await
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::testing::{HOSTILE, assert_escaped, render};

    #[test]
    fn each_tenant_shows_its_counts_and_the_next_page_keeps_its_place() {
        let html = render(
            "tenants.html",
            json!({"tenants": [
                {"id": HOSTILE, "created_ms": 1, "users": 3, "disabled": 1, "services": 2, "yours": false},
                {"id": "ops", "created_ms": 1, "users": 1, "disabled": 0, "services": 0, "yours": true},
            ], "limit": 100, "pager": {"newer": "before=a", "older": "after=ops"}}),
        );
        assert_escaped(&html);
        assert!(html.contains("<tr id=\"tenant-ops\">"), "{html}");
        assert!(
            html.contains("<a rel=\"next\" href=\"/admin/tenants?after=ops\">Next</a>"),
            "{html}"
        );
        assert!(
            html.contains("<a rel=\"prev\" href=\"/admin/tenants?before=a\">Previous</a>"),
            "{html}"
        );
    }
}
