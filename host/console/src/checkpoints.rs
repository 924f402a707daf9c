//! Checkpoints: runs waiting for a person's judgement, decided with a
//! disposition and a reason, and the recent judgements. The same rows and
//! host tools as `list_checkpoints` and `decide_checkpoint`.

use axum::extract::{Form, Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_invoke::InvokeError;

use crate::Console;
use crate::approvals::list;
use crate::decision_page::{DecisionPage, Shown, again};
use crate::pages::Page;
use crate::viewer::Viewer;

/// How many decided checkpoints the page shows.
const RECENT: usize = 20;

/// The waiting checkpoints and the recent judgements of `viewer`'s tenant.
pub(crate) async fn checkpoints(
    c: &Console,
    viewer: &Viewer,
) -> Result<(Vec<Value>, Vec<Value>), InvokeError> {
    let all = c
        .read(
            viewer,
            "list_checkpoints",
            json!({"filter": {"state": "all"}}),
        )
        .await?;
    let (mut waiting, decided): (Vec<Value>, Vec<Value>) = list(all, "checkpoints")
        .into_iter()
        .partition(|cp| cp["state"] == "waiting");
    let mut decided: Vec<Value> = decided.into_iter().take(RECENT).collect();
    for cp in waiting.iter_mut().chain(decided.iter_mut()) {
        // Evidence is the plugin's JSON: shown as text, indented.
        let evidence = serde_json::to_string_pretty(&cp["evidence"]).unwrap_or_default();
        cp["evidence_text"] = Value::String(evidence);
    }
    c.name_people(&mut decided, &["decided_by"], viewer).await;
    Ok((waiting, decided))
}

/// The checkpoints page: waiting checkpoints, and the recent judgements.
pub(crate) struct Checkpoints;

impl DecisionPage for Checkpoints {
    const PAGE: Page = Page::Checkpoints;
    const TEMPLATE: &'static str = "checkpoints.html";

    async fn read(c: &Console, viewer: &Viewer) -> Result<Value, InvokeError> {
        let (waiting, recent) = checkpoints(c, viewer).await?;
        Ok(json!({
            "waiting": waiting,
            "recent": recent,
            "may_decide": viewer.may_use("decide_checkpoint"),
        }))
    }

    fn notice(context: &Value, shown: &Shown) -> Option<String> {
        let id = shown.decided.as_deref()?;
        let recent = context["recent"].as_array()?;
        let cp = recent.iter().find(|cp| cp["checkpoint_id"] == id)?;
        Some(format!(
            "Checkpoint {id} is decided: {} (the step is recorded {}).",
            cp["disposition"].as_str().unwrap_or(""),
            cp["outcome"].as_str().unwrap_or("").to_uppercase()
        ))
    }

    fn waiting(context: &Value) -> usize {
        context["waiting"].as_array().map_or(0, Vec::len)
    }
}

#[derive(Deserialize)]
pub(crate) struct DecideForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    disposition: String,
    #[serde(default)]
    version: String,
    #[serde(default)]
    reason: String,
}

pub(crate) async fn decide(
    State(c): State<Console>,
    headers: HeaderMap,
    Path(checkpoint_id): Path<String>,
    Form(form): Form<DecideForm>,
) -> Response {
    let viewer = acting_on!(c, headers, Page::Checkpoints, &form.csrf);
    // A version that is no number goes to the tool as is: its refusal is
    // the one MCP callers get.
    let version = form
        .version
        .parse::<u64>()
        .map_or(Value::String(form.version.clone()), Value::from);
    let args = json!({
        "checkpoint_id": checkpoint_id,
        "disposition": form.disposition,
        "expected_version": version,
        "reason": form.reason,
    });
    let again = async |status, refusal| again::<Checkpoints>(&c, &viewer, status, refusal).await;
    let done = (Page::Checkpoints, "decided", checkpoint_id.as_str());
    c.act_with_tool(&viewer, ("decide_checkpoint", args), done, again)
        .await
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::testing::{HOSTILE, assert_escaped, render};

    #[test]
    fn evidence_and_titles_are_text_and_forms_name_the_version_seen() {
        let cp = json!({
            "checkpoint_id": "cp_1", "title": HOSTILE, "plugin": "testbench", "subject": HOSTILE,
            "state": "waiting", "version": 3, "opened_at": "2030-01-01T00:00:00Z",
            "evidence_text": HOSTILE,
        });
        let html = render(
            "checkpoints.html",
            json!({"waiting": [cp], "recent": [], "may_decide": true}),
        );
        assert_escaped(&html);
        assert!(html.contains("action=\"/admin/checkpoints/cp_1\""));
        assert!(html.contains("name=\"version\" value=\"3\""));
        for d in ["confirm", "false_positive", "inconclusive"] {
            assert!(
                html.contains(&format!("name=\"disposition\" value=\"{d}\"")),
                "{d}"
            );
        }
        let cp = json!({"checkpoint_id": "cp_1", "title": "t", "version": 1, "state": "waiting"});
        let html = render(
            "checkpoints.html",
            json!({"waiting": [cp], "recent": [], "may_decide": false}),
        );
        assert!(!html.contains("action=\"/admin/checkpoints/"), "{html}");
    }
}
