//! The inbox: everything waiting for the signed-in person's decision, on
//! the pages they may open: pending gates (decided right here), waiting
//! checkpoints and plugin revisions pending review.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use crate::approvals::list;
use crate::pages::{Page, Waiting};
use crate::{Console, Refusal};

pub(crate) async fn show(State(c): State<Console>, headers: HeaderMap) -> Response {
    let viewer = viewer_of!(c, headers, Page::Inbox);
    let mut waiting = Waiting::default();
    let mut gates = Vec::new();
    let mut checkpoints = Vec::new();
    let mut reviews = Vec::new();
    let read = async {
        if Page::Approvals.open_to(&viewer) {
            gates = crate::approvals::gates(&c, &viewer).await?.0;
            waiting.approvals = Some(gates.len());
        }
        if Page::Checkpoints.open_to(&viewer) {
            checkpoints = crate::checkpoints::checkpoints(&c, &viewer).await?.0;
            waiting.checkpoints = Some(checkpoints.len());
        }
        if Page::Reviews.open_to(&viewer) {
            let listed = c.read(&viewer, "list_plugin_reviews", json!({})).await?;
            reviews = list(listed, "reviews");
            waiting.reviews = Some(reviews.len());
        }
        Ok::<_, toolhost_invoke::InvokeError>(())
    };
    if let Err(e) = read.await {
        let (status, refusal) = Refusal::of(&e);
        return c.refused(&viewer, Page::Inbox, status, refusal);
    }
    let context = json!({
        "gates": gates,
        "checkpoints": checkpoints,
        "reviews": reviews,
        "sees": {
            "approvals": Page::Approvals.open_to(&viewer),
            "checkpoints": Page::Checkpoints.open_to(&viewer),
            "reviews": Page::Reviews.open_to(&viewer),
        },
        "may_decide": viewer.may_use("decide_approval"),
        "may_decide_checkpoints": viewer.may_use("decide_checkpoint"),
        "nothing": Value::Bool(gates.is_empty() && checkpoints.is_empty() && reviews.is_empty()),
    });
    c.show(
        &viewer,
        Page::Inbox,
        "inbox.html",
        StatusCode::OK,
        Some(waiting),
        context,
    )
    .await
}
