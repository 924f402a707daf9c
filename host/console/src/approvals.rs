//! Approvals: the tenant's gates, pending ones with Confirm and Deny, and
//! the recent decisions with who decided what. The same rows and the same
//! host tools as `list_pending_approvals` and `decide_approval` over MCP.

use axum::extract::{Form, Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::{Value, json};
use toolhost_invoke::InvokeError;

use crate::Console;
use crate::decision_page::{DecideForm, DecisionPage, Shown};
use crate::pages::Page;
use crate::viewer::Viewer;

/// How many decided (or expired) gates the page shows.
const RECENT: usize = 20;

/// The pending gates and the recent decisions of `viewer`'s tenant, each
/// gate with the names of who asked and who decided.
pub(crate) async fn gates(
    c: &Console,
    viewer: &Viewer,
) -> Result<(Vec<Value>, Vec<Value>), InvokeError> {
    let pending = c.read(viewer, "list_pending_approvals", json!({})).await?;
    let all = json!({"filter": {"state": "all"}});
    let all = c.read(viewer, "list_pending_approvals", all).await?;
    let recent: Vec<Value> = list(all, "gates")
        .into_iter()
        .filter(|g| g["state"] != "pending")
        .take(RECENT)
        .collect();
    let mut pending = list(pending, "gates");
    let mut recent = recent;
    c.name_people(&mut pending, &["requested_by", "decided_by"], viewer)
        .await;
    c.name_people(&mut recent, &["requested_by", "decided_by"], viewer)
        .await;
    Ok((pending, recent))
}

/// The array `key` of a tool's structured answer.
pub(crate) fn list(answer: Value, key: &str) -> Vec<Value> {
    match answer {
        Value::Object(mut o) => match o.remove(key) {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// The approvals page: pending gates, and the recent decisions.
pub(crate) struct Approvals;

impl DecisionPage for Approvals {
    const PAGE: Page = Page::Approvals;
    const TEMPLATE: &'static str = "approvals.html";

    async fn read(c: &Console, viewer: &Viewer) -> Result<Value, InvokeError> {
        let (pending, recent) = gates(c, viewer).await?;
        Ok(json!({
            "pending": pending,
            "recent": recent,
            "may_decide": viewer.may_use("decide_approval"),
        }))
    }

    fn notice(context: &Value, shown: &Shown) -> Option<String> {
        let id = shown.decided.as_deref()?;
        let recent = context["recent"].as_array()?;
        let gate = recent.iter().find(|g| g["gate_id"] == id)?;
        Some(format!(
            "Gate {id} is now {}.",
            gate["state"].as_str().unwrap_or("")
        ))
    }

    fn waiting(context: &Value) -> usize {
        context["pending"].as_array().map_or(0, Vec::len)
    }
}

pub(crate) async fn decide(
    State(c): State<Console>,
    headers: HeaderMap,
    Path(gate_id): Path<String>,
    Form(form): Form<DecideForm>,
) -> Response {
    let tool = ("decide_approval", "gate_id");
    crate::decision_page::decide::<Approvals>(c, headers, tool, gate_id, form).await
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::testing::{CSRF, HOSTILE, assert_escaped, render};

    fn gate(id: &str, state: &str) -> serde_json::Value {
        json!({
            "gate_id": id, "tool": "run_by_tag", "risk": "high", "reason_required": true,
            "summary": HOSTILE, "state": state,
            "targets": [{"kind": "environment", "id": "env\"1", "name": HOSTILE, "tags": [HOSTILE]}],
            "requested_by": "u-demo", "requested_by_name": HOSTILE, "requested_by_you": false,
            "expires_at": "2030-01-01T00:00:00Z",
            "decided_by": "u-ann", "decided_by_name": "ann", "decided_by_you": true,
            "reason": HOSTILE, "decided_at": "2030-01-01T00:00:00Z",
        })
    }

    #[test]
    fn everything_from_plugins_and_people_is_escaped_on_both_renderers() {
        for (template, page) in [
            (
                "approvals.html",
                json!({"pending": [gate("gate_1", "pending")], "recent": [gate("gate_2", "denied")],
                       "may_decide": true, "notice": HOSTILE, "error": {"code": "X", "message": HOSTILE}}),
            ),
            (
                "inbox.html",
                json!({"gates": [gate("gate_1", "pending")], "checkpoints": [], "reviews": [],
                       "sees": {"approvals": true}, "may_decide": true, "nothing": false}),
            ),
        ] {
            let html = render(template, page);
            assert_escaped(&html);
            assert!(
                html.contains("action=\"/admin/approvals/gate_1\""),
                "{html}"
            );
            assert!(html.contains(&format!("name=\"csrf\" value=\"{CSRF}\"")));
            assert!(html.contains("<time datetime=\"2030-01-01T00:00:00Z\">"));
        }
    }

    #[test]
    fn only_a_person_who_may_decide_gets_forms_and_only_for_pending_gates() {
        let page = |may: bool| {
            json!({"pending": [gate("gate_1", "pending")], "recent": [gate("gate_2", "confirmed")],
                   "may_decide": may})
        };
        let html = render("approvals.html", page(true));
        assert!(html.contains("action=\"/admin/approvals/gate_1\""));
        assert!(!html.contains("action=\"/admin/approvals/gate_2\""));
        assert!(html.contains("(required to confirm)"));
        let html = render("approvals.html", page(false));
        assert!(!html.contains("action=\"/admin/approvals/"), "{html}");
        assert!(html.contains("ann <span class=\"muted\">(you)</span>"));
    }

    #[test]
    fn empty_lists_say_so() {
        let html = render("approvals.html", json!({"pending": [], "recent": []}));
        assert!(html.contains("No gate waits for a decision."));
        let html = render(
            "inbox.html",
            json!({"gates": [], "checkpoints": [], "reviews": [],
            "sees": {"approvals": true, "checkpoints": true, "reviews": true}, "nothing": true}),
        );
        assert!(html.contains("Nothing waits for you."));
    }
}
