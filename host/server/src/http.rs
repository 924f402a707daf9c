//! The HTTP surface besides `/mcp`: liveness, readiness, metrics, and the
//! admin console.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use metrics_exporter_prometheus::PrometheusHandle;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use toolhost_auth::AuthServer;
use toolhost_invoke::Toolhost;
use toolhost_mcp::McpServer;
use toolhost_storage::Store;

pub use crate::guard::Guard;

/// What the operational routes look at.
#[derive(Clone)]
pub struct Ops {
    /// The store, pinged by `/readyz`.
    pub store: Arc<Store>,
    /// The Prometheus registry rendered by `/metrics`.
    pub metrics: PrometheusHandle,
    /// False from the moment shutdown starts: load balancers stop routing here.
    pub accepting: Arc<AtomicBool>,
    /// Dev mode (unsigned plugins served): `/readyz` says so on every answer.
    pub dev_unsigned: bool,
    /// Which replica answers (`host/pid`): `/healthz` and `/readyz` name it
    /// in `X-Toolhost-Replica`, so an operator (or a test) behind a
    /// balancer sees who answered.
    pub replica: HeaderValue,
}

/// The host's router: `/mcp` and each toolset's endpoint under it
/// (behind the bearer check, then the host's own request guard), the OAuth authorization server, `/healthz`,
/// `/readyz`. Metrics name every tool and count every tenant's calls, so
/// they are never served here: [`metrics_router`] serves them on a
/// listener of their own.
///
/// The bearer check runs first: no unauthenticated body is read or parsed.
pub fn router(
    ops: Ops,
    mcp: StreamableHttpService<McpServer, LocalSessionManager>,
    guard: Guard,
    auth: Arc<AuthServer>,
) -> Router {
    // Outermost first: count the POST as in flight, check the token, bound
    // and parse the body, read the tasks a listen request names, count it
    // against the rate limits (when `serve` put a limiter in the request's
    // extensions), check a named session is the caller's (when `serve` put
    // the session table there), serve a replay only to its owner and claim
    // each stream answered (with the event store there), then rmcp.
    let mcp = tower::ServiceBuilder::new()
        .map_response(no_store)
        .service(mcp);
    // `/mcp/toolsets/NAME` is the same endpoint narrowed to toolset NAME
    // (the bearer check adds the binding to the caller).
    let guarded = Router::new()
        .route_service("/mcp", mcp.clone())
        .route_service("/mcp/toolsets/{name}", mcp)
        .layer(axum::middleware::from_fn(crate::mcp_sessions::owned))
        .layer(axum::middleware::from_fn(crate::rate_limit::limit))
        .layer(axum::middleware::from_fn(crate::mcp_listen::tasks))
        .layer(axum::middleware::from_fn_with_state(
            guard.clone(),
            crate::guard::mcp_guard,
        ))
        .layer(axum::middleware::from_fn_with_state(
            auth.clone(),
            toolhost_auth::require_bearer,
        ))
        .layer(axum::middleware::from_fn_with_state(
            guard,
            crate::guard::track_in_flight,
        ));
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(ops)
        .merge(guarded)
        .merge(toolhost_auth::router(auth))
}

/// `app` with the admin console under `/admin` (and the old approvals
/// address redirecting there): the host tools of `host` and the rows of
/// `store`, for people signed in to `auth`. Separate from [`router`]
/// because only a host wired with its host tools has pages to show.
pub fn with_console(
    app: Router,
    (auth, connections): (
        Arc<AuthServer>,
        Option<Arc<toolhost_sso::connections::Connections>>,
    ),
    host: Arc<Toolhost>,
    store: Arc<Store>,
) -> anyhow::Result<Router> {
    let console = toolhost_console::Console::new(auth, host, store)?.with_connections(connections);
    Ok(app.merge(console.routes()))
}

/// Headers every answer carries unless its route set its own:
/// `X-Content-Type-Options: nosniff` (a browser never guesses a type that
/// would run), and `Cache-Control: no-store` (tool output, tokens and
/// pages of people's decisions are kept by no cache). The console's
/// static assets set their own caching; `/mcp` always says `no-store`
/// ([`router`] sees to it: rmcp's event streams say only `no-cache`,
/// which lets a cache keep them). A plain map of the answer, applied with
/// [`tower::util::MapResponseLayer`]: no boxed service or future per
/// request.
pub fn answer_headers(mut answer: axum::response::Response) -> axum::response::Response {
    let headers = answer.headers_mut();
    headers
        .entry(header::X_CONTENT_TYPE_OPTIONS)
        .or_insert(HeaderValue::from_static("nosniff"));
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    answer
}

/// `/mcp`'s answers say `Cache-Control: no-store`, whatever rmcp said.
fn no_store<B>(mut answer: axum::http::Response<B>) -> axum::http::Response<B> {
    answer
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    answer
}

/// Liveness: the process answers.
async fn healthz(State(ops): State<Ops>) -> impl IntoResponse {
    ([(REPLICA, ops.replica.clone())], "ok\n")
}

/// The header naming the replica that answered.
const REPLICA: &str = "x-toolhost-replica";

/// How long `/readyz` waits for the store's answer.
const READY_PING: Duration = Duration::from_secs(2);

/// Readiness: accepting requests and the store answers.
async fn readyz(State(ops): State<Ops>) -> impl IntoResponse {
    ([(REPLICA, ops.replica.clone())], readiness(&ops).await)
}

async fn readiness(ops: &Ops) -> (StatusCode, &'static str) {
    if !ops.accepting.load(Ordering::Relaxed) {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n");
    }
    // A store that does not answer in time is as good as down (a ping
    // would otherwise wait out the pool's whole acquire timeout).
    let answered = match tokio::time::timeout(READY_PING, ops.store.ping()).await {
        Ok(pinged) => pinged.map_err(|e| e.to_string()),
        Err(_) => Err(format!("no answer within {READY_PING:?}")),
    };
    match answered {
        Ok(()) if ops.dev_unsigned => (
            StatusCode::OK,
            "ready (DEV MODE: unsigned plugins are served)\n",
        ),
        Ok(()) => (StatusCode::OK, "ready\n"),
        Err(e) => {
            tracing::warn!(error = %e, "readiness: store unreachable");
            (StatusCode::SERVICE_UNAVAILABLE, "store unreachable\n")
        }
    }
}

/// `/metrics` alone, for the operator's own listen address
/// (`--metrics-listen`), apart from the public one.
pub fn metrics_router(ops: Ops) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .with_state(ops)
}

/// Prometheus text exposition.
async fn metrics(State(ops): State<Ops>) -> impl IntoResponse {
    let pools = ops.store.pool_stats();
    for (pool, open, idle) in [
        ("main", pools.open, pools.idle),
        ("counters", pools.counters_open, pools.counters_idle),
    ] {
        metrics::gauge!("toolhost_store_connections", "pool" => pool, "state" => "open")
            .set(f64::from(open));
        metrics::gauge!("toolhost_store_connections", "pool" => pool, "state" => "idle")
            .set(idle as f64);
    }
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        ops.metrics.render(),
    )
}
