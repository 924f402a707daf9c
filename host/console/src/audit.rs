//! Audit: search the tenant's audit rows by person, tool, outcome and
//! time; one row's detail; and the tenant's rows verified against the hash
//! chain, as an action (a form, at most once per [`VERIFY_EVERY`] per
//! tenant).
//!
//! No host tool lists audit rows, so the page reads the store itself,
//! always within the viewer's tenant, and needs `audit:read` (or an admin
//! role): see [`crate::viewer::AUDIT_PERMISSION`]. The chain is one chain
//! over every tenant's rows; a tenant's verification checks its own rows
//! and their links to the rows beside them (their hashes only) and shows
//! nothing host-wide (`Store::verify_tenant_chain`). The whole walk, with
//! the chain's row count and head, is the operator's:
//! `toolhost audit verify`.

use std::time::{Duration, SystemTime};

use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::get;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolhost_audit::Outcome;
use toolhost_auth::AuthStore;
use toolhost_storage::{AuditQuery, AuditRecord};

use crate::pages::Page;
use crate::paging::{Cursor, Pager, Read};
use crate::viewer::Viewer;
use crate::{Console, Refusal};

/// How many rows one page of a search shows: a screenful or two of a
/// busy tenant, small enough that a page is one short index walk.
const SHOWN: u32 = 100;

/// How often a tenant's rows may be verified from the console: once a
/// minute per tenant, counted in the store so every replica shares it. A
/// verification reads every row of the tenant (a thousand per query):
/// seconds of the store's time on a large tenant, which a person checking
/// the chain needs once, not in a loop. The rest are refused with 429.
pub const VERIFY_EVERY: Duration = Duration::from_secs(60);

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
        .route("/admin/audit/verify", get(search_page).post(verify))
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
    /// Which page: a row id to read older or newer rows from.
    #[serde(flatten)]
    cursor: Cursor,
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
        let row_id = |what: &str, s: &str| match s.trim() {
            "" => Ok(None),
            s => s
                .parse::<i64>()
                .map(Some)
                .map_err(|_| BadField(format!("{what}: expected a row id, such as 1234"))),
        };
        Ok(AuditQuery {
            tenant: Some(tenant.to_owned()),
            principal: subject.or_else(|| text(&self.principal)),
            tool: text(&self.tool),
            client_id: text(&self.client),
            outcome,
            since: instant("since", &self.since, now)?,
            until: instant("until", &self.until, now)?,
            call_id: None,
            before: row_id("before", &self.cursor.before)?,
            after: row_id("after", &self.cursor.after)?,
            // One more than a page: whether there is a page beyond it.
            limit: SHOWN + 1,
        })
    }

    /// The filters, as the links to the pages beside this one keep them.
    fn filters(&self) -> [(&'static str, &str); 6] {
        [
            ("principal", self.principal.as_str()),
            ("tool", self.tool.as_str()),
            ("client", self.client.as_str()),
            ("outcome", self.outcome.as_str()),
            ("since", self.since.as_str()),
            ("until", self.until.as_str()),
        ]
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
        "definition_digest": e.definition_digest.map(|d| format!("sha256:{d}")),
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

    /// One page of the rows `query` finds (it asks for one more than a
    /// page), newest first, and the links to the pages beside it: the
    /// store is asked once more, for one row, whether there are rows the
    /// other way.
    async fn audit_rows(
        &self,
        query: &AuditQuery,
        form: &Search,
    ) -> Result<(Vec<AuditRecord>, Pager), toolhost_storage::StorageError> {
        let mut found = self.store.search(query).await?;
        let toward_newer = form.cursor.toward_newer();
        // Read up from the cursor toward newer rows: the extra row is the newest.
        let more = toolhost_types::keep_page(&mut found, SHOWN as usize, toward_newer);
        let ends = found.first().zip(found.last()).map(|(f, l)| (f.id, l.id));
        let beyond = match ends {
            Some((first, last)) if !form.cursor.is_first() => {
                let (before, after) = if toward_newer {
                    (Some(last), None)
                } else {
                    (None, Some(first))
                };
                let probe = AuditQuery {
                    before,
                    after,
                    limit: 1,
                    ..query.clone()
                };
                !self.store.search(&probe).await?.is_empty()
            }
            _ => false,
        };
        let read = Read {
            ends: ends.map(|(f, l)| (f.to_string(), l.to_string())),
            more,
            beyond,
            ..Read::from(&form.cursor)
        };
        Ok((found, Pager::of(&read, &form.filters())))
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
        let (rows, pager, problem) = match form.query(viewer.tenant(), subject) {
            Ok(q) => match self.audit_rows(&q, &form).await {
                Ok((found, pager)) => {
                    let names = self.audit_names(&found).await;
                    let rows = found.iter().map(|r| row(r, &names)).collect();
                    (rows, pager, None)
                }
                Err(e) => {
                    return self.unreadable(viewer, Page::Audit, "the audit trail", &e);
                }
            },
            Err(BadField(why)) => (Vec::new(), Pager::default(), Some(why)),
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
        let paged = !form.cursor.is_first();
        let context = json!({
            "form": form,
            "outcomes": OUTCOMES,
            "rows": rows,
            "searched": searched,
            "limit": SHOWN,
            "paged": paged,
            "pager": pager,
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

/// The audit page with its verification form (a verification is a POST:
/// an address typed or prefetched verifies nothing).
async fn search_page(State(c): State<Console>, headers: HeaderMap) -> Response {
    let viewer = viewer_of!(c, headers, Page::Audit);
    c.audit_page(&viewer, Search::default(), None).await
}

/// The verification form: its CSRF token only.
#[derive(Deserialize)]
pub(crate) struct VerifyForm {
    #[serde(default)]
    csrf: String,
}

/// The window of [`VERIFY_EVERY`] that `now_ms` (unix milliseconds) falls
/// in: its start and end.
fn verify_window(now_ms: i64) -> (i64, i64) {
    let every = i64::try_from(VERIFY_EVERY.as_millis()).expect("a minute fits in i64");
    let start = now_ms - now_ms.rem_euclid(every);
    (start, start + every)
}

/// Whether the `count`th verification of a window ending at `end_ms` may
/// run at `now_ms`: else the whole seconds until the window ends.
fn verify_allowed(count: u64, now_ms: i64, end_ms: i64) -> Result<(), u64> {
    if count <= 1 {
        return Ok(());
    }
    let left = u64::try_from(end_ms.saturating_sub(now_ms)).unwrap_or(0);
    Err(left.div_ceil(1000).max(1))
}

/// Verifies the viewer's tenant's rows against the chain and shows the
/// result: the tenant's count and newest row, never the chain's row count
/// or head, nor another tenant's rows. Once per [`VERIFY_EVERY`] per
/// tenant; the form needs the session's CSRF token.
async fn verify(
    State(c): State<Console>,
    headers: HeaderMap,
    Form(form): Form<VerifyForm>,
) -> Response {
    let viewer = acting_on!(c, headers, Page::Audit, &form.csrf);
    let tenant = viewer.tenant().to_owned();
    let now_ms = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let (start, end) = verify_window(now_ms);
    let hits = toolhost_storage::Hits {
        bucket: format!("console-verify:{tenant}"),
        window_start: start,
        window_end: end,
        n: 1,
    };
    let counted = match c.store.add_hits(std::slice::from_ref(&hits)).await {
        Ok(totals) => totals.first().copied().unwrap_or(1),
        Err(e) => {
            tracing::error!(error = %e, "console: counting a verification of the audit chain");
            let refusal = Refusal {
                code: "UNAVAILABLE",
                message: "the audit trail could not be verified now; try again".into(),
            };
            return c.refused(
                &viewer,
                Page::Audit,
                StatusCode::SERVICE_UNAVAILABLE,
                refusal,
            );
        }
    };
    if let Err(retry_after) = verify_allowed(counted, now_ms, end) {
        let refusal = Refusal {
            code: "RATE_LIMITED",
            message: format!(
                "your tenant's rows were already verified in this {} s window; they can be verified again in {retry_after} s",
                VERIFY_EVERY.as_secs()
            ),
        };
        let mut refused = c.refused(&viewer, Page::Audit, StatusCode::TOO_MANY_REQUESTS, refusal);
        refused
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
        return refused;
    }
    let verified = match c.store.verify_tenant_chain(&tenant).await {
        Ok(Ok(summary)) => json!({
            "intact": true,
            "verified": summary.verified,
            "unchained": summary.unchained,
            "newest": summary.newest.map(|(call_id, hash)| json!({"call_id": call_id, "hash": hash})),
        }),
        Ok(Err(broken)) => json!({
            "intact": false,
            "call_id": broken.call_id,
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
            return c.unreadable(&viewer, Page::Audit, "the audit trail", &e);
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
    c.page_ok(&viewer, Page::Audit, "audit.html", context).await
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
            cursor: Cursor {
                before: "1234".into(),
                after: String::new(),
            },
        };
        let q = form.query("demo", None).expect("a valid search");
        assert_eq!(q.tenant.as_deref(), Some("demo"));
        assert_eq!(q.principal.as_deref(), Some("ann"));
        assert_eq!(q.tool.as_deref(), Some("run_by_tag"));
        assert_eq!(q.client_id.as_deref(), Some("toolhost-console"));
        assert_eq!(q.outcome, Some(Outcome::ApprovalRequired));
        assert!(q.since.is_some() && q.until.is_none());
        assert_eq!((q.before, q.after), (Some(1234), None));
        assert_eq!(q.limit, SHOWN + 1, "one more than a page: is there another");
        let resolved = form.query("demo", Some("u-1".into())).expect("valid");
        assert_eq!(resolved.principal.as_deref(), Some("u-1"));
    }

    #[test]
    fn a_tenant_verifies_once_per_window_and_is_told_when_it_may_again() {
        let every = i64::try_from(VERIFY_EVERY.as_millis()).expect("fits");
        let now = 1_764_000_012_345;
        let (start, end) = verify_window(now);
        assert!(start <= now && now < end && end - start == every);
        assert_eq!(verify_window(start), (start, end));
        assert_eq!(verify_window(end).0, end);
        assert_eq!(verify_allowed(1, now, end), Ok(()));
        assert_eq!(verify_allowed(2, end - 1, end), Err(1));
        assert_eq!(verify_allowed(3, end - 2_500, end), Err(3));
        assert_eq!(verify_allowed(2, start, end), Err(VERIFY_EVERY.as_secs()));
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
        let bad = Search {
            cursor: Cursor {
                before: "1 OR 1=1".into(),
                after: String::new(),
            },
            ..Search::default()
        };
        let BadField(why) = bad.query("demo", None).expect_err("refused");
        assert!(why.contains("before"), "{why}");
        let ago = instant("since", "90m", SystemTime::now()).expect("a duration");
        assert!(ago.is_some());
    }
}

#[cfg(test)]
mod page_tests {
    use serde_json::json;

    use crate::testing::{CSRF, HOSTILE, assert_escaped, render};

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
            "verified": {"intact": false, "call_id": "c-9", "problem": HOSTILE}}),
        );
        assert!(html.contains("Your tenant's rows break the chain at call c-9."));
        assert_escaped(&html);
    }

    #[test]
    fn a_page_links_the_older_and_newer_pages_keeping_the_search() {
        let row = json!({"id": 7, "call_id": "c-1", "at": "2030-01-01T00:00:00.000Z",
            "principal": "u-1", "principal_name": "ann", "outcome": "executed", "tool": "t",
            "duration": "1.000 ms"});
        let pager = json!({"newer": "tool=t&after=7", "older": "tool=t&before=7"});
        let html = render(
            "audit.html",
            json!({"rows": [row], "form": {"tool": "t"}, "outcomes": [], "searched": true,
            "limit": 100, "paged": true, "pager": pager}),
        );
        assert!(
            html.contains("href=\"/admin/audit?tool=t&amp;before=7\">Older</a>"),
            "{html}"
        );
        assert!(html.contains("href=\"/admin/audit?tool=t&amp;after=7\">Newer</a>"));
        let newest = json!({"newer": null, "older": "before=7"});
        let html = render(
            "audit.html",
            json!({"rows": [], "form": {}, "outcomes": [], "limit": 100, "pager": newest}),
        );
        assert!(!html.contains("rel=\"prev\""), "no newer page: {html}");
    }

    #[test]
    fn verifying_is_a_form_with_the_sessions_token_and_a_result_shows_no_host_wide_figure() {
        let html = render(
            "audit.html",
            json!({"rows": [], "form": {}, "outcomes": []}),
        );
        let form = html
            .split("<form method=\"post\" action=\"/admin/audit/verify\"")
            .nth(1)
            .expect("a POST form to verify");
        assert!(
            form.contains(&format!("name=\"csrf\" value=\"{CSRF}\"")),
            "{form}"
        );
        assert!(form.contains("toolhost audit verify"), "{form}");
        assert!(!html.contains("Your tenant's rows are intact"));

        let html = render(
            "audit.html",
            json!({"rows": [], "form": {}, "outcomes": [],
            "verified": {"intact": true, "verified": 3, "unchained": 0,
                         "newest": {"call_id": "c-3", "hash": "ab"}}}),
        );
        assert!(html.contains("3 rows of demo verified"), "{html}");
        assert!(!html.contains("Head:"), "no chain head: {html}");
    }
}
