//! `/oauth/approvals`: the web renderer of the approval gates, beside the
//! MCP renderer (`list_pending_approvals`, `decide_approval`). A person
//! signed in with the authorization server's web session sees their
//! tenant's pending gates with Confirm/Deny forms, and recent decisions.
//!
//! The page owns no rule. It calls the two host tools through
//! [`Toolhost::call`] as the signed-in person (a user principal), so a
//! decision here takes the same path as one over MCP: the live
//! `approvals:decide` check, no self-approval, a reason for high risk, the
//! store's compare-and-set, the audit row, and the same error codes. Both
//! surfaces read the same rows on every request: no cache.
//!
//! It lives under `/oauth/` because the session cookie is scoped there (and
//! stays so: widening it would send it with every `/mcp` request). Forms
//! carry a CSRF token bound to the session ([`WebUser::csrf`]); the cookie
//! is also `SameSite=Lax`.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Form, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost_auth::{AuthServer, WebUser, escape_html as esc, sign_in_path};
use toolhost_invoke::{CallRequest, InvokeError, Toolhost};
use toolhost_types::{Principal, PrincipalKind};

/// The page's address.
pub const PATH: &str = "/oauth/approvals";
/// A decision form is a gate id, a CSRF token and a reason of at most
/// 1000 bytes (percent-encoded, up to three times that): 16 KiB is ample.
const MAX_FORM_BYTES: usize = 16 << 10;
/// How many decided (or expired) gates the page shows.
const RECENT: usize = 20;
/// The client id the page's calls carry (a web session is no OAuth grant).
const WEB_CLIENT: &str = "toolhost-approvals-page";

/// What the page needs: who is signed in, and the call path.
#[derive(Clone)]
pub struct ApprovalsPage {
    auth: Arc<AuthServer>,
    host: Arc<Toolhost>,
}

impl ApprovalsPage {
    /// The page over `host` (wired with the gate store, its policy and the
    /// approval tools), for people signed in to `auth`.
    pub fn new(auth: Arc<AuthServer>, host: Arc<Toolhost>) -> Self {
        Self { auth, host }
    }

    /// `GET /oauth/approvals`, `POST /oauth/approvals/{gate_id}`.
    pub fn routes(self) -> Router {
        Router::new()
            .route(PATH, get(show))
            .route(&format!("{PATH}/{{gate_id}}"), post(decide))
            .layer(DefaultBodyLimit::max(MAX_FORM_BYTES))
            .with_state(self)
    }

    /// Calls host tool `tool` as `user`; its structured answer.
    async fn call(&self, user: &WebUser, tool: &str, args: Value) -> Result<Value, InvokeError> {
        let who = Principal {
            subject: user.subject.clone(),
            kind: PrincipalKind::User,
            name: user.username.clone(),
            tenant: user.tenant.clone(),
            client_id: WEB_CLIENT.into(),
            scopes: Vec::new(),
            session: "web".into(),
        };
        let req = CallRequest::new(tool, args);
        let answer = self.host.call(&who, req, &CancellationToken::new()).await?;
        Ok(answer.output().map(|o| o.structured).unwrap_or_default())
    }

    /// The page for `user`, with `notice` on top.
    async fn render(&self, user: &WebUser, notice: Notice, status: StatusCode) -> Response {
        let pending = self.call(user, "list_pending_approvals", json!({})).await;
        let all = json!({"filter": {"state": "all"}});
        let recent = self.call(user, "list_pending_approvals", all).await;
        let (pending, recent) = match (pending, recent) {
            (Ok(p), Ok(r)) => (gates(p), gates(r)),
            (Err(e), _) | (_, Err(e)) => {
                let (status, notice) = refused(&e);
                let none = BTreeMap::new();
                return html(status, &sheet(&viewer(user), &notice, &[], &[], &none));
            }
        };
        let recent: Vec<Value> = recent
            .into_iter()
            .filter(|g| g["state"] != "pending")
            .take(RECENT)
            .collect();
        let names = self.names(pending.iter().chain(&recent)).await;
        html(
            status,
            &sheet(&viewer(user), &notice, &pending, &recent, &names),
        )
    }

    /// Usernames of the people who requested and decided `gates` (a
    /// service client, or a deleted user, stays an id).
    async fn names(&self, gates: impl Iterator<Item = &Value>) -> BTreeMap<String, String> {
        let mut names = BTreeMap::new();
        for g in gates {
            for id in [&g["requested_by"], &g["decided_by"]].map(|v| v.as_str()) {
                let Some(id) = id.filter(|id| !names.contains_key(*id)) else {
                    continue;
                };
                if let Ok(Some(u)) = self.auth.store().user_by_id(id).await {
                    names.insert(id.to_owned(), u.username);
                }
            }
        }
        names
    }
}

fn gates(listed: Value) -> Vec<Value> {
    match listed {
        Value::Object(mut o) => match o.remove("gates") {
            Some(Value::Array(g)) => g,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// What the page says above the lists.
enum Notice {
    None,
    /// A decision was recorded.
    Decided(String),
    /// Refused, with the code the MCP tools use.
    Refused {
        code: &'static str,
        message: String,
    },
}

/// The status and notice of a refused call. Internal errors are logged
/// and shown opaquely, as the MCP edge does.
fn refused(e: &InvokeError) -> (StatusCode, Notice) {
    let message = if e.is_internal() {
        tracing::error!(error = %e, "approvals page");
        "internal error".to_owned()
    } else {
        e.to_string()
    };
    let code = e.code();
    (status_of(code), Notice::Refused { code, message })
}

fn status_of(code: &str) -> StatusCode {
    match code {
        "PERMISSION_DENIED" | "SELF_APPROVAL" | "CSRF" => StatusCode::FORBIDDEN,
        "GATE_NOT_FOUND" => StatusCode::NOT_FOUND,
        "GATE_DECIDED" | "GATE_EXPIRED" => StatusCode::CONFLICT,
        "REASON_REQUIRED" | "INVALID_ARGUMENTS" => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

fn sign_in() -> Response {
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(&sign_in_path(PATH)) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

#[derive(Deserialize)]
struct Shown {
    decided: Option<String>,
}

async fn show(
    State(page): State<ApprovalsPage>,
    headers: HeaderMap,
    Query(q): Query<Shown>,
) -> Response {
    let Some(user) = page.auth.web_user(&headers).await else {
        return sign_in();
    };
    let notice = q.decided.map_or(Notice::None, Notice::Decided);
    page.render(&user, notice, StatusCode::OK).await
}

#[derive(Deserialize)]
struct DecideForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    decision: String,
    #[serde(default)]
    reason: String,
}

async fn decide(
    State(page): State<ApprovalsPage>,
    headers: HeaderMap,
    Path(gate_id): Path<String>,
    Form(form): Form<DecideForm>,
) -> Response {
    let Some(user) = page.auth.web_user(&headers).await else {
        return sign_in();
    };
    if !user.csrf_matches(&form.csrf) {
        let notice = Notice::Refused {
            code: "CSRF",
            message: "this form was not sent from your approvals page: nothing was decided; \
                      decide again below"
                .into(),
        };
        return page.render(&user, notice, StatusCode::FORBIDDEN).await;
    }
    let args = json!({"gate_id": gate_id, "decision": form.decision, "reason": form.reason});
    match page.call(&user, "decide_approval", args).await {
        Ok(_) => {
            let query = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("decided", &gate_id)
                .finish();
            let mut r = StatusCode::SEE_OTHER.into_response();
            if let Ok(v) = HeaderValue::from_str(&format!("{PATH}?{query}")) {
                r.headers_mut().insert(header::LOCATION, v);
            }
            r
        }
        Err(e) => {
            let (status, notice) = refused(&e);
            page.render(&user, notice, status).await
        }
    }
}

/// Who the page is rendered for.
struct Viewer<'a> {
    subject: &'a str,
    username: &'a str,
    tenant: &'a str,
    csrf: &'a str,
}

fn viewer(user: &WebUser) -> Viewer<'_> {
    Viewer {
        subject: &user.subject,
        username: &user.username,
        tenant: &user.tenant,
        csrf: user.csrf(),
    }
}

/// A string field of a gate view (`""` when absent or null).
fn field<'a>(g: &'a Value, key: &str) -> &'a str {
    g[key].as_str().unwrap_or("")
}

/// The page's body: escaped throughout (summaries and target names come
/// from plugins, reasons from people).
fn sheet(
    user: &Viewer<'_>,
    notice: &Notice,
    pending: &[Value],
    recent: &[Value],
    names: &BTreeMap<String, String>,
) -> String {
    let notice = match notice {
        Notice::None => String::new(),
        // Only a gate the page lists: the query string is anyone's to write.
        Notice::Decided(id) => recent
            .iter()
            .find(|g| field(g, "gate_id") == id)
            .map(|g| {
                format!(
                    "<p class=\"notice\" role=\"status\">Gate <code>{}</code> is now {}.</p>\n",
                    esc(id),
                    esc(field(g, "state"))
                )
            })
            .unwrap_or_default(),
        Notice::Refused { code, message } => format!(
            "<p class=\"error\" role=\"alert\"><code>{}</code> {}</p>\n",
            esc(code),
            esc(message)
        ),
    };
    let who = |g: &Value, key: &str| {
        let id = field(g, key);
        let name = names.get(id).map_or(id, String::as_str);
        if id == user.subject {
            format!("{} (you)", esc(name))
        } else {
            esc(name)
        }
    };
    let mut rows = String::new();
    for g in pending {
        let id = esc(field(g, "gate_id"));
        let reason_hint = if g["reason_required"] == true {
            "Reason (required to confirm)"
        } else {
            "Reason"
        };
        rows.push_str(&format!(
            "<tr id=\"{id}\">{common}<td>{requested}</td><td>{expires}</td>\
             <td class=\"state\">{state}</td><td>\
             <form method=\"post\" action=\"{PATH}/{id}\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <label>{reason_hint} <input name=\"reason\" maxlength=\"1000\"></label>\
             <button type=\"submit\" name=\"decision\" value=\"confirm\">Confirm</button> \
             <button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button>\
             </form></td></tr>\n",
            common = common(g),
            requested = who(g, "requested_by"),
            expires = esc(field(g, "expires_at")),
            state = esc(field(g, "state")),
            csrf = esc(user.csrf),
        ));
    }
    let mut done = String::new();
    for g in recent {
        done.push_str(&format!(
            "<tr id=\"{id}\">{common}<td>{requested}</td><td class=\"state\">{state}</td>\
             <td>{decided}</td><td>{reason}</td><td>{at}</td></tr>\n",
            id = esc(field(g, "gate_id")),
            common = common(g),
            requested = who(g, "requested_by"),
            state = esc(field(g, "state")),
            decided = who(g, "decided_by"),
            reason = esc(field(g, "reason")),
            at = esc(field(g, "decided_at")),
        ));
    }
    let head = "<th>Gate</th><th>Tool</th><th>Summary</th><th>Targets</th><th>Risk</th><th>Requested by</th>";
    format!(
        "<h1>Approvals</h1>\n<p>Signed in as <strong>{user}</strong>, tenant <code>{tenant}</code>. \
         The same gates <code>list_pending_approvals</code> shows.</p>\n{notice}\
         <h2>Waiting for a decision ({n})</h2>\n\
         <table><thead><tr>{head}<th>Expires at</th><th>State</th><th>Decision</th></tr></thead>\
         <tbody>\n{rows}</tbody></table>\n\
         <h2>Recent decisions</h2>\n\
         <table><thead><tr>{head}<th>State</th><th>Decided by</th><th>Reason</th><th>Decided at</th></tr></thead>\
         <tbody>\n{done}</tbody></table>",
        user = esc(user.username),
        tenant = esc(user.tenant),
        n = pending.len(),
    )
}

/// The cells both lists share: gate, tool, summary, targets, risk.
fn common(g: &Value) -> String {
    let targets: String = g["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let tags: String = t["tags"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(|tag| format!(" <span class=\"tag\">{}</span>", esc(tag)))
                .collect();
            format!(
                "<li title=\"{}\">{} <strong>{}</strong>{tags}</li>",
                esc(field(t, "id")),
                esc(field(t, "kind")),
                esc(field(t, "name"))
            )
        })
        .collect();
    let risk = field(g, "risk");
    let class = match risk {
        "low" | "medium" | "high" => risk,
        _ => "unknown",
    };
    format!(
        "<td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td><ul>{targets}</ul></td>\
         <td class=\"risk-{class}\">{}</td>",
        esc(field(g, "gate_id")),
        esc(field(g, "tool")),
        esc(field(g, "summary")),
        esc(risk)
    )
}

/// A page with the headers of the authorization server's pages: never
/// cached, never framed, no script, no referrer; forms post only here.
fn html(status: StatusCode, body: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\"><title>Approvals · toolhost</title>\
         <style>body{{font-family:sans-serif;margin:2rem}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:.3rem;text-align:left;vertical-align:top}}\
         ul{{margin:0;padding-left:1rem}}.tag{{background:#eee;padding:0 .3rem}}\
         .risk-high{{color:#a00;font-weight:bold}}.error{{color:#a00}}</style></head>\n\
         <body>\n{body}\n</body></html>\n"
    );
    let mut r = (status, Html(html)).into_response();
    let h = r.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action 'self'",
        ),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: Viewer<'static> = Viewer {
        subject: "u-ann",
        username: "ann",
        tenant: "demo",
        csrf: "tok",
    };

    fn gate(id: &str, state: &str) -> Value {
        json!({
            "gate_id": id, "tool": "run_by_tag", "risk": "high", "reason_required": true,
            "summary": "<script>alert(1)</script>", "state": state,
            "targets": [{"kind": "environment", "id": "env\"1", "name": "<b>prod</b>", "tags": ["p<r>od"]}],
            "requested_by": "u-demo", "expires_at": "2030-01-01T00:00:00Z",
            "decided_by": "u-ann", "reason": "ok & <i>fine</i>", "decided_at": "2030-01-01T00:00:00Z",
        })
    }

    #[test]
    fn everything_from_plugins_and_people_is_escaped() {
        let names = BTreeMap::from([("u-demo".to_owned(), "<demo>".to_owned())]);
        let html = sheet(
            &ME,
            &Notice::Decided("gate_2".into()),
            &[gate("gate_1", "pending")],
            &[gate("gate_2", "denied")],
            &names,
        );
        for raw in [
            "<script>", "<b>prod", "p<r>od", "<i>fine", "<demo>", "env\"1",
        ] {
            assert!(!html.contains(raw), "{raw} unescaped in {html}");
        }
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("&lt;demo&gt;") && html.contains("ann (you)"));
        assert!(html.contains("Gate <code>gate_2</code> is now denied."));
        let unknown = sheet(&ME, &Notice::Decided("any text".into()), &[], &[], &names);
        assert!(
            !unknown.contains("any text"),
            "only listed gates are announced"
        );
    }

    #[test]
    fn only_pending_gates_have_a_form_and_it_carries_the_csrf_token() {
        let html = sheet(
            &ME,
            &Notice::None,
            &[gate("gate_1", "pending")],
            &[gate("gate_2", "confirmed")],
            &BTreeMap::new(),
        );
        assert!(html.contains("action=\"/oauth/approvals/gate_1\""));
        assert!(!html.contains("action=\"/oauth/approvals/gate_2\""));
        assert!(html.contains("name=\"csrf\" value=\"tok\""));
        assert!(html.contains("Reason (required to confirm)"));
    }

    #[test]
    fn refusals_keep_their_codes_and_statuses() {
        let rows = [
            ("PERMISSION_DENIED", 403),
            ("SELF_APPROVAL", 403),
            ("CSRF", 403),
            ("GATE_NOT_FOUND", 404),
            ("GATE_DECIDED", 409),
            ("GATE_EXPIRED", 409),
            ("REASON_REQUIRED", 400),
            ("INVALID_ARGUMENTS", 400),
            ("INTERNAL", 500),
        ];
        for (code, status) in rows {
            assert_eq!(status_of(code).as_u16(), status, "{code}");
        }
        let html = sheet(
            &ME,
            &Notice::Refused {
                code: "GATE_DECIDED",
                message: "gate <g> is already denied".into(),
            },
            &[],
            &[],
            &BTreeMap::new(),
        );
        assert!(html.contains("<code>GATE_DECIDED</code> gate &lt;g&gt; is already denied"));
    }
}
