//! Authoring sessions, read-only: the tenant's sessions, and one session's
//! evidence (its proposals with the diffs the host computed, the runs that
//! joined it with their receipt digests, its promotions with their
//! review's state). The same rows and host tools as
//! `list_authoring_sessions`, `get_authoring_session` and
//! `get_revision_diff`. Nothing here acts: authoring is an agent's work
//! through MCP, and review happens on the reviews page.

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};
use toolhost_invoke::InvokeError;

use crate::approvals::list;
use crate::diff::lay_out;
use crate::pages::Page;
use crate::paging::{Cursor, Pager, query};
use crate::viewer::Viewer;
use crate::{Console, Refusal, encode};

/// How many sessions a page shows.
const LISTED: u64 = 50;

pub(crate) fn routes() -> Router<Console> {
    let authoring = Page::Authoring.path();
    Router::new()
        .route(authoring, get(show))
        .route(&format!("{authoring}/{{session_id}}"), get(detail))
}

/// `key`'s value, as an address segment, under `path`.
fn with_path(mut row: Value, key: &str) -> Value {
    row["path"] = Value::String(encode(row[key].as_str().unwrap_or_default()));
    row
}

/// `v`'s items, if it is an array.
fn items(v: Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a,
        _ => Vec::new(),
    }
}

/// `v` as indented JSON text; nothing for null.
fn pretty(v: &Value) -> Value {
    match v {
        Value::Null => Value::Null,
        v => Value::String(serde_json::to_string_pretty(v).unwrap_or_default()),
    }
}

async fn show(
    State(c): State<Console>,
    headers: HeaderMap,
    Query(cursor): Query<Cursor>,
) -> Response {
    let viewer = viewer_of!(c, headers, Page::Authoring);
    // A page of sessions `before` a cursor (older) or `after` one (newer),
    // as `list_authoring_sessions` takes and answers them; the newest without.
    let given = |key: &str| Some(key.trim().to_owned()).filter(|k| !k.is_empty());
    let args = json!({
        "limit": LISTED,
        "before": given(&cursor.before),
        "after": given(&cursor.after),
    });
    let (mut sessions, older, newer) = match c.read(&viewer, "list_authoring_sessions", args).await
    {
        Ok(mut l) => {
            let (older, newer) = (l["older"].take(), l["newer"].take());
            (list(l, "sessions"), older, newer)
        }
        Err(e) => {
            let (status, refusal) = Refusal::of(&e);
            return c.refused(&viewer, Page::Authoring, status, refusal);
        }
    };
    c.name_people(&mut sessions, &["owner"], &viewer).await;
    let sessions: Vec<Value> = sessions
        .into_iter()
        .map(|s| with_path(s, "session_id"))
        .collect();
    let link = |rel: &str, v: &Value| v.as_str().map(|c| query(&[], Some((rel, c))));
    let pager = Pager {
        newer: link("after", &newer),
        older: link("before", &older),
    };
    let context = json!({"sessions": sessions, "pager": pager});
    c.page_ok(&viewer, Page::Authoring, "authoring.html", context)
        .await
}

/// Proposal `p` of session `session_id` with its diff laid out.
async fn proposal(
    c: &Console,
    viewer: &Viewer,
    session_id: &str,
    mut p: Value,
) -> Result<Value, InvokeError> {
    let args = json!({"session_id": session_id, "proposal_id": p["proposal_id"]});
    let diff = c.read(viewer, "get_revision_diff", args).await?;
    p["changes"] = lay_out(&diff["diff"]);
    p["widens"] = diff["diff"]["widens"].clone();
    p["summary"] = p["validation"]["summary"].clone();
    p["evidence"] = p["validation"]["evidence"].clone();
    p["validation_text"] = pretty(&p["validation"]);
    p["body_text"] = pretty(&p["body"]);
    Ok(p)
}

/// Session `id` as the page shows it.
async fn read(c: &Console, viewer: &Viewer, id: &str) -> Result<Value, InvokeError> {
    let mut session = c
        .read(viewer, "get_authoring_session", json!({"session_id": id}))
        .await?;
    let mut proposals = Vec::new();
    for p in items(session["proposals"].take()) {
        proposals.push(proposal(c, viewer, id, p).await?);
    }
    c.name_people(&mut proposals, &["author"], viewer).await;
    let mut promotions = items(session["promotions"].take());
    c.name_people(&mut promotions, &["promoted_by"], viewer)
        .await;
    for p in promotions.iter_mut() {
        p["result_text"] = pretty(&p["result"]);
    }
    let runs = items(session["runs"].take());
    c.name_people(std::slice::from_mut(&mut session), &["owner"], viewer)
        .await;
    session["proposals"] = proposals.into();
    session["promotions"] = promotions.into();
    session["runs"] = runs
        .into_iter()
        .map(|r| with_path(r, "run_id"))
        .collect::<Vec<_>>()
        .into();
    Ok(session)
}

async fn detail(
    State(c): State<Console>,
    headers: HeaderMap,
    Path(session_id): Path<String>,
) -> Response {
    let viewer = viewer_of!(c, headers, Page::Authoring);
    let session = match read(&c, &viewer, &session_id).await {
        Ok(s) => s,
        Err(e) => {
            let (status, refusal) = Refusal::of(&e);
            return c.refused(&viewer, Page::Authoring, status, refusal);
        }
    };
    let context = json!({
        "session": session,
        "sees_runs": Page::Runs.open_to(&viewer),
        "sees_reviews": Page::Reviews.open_to(&viewer),
    });
    c.page_ok(&viewer, Page::Authoring, "authoring.html", context)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::{QUOTES, SCRIPT as HOSTILE};

    /// `page` in the layout, for the test viewer.
    fn rendered(page: Value) -> String {
        crate::testing::render("authoring.html", page)
    }

    fn session() -> Value {
        json!({
            "session_id": "ws_1", "subject": HOSTILE, "bound_to": {"id": "7", "name": QUOTES},
            "subject_version": "rev0", "version": 3, "state": "open", "owner": "u1",
            "owner_name": HOSTILE, "created_at_ms": 1, "updated_at_ms": 2, "path": "ws_1",
        })
    }

    fn detail_page() -> Value {
        let diff = json!({"changes": [
            {"op": "added", "item": HOSTILE, "after": {"name": QUOTES}},
            {"op": "removed", "item": "old test", "before": {"name": "old"}},
        ]});
        let mut s = session();
        s["proposals"] = json!([{
            "proposal_id": "prop_1", "number": 1, "author": "u1", "author_name": QUOTES,
            "digest": "d1", "summary": HOSTILE, "evidence": ["run_1"],
            "validation": {"valid": true}, "validation_text": HOSTILE, "body_text": QUOTES,
            "created_at_ms": 1, "changes": lay_out(&diff),
        }]);
        s["runs"] = json!([{"run_id": "run_1", "path": "run_1", "proposal_id": "prop_1",
            "tool": HOSTILE, "state": "succeeded", "receipt_sha256": "feed"}]);
        s["promotions"] = json!([{"promotion_id": "pro_1", "proposal_id": "prop_1",
            "promoted_by": "u1", "promoted_by_name": HOSTILE, "state": "pending_review",
            "revision_id": "rev1", "review_state": "pending_review", "gate_id": null,
            "result_text": HOSTILE, "created_at_ms": 1, "updated_at_ms": 2}]);
        json!({"session": s, "sees_runs": true, "sees_reviews": true})
    }

    #[test]
    fn every_value_of_a_session_is_escaped_and_nothing_is_a_form() {
        let pages = [json!({"sessions": [session()]}), detail_page()];
        for page in pages {
            let html = rendered(page);
            assert!(!html.contains("<script>alert"), "{html}");
            assert!(html.contains("&lt;script&gt;alert(1)&lt;"));
            assert!(!html.contains(QUOTES));
            assert!(html.contains("a&quot;b&#x27;c"));
            // The layout's sign-out is the only form: this page is read-only.
            assert_eq!(html.matches("<form").count(), 1);
            assert!(!html.contains("<textarea"));
        }
    }

    #[test]
    fn a_session_shows_its_proposals_diffs_runs_and_promotions() {
        let html = rendered(json!({"sessions": [session()]}));
        assert!(html.contains(r#"<tr id="ws_1">"#));
        assert!(html.contains(r#"href="/admin/authoring/ws_1""#));
        let html = rendered(detail_page());
        assert!(html.contains(r#"<article class="card" id="prop_1""#));
        assert!(html.contains(r#"<li class="diff-added">"#));
        assert!(html.contains(r#"<li class="diff-removed">"#));
        assert!(html.contains(r#"href="/admin/runs/run_1""#));
        assert!(html.contains(r#"href="/admin/reviews#rev1""#));
        assert!(html.contains("<code>feed</code>"));
    }
}
