//! The skeleton the pages of things waiting for a decision share
//! (approvals, checkpoints, plugin reviews): read the page's rows through
//! host tools as the viewer (a refusal is the error page), announce what
//! the last form did if the page lists it, count what waits on it for the
//! navigation, and render its template, with a refused form's reason when
//! it is shown again.

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_invoke::InvokeError;

use crate::pages::Page;
use crate::viewer::Viewer;
use crate::{Console, Refusal};

/// What the address of a decision page names after a form (`?key=value`,
/// see `done_on`): only announced if the page lists it, since the query
/// string is anyone's to write.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Shown {
    /// The gate, checkpoint or revision just decided.
    pub(crate) decided: Option<String>,
    /// The plugin just rolled back (reviews).
    pub(crate) rolled_back: Option<String>,
}

/// A page of things waiting for a decision: what differs between them.
pub(crate) trait DecisionPage {
    /// The page.
    const PAGE: Page;
    /// Its template.
    const TEMPLATE: &'static str;

    /// The template's context, read through host tools as `viewer`.
    fn read(
        c: &Console,
        viewer: &Viewer,
    ) -> impl Future<Output = Result<Value, InvokeError>> + Send;

    /// What `shown` says was done, if `context` lists it.
    fn notice(context: &Value, shown: &Shown) -> Option<String>;

    /// How many things in `context` wait (the page's count in the
    /// navigation).
    fn waiting(context: &Value) -> usize;
}

/// `GET` of page `P`.
pub(crate) async fn show<P: DecisionPage>(
    State(c): State<Console>,
    headers: HeaderMap,
    Query(shown): Query<Shown>,
) -> Response {
    let viewer = viewer_of!(c, headers, P::PAGE);
    render::<P>(&c, &viewer, &shown, None).await
}

/// Page `P` for `viewer`, announcing what `shown` names; after a refused
/// form, with its status and refusal.
pub(crate) async fn render<P: DecisionPage>(
    c: &Console,
    viewer: &Viewer,
    shown: &Shown,
    refused: Option<(StatusCode, Refusal)>,
) -> Response {
    let mut context = match P::read(c, viewer).await {
        Ok(context) => context,
        Err(e) => {
            let (status, refusal) = Refusal::of(&e);
            return c.refused(viewer, P::PAGE, status, refusal);
        }
    };
    let (status, refusal) = match refused {
        Some((status, refusal)) => (status, Some(refusal)),
        None => (StatusCode::OK, None),
    };
    context["notice"] = json!(P::notice(&context, shown));
    context["error"] = json!(refusal);
    let counts = c.counted(viewer, P::PAGE, P::waiting(&context)).await;
    c.show(viewer, P::PAGE, P::TEMPLATE, status, Some(counts), context)
        .await
}

/// Page `P` again after a form `viewer` sent was refused.
pub(crate) async fn again<P: DecisionPage>(
    c: &Console,
    viewer: &Viewer,
    status: StatusCode,
    refusal: Refusal,
) -> Response {
    render::<P>(c, viewer, &Shown::default(), Some((status, refusal))).await
}

/// A form deciding one thing (an approval, a plugin review): its CSRF
/// token, the decision and the reason.
#[derive(Deserialize)]
pub(crate) struct DecideForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    decision: String,
    #[serde(default)]
    reason: String,
    /// Plugin reviews only: the tenants an approval serves, separated by
    /// commas or spaces (empty: every tenant).
    #[serde(default)]
    tenants: String,
}

/// Posts `form`'s decision of `id`, named `key` in the arguments of host
/// tool `tool`, and goes back to page `P` naming it, or shows `P` again
/// with the refusal.
pub(crate) async fn decide<P: DecisionPage>(
    c: Console,
    headers: HeaderMap,
    (tool, key): (&str, &str),
    id: String,
    form: DecideForm,
) -> Response {
    let viewer = acting_on!(c, headers, P::PAGE, &form.csrf);
    let mut args = json!({"decision": form.decision, "reason": form.reason});
    args[key] = json!(id);
    let tenants: Vec<&str> = (form.tenants.split([',', ' ', '\n', '\t']))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    if !tenants.is_empty() {
        args["tenants"] = json!(tenants);
    }
    let again = async |status, refusal| again::<P>(&c, &viewer, status, refusal).await;
    let done = (P::PAGE, "decided", id.as_str());
    c.act_with_tool(&viewer, (tool, args), done, again).await
}
