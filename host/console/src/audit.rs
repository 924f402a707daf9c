//! Audit: search the tenant's audit rows by person, tool, outcome and
//! time; one row's detail; and the hash chain verified on request.
//!
//! No host tool lists audit rows, so the page reads the store itself,
//! always within the viewer's tenant, and needs `audit:read` (or an admin
//! role): see [`crate::viewer::AUDIT_PERMISSION`].

use std::time::{Duration, SystemTime};

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::get;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolhost_audit::Outcome;
use toolhost_auth::AuthStore;
use toolhost_storage::{AuditQuery, AuditRecord};

use crate::pages::Page;
use crate::viewer::Viewer;
use crate::{Console, Refusal};

/// How many rows one search shows.
const SHOWN: u32 = 100;

/// Every outcome, as the search's choices.
const OUTCOMES: [&str; 6] = [
    "executed",
    "needs_clarification",
    "approval_required",
    "denied",
    "limit_rejected",
    "error",
];

pub(crate) fn routes() -> Router<Console> {
    Router::new()
        .route("/admin/audit", get(search))
        .route("/admin/audit/verify", get(verify))
        .route("/admin/audit/calls/{call_id}", get(detail))
}

/// The search form's fields, as typed.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct Search {
    #[serde(default)]
    principal: String,
    #[serde(default)]
    tool: String,
    #[serde(default)]
    client: String,
    #[serde(default)]
    outcome: String,
    #[serde(default)]
    since: String,
    #[serde(default)]
    until: String,
}

/// Why a search's field was refused (shown beside the form).
#[derive(Debug, PartialEq, Eq)]
struct BadField(String);

/// A time typed into the form: RFC 3339 (`2026-12-01T12:00:00Z`) or a
/// duration ago (`90m`, `2days`), as `toolhost audit search --since` takes.
fn instant(what: &str, s: &str, now: SystemTime) -> Result<Option<SystemTime>, BadField> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    if let Ok(t) = humantime::parse_rfc3339_weak(s) {
        return Ok(Some(t));
    }
    let ago = humantime::parse_duration(s).map_err(|_| {
        BadField(format!(
            "{what}: expected a time like 2026-12-01T12:00:00Z, or a duration ago like 90m or 2days"
        ))
    })?;
    Ok(Some(now.checked_sub(ago).unwrap_or(SystemTime::UNIX_EPOCH)))
}

impl Search {
    /// The store's query for `tenant`, with the person resolved to their
    /// subject id by `subject` (a name not found is taken as an id).
    fn query(&self, tenant: &str, subject: Option<String>) -> Result<AuditQuery, BadField> {
        let outcome = match self.outcome.trim() {
            "" => None,
            o => Some(Outcome::parse(o).ok_or_else(|| BadField(format!("no outcome {o:?}")))?),
        };
        let now = SystemTime::now();
        let text = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
        Ok(AuditQuery {
            tenant: Some(tenant.to_owned()),
            principal: subject.or_else(|| text(&self.principal)),
            tool: text(&self.tool),
            client_id: text(&self.client),
            outcome,
            since: instant("since", &self.since, now)?,
            until: instant("until", &self.until, now)?,
            call_id: None,
            limit: SHOWN,
        })
    }
}

/// What a row shows in the list and the detail.
fn row(r: &AuditRecord, names: &std::collections::BTreeMap<String, String>) -> Value {
    let e = &r.event;
    json!({
        "id": r.id,
        "call_id": e.call_id,
        "at": humantime::format_rfc3339_millis(e.at).to_string(),
        "principal": e.principal,
        "principal_name": names.get(&e.principal).cloned().unwrap_or_else(|| e.principal.clone()),
        "tenant": e.tenant,
        "client_id": e.client_id,
        "tool": e.tool,
        "plugin": e.plugin,
        "catalog_version": e.catalog_version,
        "plugin_digest": e.plugin_digest.map(|d| d.to_string()),
        "argument_digest": e.argument_digest.to_string(),
        "outcome": e.outcome.as_str(),
        "error_code": e.error_code,
        "duration": millis(e.duration),
        "gate_id": e.gate_id,
        "receipt_sha256": e.receipt_sha256,
        "client_rounds": e.client_rounds,
    })
}

/// `1.234 ms`, from the stored microseconds.
fn millis(d: Duration) -> String {
    format!("{}.{:03} ms", d.as_millis(), d.subsec_micros() % 1000)
}

impl Console {
    /// The usernames of the people in `records` (a service stays an id).
    async fn audit_names(
        &self,
        records: &[AuditRecord],
    ) -> std::collections::BTreeMap<String, String> {
        let mut names = std::collections::BTreeMap::new();
        for r in records {
            let id = &r.event.principal;
            if names.contains_key(id) {
                continue;
            }
            if let Ok(Some(u)) = self.store.user_by_id(id).await {
                names.insert(id.clone(), u.username);
            }
        }
        names
    }

    /// The search page for `viewer` with `form`, and `verified` on top.
    async fn audit_page(&self, viewer: &Viewer, form: Search, verified: Option<Value>) -> Response {
        // A username of the viewer's tenant stands for its subject id.
        let name = form.principal.trim();
        let subject = if name.is_empty() {
            None
        } else {
            match self.store.user_by_name(name).await {
                Ok(Some(u)) if u.tenant == viewer.tenant() => Some(u.id),
                _ => None,
            }
        };
        let (rows, problem) = match form.query(viewer.tenant(), subject) {
            Ok(q) => match self.store.search(&q).await {
                Ok(found) => {
                    let names = self.audit_names(&found).await;
                    (found.iter().map(|r| row(r, &names)).collect(), None)
                }
                Err(e) => {
                    tracing::error!(error = %e, "console: searching audit rows");
                    let refusal = Refusal {
                        code: "UNAVAILABLE",
                        message: "the audit trail could not be read now; try again".into(),
                    };
                    return self.refused(
                        viewer,
                        Page::Audit,
                        StatusCode::SERVICE_UNAVAILABLE,
                        refusal,
                    );
                }
            },
            Err(BadField(why)) => (Vec::new(), Some(why)),
        };
        let status = if problem.is_some() {
            StatusCode::BAD_REQUEST
        } else {
            StatusCode::OK
        };
        let searched = [
            &form.principal,
            &form.tool,
            &form.outcome,
            &form.since,
            &form.until,
        ]
        .iter()
        .any(|f| !f.trim().is_empty());
        let context = json!({
            "form": form,
            "outcomes": OUTCOMES,
            "rows": rows,
            "searched": searched,
            "limit": SHOWN,
            "verified": verified,
            "error": problem.map(|message| json!({"code": "INVALID_SEARCH", "message": message})),
        });
        self.show(viewer, Page::Audit, "audit.html", status, None, context)
            .await
    }
}

async fn search(
    State(c): State<Console>,
    headers: HeaderMap,
    Query(form): Query<Search>,
) -> Response {
    let viewer = viewer_of!(c, headers, Page::Audit);
    c.audit_page(&viewer, form, None).await
}

/// Walks the whole chain (it spans every tenant: one chain, one head) and
/// shows whether it is intact: the result, never another tenant's rows.
async fn verify(State(c): State<Console>, headers: HeaderMap) -> Response {
    let viewer = viewer_of!(c, headers, Page::Audit);
    let verified = match c.store.verify_chain().await {
        Ok(Ok(summary)) => json!({
            "intact": true,
            "verified": summary.verified,
            "unchained": summary.unchained,
            "head": summary.head.map(|(id, hash)| json!({"id": id, "hash": hash})),
        }),
        Ok(Err(broken)) => json!({
            "intact": false,
            "row": broken.id,
            "problem": broken.problem.to_string(),
        }),
        Err(e) => {
            tracing::error!(error = %e, "console: verifying the audit chain");
            let refusal = Refusal {
                code: "UNAVAILABLE",
                message: "the audit trail could not be read to verify it; try again".into(),
            };
            return c.refused(
                &viewer,
                Page::Audit,
                StatusCode::SERVICE_UNAVAILABLE,
                refusal,
            );
        }
    };
    c.audit_page(&viewer, Search::default(), Some(verified))
        .await
}

async fn detail(
    State(c): State<Console>,
    headers: HeaderMap,
    Path(call_id): Path<String>,
) -> Response {
    let viewer = viewer_of!(c, headers, Page::Audit);
    let query = AuditQuery {
        tenant: Some(viewer.tenant().to_owned()),
        call_id: Some(call_id),
        limit: 1,
        ..AuditQuery::default()
    };
    let found = match c.store.search(&query).await {
        Ok(found) => found,
        Err(e) => {
            tracing::error!(error = %e, "console: reading an audit row");
            let refusal = Refusal {
                code: "UNAVAILABLE",
                message: "the audit trail could not be read now; try again".into(),
            };
            return c.refused(
                &viewer,
                Page::Audit,
                StatusCode::SERVICE_UNAVAILABLE,
                refusal,
            );
        }
    };
    // Another tenant's call is as missing as one that never was.
    let Some(record) = found.first() else {
        let refusal = Refusal {
            code: "CALL_NOT_FOUND",
            message: "no audit row of that call in your tenant".into(),
        };
        return c.refused(&viewer, Page::Audit, StatusCode::NOT_FOUND, refusal);
    };
    let names = c.audit_names(&found).await;
    let context =
        json!({"detail": row(record, &names), "form": Search::default(), "outcomes": OUTCOMES});
    c.show(
        &viewer,
        Page::Audit,
        "audit.html",
        StatusCode::OK,
        None,
        context,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_stays_in_the_viewers_tenant_and_parses_its_fields() {
        let form = Search {
            principal: " ann ".into(),
            tool: "run_by_tag".into(),
            client: " toolhost-console ".into(),
            outcome: "approval_required".into(),
            since: "2026-12-01T12:00:00Z".into(),
            until: "".into(),
        };
        let q = form.query("demo", None).expect("a valid search");
        assert_eq!(q.tenant.as_deref(), Some("demo"));
        assert_eq!(q.principal.as_deref(), Some("ann"));
        assert_eq!(q.tool.as_deref(), Some("run_by_tag"));
        assert_eq!(q.client_id.as_deref(), Some("toolhost-console"));
        assert_eq!(q.outcome, Some(Outcome::ApprovalRequired));
        assert!(q.since.is_some() && q.until.is_none());
        let resolved = form.query("demo", Some("u-1".into())).expect("valid");
        assert_eq!(resolved.principal.as_deref(), Some("u-1"));
    }

    #[test]
    fn bad_fields_are_refused_with_a_reason() {
        let bad = Search {
            outcome: "exploded".into(),
            ..Search::default()
        };
        assert!(bad.query("demo", None).is_err());
        let bad = Search {
            since: "last tuesday".into(),
            ..Search::default()
        };
        let BadField(why) = bad.query("demo", None).expect_err("refused");
        assert!(why.contains("since"), "{why}");
        let ago = instant("since", "90m", SystemTime::now()).expect("a duration");
        assert!(ago.is_some());
    }
}

#[cfg(test)]
mod page_tests {
    use serde_json::json;

    use crate::testing::{HOSTILE, assert_escaped, render};

    #[test]
    fn rows_link_their_detail_and_every_value_is_text() {
        let row = json!({
            "id": 7, "call_id": "c-1", "at": "2030-01-01T00:00:00.000Z", "principal": "u-1",
            "principal_name": HOSTILE, "tenant": "demo", "client_id": HOSTILE, "tool": HOSTILE,
            "outcome": "denied", "error_code": "PERMISSION_DENIED", "duration": "1.000 ms",
            "argument_digest": "ab", "client_rounds": [],
        });
        let form = json!({"principal": HOSTILE, "tool": "", "client": HOSTILE, "outcome": "denied", "since": "", "until": ""});
        let html = render(
            "audit.html",
            json!({"rows": [row.clone()], "form": form, "outcomes": ["executed", "denied"],
            "searched": true, "limit": 100}),
        );
        assert_escaped(&html);
        assert!(html.contains("href=\"/admin/audit/calls/c-1\""));
        assert!(
            html.contains("<option value=\"denied\" selected>"),
            "{html}"
        );
        let html = render(
            "audit.html",
            json!({"detail": row, "form": {}, "outcomes": []}),
        );
        assert_escaped(&html);
        assert!(html.contains("PERMISSION_DENIED"));
        let html = render(
            "audit.html",
            json!({"rows": [], "form": {}, "outcomes": [],
            "verified": {"intact": false, "row": 9, "problem": HOSTILE}}),
        );
        assert!(html.contains("The chain is broken at row 9."));
        assert_escaped(&html);
    }
}
