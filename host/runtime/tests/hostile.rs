//! Every hostile fixture in `plugins/` against the real sandbox: each yields
//! its typed error within its limit, the same plugin answers a normal call
//! right after, escapes fail inside the guest, a flood of any host import
//! ends at the host-call budget having done a bounded amount outside, and
//! memory stays bounded across a thousand hostile calls.

#[path = "support/flood.rs"]
mod flood;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flood::IMPORTS;
use serde_json::{Value, json};
use toolhost_fixtures::{Fixture, HOSTILE};
use toolhost_gates::{
    Checkpoint, CheckpointError, CheckpointStore, Disposition, GateFuture, NewCheckpoint,
};
use toolhost_limits::{ByteSize, CallBudget};
use toolhost_runtime::{
    AskClient, AskFuture, CallContext, CallError, ClientChannel, ClientLink, ClientSupport,
    MAX_CHECKPOINTS_PER_CALL, MAX_CLIENT_ROUNDS, MAX_RESOURCE_UPDATES, Plugin, Runtime,
    RuntimeConfig,
};

fn runtime() -> Runtime {
    Runtime::new(RuntimeConfig::default()).expect("runtime builds")
}

async fn load(rt: &Runtime, f: &Fixture) -> Plugin {
    rt.load(
        f.name.parse().expect("fixture names are plugin names"),
        &f.bytes(),
    )
    .await
    .unwrap_or_else(|e| panic!("{} loads: {e}", f.name))
    .0
}

async fn call(
    rt: &Runtime,
    p: &Plugin,
    tool: &str,
    args: Value,
    budget: &CallBudget,
) -> Result<Value, CallError> {
    let ctx = CallContext::new("tenant-a", "alice");
    rt.call(p, &ctx, tool, &args.to_string(), budget)
        .await
        .map(|r| {
            r.into_output()
                .expect("hostile fixtures ask no questions")
                .structured
        })
}

/// The ping every fixture exports, proving the plugin still serves.
async fn ping(rt: &Runtime, p: &Plugin) {
    let pong = call(rt, p, "ping", json!({}), &CallBudget::DEFAULT).await;
    assert_eq!(
        pong,
        Ok(json!({"pong": true})),
        "{} answers right after",
        p.name()
    );
}

fn tight() -> CallBudget {
    CallBudget {
        timeout: Duration::from_millis(200),
        memory: ByteSize::mib(16),
        output: ByteSize::mib(1),
        log: ByteSize::kib(4),
        ..CallBudget::DEFAULT
    }
}

/// The breach each limits/trap fixture must produce under `tight()`.
const BREACHES: &[(&str, &str, &str)] = &[
    ("t-limits-spin", "spin", "TIMEOUT"),
    ("t-limits-alloc-bomb", "bomb", "MEMORY_LIMIT"),
    ("t-limits-deep-recursion", "recurse", "STACK_OVERFLOW"),
    // Rust's shadow stack lives in linear memory: overflowing it is an
    // out-of-bounds access, which the sandbox reports as what it is.
    ("t-limits-deep-recursion", "recurse_frames", "TRAPPED"),
    ("t-limits-huge-output", "huge", "OUTPUT_LIMIT"),
    ("t-limits-log-flood", "flood", "LOG_LIMIT"),
    ("t-trap-panic", "panic", "TRAPPED"),
];

/// Escape fixtures, each with its own test below.
const ESCAPES: &[&str] = &[
    "t-escape-read-file",
    "t-escape-read-env",
    "t-escape-socket",
    "t-escape-dns",
    "t-escape-http",
    "t-escape-clock",
    "t-escape-backend",
    "t-run-escape",
];

/// The import-flood fixture, with its own test below (one case per import).
const IMPORT_FLOOD: &str = "t-flood-imports";

/// Fixtures proved in a suite of their own: `t-leak-heap` in freshness.rs,
/// `t-protocol-raise` in protocol.rs.
const ELSEWHERE: &[&str] = &["t-leak-heap", "t-protocol-raise"];

fn fixture(name: &str) -> &'static Fixture {
    HOSTILE
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("fixture {name} is built"))
}

#[test]
fn every_hostile_fixture_has_a_case() {
    let built: BTreeSet<&str> = HOSTILE.iter().map(|f| f.name).collect();
    let covered: BTreeSet<&str> = BREACHES
        .iter()
        .map(|b| b.0)
        .chain(ESCAPES.iter().copied())
        .chain([IMPORT_FLOOD])
        .chain(ELSEWHERE.iter().copied())
        .collect();
    assert_eq!(
        built, covered,
        "add a case for each new fixture (and remove cases for deleted ones)"
    );
}

#[tokio::test]
async fn each_breach_is_typed_within_its_limit_and_the_plugin_serves_right_after() {
    let rt = runtime();
    for (name, tool, code) in BREACHES {
        let p = load(&rt, fixture(name)).await;
        let started = Instant::now();
        let args = if *tool == "huge" {
            json!({"bytes": 2 << 20})
        } else {
            json!({})
        };
        let err = call(&rt, &p, tool, args, &tight())
            .await
            .expect_err("a breach");
        assert_eq!(err.code(), *code, "{name}: {err}");
        assert!(err.is_breach(), "{name}");
        // Within the time limit (plus the wall grace and scheduling slack).
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{name} took {:?}",
            started.elapsed()
        );
        ping(&rt, &p).await;
    }
}

/// Artifacts the flooded exploration run may keep.
const RUN_ARTIFACTS: u32 = 4;

/// A count shared with whatever receives a flood's effects.
#[derive(Debug, Clone, Default)]
struct Count(Arc<AtomicUsize>);

impl Count {
    fn tick(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// One import's flood, as the test watches it.
struct Watch {
    /// The call's context, granting the import what it needs to act.
    ctx: CallContext,
    /// What the flood did outside the sandbox, counted by its receiver.
    effects: Box<dyn Fn() -> usize>,
    /// The most the host lets one call do of it.
    bound: usize,
}

/// A context in which `import` reaches a real receiver, and the bound on
/// what one call may leave there under `budget`.
fn watch(import: &str, budget: &CallBudget) -> Watch {
    let ctx = CallContext::new("tenant-a", "alice");
    let count = Count::default();
    let seen = count.clone();
    let counted = move || seen.get();
    let calls = budget.host_calls as usize;
    let (ctx, effects, bound): (_, Box<dyn Fn() -> usize>, _) = match import {
        // Each line, report and request reaches its receiver: the
        // host-call budget is their only bound.
        "log" => {
            let sink = toolhost_runtime::LogSink::new(move |_| count.tick());
            (ctx.with_log(Some(sink)), Box::new(counted), calls)
        }
        "progress" => {
            let sink = toolhost_runtime::ProgressSink::new(move |_| count.tick());
            (ctx.with_progress(Some(sink)), Box::new(counted), calls)
        }
        "backend" => {
            let grant = counting_backend(count);
            (ctx.with_backends(Some(grant)), Box::new(counted), calls)
        }
        "checkpoint" => {
            let grant = toolhost_runtime::CheckpointGrant {
                store: Arc::new(MemoryCheckpoints::counting(count)),
                plugin: IMPORT_FLOOD.into(),
                scanner: toolhost_secrets::Scanner::new(),
            };
            // Each may put a row before people: a call opens at most
            // MAX_CHECKPOINTS_PER_CALL.
            let bound = MAX_CHECKPOINTS_PER_CALL as usize;
            (ctx.with_checkpoints(Some(grant)), Box::new(counted), bound)
        }
        // A run keeps at most its artifact budget; every other put is refused.
        "artifacts" => {
            let (run, log) = run_keeping(RUN_ARTIFACTS);
            let kept = move || log.lock().expect("the run log").artifacts.len();
            (ctx.in_run(run), Box::new(kept), RUN_ARTIFACTS as usize)
        }
        // A live client is asked at most MAX_CLIENT_ROUNDS times a call.
        "client-ask" => {
            let supports = ClientSupport {
                roots: true,
                ..ClientSupport::default()
            };
            let link = ClientLink::new(supports, ClientChannel::Live(Arc::new(NoRoots(count))));
            (
                ctx.with_client(Some(link)),
                Box::new(counted),
                MAX_CLIENT_ROUNDS,
            )
        }
        // Each URI is told once, and at most MAX_RESOURCE_UPDATES a call.
        "notify" => {
            let sink = toolhost_runtime::UpdateSink::new(move |_| {
                count.tick();
                Ok(())
            });
            let ctx = ctx.with_updates(Some(sink));
            (ctx, Box::new(counted), MAX_RESOURCE_UPDATES)
        }
        // Nothing leaves the host: the resolver answers from the call's
        // snapshots, `supports` from what the client declared.
        "resolver" => (ctx.with_snapshots(things()), Box::new(counted), 0),
        "client-supports" => (ctx, Box::new(counted), 0),
        other => panic!("no watch for import {other:?}"),
    };
    Watch {
        ctx,
        effects,
        bound,
    }
}

#[tokio::test]
async fn a_flood_of_any_import_ends_at_the_host_call_limit_and_leaves_a_bounded_trace() {
    let rt = runtime();
    let p = load(&rt, fixture(IMPORT_FLOOD)).await;
    let budget = CallBudget::DEFAULT;
    for import in IMPORTS {
        let watch = watch(import, &budget);
        let args = json!({"import": import}).to_string();
        let started = Instant::now();
        let Err(err) = rt.call(&p, &watch.ctx, "flood", &args, &budget).await else {
            panic!("{import}: the flood answered");
        };
        let limit = budget.host_calls;
        assert_eq!(err, CallError::HostCallLimit { limit }, "{import}: {err}");
        assert!(err.is_breach(), "{import}");
        assert!(
            started.elapsed() < budget.timeout,
            "{import} took {:?}",
            started.elapsed()
        );
        // Exactly the bound: each flood reaches it, none passes it.
        assert_eq!((watch.effects)(), watch.bound, "{import}: effects");
        ping(&rt, &p).await;
    }
}

/// Kind `thing` of tenant-a, for `flood resolver`.
fn things() -> Arc<toolhost_runtime::Snapshots> {
    let rows: Arc<[toolhost_resolver::Entity]> =
        vec![toolhost_resolver::Entity::new(1, "thing 1", "tenant-a")].into();
    Arc::new(BTreeMap::from([("thing".to_owned(), rows)]))
}

/// An exploration run that may keep `artifacts`, and its log.
fn run_keeping(
    artifacts: u32,
) -> (
    toolhost_runtime::Exploration,
    Arc<Mutex<toolhost_runtime::RunLog>>,
) {
    let log = Arc::new(Mutex::new(toolhost_runtime::RunLog::default()));
    let run = toolhost_runtime::Exploration {
        run_id: "run_flood".into(),
        tool: "flood".into(),
        client_id: "c".into(),
        max_artifacts: artifacts,
        max_artifact_bytes: 1024,
        artifact_ttl_ms: 60_000,
        scanner: toolhost_secrets::Scanner::new(),
        log: log.clone(),
    };
    (run, log)
}

/// Backend `flood` on 127.0.0.1, answering every request `200 ok` and
/// counting it in `seen`, and a grant reaching it.
fn counting_backend(seen: Count) -> toolhost_runtime::BackendGrant {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in l.incoming().map_while(Result::ok) {
            let seen = seen.clone();
            std::thread::spawn(move || answer_each_request(stream, &seen));
        }
    });
    let url = url::Url::parse(&format!("http://{addr}/")).expect("a URL");
    toolhost_runtime::BackendGrant {
        backends: toolhost_backend::Backends::new(vec![toolhost_backend::BackendConfig::new(
            "flood", url,
        )])
        .expect("valid"),
        declared: Arc::new(BTreeSet::from(["flood".to_owned()])),
    }
}

/// Answers each request on `s` (GETs: a head, no body) until it closes.
fn answer_each_request(mut s: TcpStream, seen: &Count) {
    let (mut buf, mut chunk) = (Vec::new(), [0u8; 4096]);
    while let Ok(n @ 1..) = s.read(&mut chunk) {
        buf.extend_from_slice(&chunk[..n]);
        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            buf.drain(..end + 4);
            seen.tick();
            let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
            if s.write_all(answer).is_err() {
                return;
            }
        }
    }
}

/// A live client declaring roots, answering each request with none.
struct NoRoots(Count);

impl AskClient for NoRoots {
    fn ask(&self, _request: Value) -> AskFuture<'_> {
        self.0.tick();
        Box::pin(async { Ok(json!({"roots": []})) })
    }
}

/// Checkpoints in memory, one per subject as in the real stores; each new
/// one counted.
struct MemoryCheckpoints {
    rows: Mutex<BTreeMap<String, Checkpoint>>,
    opened: Count,
}

impl MemoryCheckpoints {
    fn counting(opened: Count) -> Self {
        Self {
            rows: Mutex::default(),
            opened,
        }
    }
}

impl CheckpointStore for MemoryCheckpoints {
    fn open_checkpoint(&self, c: NewCheckpoint) -> GateFuture<'_, Checkpoint> {
        let mut rows = self.rows.lock().expect("not poisoned");
        let row = rows.entry(c.subject.clone()).or_insert_with(|| {
            self.opened.tick();
            Checkpoint {
                opened: c,
                version: 1,
                disposition: None,
                decided_by: None,
                reason: None,
                decided_at: None,
            }
        });
        let row = row.clone();
        Box::pin(async move { Ok(row) })
    }

    fn list_checkpoints<'a>(
        &'a self,
        _tenant: &'a str,
        _waiting_only: bool,
        _limit: u32,
    ) -> GateFuture<'a, Vec<Checkpoint>> {
        let rows = self.rows.lock().expect("not poisoned");
        let rows: Vec<Checkpoint> = rows.values().cloned().collect();
        Box::pin(async move { Ok(rows) })
    }

    fn decide_checkpoint<'a>(
        &'a self,
        _tenant: &'a str,
        id: &'a str,
        _expected_version: u32,
        _disposition: Disposition,
        _by: &'a str,
        _reason: &'a str,
        _now: i64,
    ) -> GateFuture<'a, Checkpoint, CheckpointError> {
        Box::pin(async move { Err(CheckpointError::NotFound(id.to_owned())) })
    }
}

#[tokio::test]
async fn huge_output_within_the_limit_is_returned_whole() {
    let rt = runtime();
    let p = load(&rt, fixture("t-limits-huge-output")).await;
    let out = call(&rt, &p, "huge", json!({"bytes": 1000}), &tight())
        .await
        .expect("within the limit");
    assert!(out.to_string().len() >= 1000, "{out}");
}

fn guest_error(v: &Value) -> String {
    assert_eq!(
        v["ok"],
        json!(false),
        "the escape must fail inside the guest: {v}"
    );
    v["error"]
        .as_str()
        .expect("the fixture reports the WASI error text")
        .to_owned()
}

#[tokio::test]
async fn reading_a_host_file_fails_inside_the_guest() {
    let rt = runtime();
    let p = load(&rt, fixture("t-escape-read-file")).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "host-secret-4242").expect("write");
    for path in [
        secret.to_str().expect("utf-8"),
        "/etc/passwd",
        "secret.txt",
        ".",
    ] {
        let out = call(
            &rt,
            &p,
            "read_file",
            json!({"path": path}),
            &CallBudget::DEFAULT,
        )
        .await
        .expect("answers");
        guest_error(&out);
        assert!(!out.to_string().contains("host-secret-4242"));
    }
    ping(&rt, &p).await;
}

#[tokio::test]
async fn the_host_environment_and_arguments_are_invisible() {
    let rt = runtime();
    let p = load(&rt, fixture("t-escape-read-env")).await;
    let out = call(
        &rt,
        &p,
        "read_env",
        json!({"name": "PATH"}),
        &CallBudget::DEFAULT,
    )
    .await
    .expect("answers");
    assert!(std::env::var("PATH").is_ok(), "the host has a PATH");
    assert_eq!(out["vars"], json!(0), "{out}");
    assert_eq!(out["args"], json!(0), "{out}");
    assert!(out["value"].is_null(), "{out}");
}

fn listener() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.set_nonblocking(true).expect("nonblocking");
    let port = l.local_addr().expect("addr").port();
    (l, port)
}

fn assert_no_connection(l: &TcpListener) {
    match l.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Ok((mut s, _)) => {
            let mut buf = String::new();
            let _ = s.read_to_string(&mut buf);
            panic!("the guest reached the host's network: {buf:?}");
        }
        Err(e) => panic!("accept failed oddly: {e}"),
    }
}

#[tokio::test]
async fn sockets_are_refused_and_nothing_reaches_the_host_network() {
    let rt = runtime();
    let p = load(&rt, fixture("t-escape-socket")).await;
    let (l, port) = listener();
    let out = call(
        &rt,
        &p,
        "connect",
        json!({"addr": format!("127.0.0.1:{port}")}),
        &CallBudget::DEFAULT,
    )
    .await
    .expect("answers");
    for key in ["connect", "tcp_listen", "udp_bind"] {
        assert_eq!(out[key]["kind"], json!("PermissionDenied"), "{key}: {out}");
        guest_error(&out[key]);
    }
    assert_no_connection(&l);
    ping(&rt, &p).await;
}

#[tokio::test]
async fn name_resolution_is_refused() {
    let rt = runtime();
    let p = load(&rt, fixture("t-escape-dns")).await;
    let out = call(
        &rt,
        &p,
        "resolve",
        json!({"host": "localhost"}),
        &CallBudget::DEFAULT,
    )
    .await
    .expect("answers");
    guest_error(&out);
}

#[tokio::test]
async fn an_http_request_never_leaves_the_guest() {
    let rt = runtime();
    let p = load(&rt, fixture("t-escape-http")).await;
    let (l, port) = listener();
    let out = call(
        &rt,
        &p,
        "http_get",
        json!({"url": format!("http://127.0.0.1:{port}/")}),
        &CallBudget::DEFAULT,
    )
    .await
    .expect("answers");
    assert_eq!(
        out["step"],
        json!("connect"),
        "refused before a byte was sent: {out}"
    );
    assert_eq!(out["attempt"]["kind"], json!("PermissionDenied"), "{out}");
    guest_error(&out["attempt"]);
    assert_no_connection(&l);
}

#[tokio::test]
async fn a_backend_is_reached_only_by_a_declared_name_and_never_beyond_its_base() {
    let rt = runtime();
    let p = load(&rt, fixture("t-escape-backend")).await;
    let (l, port) = listener();
    let base = url::Url::parse(&format!("http://127.0.0.1:{port}/base")).expect("a URL");
    // The operator configured both; the manifest declares only `decoy`.
    let backends = toolhost_backend::Backends::new(vec![
        toolhost_backend::BackendConfig::new("testbench", base.clone()),
        toolhost_backend::BackendConfig::new("decoy", base),
    ])
    .expect("valid");
    let grant = toolhost_runtime::BackendGrant {
        backends,
        declared: std::sync::Arc::new(BTreeSet::from(["decoy".to_owned()])),
    };
    let attempts = [
        ("testbench", "/api"),
        ("elsewhere", "/api"),
        ("decoy", "//127.0.0.1/api"),
        ("decoy", "/../api"),
        ("decoy", "/a/%2e%2e/api"),
        ("decoy", "http://127.0.0.1/api"),
        ("decoy", "/a@127.0.0.1/api"),
    ];
    for (backend, path) in attempts {
        let ctx = CallContext::new("tenant-a", "alice").with_backends(Some(grant.clone()));
        let args = json!({"backend": backend, "path": path});
        let out = rt
            .call(&p, &ctx, "reach", &args.to_string(), &CallBudget::DEFAULT)
            .await
            .expect("answers")
            .into_output()
            .expect("no question")
            .structured;
        assert_eq!(out["ok"], json!(false), "{backend} {path}: {out}");
        assert!(out["error"].is_string(), "{out}");
    }
    assert_no_connection(&l);
    ping(&rt, &p).await;
}

#[tokio::test]
async fn the_wall_clock_is_stopped_and_the_monotonic_clock_runs() {
    let rt = runtime();
    let p = load(&rt, fixture("t-escape-clock")).await;
    let out = call(&rt, &p, "now", json!({}), &CallBudget::DEFAULT)
        .await
        .expect("answers");
    assert_eq!(out["unix_seconds"], json!(0), "{out}");
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("procfs");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .expect("VmRSS");
    line.split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("a number")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rss_stays_bounded_across_a_thousand_hostile_calls() {
    let rt = std::sync::Arc::new(runtime());
    let mut plugins = Vec::new();
    for (name, tool, _) in BREACHES {
        plugins.push((std::sync::Arc::new(load(&rt, fixture(name)).await), *tool));
    }
    let budget = CallBudget {
        timeout: Duration::from_millis(20),
        ..tight()
    };
    let round = |n: usize| {
        let (rt, plugins) = (rt.clone(), plugins.clone());
        async move {
            let mut tasks = tokio::task::JoinSet::new();
            for i in 0..n {
                let (p, tool) = plugins[i % plugins.len()].clone();
                let rt = rt.clone();
                tasks.spawn(async move {
                    let args = if tool == "huge" {
                        json!({"bytes": 2 << 20})
                    } else {
                        json!({})
                    };
                    call(&rt, &p, tool, args, &budget)
                        .await
                        .expect_err("hostile");
                });
                if tasks.len() >= 8 {
                    tasks.join_next().await.expect("a task").expect("no panic");
                }
            }
            while let Some(r) = tasks.join_next().await {
                r.expect("no panic");
            }
        }
    };
    round(120).await; // warm the pool's slots
    let before = rss_kib();
    round(1000).await;
    let after = rss_kib();
    let grown = after.saturating_sub(before);
    eprintln!("RSS before {before} KiB, after {after} KiB, grown {grown} KiB");
    assert!(
        grown < 64 * 1024,
        "RSS grew by {grown} KiB over 1000 hostile calls"
    );
    for (p, _) in &plugins {
        ping(&rt, p).await;
    }
}

/// The exploration run of `t-run-escape`: `prod` is a production backend,
/// `sandbox` an exploration one; neither listener may see a request (the
/// sandbox's GET finds nothing listening, and is still written down).
#[tokio::test]
async fn a_run_is_refused_production_writes_files_env_and_sockets_and_notes_each() {
    let rt = runtime();
    let p = load(&rt, fixture("t-run-escape")).await;
    let (prod_l, prod_port) = listener();
    let (socket_l, socket_port) = listener();
    let url = |port: u16| url::Url::parse(&format!("http://127.0.0.1:{port}/")).expect("a URL");
    let mut sandbox = toolhost_backend::BackendConfig::new("sandbox", url(9));
    sandbox.exploration = true;
    let prod = toolhost_backend::BackendConfig::new("prod", url(prod_port));
    let grant = toolhost_runtime::BackendGrant {
        backends: toolhost_backend::Backends::new(vec![sandbox, prod]).expect("valid"),
        declared: std::sync::Arc::new(BTreeSet::from(["sandbox".into(), "prod".into()])),
    };
    let log = std::sync::Arc::new(std::sync::Mutex::new(toolhost_runtime::RunLog::default()));
    let run = toolhost_runtime::Exploration {
        run_id: "run_test".into(),
        tool: "escape".into(),
        client_id: "c".into(),
        max_artifacts: 1,
        max_artifact_bytes: 1024,
        artifact_ttl_ms: 60_000,
        scanner: toolhost_secrets::Scanner::new(),
        log: log.clone(),
    };
    let ctx = CallContext::new("tenant-a", "alice")
        .with_backends(Some(grant))
        .in_run(run);
    let args = json!({"port": socket_port}).to_string();
    let out = rt
        .call(&p, &ctx, "escape", &args, &CallBudget::DEFAULT)
        .await
        .expect("answers")
        .into_output()
        .expect("no question")
        .structured;
    let attempts = out["attempts"].as_array().expect("attempts");
    for a in &attempts[..attempts.len() - 1] {
        assert_eq!(a["ok"], json!(false), "refused inside the guest: {a}");
    }
    assert_no_connection(&prod_l);
    assert_no_connection(&socket_l);
    let log = std::mem::take(&mut *log.lock().expect("the log"));
    let refused: Vec<&str> = log.refused.iter().map(|r| r.what.as_str()).collect();
    for what in ["backend", "method", "filesystem", "environment", "socket"] {
        assert!(
            refused.contains(&what),
            "{what} refused and noted: {:?}",
            log.refused
        );
    }
    let prod_refusal = log
        .refused
        .iter()
        .find(|r| r.what == "backend")
        .expect("prod");
    assert!(prod_refusal.detail.contains("prod"), "{prod_refusal:?}");
    let sent: Vec<(&str, &str, u16)> = log
        .outbound
        .iter()
        .map(|o| (o.method.as_str(), o.backend.as_str(), o.status))
        .collect();
    assert_eq!(
        sent,
        [("GET", "sandbox", 0)],
        "only the sandbox read went out"
    );
    drop(log);
    ping(&rt, &p).await;
}

#[tokio::test]
async fn outside_a_run_no_artifact_is_kept() {
    let rt = runtime();
    let p = load(&rt, fixture("t-run-escape")).await;
    let out = call(&rt, &p, "put_outside", json!({}), &CallBudget::DEFAULT)
        .await
        .expect("answers");
    assert_eq!(out["kept"], json!(false), "{out}");
    let error = out["error"].as_str().expect("the refusal");
    assert!(error.contains("only by exploration runs"), "{error}");
}
