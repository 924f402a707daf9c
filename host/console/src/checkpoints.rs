//! Checkpoints: runs waiting for a person's judgement, decided with a
//! disposition and a reason, and the recent judgements. The same rows and
//! host tools as `list_checkpoints` and `decide_checkpoint`.

use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::approvals::list;
use crate::pages::Page;
use crate::viewer::Viewer;
use crate::{Console, Refusal};

/// How many decided checkpoints the page shows.
const RECENT: usize = 20;

/// The waiting checkpoints and the recent judgements of `viewer`'s tenant.
pub(crate) async fn checkpoints(
    c: &Console,
    viewer: &Viewer,
) -> Result<(Vec<Value>, Vec<Value>), toolhost_invoke::InvokeError> {
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

#[derive(Deserialize)]
pub(crate) struct Shown {
    decided: Option<String>,
}

pub(crate) async fn show(
    State(c): State<Console>,
    headers: HeaderMap,
    Query(q): Query<Shown>,
) -> Response {
    let viewer = viewer_of!(c, headers, Page::Checkpoints);
    render(&c, &viewer, q.decided, None, StatusCode::OK).await
}

async fn render(
    c: &Console,
    viewer: &Viewer,
    decided: Option<String>,
    refusal: Option<Refusal>,
    status: StatusCode,
) -> Response {
    let (waiting, recent) = match checkpoints(c, viewer).await {
        Ok(l) => l,
        Err(e) => {
            let (status, refusal) = Refusal::of(&e);
            return c.refused(viewer, Page::Checkpoints, status, refusal);
        }
    };
    let notice = decided.and_then(|id| {
        recent
            .iter()
            .find(|cp| cp["checkpoint_id"] == id.as_str())
            .map(|cp| {
                format!(
                    "Checkpoint {id} is decided: {} (the step is recorded {}).",
                    cp["disposition"].as_str().unwrap_or(""),
                    cp["outcome"].as_str().unwrap_or("").to_uppercase()
                )
            })
    });
    let counts = c.counted(viewer, Page::Checkpoints, waiting.len()).await;
    let context = json!({
        "waiting": waiting,
        "recent": recent,
        "may_decide": viewer.may_use("decide_checkpoint"),
        "notice": notice,
        "error": refusal,
    });
    c.show(
        viewer,
        Page::Checkpoints,
        "checkpoints.html",
        status,
        Some(counts),
        context,
    )
    .await
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
    let again = async |status, refusal| render(&c, &viewer, None, Some(refusal), status).await;
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
