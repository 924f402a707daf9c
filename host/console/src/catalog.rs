//! The catalog as a tenant sees it, read only: the plugin revisions that
//! affect the viewer's tenant, from `list_catalog_changes`. Above, those
//! waiting for the host's operators to review, each with a summary of
//! what it changes; below, what is served now and what was served
//! before. Nobody's identifiers appear (the tool answers none), and
//! nothing here acts: reviewing, approving and rolling back are the
//! operators', on the Plugin reviews page.

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};

use crate::approvals::list;
use crate::diff::lay_out;
use crate::pages::Page;
use crate::{Console, Refusal};

pub(crate) fn routes() -> Router<Console> {
    Router::new().route(Page::Catalog.path(), get(show))
}

/// The page's context from `list_catalog_changes`' revisions: waiting
/// (with their changes laid out), served, served before.
fn grouped(revisions: Vec<Value>, catalog_version: &str) -> Value {
    let (mut pending, mut served, mut earlier) = (Vec::new(), Vec::new(), Vec::new());
    for mut rev in revisions {
        match rev["state"].as_str() {
            Some("pending_review") => {
                rev["changes"] = lay_out(&rev["diff"]);
                pending.push(rev);
            }
            _ if rev["served"] == true => served.push(rev),
            _ => earlier.push(rev),
        }
    }
    json!({
        "pending": pending,
        "served": served,
        "earlier": earlier,
        "catalog_version": catalog_version,
    })
}

async fn show(State(c): State<Console>, headers: HeaderMap) -> Response {
    let viewer = viewer_of!(c, headers, Page::Catalog);
    let revisions = match c.read(&viewer, "list_catalog_changes", json!({})).await {
        Ok(listed) => list(listed, "revisions"),
        Err(e) => {
            let (status, refusal) = Refusal::of(&e);
            return c.refused(&viewer, Page::Catalog, status, refusal);
        }
    };
    let context = grouped(revisions, &c.host.catalog_version());
    c.page_ok(&viewer, Page::Catalog, "catalog.html", context)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{HOSTILE, assert_escaped, render};

    fn revisions() -> Vec<Value> {
        let diff = json!({"bump": "minor", "widens": true, "count": 1, "changes": [
            {"kind": "tool_added", "tool": HOSTILE, "effect": "widens", "bump": "minor"}]});
        vec![
            json!({"revision": "rev-3", "plugin": HOSTILE, "version": "3.0.0",
                   "state": "pending_review", "submitted_at_ms": 1, "diff": diff}),
            json!({"revision": "rev-2", "plugin": "hello", "version": "2.0.0",
                   "state": "active", "submitted_at_ms": 1, "activated_at_ms": 3,
                   "served": true, "pinned": false, "diff": null}),
            json!({"revision": "rev-1", "plugin": "hello", "version": "1.0.0",
                   "state": "withdrawn", "submitted_at_ms": 1, "served": false,
                   "pinned": false, "diff": null}),
        ]
    }

    #[test]
    fn revisions_are_shown_waiting_served_and_before_with_no_form() {
        let html = render("catalog.html", grouped(revisions(), "1.4.0"));
        assert_escaped(&html);
        for shown in [
            "rev-3",
            "rev-2",
            "rev-1",
            "version 1.4.0",
            "withdrawn",
            "Tool",
        ] {
            assert!(html.contains(shown), "{shown} missing:\n{html}");
        }
        assert!(
            !html.contains("<form class=\"decide\""),
            "read only:\n{html}"
        );
        assert!(
            !html.contains("Submitted by"),
            "nobody's identifiers:\n{html}"
        );
    }

    #[test]
    fn a_pinned_revision_is_the_one_served_and_the_active_one_is_the_others() {
        let revisions = vec![
            json!({"revision": "rev-2", "plugin": "hello", "version": "2.0.0",
                   "state": "active", "submitted_at_ms": 1, "activated_at_ms": 3,
                   "served": false, "pinned": false, "diff": null}),
            json!({"revision": "rev-1", "plugin": "hello", "version": "1.0.0",
                   "state": "approved", "submitted_at_ms": 1, "activated_at_ms": 2,
                   "served": true, "pinned": true, "diff": null}),
        ];
        let page = grouped(revisions, "1.4.1");
        assert_eq!(page["served"][0]["revision"], "rev-1");
        assert_eq!(page["earlier"][0]["revision"], "rev-2");
        let html = render("catalog.html", page);
        assert!(html.contains("pinned for your tenant"), "{html}");
        assert!(
            html.contains("for other tenants: yours is pinned"),
            "{html}"
        );
    }

    #[test]
    fn an_empty_catalog_says_so() {
        let html = render("catalog.html", grouped(Vec::new(), "1.0.0"));
        assert!(
            html.contains("No plugin revision waits for review."),
            "{html}"
        );
        assert!(html.contains("No plugin is served"), "{html}");
    }
}
