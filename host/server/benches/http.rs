//! `make bench`, part 2: `tools/call` over HTTP, end to end through the
//! real router, rmcp, the call path and the audit store, for `greet` in the
//! sandbox vs the same tool as a native host tool, at concurrency 1 and 32.
//!
//! Requests are 2026-07-28 stateless `tools/call`s answered as JSON, on
//! keep-alive HTTP/1.1 connections (one per concurrent client) with
//! TCP_NODELAY on both ends, client and server on the same 2 cores.
//!
//! The ceiling first: a bare rmcp server (the same rmcp, the same
//! streamable HTTP config) whose one tool is `greet` written natively, with
//! no authentication, policy, sandbox or audit: what serving MCP costs on
//! this machine with nothing else. Every row is reported as a ratio to it
//! at the same concurrency.
//!
//! Then three profiles of the host: as shipped (audit rows in SQLite,
//! fsynced, with group commit, and every request counted against rate
//! limits in the same store), the same without the rate limiter, and the
//! same with an in-memory audit sink, to show where the time goes. Every
//! answer passes the secret scanner in all three; its cost alone is
//! measured after.
//!
//! `-- --quick` (`make bench-quick`, seconds once built) runs
//! fewer calls, only the ceiling and the host as shipped, then the
//! disk's fsync floor beside the host's p50 at 1 client, and ends with the
//! line `full stack / ceiling at 32 clients: R`. At 32 clients it measures
//! the ceiling and the host back to back, in five rounds, and R is the
//! median of the rounds' ratios: this machine's speed drifts within a run,
//! and a ceiling measured a minute before the host moved R by half. The
//! host is served as `toolhost serve` serves it (the listener with its
//! connection caps and body deadline, the session table, the answers'
//! headers); quick mode ends by pairing it the same way with the same host
//! served without those guards: `edge guards / without them at 32
//! clients: E`.
//!
//! The full run also serves the Python reference plugin (`hello-py`,
//! built by `make python-plugins`) in the host as shipped, and reports its
//! `greet_py` beside Rust's `greet`.
//!
//! Both runs end with what the SSE event store costs a streamed call: a
//! native `greet` that reports progress, called with a progress token (so
//! its answer is an event stream whose events the store keeps for a
//! resumption), on the host as shipped and on the same host without the
//! event store, paired in rounds at 32 clients: `event store / without it
//! on a streamed call at 32 clients: S`.
//!
//! To profile: `TOOLHOST_BENCH_CALLS=N` sets the calls per measurement,
//! and `TOOLHOST_BENCH_ONLY=ceiling|native|wasm|shipped|python|unguarded`
//! (`python`: `greet_py` as shipped; `unguarded`: shipped without the edge
//! guards; with
//! `TOOLHOST_BENCH_CLIENTS`, 32 unless set) runs one server's one
//! measurement and nothing else, so `perf record -p` sees only it.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use axum::serve::ListenerExt;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use metrics_exporter_prometheus::PrometheusBuilder;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};
use toolhost_audit::{AuditEvent, AuditSink, Effect, SinkFuture};
use toolhost_auth::{AuthConfig, AuthServer};
use toolhost_catalog::{Catalog, LoadOptions};
use toolhost_invoke::{HostCall, HostTool, HostToolFuture, InvokeError, Toolhost};
use toolhost_runtime::{ProgressReport, Runtime, RuntimeConfig, ToolOutput, ToolSpec};
use toolhost_server::http::{Guard, Ops, router};
use toolhost_server::{RateLimiter, RateLimits, edge};
use toolhost_storage::Store;

mod ceiling;
use ceiling::{CEILING_TOOL, start_ceiling};

/// Calls per (tool, concurrency) measurement, after a warm-up.
#[derive(Clone, Copy)]
struct Plan {
    calls: usize,
    warmup: usize,
}

const FULL: Plan = Plan {
    calls: 20_000,
    warmup: 2_000,
};
const QUICK: Plan = Plan {
    calls: 10_000,
    warmup: 1_000,
};
/// In-process measurements (the secret scan).
const CALLS: usize = FULL.calls;

/// The native `greet` called with a progress token: it reports progress
/// once, so its answer streams.
const STREAMED_TOOL: &str = "greet_streamed";

/// `greet`, natively: the same arguments, the same answer, no sandbox; one
/// progress report first when the caller asked for progress.
struct NativeGreet(ToolSpec);

impl HostTool for NativeGreet {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(async move {
            let name = c.args["name"]
                .as_str()
                .ok_or(InvokeError::ArgumentsNotAnObject)?
                .trim();
            if let Some(sink) = c.progress {
                sink.report(ProgressReport {
                    progress: 1.0,
                    total: Some(1.0),
                    message: None,
                });
            }
            let message = format!("Hello, {name}!");
            let out = ToolOutput::new(json!({"message": message}), Some(message));
            Ok((out, Vec::new()))
        })
    }
}

/// An audit sink that keeps nothing: the "where does the time go" profile.
struct Discard;

impl AuditSink for Discard {
    fn record_with<'a>(&'a self, _event: &'a AuditEvent, _: &'a [Effect]) -> SinkFuture<'a> {
        Box::pin(async { Ok(()) })
    }
}

/// A host serving `hello` and `greet_native`: its audit in the store if
/// `durable_audit`, else discarded; its `/mcp` requests counted against rate
/// limits (high enough never to refuse) if `rate_limited`. `edge` serves
/// it as `toolhost serve` does: through the host's listener (connection
/// caps, a deadline on every body), with the session table and event
/// store `/mcp`'s layers consult, and every answer's headers; without it,
/// the router alone with plain `axum::serve`, those layers passing through.
async fn start(durable_audit: bool, rate_limited: bool, edge: bool) -> (String, tempfile::TempDir) {
    start_with(durable_audit, rate_limited, edge, Extras::default()).await
}

/// What a bench server serves beyond [`start`]'s.
#[derive(Clone, Copy)]
struct Extras {
    /// The Python reference plugin (`greet_py`) beside `hello`.
    python: bool,
    /// The SSE event store (as `toolhost serve` keeps it): off only to
    /// measure what it costs.
    event_store: bool,
}

impl Default for Extras {
    fn default() -> Self {
        Extras {
            python: false,
            event_store: true,
        }
    }
}

/// `start`, with `extras`.
async fn start_with(
    durable_audit: bool,
    rate_limited: bool,
    edge: bool,
    extras: Extras,
) -> (String, tempfile::TempDir) {
    let python = extras.python;
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = bench_runtime();
    let (catalog, natives) = hello_and_native_greet(dir.path(), &runtime, python).await;
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("bench.db").display()
    );
    let store = Arc::new(Store::connect(&url).await.expect("store"));
    let host = bench_host(catalog, natives, store.clone(), runtime, durable_audit);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    // Every call is authenticated, as in production: a service client's token.
    let auth = AuthServer::start(AuthConfig::new(format!("http://{addr}")), store.clone())
        .await
        .expect("auth server");
    let (client, secret) =
        toolhost_auth::admin::add_service(auth.store(), "bench", "bench", "mcp hello:read")
            .await
            .expect("a service client");
    let events = Arc::new(toolhost_mcp::MemoryEvents::default());
    let sessions = if extras.event_store {
        LocalSessionManager::default()
            .with_event_store(Arc::new(toolhost_mcp::SharedEvents(events.clone())))
    } else {
        LocalSessionManager::default()
    };
    let sessions = Arc::new(sessions);
    let events = extras.event_store.then_some(events);
    let server = toolhost_mcp::McpServer::new(host.clone());
    let mcp = StreamableHttpServerConfig::default().with_json_response(true);
    let app = router(
        ops(store.clone()),
        toolhost_mcp::service_with(server, mcp, sessions.clone()),
        Guard::new(4 << 20),
        auth,
    );
    let limiter = rate_limited.then(|| never_refusing_limiter(store, host));
    // A profiler's split of the guards (`TOOLHOST_BENCH_EDGE=listener`:
    // the listener only; `layers`: the tables and headers only).
    let parts = std::env::var("TOOLHOST_BENCH_EDGE").unwrap_or_default();
    let app = with_layers(app, edge && parts != "listener", limiter, sessions, events);
    serve(listener, app, edge && parts != "layers");
    let token = token(&addr.to_string(), &client.client_id, &secret).await;
    TOKENS
        .write()
        .expect("token lock")
        .insert(addr.to_string(), format!("Bearer {token}"));
    (format!("{addr}"), dir)
}

/// Compiled components, shared by every server of the run: the Python
/// plugin is compiled once, as a host with `--cache-dir` maps it.
static COMPILED: std::sync::LazyLock<tempfile::TempDir> =
    std::sync::LazyLock::new(|| tempfile::tempdir().expect("a cache dir"));

/// The runtime: fewer sandboxes where the pool's address space must be
/// small (under valgrind: `TOOLHOST_BENCH_SLOTS=8`).
fn bench_runtime() -> Arc<Runtime> {
    let slots = std::env::var("TOOLHOST_BENCH_SLOTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(RuntimeConfig::DEFAULT_SLOTS);
    let config = RuntimeConfig {
        slots,
        cache_dir: Some(COMPILED.path().to_path_buf()),
        ..RuntimeConfig::default()
    };
    Arc::new(Runtime::new(config).expect("runtime"))
}

/// `hello` (and `hello-py` if `python`) pinned into `dir` and loaded, and
/// `greet` as the native `greet_native` and [`STREAMED_TOOL`].
async fn hello_and_native_greet(
    dir: &std::path::Path,
    runtime: &Runtime,
    python: bool,
) -> (Catalog, [NativeGreet; 2]) {
    let plugins = dir.join("plugins");
    let f = toolhost_fixtures::HELLO;
    toolhost_catalog::pin(f.manifest.as_ref(), f.component.as_ref(), &plugins).expect("pins hello");
    if python {
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let component = repo.join("target/plugins/python/hello_py.wasm");
        assert!(
            component.is_file(),
            "{} is not built: run `make python-plugins` (make bench does)",
            component.display()
        );
        let manifest = repo.join("plugins/python/hello/toolhost.toml");
        toolhost_catalog::pin(&manifest, &component, &plugins).expect("pins hello-py");
    }
    let loaded = Catalog::load_dir(&plugins, runtime, &LoadOptions::default()).await;
    assert!(loaded.errors.is_empty(), "hello loads");
    let mut spec = loaded
        .catalog
        .lookup("greet")
        .expect("greet")
        .spec()
        .clone();
    spec.name = "greet_native".parse().expect("a tool name");
    let mut streamed = spec.clone();
    streamed.name = STREAMED_TOOL.parse().expect("a tool name");
    (loaded.catalog, [NativeGreet(spec), NativeGreet(streamed)])
}

/// The host over `catalog` with `natives` beside it: its audit in `store`
/// if `durable_audit`, else discarded.
fn bench_host(
    catalog: Catalog,
    natives: [NativeGreet; 2],
    store: Arc<Store>,
    runtime: Arc<Runtime>,
    durable_audit: bool,
) -> Arc<Toolhost> {
    let audit: Arc<dyn AuditSink> = if durable_audit {
        store.clone()
    } else {
        Arc::new(Discard)
    };
    let mut host = Toolhost::new(Arc::new(catalog), store, runtime, audit);
    for native in natives {
        host = host.with_host_tool(Arc::new(native)).expect("no collision");
    }
    Arc::new(host)
}

/// The operations routes' state: accepting, no unsigned plugins.
fn ops(store: Arc<Store>) -> Ops {
    Ops {
        store,
        metrics: PrometheusBuilder::new().build_recorder().handle(),
        accepting: Arc::new(AtomicBool::new(true)),
        dev_unsigned: false,
        replica: axum::http::HeaderValue::from_static("bench"),
    }
}

/// A rate limiter counting every request, with limits too high to refuse.
fn never_refusing_limiter(store: Arc<Store>, host: Arc<Toolhost>) -> RateLimiter {
    let never = Some(u32::MAX);
    let limits = RateLimits::configured(None, never, never, never).expect("limits");
    RateLimiter::new(limits, store, host)
}

/// The router with `serve`'s one layer (answer headers, rate limiter,
/// session table, event store) if `edge_layers`, else with the rate limiter
/// alone, if any.
fn with_layers(
    app: axum::Router,
    edge_layers: bool,
    limiter: Option<RateLimiter>,
    sessions: Arc<LocalSessionManager>,
    events: Option<Arc<toolhost_mcp::MemoryEvents>>,
) -> axum::Router {
    if edge_layers {
        let owners = edge::SessionOwners::new(edge::SessionCaps::default(), Some(sessions));
        app.layer(
            tower::ServiceBuilder::new()
                .map_response(toolhost_server::http::answer_headers)
                .option_layer(limiter.map(axum::Extension))
                .layer(axum::Extension(owners))
                .option_layer(events.map(axum::Extension)),
        )
    } else if let Some(limiter) = limiter {
        app.layer(axum::Extension(limiter))
    } else {
        app
    }
}

/// Serves `app` on `listener` in the background: through the host's
/// listener (connection caps, body deadline) if `edge_listener`, else
/// with plain `axum::serve` and TCP_NODELAY.
fn serve(listener: tokio::net::TcpListener, app: axum::Router, edge_listener: bool) {
    if edge_listener {
        let connections = edge::Connections::new(
            edge::ConnectionCaps::for_this_process(),
            edge::TrustedProxies::default(),
        );
        tokio::spawn(edge::serve(
            listener,
            app,
            edge::ConnectionLimits::default(),
            connections,
            tokio_util::sync::CancellationToken::new(),
        ));
    } else {
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        tokio::spawn(async move { axum::serve(listener, app).await.expect("serves") });
    }
}

/// The bearer value each benchmark request carries, by the address of the
/// server it goes to (their keys live in their own stores; the ceiling
/// has none and needs none).
static TOKENS: std::sync::RwLock<std::collections::BTreeMap<String, String>> =
    std::sync::RwLock::new(std::collections::BTreeMap::new());

/// A client-credentials access token from the server at `addr`.
async fn token(addr: &str, client_id: &str, secret: &str) -> String {
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (mut send, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    let form =
        format!("grant_type=client_credentials&client_id={client_id}&client_secret={secret}");
    let req = hyper::Request::post(format!("http://{addr}/oauth/token"))
        .header("host", addr)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Full::new(Bytes::from(form)))
        .expect("a request");
    let resp = send.send_request(req).await.expect("a response");
    let body = resp.into_body().collect().await.expect("a body").to_bytes();
    let v: Value = serde_json::from_slice(&body).expect("JSON");
    v["access_token"].as_str().expect("a token").to_owned()
}

fn request(addr: &str, tool: &str) -> hyper::Request<Full<Bytes>> {
    let mut body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": tool, "arguments": {"name": "Ada"},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}
        }
    });
    if tool == STREAMED_TOOL {
        body["params"]["_meta"]["progressToken"] = json!("bench");
    }
    hyper::Request::post(format!("http://{addr}/mcp"))
        .header("host", addr)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .header(
            "authorization",
            (TOKENS.read().expect("token lock").get(addr)).map_or("", String::as_str),
        )
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a request")
}

/// One client: a keep-alive connection making `n` sequential calls.
async fn client(addr: String, tool: &'static str, n: usize) -> Vec<Duration> {
    let tcp = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    tcp.set_nodelay(true).expect("nodelay");
    let (mut send, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let resp = send
            .send_request(request(&addr, tool))
            .await
            .expect("a response");
        let status = resp.status();
        let body = resp.into_body().collect().await.expect("a body").to_bytes();
        assert!(
            status.is_success(),
            "{status}: {}",
            String::from_utf8_lossy(&body)
        );
        assert!(
            body.windows(11).any(|w| w == b"Hello, Ada!"),
            "{}",
            String::from_utf8_lossy(&body)
        );
        // A streamed call that was answered as JSON would measure nothing.
        assert!(
            tool != STREAMED_TOOL || body.windows(22).any(|w| w == b"notifications/progress"),
            "{tool} streams its progress: {}",
            String::from_utf8_lossy(&body)
        );
        samples.push(t.elapsed());
    }
    samples
}

struct Run {
    per_sec: f64,
    p50: Duration,
    p99: Duration,
}

/// Every call's latency and how long they took together: runs pooled.
#[derive(Default)]
struct Samples {
    latencies: Vec<Duration>,
    elapsed: Duration,
}

impl Samples {
    fn add(&mut self, (latencies, elapsed): (Vec<Duration>, Duration)) {
        self.latencies.extend(latencies);
        self.elapsed += elapsed;
    }

    fn run(mut self) -> Run {
        let all = &mut self.latencies;
        all.sort();
        Run {
            per_sec: per_sec(all.len(), self.elapsed),
            p50: all[all.len() / 2],
            p99: all[all.len() * 99 / 100],
        }
    }
}

/// Calls per second: `calls` in `elapsed`.
fn per_sec(calls: usize, elapsed: Duration) -> f64 {
    calls as f64 / elapsed.as_secs_f64()
}

async fn run(plan: Plan, addr: &str, tool: &'static str, concurrency: usize) -> Run {
    let mut samples = Samples::default();
    samples.add(measure(plan, addr, tool, concurrency).await);
    samples.run()
}

/// `plan.calls` calls by `concurrency` clients after a warm-up: each
/// call's latency, and the time they all took.
async fn measure(
    plan: Plan,
    addr: &str,
    tool: &'static str,
    concurrency: usize,
) -> (Vec<Duration>, Duration) {
    let per_client = |total: usize| total.div_ceil(concurrency);
    let warm: Vec<_> = (0..concurrency)
        .map(|_| tokio::spawn(client(addr.into(), tool, per_client(plan.warmup))))
        .collect();
    for w in warm {
        w.await.expect("warm-up");
    }
    let started = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| tokio::spawn(client(addr.into(), tool, per_client(plan.calls))))
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.expect("client"));
    }
    (all, started.elapsed())
}

/// Rounds of `--quick`'s comparison at 32 clients: each round measures the
/// ceiling and the host back to back, so a machine whose speed drifts
/// during a run (by half within minutes, here) moves both sides of every
/// round's ratio.
const PAIRED_ROUNDS: usize = 5;

/// The ceiling at `ceiling` and the host at `host`, `PAIRED_ROUNDS` times
/// at 32 clients, `plan` each time: both pooled over the rounds, and each
/// round's ratio of the host's calls/s to the ceiling's, sorted. Which goes
/// first alternates, so neither is always measured in the other's wake
/// (the host's log still being written back, say).
async fn paired(plan: Plan, ceiling: &str, host: &str) -> (Run, Run, Vec<f64>) {
    paired_with(
        plan,
        PAIRED_ROUNDS,
        (ceiling, CEILING_TOOL),
        (host, "greet"),
    )
    .await
}

/// Rounds of the edge guards' comparison: the difference sought is a few
/// percent, within one round's noise, so it takes more rounds.
const EDGE_ROUNDS: usize = 9;

/// [`paired`] of any two (server, tool) pairs in `rounds` rounds: `base`
/// is the divisor.
async fn paired_with(
    plan: Plan,
    rounds: usize,
    (base, base_tool): (&str, &'static str),
    (host, tool): (&str, &'static str),
) -> (Run, Run, Vec<f64>) {
    let (mut top, mut ours, mut ratios) = (Samples::default(), Samples::default(), Vec::new());
    let rate = |(calls, elapsed): &(Vec<Duration>, Duration)| per_sec(calls.len(), *elapsed);
    for round in 0..rounds {
        let (a, b) = if round % 2 == 0 {
            let a = measure(plan, base, base_tool, 32).await;
            (a, measure(plan, host, tool, 32).await)
        } else {
            let b = measure(plan, host, tool, 32).await;
            (measure(plan, base, base_tool, 32).await, b)
        };
        ratios.push(rate(&b) / rate(&a));
        top.add(a);
        ours.add(b);
    }
    ratios.sort_by(f64::total_cmp);
    (top.run(), ours.run(), ratios)
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio");
    rt.block_on(async {
        let plan = plan(quick);
        let ceiling_addr = start_ceiling().await;
        println!(
            "| server | concurrency | tool | calls/s | p50 ms | p99 ms | × ceiling calls/s | WASM/native calls/s |"
        );
        println!("|---|---|---|---|---|---|---|---|");
        // One server and one measurement only, for a profiler (`perf record -p`).
        if let Ok(only) = std::env::var("TOOLHOST_BENCH_ONLY") {
            profile_one(plan, &only, &ceiling_addr).await;
            return;
        }
        let at_1 = run(plan, &ceiling_addr, CEILING_TOOL, 1).await;
        ceiling_row(1, &at_1);
        if quick {
            quick_comparisons(plan, &ceiling_addr, &at_1).await;
        } else {
            every_profile(plan, &ceiling_addr, at_1).await;
        }
    });
}

/// The calls per measurement: `--quick`'s or the full run's, unless
/// `TOOLHOST_BENCH_CALLS` asks for a longer run to profile (`perf record -p`).
fn plan(quick: bool) -> Plan {
    let mut plan = if quick { QUICK } else { FULL };
    if let Some(calls) = std::env::var("TOOLHOST_BENCH_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        plan.calls = calls;
    }
    plan
}

/// The ceiling's row at `c` clients.
fn ceiling_row(c: usize, r: &Run) {
    println!(
        "| ceiling: bare rmcp | {c} | native | {:.0} | {} | {} | 1.00 | |",
        r.per_sec,
        ms(r.p50),
        ms(r.p99)
    );
}

/// The host as shipped's row at `c` clients, `ratio` to the ceiling.
fn shipped_row(c: usize, r: &Run, ratio: f64) {
    println!(
        "| full stack: SQLite, fsynced, rate limits | {c} | wasm | {:.0} | {} | {} | {ratio:.2} | |",
        r.per_sec,
        ms(r.p50),
        ms(r.p99)
    );
}

/// `--quick`: the host as shipped against the ceiling (`at_1` at 1
/// client), the disk's fsync floor beside it, then what the edge guards cost.
async fn quick_comparisons(plan: Plan, ceiling_addr: &str, at_1: &Run) {
    let (addr, dir) = start(true, true, true).await;
    let ours_at_1 = run(plan, &addr, "greet", 1).await;
    shipped_row(1, &ours_at_1, ours_at_1.per_sec / at_1.per_sec);
    let (top, ours, ratios) = paired(plan, ceiling_addr, &addr).await;
    let median = ratios[ratios.len() / 2];
    ceiling_row(32, &top);
    shipped_row(32, &ours, median);
    let floor = fsync_floor(dir.path());
    println!();
    println!(
        "fsync floor (4 KiB appended, then fdatasync, beside the store): p50 {} ms; \
         full stack at 1 client: p50 {} ms, {} ms above it",
        ms(floor),
        ms(ours_at_1.p50),
        ms(ours_at_1.p50.saturating_sub(floor))
    );
    let rounds: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
    println!(
        "32 clients in {PAIRED_ROUNDS} rounds, the ceiling and the host back to back \
         in each: ratios {} (median taken)",
        rounds.join(", ")
    );
    println!("full stack / ceiling at 32 clients: {median:.2}");
    edge_guards(plan).await;
    event_store(plan).await;
}

/// What the edge's guards cost: the same host served without them (no
/// listener caps or body deadline, no session table, no answer headers),
/// back to back with the host as shipped, both started fresh now (an audit
/// table grown by earlier rounds would cost the shipped one more per row).
async fn edge_guards(plan: Plan) {
    let (edged, _edged_dir) = start(true, true, true).await;
    let (bare, _bare_dir) = start(true, true, false).await;
    let (_, _, edge_ratios) =
        paired_with(plan, EDGE_ROUNDS, (&bare, "greet"), (&edged, "greet")).await;
    let rounds: Vec<String> = edge_ratios.iter().map(|r| format!("{r:.3}")).collect();
    println!(
        "edge guards / without them at 32 clients: {:.3} (rounds {})",
        edge_ratios[edge_ratios.len() / 2],
        rounds.join(", ")
    );
}

/// What the SSE event store costs a streamed call: [`STREAMED_TOOL`] on
/// the host as shipped, back to back with the same host without the
/// event store, both started fresh now.
async fn event_store(plan: Plan) {
    let (kept, _kept_dir) = start(true, true, true).await;
    let without = Extras {
        event_store: false,
        ..Extras::default()
    };
    let (bare, _bare_dir) = start_with(true, true, true, without).await;
    let (base, ours, ratios) = paired_with(
        plan,
        EDGE_ROUNDS,
        (&bare, STREAMED_TOOL),
        (&kept, STREAMED_TOOL),
    )
    .await;
    let rounds: Vec<String> = ratios.iter().map(|r| format!("{r:.3}")).collect();
    println!(
        "event store / without it on a streamed call at 32 clients: {:.3} \
         (rounds {}; p50 {} ms against {} ms)",
        ratios[ratios.len() / 2],
        rounds.join(", "),
        ms(ours.p50),
        ms(base.p50)
    );
}

/// The full run: the ceiling at 32 clients (`at_1` at 1), each profile of
/// the host against it, then the in-process measurements.
async fn every_profile(plan: Plan, ceiling_addr: &str, at_1: Run) {
    let at_32 = run(plan, ceiling_addr, CEILING_TOOL, 32).await;
    ceiling_row(32, &at_32);
    let ceiling = [at_1, at_32];
    let profiles = [
        (true, true, "SQLite, fsynced, rate limits"),
        (true, false, "SQLite, fsynced"),
        (false, false, "in memory"),
    ];
    for (durable, limited, profile) in profiles {
        // The Python plugin is measured as shipped only.
        let python = durable && limited;
        let extras = Extras {
            python,
            ..Extras::default()
        };
        let (addr, _dir) = start_with(durable, limited, true, extras).await;
        let rust = table(plan, &addr, profile, &ceiling).await;
        if python {
            python_rows(plan, &addr, profile, &ceiling, &rust).await;
        }
    }
    event_store(plan).await;
    secret_scan();
}

/// The disk's floor under a durable call at concurrency 1: the median of
/// appending 4 KiB to a file in `dir` (where the store's file is) and
/// syncing its data, as SQLite's write-ahead log is appended and synced.
fn fsync_floor(dir: &std::path::Path) -> Duration {
    use std::io::Write;
    let mut file = std::fs::File::create(dir.join("floor")).expect("a file");
    let page = [7u8; 4096];
    let mut samples: Vec<Duration> = (0..1000)
        .map(|_| {
            let t = Instant::now();
            file.write_all(&page).expect("write");
            file.sync_data().expect("fdatasync");
            t.elapsed()
        })
        .collect();
    samples.sort();
    samples[samples.len() / 2]
}

/// What scanning an answer for secrets costs, in-process: the greeting the
/// HTTP rows return, and a 5 MiB answer (the size that becomes an artifact).
fn secret_scan() {
    let scanner = toolhost_secrets::Scanner::new()
        .with_secret("tb-secret-7f3a9c2e51d04b8e9a6f0c1d2e3b4a59")
        .with_host_path(std::path::Path::new("/srv/toolhost/plugins"));
    let greeting = json!({"message": "Hello, Ada!"});
    let words: String = "the quick brown fox jumps over the lazy dog; ".repeat((5 << 20) / 45 + 1);
    let large = json!({"rows": [{"note": words}]});
    println!();
    println!("| secret scan (in-process) | size | p50 µs | p99 µs |");
    println!("|---|---|---|---|");
    for (what, answer, n) in [
        ("greeting", &greeting, CALLS),
        ("5 MiB of text", &large, 50),
    ] {
        let size = answer.to_string().len();
        let mut samples = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            assert!(scanner.find_in_json(answer).is_none(), "clean");
            samples.push(t.elapsed());
        }
        samples.sort();
        println!(
            "| {what} | {size} B | {:.1} | {:.1} |",
            samples[samples.len() / 2].as_secs_f64() * 1e6,
            samples[samples.len() * 99 / 100].as_secs_f64() * 1e6
        );
    }
}

/// `TOOLHOST_BENCH_ONLY`'s one measurement: `ceiling` (bare rmcp),
/// `native` or `wasm` (the host with its audit discarded, `greet_native` or
/// `greet`) or `shipped` (the host as shipped, `greet`), by
/// `TOOLHOST_BENCH_CLIENTS` clients (32 unless set).
async fn profile_one(plan: Plan, only: &str, ceiling: &str) {
    // The host's `start` arguments (durable audit, rate limited, edge
    // guards), if not the ceiling.
    let (host, tool) = match only {
        "ceiling" => (None, CEILING_TOOL),
        "native" => (Some((false, false, true)), "greet_native"),
        "wasm" => (Some((false, false, true)), "greet"),
        "shipped" => (Some((true, true, true)), "greet"),
        "python" => (Some((true, true, true)), "greet_py"),
        "unguarded" => (Some((true, true, false)), "greet"),
        other => {
            panic!(
                "TOOLHOST_BENCH_ONLY={other}: one of ceiling, native, wasm, shipped, python, unguarded"
            )
        }
    };
    let (addr, _dir) = match host {
        Some((durable, limited, edge)) => {
            let extras = Extras {
                python: only == "python",
                ..Extras::default()
            };
            let (addr, dir) = start_with(durable, limited, edge, extras).await;
            (addr, Some(dir))
        }
        None => (ceiling.to_owned(), None),
    };
    let clients = std::env::var("TOOLHOST_BENCH_CLIENTS")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(32);
    let r = run(plan, &addr, tool, clients).await;
    println!(
        "{only} ({tool}), {clients} clients: {:.0} calls/s, p50 {} ms, p99 {} ms",
        r.per_sec,
        ms(r.p50),
        ms(r.p99)
    );
}

/// The native and the sandboxed `greet` at 1 and 32 clients; answers the
/// sandboxed runs.
async fn table(plan: Plan, addr: &str, profile: &str, ceiling: &[Run; 2]) -> [Run; 2] {
    let mut sandboxed = Vec::new();
    for (i, c) in [1, 32].into_iter().enumerate() {
        let native = run(plan, addr, "greet_native", c).await;
        let wasm = run(plan, addr, "greet", c).await;
        let ratio = wasm.per_sec / native.per_sec;
        let top = ceiling[i].per_sec;
        let (n, w) = (&native, &wasm);
        println!(
            "| {profile} | {c} | native | {:.0} | {} | {} | {:.2} | |",
            n.per_sec,
            ms(n.p50),
            ms(n.p99),
            n.per_sec / top
        );
        println!(
            "| {profile} | {c} | wasm | {:.0} | {} | {} | {:.2} | {ratio:.2} |",
            w.per_sec,
            ms(w.p50),
            ms(w.p99),
            w.per_sec / top
        );
        sandboxed.push(wasm);
    }
    sandboxed
        .try_into()
        .unwrap_or_else(|_| unreachable!("two concurrencies"))
}

/// The Python reference plugin's `greet_py` at 1 and 32 clients, beside
/// Rust's `greet` (`rust`, the same server's): its last column is Python's
/// calls per second over Rust's.
async fn python_rows(plan: Plan, addr: &str, profile: &str, ceiling: &[Run; 2], rust: &[Run; 2]) {
    for (i, c) in [1, 32].into_iter().enumerate() {
        let py = run(plan, addr, "greet_py", c).await;
        println!(
            "| {profile} | {c} | wasm, Python | {:.0} | {} | {} | {:.2} | {:.2} of Rust's |",
            py.per_sec,
            ms(py.p50),
            ms(py.p99),
            py.per_sec / ceiling[i].per_sec,
            py.per_sec / rust[i].per_sec
        );
    }
}
