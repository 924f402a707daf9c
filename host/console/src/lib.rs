//! The admin console: server-rendered pages under `/admin` for the people
//! who run the host: an inbox of what waits for them, approvals,
//! checkpoints, plugin reviews and the catalog (the operators'), the
//! catalog's changes as a tenant sees them, runs, authoring sessions,
//! people and clients, the tenants (the host operators'), and the audit
//! trail. The long lists (audit rows, runs) are read a page at a time
//! from a cursor in the address, filtered in the store (`paging.rs`).
//!
//! The console is a second renderer of the same rows, never a second
//! policy. Every page reads and every decision acts through the host's own
//! tools, as the signed-in person, with the same permission checks and the
//! same refusals as over MCP. A decision is a call ([`Toolhost::call`])
//! with the same audit row as over MCP; a page view is a read
//! ([`Toolhost::read`]) of a host tool that changes nothing, and writes no
//! row: the trail records what people did, not what they looked at.
//! A page the person may not use is absent from their navigation and its
//! address answers 403 ([`pages::Page::open_to`]).
//!
//! The people page has no host tool behind it: it reads through the auth
//! and policy stores' traits and writes each change as an audit effect
//! ([`toolhost_audit::PeopleEffect`]) in the transaction of the row that
//! records it, so its rows and its changes are one, as a decision's are.
//! The console owns the pages and forms; it does not own what a change
//! does to the database (`storage` applies the effect) nor who may make it
//! (the viewer's roles, read live).
//!
//! Sessions are the authorization server's web sessions (a cookie scoped
//! to `/admin`, see `toolhost_auth::web`); every form carries the
//! session's CSRF token; every page has a strict Content-Security-Policy
//! ([`render::CSP`]) and the template engine escapes every value.

/// The person allowed on `$page` (`Console::viewer`), or the handler
/// returns what to send instead (to sign in, or 403).
macro_rules! viewer_of {
    ($console:expr, $headers:expr, $page:expr) => {
        match $console.viewer(&$headers, $page).await {
            Ok(viewer) => viewer,
            Err(response) => return response,
        }
    };
}

/// The person sending a form on `$page` with the token `$csrf`
/// (`Console::acting`), or the handler returns what to send instead.
macro_rules! acting_on {
    ($console:expr, $headers:expr, $page:expr, $csrf:expr) => {
        match $console.acting(&$headers, $page, $csrf).await {
            Ok(viewer) => viewer,
            Err(response) => return response,
        }
    };
}

mod approvals;
mod audit;
mod authoring;
mod catalog;
mod checkpoints;
mod clients;
mod connections;
mod decision_page;
mod diff;
mod inbox;
pub mod pages;
mod paging;
mod people;
pub mod render;
mod reviews;
mod runs;
mod tenants;
mod toolsets;
pub mod viewer;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{DefaultBodyLimit, Form, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost_audit::AuditSink;
use toolhost_auth::{AuthServer, sign_in_path};
use toolhost_invoke::{CallRequest, InvokeError, Toolhost};
use toolhost_policy::PolicyStore;
use toolhost_storage::Store;

use crate::approvals::Approvals;
use crate::checkpoints::Checkpoints;
use crate::decision_page::show;
use crate::pages::{NavItem, Page, Waiting};
use crate::render::{Templates, page, see_other};
use crate::viewer::Viewer;

/// A form is a CSRF token, a few ids and a reason of at most 1000 bytes
/// (percent-encoded, up to three times that): 16 KiB is ample.
const MAX_FORM_BYTES: usize = 16 << 10;

/// The approvals page's address before the console; it redirects here.
pub const OLD_APPROVALS: &str = "/oauth/approvals";

/// What the console needs: who is signed in (and the auth store behind
/// it, for people and clients), the call path, the policy store (roles),
/// the audit trail (where the people page's changes are written with
/// their rows), and the store itself for what only it answers (audit
/// search and chain checks, the verify form's rate limit).
#[derive(Clone)]
pub struct Console {
    auth: Arc<AuthServer>,
    host: Arc<Toolhost>,
    policy: Arc<dyn PolicyStore>,
    trail: Arc<dyn AuditSink>,
    store: Arc<Store>,
    templates: Arc<Templates>,
    counts: Arc<Mutex<HashMap<String, (Instant, Waiting)>>>,
    /// People's own connections to backends, if any backend takes them.
    connections: Option<Arc<toolhost_sso::connections::Connections>>,
}

/// How long the navigation's counts are reused for a person between
/// pages: each count is a read of a host tool (three store queries), so
/// moving between pages does not repeat them each time. The inbox always
/// counts afresh.
const COUNTS_FRESH: Duration = Duration::from_secs(60);
/// The most people whose counts are remembered (then all are forgotten).
const COUNTS_KEPT: usize = 10_000;

/// Why the console could not be built.
#[derive(Debug, thiserror::Error)]
#[error("the console's templates: {0}")]
pub struct ConsoleError(#[from] minijinja::Error);

impl Console {
    /// The console over `host` (wired with its host tools) and `store`,
    /// for people signed in to `auth`.
    pub fn new(
        auth: Arc<AuthServer>,
        host: Arc<Toolhost>,
        store: Arc<Store>,
    ) -> Result<Self, ConsoleError> {
        Ok(Self {
            auth,
            host,
            policy: store.clone(),
            trail: store.clone(),
            store,
            templates: Arc::new(Templates::new()?),
            counts: Arc::default(),
            connections: None,
        })
    }

    /// This console, with the page where people connect, see and revoke
    /// their own connections to backends (`connections`).
    pub fn with_connections(
        mut self,
        connections: Option<Arc<toolhost_sso::connections::Connections>>,
    ) -> Self {
        self.connections = connections;
        self
    }

    /// Every route under `/admin`, and the old approvals address.
    pub fn routes(self) -> Router {
        Router::new()
            .route("/admin", get(inbox::show))
            .route("/admin/", get(|| async { see_other("/admin") }))
            .route("/admin/static/console.css", get(render::assets::stylesheet))
            .route("/admin/static/console.js", get(render::assets::script))
            .route("/admin/static/favicon.svg", get(render::assets::icon))
            .route("/admin/signout", post(sign_out))
            .route("/admin/approvals", get(show::<Approvals>))
            .route("/admin/approvals/{gate_id}", post(approvals::decide))
            .route("/admin/checkpoints", get(show::<Checkpoints>))
            .route(
                "/admin/checkpoints/{checkpoint_id}",
                post(checkpoints::decide),
            )
            .merge(reviews::routes())
            .merge(catalog::routes())
            .merge(runs::routes())
            .merge(authoring::routes())
            .merge(people::routes())
            .merge(clients::routes())
            .merge(audit::routes())
            .merge(tenants::routes())
            .merge(toolsets::routes())
            .merge(connections::routes())
            .route(
                OLD_APPROVALS,
                get(|| async { moved(Page::Approvals.path()) }),
            )
            .route(
                &format!("{OLD_APPROVALS}/{{gate_id}}"),
                post(|Path(id): Path<String>| async move {
                    moved(&format!("{}/{}", Page::Approvals.path(), encode(&id)))
                }),
            )
            .fallback(not_found)
            .layer(DefaultBodyLimit::max(MAX_FORM_BYTES))
            .with_state(self)
    }

    /// The person signed in to this browser, if they may open `page`:
    /// else the response to send (to sign in, or 403).
    async fn viewer(&self, headers: &HeaderMap, page: Page) -> Result<Viewer, Response> {
        let Some(user) = self.auth.web_user(headers).await else {
            return Err(see_other(&sign_in_path(page.path())));
        };
        let viewer = Viewer::read(user, &self.host)
            .await
            .map_err(|e| self.failure(None, &e))?;
        if !page.open_to(&viewer) {
            let refusal = Refusal {
                code: "PERMISSION_DENIED",
                message: "your roles do not include this page; an administrator of your tenant can grant it".into(),
            };
            return Err(self.refused(&viewer, page, StatusCode::FORBIDDEN, refusal));
        }
        Ok(viewer)
    }

    /// The person sending a form on `page`: allowed there, and the form's
    /// CSRF token theirs. A missing or foreign token changes nothing: 403.
    async fn acting(
        &self,
        headers: &HeaderMap,
        page: Page,
        csrf: &str,
    ) -> Result<Viewer, Response> {
        let viewer = self.viewer(headers, page).await?;
        if !viewer.user.csrf_matches(csrf) {
            return Err(self.refused(&viewer, page, StatusCode::FORBIDDEN, Refusal::csrf()));
        }
        Ok(viewer)
    }

    /// Reads through host tool `tool` as `viewer`, for a page: the same
    /// checks as a call ([`Toolhost::read`]) and no audit row, since a
    /// page view is not a decision. Its structured answer.
    async fn read(&self, viewer: &Viewer, tool: &str, args: Value) -> Result<Value, InvokeError> {
        let out = self.host.read(&viewer.principal, tool, &args).await?;
        Ok(out.structured)
    }

    /// Calls host tool `tool` as `viewer` for a decision, audited as a
    /// call over MCP is; its structured answer.
    async fn call(&self, viewer: &Viewer, tool: &str, args: Value) -> Result<Value, InvokeError> {
        let req = CallRequest::new(tool, args);
        let answer = self
            .host
            .call(&viewer.principal, req, &CancellationToken::new())
            .await?;
        Ok(answer.output().map(|o| o.structured).unwrap_or_default())
    }

    /// Acts through host tool `tool` with `args` as `viewer` (a call, with
    /// its audit row): done, the browser goes back to `page` naming what
    /// was done (`?key=value`); refused, `again` shows the page with the
    /// refusal.
    async fn act_with_tool(
        &self,
        viewer: &Viewer,
        (tool, args): (&str, Value),
        (page, key, value): (Page, &str, &str),
        again: impl AsyncFnOnce(StatusCode, Refusal) -> Response,
    ) -> Response {
        match self.call(viewer, tool, args).await {
            Ok(_) => done_on(page, key, value),
            Err(e) => {
                let (status, refusal) = Refusal::of(&e);
                again(status, refusal).await
            }
        }
    }

    /// Adds `<key>_name` (the username) and `<key>_you` (the viewer) to
    /// each row's person ids under `keys`; a service client, or a user
    /// gone, stays an id.
    async fn name_people(&self, rows: &mut [Value], keys: &[&str], viewer: &Viewer) {
        let mut names: BTreeMap<String, Option<String>> = BTreeMap::new();
        for row in rows.iter_mut() {
            for key in keys {
                let Some(id) = row[*key].as_str().map(str::to_owned) else {
                    continue;
                };
                if !names.contains_key(&id) {
                    let user = self.auth.store().user_by_id(&id).await.ok().flatten();
                    names.insert(id.clone(), user.map(|u| u.username));
                }
                let name = names[&id].clone().unwrap_or_else(|| id.clone());
                row[format!("{key}_name")] = Value::String(name);
                row[format!("{key}_you")] = Value::Bool(id == viewer.user.subject);
            }
        }
    }

    /// `viewer`'s counts with `page`'s own count, just read, put in: a
    /// page that lists what waits never shows a stale count of itself.
    async fn counted(&self, viewer: &Viewer, page: Page, n: usize) -> Waiting {
        let mut w = match self.remembered(viewer) {
            Some(w) => w,
            None => self.waiting(viewer).await,
        };
        match page {
            Page::Approvals => w.approvals = Some(n),
            Page::Checkpoints => w.checkpoints = Some(n),
            Page::Reviews => w.reviews = Some(n),
            _ => {}
        }
        self.remember(viewer, w)
    }

    /// `viewer`'s counts if they were read within [`COUNTS_FRESH`].
    fn remembered(&self, viewer: &Viewer) -> Option<Waiting> {
        let counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        counts
            .get(&viewer.user.subject)
            .filter(|(at, _)| at.elapsed() < COUNTS_FRESH)
            .map(|(_, w)| *w)
    }

    /// Keeps `waiting` as `viewer`'s counts; returns it.
    fn remember(&self, viewer: &Viewer, waiting: Waiting) -> Waiting {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if counts.len() >= COUNTS_KEPT {
            counts.clear();
        }
        counts.insert(viewer.user.subject.clone(), (Instant::now(), waiting));
        waiting
    }

    /// How many things wait on the counted pages `viewer` may open.
    async fn waiting(&self, viewer: &Viewer) -> Waiting {
        let count = |tool: &'static str, args: Value, key: &'static str| async move {
            if !viewer.may_use(tool) {
                return None;
            }
            let listed = self.read(viewer, tool, args).await.ok()?;
            listed[key].as_array().map(Vec::len)
        };
        Waiting {
            approvals: count("list_pending_approvals", json!({}), "gates").await,
            checkpoints: count("list_checkpoints", json!({}), "checkpoints").await,
            reviews: count("list_plugin_reviews", json!({}), "reviews").await,
        }
    }

    /// `template` of `page` for `viewer`, `200 OK`, its navigation counted
    /// as remembered (see [`show`](Self::show)).
    async fn page_ok(
        &self,
        viewer: &Viewer,
        page_shown: Page,
        template: &str,
        context: Value,
    ) -> Response {
        self.show(viewer, page_shown, template, StatusCode::OK, None, context)
            .await
    }

    /// `template` of `page` for `viewer`, with the layout's context
    /// (navigation with `waiting`, or counted now, and the viewer).
    async fn show(
        &self,
        viewer: &Viewer,
        page_shown: Page,
        template: &str,
        status: StatusCode,
        waiting: Option<Waiting>,
        context: Value,
    ) -> Response {
        let waiting = match waiting {
            Some(w) => self.remember(viewer, w),
            None => match self.remembered(viewer) {
                Some(w) => w,
                None => {
                    let w = self.waiting(viewer).await;
                    self.remember(viewer, w)
                }
            },
        };
        let layout = Layout {
            title: page_shown.label(),
            nav: pages::nav(viewer, page_shown, waiting),
            viewer: Who {
                username: &viewer.user.username,
                tenant: &viewer.user.tenant,
                csrf: viewer.user.csrf(),
            },
            page: context,
        };
        match self.templates.render(template, &layout) {
            Ok(body) => page(status, body),
            Err(e) => {
                tracing::error!(error = %e, template, "rendering a console page");
                page(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "<!doctype html><title>Error</title><p>This page could not be shown.</p>"
                        .into(),
                )
            }
        }
    }

    /// The error page for `viewer` on `page_shown`.
    /// The 503 page of `page_shown` when the store could not be read for
    /// `what` (logged with `error`; the person is told to try again).
    fn unreadable(
        &self,
        viewer: &Viewer,
        page_shown: Page,
        what: &str,
        error: &dyn std::fmt::Display,
    ) -> Response {
        tracing::error!(error = %error, page = page_shown.label(), "console: reading {what}");
        let refusal = Refusal {
            code: "UNAVAILABLE",
            message: format!("{what} could not be read now; try again"),
        };
        self.refused(viewer, page_shown, StatusCode::SERVICE_UNAVAILABLE, refusal)
    }

    fn refused(
        &self,
        viewer: &Viewer,
        page_shown: Page,
        status: StatusCode,
        refusal: Refusal,
    ) -> Response {
        let layout = Layout {
            title: page_shown.label(),
            nav: pages::nav(viewer, page_shown, Waiting::default()),
            viewer: Who {
                username: &viewer.user.username,
                tenant: &viewer.user.tenant,
                csrf: viewer.user.csrf(),
            },
            page: serde_json::json!({"status": status.as_u16(), "error": refusal}),
        };
        match self.templates.render("error.html", &layout) {
            Ok(body) => page(status, body),
            Err(e) => {
                tracing::error!(error = %e, "rendering the console's error page");
                page(
                    status,
                    "<!doctype html><title>Error</title><p>Refused.</p>".into(),
                )
            }
        }
    }

    /// A failure before anything could be shown (the store is down).
    fn failure(&self, viewer: Option<&Viewer>, e: &InvokeError) -> Response {
        let (status, refusal) = Refusal::of(e);
        match viewer {
            Some(v) => self.refused(v, Page::Inbox, status, refusal),
            None => page(
                status,
                format!(
                    "<!doctype html><title>Unavailable</title><p>The console cannot read your roles now ({}); try again.</p>",
                    refusal.code
                ),
            ),
        }
    }
}

/// What every page's layout shows.
#[derive(Serialize)]
struct Layout<'a> {
    title: &'static str,
    nav: Vec<NavItem>,
    viewer: Who<'a>,
    page: Value,
}

/// The signed-in person, as the layout shows them.
#[derive(Serialize)]
struct Who<'a> {
    username: &'a str,
    tenant: &'a str,
    csrf: &'a str,
}

/// A refusal as a page shows it: the code the MCP tools use, and what it
/// means for the person.
#[derive(Debug, Clone, Serialize)]
pub struct Refusal {
    /// The stable code (`PERMISSION_DENIED`, `GATE_DECIDED`, `CSRF`, …).
    pub code: &'static str,
    /// What happened, for a person.
    pub message: String,
}

impl Refusal {
    /// The status and refusal of a failed call. Internal errors are
    /// logged and shown opaquely, as the MCP edge does.
    fn of(e: &InvokeError) -> (StatusCode, Refusal) {
        let message = if e.is_internal() {
            tracing::error!(error = %e, "console");
            "something went wrong in the host; nothing was changed. Try again, or ask an operator to look at the logs".to_owned()
        } else {
            e.to_string()
        };
        let code = e.code();
        (status_of(code), Refusal { code, message })
    }

    /// A form whose CSRF token is not this session's.
    fn csrf() -> Refusal {
        Refusal {
            code: "CSRF",
            message: "this form was not sent from your console page, or your session changed: nothing was done; open the page again and retry".into(),
        }
    }
}

/// The HTTP status of a refusal code.
fn status_of(code: &str) -> StatusCode {
    match code {
        "PERMISSION_DENIED" | "SELF_APPROVAL" | "SELF_REVIEW" | "CSRF" => StatusCode::FORBIDDEN,
        c if c == "NOT_FOUND" || c.ends_with("_NOT_FOUND") => StatusCode::NOT_FOUND,
        c if c.ends_with("_DECIDED") || c.ends_with("_CONFLICT") || c == "CONFLICT" => {
            StatusCode::CONFLICT
        }
        "GATE_EXPIRED" | "STALE" => StatusCode::CONFLICT,
        "REASON_REQUIRED" | "INVALID_ARGUMENTS" => StatusCode::BAD_REQUEST,
        "UNAVAILABLE" | "STORE_UNAVAILABLE" => StatusCode::SERVICE_UNAVAILABLE,
        _ if code.starts_with("INTERNAL") => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    }
}

/// Back to `page` after an action, naming what was done in the query
/// (`?key=value`): the page announces it only if it lists that thing.
fn done_on(page: Page, key: &str, value: &str) -> Response {
    see_other(&format!("{}?{key}={}", page.path(), encode(value)))
}

/// A permanent redirect that keeps the method (a stale form posted to
/// the old approvals address is decided at the new one).
fn moved(location: &str) -> Response {
    let mut r = see_other(location);
    *r.status_mut() = StatusCode::PERMANENT_REDIRECT;
    r
}

/// `s` percent-encoded for one path segment.
fn encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

async fn not_found(State(c): State<Console>, headers: HeaderMap) -> Response {
    match c.auth.web_user(&headers).await {
        Some(user) => match Viewer::read(user, &c.host).await {
            Ok(v) => {
                let refusal = Refusal {
                    code: "NOT_FOUND",
                    message: "there is no such page in the console".into(),
                };
                c.refused(&v, Page::Inbox, StatusCode::NOT_FOUND, refusal)
            }
            Err(e) => c.failure(None, &e),
        },
        None => page(
            StatusCode::NOT_FOUND,
            "<!doctype html><title>Not found</title><p>Not found.</p>".into(),
        ),
    }
}

/// A form with nothing but the CSRF token.
#[derive(Deserialize)]
struct TokenOnly {
    #[serde(default)]
    csrf: String,
}

async fn sign_out(
    State(c): State<Console>,
    headers: HeaderMap,
    Form(f): Form<TokenOnly>,
) -> Response {
    let Some(user) = c.auth.web_user(&headers).await else {
        return see_other(&sign_in_path(Page::Inbox.path()));
    };
    if !user.csrf_matches(&f.csrf) {
        return see_other(Page::Inbox.path());
    }
    render::secured(
        c.auth
            .sign_out(&user, &sign_in_path(Page::Inbox.path()))
            .await,
    )
}

/// What the pages' unit tests share: a template rendered in the layout
/// for a fixed viewer, without a host.
#[cfg(test)]
pub(crate) mod testing {
    use serde_json::Value;

    use super::{Layout, Who};
    use crate::pages::NavItem;
    use crate::render::Templates;

    /// The CSRF token of the test viewer.
    pub const CSRF: &str = "csrf-token-of-the-session";

    /// The output of `f`, a future that never waits (an in-memory trail
    /// or list).
    pub fn ready<F: std::future::Future>(f: F) -> F::Output {
        use std::task::{Context, Poll, Waker};
        let mut f = std::pin::pin!(f);
        let mut cx = Context::from_waker(Waker::noop());
        match f.as_mut().poll(&mut cx) {
            Poll::Ready(out) => out,
            Poll::Pending => panic!("an in-memory future never waits"),
        }
    }

    /// A script, as a hostile name.
    pub const SCRIPT: &str = "<script>alert(1)</script>";

    /// Quotes that would break out of an attribute.
    pub const QUOTES: &str = "a\"b'c";

    /// A hostile text: a script and an attribute-breaking quote.
    pub const HOSTILE: &str =
        "<script>window.__pwned=1</script>\"'><img src=x onerror=\"window.__pwned=2\">";

    /// `template` rendered with `page` as the page's context.
    pub fn render(template: &str, page: Value) -> String {
        let layout = Layout {
            title: "Test",
            nav: vec![NavItem {
                href: "/admin",
                label: "Inbox",
                count: Some(2),
                current: true,
            }],
            viewer: Who {
                username: "ann",
                tenant: "demo",
                csrf: CSRF,
            },
            page,
        };
        Templates::new()
            .expect("the templates parse")
            .render(template, &layout)
            .expect("the template renders")
    }

    /// Panics if `html` holds `HOSTILE` (or a part that would run) unescaped.
    pub fn assert_escaped(html: &str) {
        for raw in ["<script>window", "<img src=x", "onerror=\"window"] {
            assert!(!html.contains(raw), "{raw} unescaped in:\n{html}");
        }
        assert!(
            html.contains("&lt;script&gt;window.__pwned=1&lt;&#x2f;script&gt;"),
            "the hostile text shows, escaped:\n{html}"
        );
    }
}
