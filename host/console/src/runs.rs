//! Exploration runs: the runs the viewer may see (their own, or their
//! tenant's if they administer it), filtered by state, plugin and tool;
//! one run's progress, outcome, receipt and artifacts; Cancel for a run
//! not over yet. The same rows and host tools as `list_explorations`,
//! `get_exploration_result` and `cancel_exploration`.

use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::approvals::list;
use crate::pages::Page;
use crate::paging::{self, Cursor, Pager};
use crate::render::see_other;
use crate::viewer::Viewer;
use crate::{Console, Refusal, TokenOnly, encode};

/// How many runs a page of the list shows: `list_explorations` filters
/// and pages in the store, so this is only what reads well on a screen.
const SHOWN: u64 = 50;

/// Every state a run can be in, in lifecycle order.
const STATES: [&str; 8] = toolhost_runs::RunState::NAMES;

/// The states `cancel_exploration` still stops (a cancelling run is
/// already stopping; a run that is over stays as it is).
const CANCELLABLE: [&str; 2] = ["queued", "running"];

pub(crate) fn routes() -> Router<Console> {
    let runs = Page::Runs.path();
    Router::new()
        .route(runs, get(show))
        .route(&format!("{runs}/{{run_id}}"), get(detail))
        .route(&format!("{runs}/{{run_id}}/cancel"), post(cancel))
}

/// The list's filters, from its GET form (empty: any), and the page.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct Filter {
    #[serde(default)]
    state: String,
    #[serde(default)]
    plugin: String,
    #[serde(default)]
    tool: String,
    /// Which page: a run's cursor to read older or newer runs from.
    #[serde(flatten)]
    cursor: Cursor,
}

impl Filter {
    /// The filter with a state no run has read as any.
    fn known(mut self) -> Self {
        if !STATES.contains(&self.state.as_str()) {
            self.state.clear();
        }
        self
    }

    /// Whether any filter is set.
    fn filtered(&self) -> bool {
        [&self.state, &self.plugin, &self.tool]
            .iter()
            .any(|f| !f.trim().is_empty())
    }

    /// `list_explorations`' arguments for this page: the filters go to
    /// the store with the cursor (a plugin or tool whose name contains
    /// the text, ignoring case).
    fn args(&self) -> Value {
        let mut args = json!({"limit": SHOWN});
        for (key, value) in self.filters().into_iter().chain([
            ("before", self.cursor.before.as_str()),
            ("after", self.cursor.after.as_str()),
        ]) {
            if !value.trim().is_empty() {
                args[key] = json!(value.trim());
            }
        }
        args
    }

    /// The filters, as the links to the pages beside this one keep them.
    fn filters(&self) -> [(&'static str, &str); 3] {
        [
            ("state", self.state.as_str()),
            ("plugin", self.plugin.as_str()),
            ("tool", self.tool.as_str()),
        ]
    }

    /// The links to the pages beside one `listed` answered.
    fn pager(&self, listed: &Value) -> Pager {
        let link = |key: &str, at: &str| {
            listed[key]
                .as_str()
                .map(|c| paging::query(&self.filters(), Some((at, c))))
        };
        let empty = listed["runs"].as_array().is_none_or(Vec::is_empty);
        Pager {
            newer: link("prev_cursor", "after").or_else(|| {
                // An empty page past either end: back to the newest.
                (empty && !self.cursor.is_first()).then(|| paging::query(&self.filters(), None))
            }),
            older: link("next_cursor", "before"),
        }
    }
}

/// `n` as people read it: `3`, not `3.0`.
fn number(n: &Value) -> String {
    match n.as_f64() {
        Some(f) => f.to_string(),
        None => n.to_string(),
    }
}

/// A run's progress report as text ("3 of 10 (30%) · message") and, when
/// its total is known, the value and max of a `<progress>` bar.
fn progress(p: &Value) -> Value {
    if p.is_null() {
        return Value::Null;
    }
    let done = p["progress"].as_f64().unwrap_or(0.0);
    let total = p["total"].as_f64().filter(|t| *t > 0.0);
    let mut text = match total {
        Some(t) => format!(
            "{} of {} ({:.0}%)",
            number(&p["progress"]),
            number(&p["total"]),
            (done / t * 100.0).clamp(0.0, 100.0)
        ),
        None => number(&p["progress"]),
    };
    if let Some(message) = p["message"].as_str() {
        text = format!("{text} · {message}");
    }
    json!({
        "text": text,
        "value": total.map(|t| number(&json!(done.clamp(0.0, t)))),
        "max": total.map(|_| number(&p["total"])),
    })
}

/// `run` as the page shows it: its address, progress and whether
/// `may_cancel` lets the viewer cancel it now.
fn shown(mut run: Value, may_cancel: bool) -> Value {
    run["path"] = Value::String(encode(run["run_id"].as_str().unwrap_or_default()));
    run["progress_view"] = progress(&run["progress"]);
    let state = run["state"].as_str().unwrap_or_default();
    run["cancellable"] = Value::Bool(may_cancel && CANCELLABLE.contains(&state));
    let pretty = |v: &Value| match v {
        Value::Null => Value::Null,
        v => Value::String(serde_json::to_string_pretty(v).unwrap_or_default()),
    };
    run["receipt_text"] = pretty(&run["receipt"]);
    run["structured_text"] = pretty(&run["outcome"]["structured"]);
    run["principal"] = run["receipt"]["principal"].clone();
    run
}

async fn show(State(c): State<Console>, headers: HeaderMap, Query(f): Query<Filter>) -> Response {
    let viewer = viewer_of!(c, headers, Page::Runs);
    let filter = f.known();
    let mut listed = match c.read(&viewer, "list_explorations", filter.args()).await {
        Ok(l) => l,
        Err(e) => {
            let (status, refusal) = Refusal::of(&e);
            return c.refused(&viewer, Page::Runs, status, refusal);
        }
    };
    let pager = filter.pager(&listed);
    let may_cancel = viewer.may_use("cancel_exploration");
    let runs: Vec<Value> = list(listed.take(), "runs")
        .into_iter()
        .map(|r| shown(r, may_cancel))
        .collect();
    let context = json!({
        "runs": runs,
        "limit": SHOWN,
        "filtered": filter.filtered(),
        "paged": !filter.cursor.is_first(),
        "filter": filter,
        "pager": pager,
        "states": STATES,
    });
    c.page_ok(&viewer, Page::Runs, "runs.html", context).await
}

#[derive(Deserialize)]
pub(crate) struct Shown {
    cancelled: Option<String>,
}

async fn detail(
    State(c): State<Console>,
    headers: HeaderMap,
    Path(run_id): Path<String>,
    Query(q): Query<Shown>,
) -> Response {
    let viewer = viewer_of!(c, headers, Page::Runs);
    let cancelled = q.cancelled.is_some();
    render(&c, &viewer, &run_id, cancelled, None, StatusCode::OK).await
}

/// What cancelling did, announced once the page shows the run.
fn notice(run: &Value) -> Option<String> {
    let id = run["run_id"].as_str()?;
    match run["state"].as_str()? {
        "cancelling" => Some(format!(
            "Run {id} is being cancelled: its worker stops it within a second."
        )),
        "cancelled" => Some(format!("Run {id} is cancelled.")),
        "queued" | "running" => None,
        over => Some(format!(
            "Run {id} was already over ({over}): nothing was cancelled."
        )),
    }
}

/// One run's page (`cancelled`: the viewer just cancelled it).
async fn render(
    c: &Console,
    viewer: &Viewer,
    run_id: &str,
    cancelled: bool,
    refusal: Option<Refusal>,
    status: StatusCode,
) -> Response {
    let args = json!({"run_id": run_id});
    let mut run = match c.read(viewer, "get_exploration_result", args).await {
        Ok(run) => shown(run, viewer.may_use("cancel_exploration")),
        Err(e) => {
            let (status, refusal) = Refusal::of(&e);
            return c.refused(viewer, Page::Runs, status, refusal);
        }
    };
    c.name_people(std::slice::from_mut(&mut run), &["principal"], viewer)
        .await;
    let context = json!({
        "run": run,
        "notice": if cancelled { notice(&run) } else { None },
        "error": refusal,
    });
    c.show(viewer, Page::Runs, "runs.html", status, None, context)
        .await
}

async fn cancel(
    State(c): State<Console>,
    headers: HeaderMap,
    Path(run_id): Path<String>,
    Form(form): Form<TokenOnly>,
) -> Response {
    let viewer = acting_on!(c, headers, Page::Runs, &form.csrf);
    match c
        .call(&viewer, "cancel_exploration", json!({"run_id": run_id}))
        .await
    {
        Ok(_) => see_other(&format!(
            "{}/{}?cancelled=1",
            Page::Runs.path(),
            encode(&run_id)
        )),
        Err(e) => {
            let (status, refusal) = Refusal::of(&e);
            render(&c, &viewer, &run_id, false, Some(refusal), status).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::{QUOTES, SCRIPT as HOSTILE};

    /// `page` in the layout, for the test viewer.
    fn rendered(page: Value) -> String {
        crate::testing::render("runs.html", page)
    }

    fn run(id: &str, state: &str) -> Value {
        json!({
            "run_id": id, "state": state, "tool": HOSTILE, "plugin": QUOTES, "attempt": 1,
            "created_at_ms": 1_700_000_000_000_i64, "started_at_ms": null, "finished_at_ms": null,
            "progress": {"progress": 3.0, "total": 10.0, "message": HOSTILE},
        })
    }

    fn finished() -> Value {
        let mut r = run("run_2", "succeeded");
        r["receipt_sha256"] = json!("feedface");
        r["outcome"] = json!({"kind": "answered", "structured": {"note": HOSTILE}, "text": QUOTES});
        r["artifacts"] = json!([{"uri": "toolhost://artifacts/a1", "name": HOSTILE,
            "mime_type": "text/plain", "sha256": "abc", "size": 12}]);
        r["receipt"] = json!({"principal": "u1", "revision": {"id": "rev1", "plugin": "hello", "version": "1.0"},
            "source": {"kind": "active"}, "note": HOSTILE});
        r
    }

    fn list_page(may_cancel: bool) -> Value {
        let runs: Vec<Value> = [run("run_1", "queued"), finished()]
            .into_iter()
            .map(|r| shown(r, may_cancel))
            .collect();
        let filter = Filter {
            state: String::new(),
            plugin: QUOTES.into(),
            tool: HOSTILE.into(),
            cursor: Cursor::default(),
        };
        json!({"runs": runs, "limit": 100, "filter": filter, "filtered": true, "states": STATES})
    }

    #[test]
    fn every_value_from_a_run_is_escaped() {
        for page in [
            list_page(true),
            json!({"run": shown(finished(), true), "notice": HOSTILE}),
        ] {
            let html = rendered(page);
            assert!(!html.contains("<script>alert"), "{html}");
            assert!(html.contains("&lt;script&gt;alert(1)&lt;"));
            assert!(!html.contains(QUOTES));
            assert!(html.contains("a&quot;b&#x27;c"));
        }
    }

    #[test]
    fn cancel_appears_only_for_runs_not_over_and_to_who_may_cancel() {
        let html = rendered(list_page(true));
        assert!(html.contains(r#"<tr id="run_1">"#) && html.contains(r#"<tr id="run_2">"#));
        assert!(html.contains(r#"href="/admin/runs/run_1""#));
        assert!(html.contains(r#"action="/admin/runs/run_1/cancel""#));
        assert!(!html.contains(r#"action="/admin/runs/run_2/cancel""#));
        assert!(html.contains(">Cancel run</button>"));
        assert!(html.contains(&format!(
            r#"<input type="hidden" name="csrf" value="{}">"#,
            crate::testing::CSRF
        )));
        let html = rendered(list_page(false));
        assert!(!html.contains("/cancel\""));
        let html = rendered(json!({"run": shown(run("run_1", "running"), true)}));
        assert!(html.contains(r#"action="/admin/runs/run_1/cancel""#));
        let html = rendered(json!({"run": shown(run("run_1", "cancelling"), true)}));
        assert!(!html.contains("Cancel run"));
    }

    #[test]
    fn a_finished_run_shows_its_receipt_digest_and_artifacts() {
        let html = rendered(json!({"run": shown(finished(), true)}));
        assert!(html.contains("<code>feedface</code>"));
        assert!(html.contains("<pre>{\n  &quot;note&quot;"), "{html}");
        assert!(html.contains("artifacts") && html.contains("a1</code>"));
        assert!(html.contains(r#"<article class="card" id="run_2""#));
    }

    #[test]
    fn progress_reads_as_text_and_as_a_bar_when_its_total_is_known() {
        let p = progress(&json!({"progress": 3.0, "total": 12.0, "message": "step"}));
        assert_eq!(p["text"], "3 of 12 (25%) · step");
        assert_eq!(
            (p["value"].as_str(), p["max"].as_str()),
            (Some("3"), Some("12"))
        );
        let p = progress(&json!({"progress": 7.5, "total": null, "message": null}));
        assert_eq!(p["text"], "7.5");
        assert!(p["max"].is_null());
        assert!(progress(&Value::Null).is_null());
        let html = rendered(list_page(true));
        assert!(
            html.contains(r#"<progress class="progress" value="3" max="10" aria-hidden="true">"#)
        );
    }

    #[test]
    fn the_filters_and_the_cursor_go_to_the_store_and_the_links_keep_the_filters() {
        let filter = Filter {
            state: "running".into(),
            plugin: " hell ".into(),
            tool: String::new(),
            cursor: Cursor {
                before: "1764000000000.run_x".into(),
                after: String::new(),
            },
        }
        .known();
        assert_eq!(
            filter.args(),
            json!({"limit": SHOWN, "state": "running", "plugin": "hell",
                   "before": "1764000000000.run_x"})
        );
        let listed = json!({"runs": [{}], "next_cursor": "1.run_a", "prev_cursor": "2.run_b"});
        let pager = filter.pager(&listed);
        assert_eq!(
            pager.older.as_deref(),
            Some("state=running&plugin=hell&before=1.run_a")
        );
        assert_eq!(
            pager.newer.as_deref(),
            Some("state=running&plugin=hell&after=2.run_b")
        );
        let last =
            filter.pager(&json!({"runs": [{}], "next_cursor": null, "prev_cursor": "2.run_b"}));
        assert!(last.older.is_none() && last.newer.is_some());
        let gone = filter.pager(&json!({"runs": [], "next_cursor": null, "prev_cursor": null}));
        assert_eq!(gone.newer.as_deref(), Some("state=running&plugin=hell"));
        let any = Filter {
            state: "no-such-state".into(),
            ..Filter::default()
        }
        .known();
        assert_eq!(any.args(), json!({"limit": SHOWN}));
        assert!(!any.filtered());
    }

    #[test]
    fn only_a_cancel_that_landed_is_announced() {
        let said = |state: &str| notice(&json!({"run_id": "run_1", "state": state}));
        assert_eq!(
            said("cancelled").as_deref(),
            Some("Run run_1 is cancelled.")
        );
        assert!(said("cancelling").is_some_and(|n| n.contains("being cancelled")));
        assert!(said("succeeded").is_some_and(|n| n.contains("nothing was cancelled")));
        assert_eq!(said("running"), None);
    }
}
