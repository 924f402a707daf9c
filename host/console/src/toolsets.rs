//! The tenant's toolsets: named subsets of its tools that clients are
//! bound to. Read through `list_toolsets`; defined and deleted through
//! `define_toolset` and `delete_toolset`, so each change is a call with
//! its audit row, as over MCP, and refused as it would be there.

use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::approvals::list;
use crate::pages::Page;
use crate::viewer::Viewer;
use crate::{Console, Refusal};

pub(crate) fn routes() -> Router<Console> {
    Router::new()
        .route(Page::Toolsets.path(), get(show).post(define))
        .route("/admin/toolsets/{name}/delete", post(delete))
}

/// What the page shows: the notice of an action done.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Shown {
    defined: Option<String>,
    deleted: Option<String>,
}

async fn show(State(c): State<Console>, headers: HeaderMap, Query(q): Query<Shown>) -> Response {
    let viewer = viewer_of!(c, headers, Page::Toolsets);
    let notice = match (&q.defined, &q.deleted) {
        (Some(name), _) => Some(format!("Toolset {name} is defined.")),
        (_, Some(name)) => Some(format!("Toolset {name} is deleted.")),
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
    let toolsets = match c.read(viewer, "list_toolsets", json!({})).await {
        Ok(listed) => list(listed, "toolsets"),
        Err(e) => {
            let (status, refusal) = Refusal::of(&e);
            return c.refused(viewer, Page::Toolsets, status, refusal);
        }
    };
    let context = json!({
        "tenant": viewer.tenant(),
        "toolsets": toolsets,
        "may_change": viewer.may_use("define_toolset"),
        "notice": notice,
        "error": refused,
    });
    c.show(
        viewer,
        Page::Toolsets,
        "toolsets.html",
        status,
        None,
        context,
    )
    .await
}

/// The definition form: each list as words separated by spaces, commas
/// or lines.
#[derive(Deserialize)]
pub(crate) struct DefineForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    tools: String,
    #[serde(default)]
    plugins: String,
    #[serde(default)]
    tags: String,
    #[serde(default)]
    exclude: String,
}

/// `text`'s words, split at spaces, commas and line ends.
fn words(text: &str) -> Value {
    let words: Vec<&str> = (text.split([',', ' ', '\n', '\r', '\t']))
        .filter(|w| !w.is_empty())
        .collect();
    json!(words)
}

async fn define(
    State(c): State<Console>,
    headers: HeaderMap,
    Form(f): Form<DefineForm>,
) -> Response {
    let viewer = acting_on!(c, headers, Page::Toolsets, &f.csrf);
    let args = json!({
        "name": f.name.trim(),
        "tools": words(&f.tools),
        "plugins": words(&f.plugins),
        "tags": words(&f.tags),
        "exclude": words(&f.exclude),
    });
    let again = async |status, refusal| render(&c, &viewer, None, Some(refusal), status).await;
    let done = (Page::Toolsets, "defined", f.name.trim());
    c.act_with_tool(&viewer, ("define_toolset", args), done, again)
        .await
}

/// A deletion's form: its CSRF token.
#[derive(Deserialize)]
pub(crate) struct DeleteForm {
    #[serde(default)]
    csrf: String,
}

async fn delete(
    State(c): State<Console>,
    headers: HeaderMap,
    Path(name): Path<String>,
    Form(f): Form<DeleteForm>,
) -> Response {
    let viewer = acting_on!(c, headers, Page::Toolsets, &f.csrf);
    let args = json!({"name": name});
    let again = async |status, refusal| render(&c, &viewer, None, Some(refusal), status).await;
    let done = (Page::Toolsets, "deleted", name.as_str());
    c.act_with_tool(&viewer, ("delete_toolset", args), done, again)
        .await
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::words;
    use crate::testing::{HOSTILE, assert_escaped, render};

    #[test]
    fn a_lists_words_split_at_spaces_commas_and_lines() {
        assert_eq!(words("a, b\nc  d"), json!(["a", "b", "c", "d"]));
        assert_eq!(words(" "), json!([]));
    }

    #[test]
    fn the_page_escapes_what_it_shows() {
        let toolset = json!({"name": HOSTILE, "tools": [HOSTILE], "plugins": [HOSTILE],
            "tags": [HOSTILE], "exclude": [HOSTILE], "catalog_tools": 3,
            "scope": HOSTILE, "endpoint": HOSTILE});
        let page = json!({"tenant": HOSTILE, "toolsets": [toolset], "may_change": true,
            "notice": HOSTILE, "error": null});
        assert_escaped(&render("toolsets.html", page));
    }
}
