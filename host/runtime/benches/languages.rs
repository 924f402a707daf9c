//! `make bench`, part 1b: the reference `greet` in each authoring language,
//! in-process.
//!
//! `hello` (Rust), `hello-py` (Python, componentize-py) and `hello-ts`
//! (TypeScript, jco on QuickJS), each loaded from its built component
//! (`make plugins python-plugins ts-plugins`) into one runtime, are called
//! fresh-instance per call, as the host serves every call:
//! - at concurrency 1 (one call after another) and 32 (32 tasks on a
//!   two-worker runtime, as many as the machine's cores), each call's
//!   latency recorded; p50 and p99 per language, and the ratio to Rust's
//!   p50 of the same run;
//! - the set-up alone (fresh store + instantiate + drop), to split a call
//!   into the sandbox's share and the language runtime's;
//! - the process's resident memory before the loads, with all three
//!   loaded, and its peak after every run. The components are compiled
//!   into the cache by a child process first (this binary, with
//!   `TOOLHOST_BENCH_WARM` set), so the figures are a serving host's, which
//!   maps them from its cache, not a compiler's peak.
//!
//! Prints a Markdown table. Each language's plugin runs under its own
//! manifest's memory limit, as the host would run it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use toolhost_fixtures::HELLO;
use toolhost_limits::{ByteSize, CallBudget};
use toolhost_runtime::{CallContext, Plugin, Runtime, RuntimeConfig};

/// Calls measured per language at concurrency 1, and per task at 32.
const SEQUENTIAL: [usize; 3] = [20_000, 2_000, 2_000];
const PER_TASK: [usize; 3] = [600, 60, 60];
const TASKS: usize = 32;
const WARMUP: usize = 50;

/// One language's reference plugin.
struct Subject {
    language: &'static str,
    plugin: &'static str,
    tool: &'static str,
    component: PathBuf,
    budget: CallBudget,
}

fn subjects() -> Vec<Subject> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let built = |rel: &str| {
        let path = repo.join(rel);
        assert!(
            path.exists(),
            "{} is not built: run `make python-plugins ts-plugins` (make bench does)",
            path.display()
        );
        path
    };
    vec![
        Subject {
            language: "Rust",
            plugin: "hello",
            tool: "greet",
            component: PathBuf::from(HELLO.component),
            budget: CallBudget::DEFAULT,
        },
        Subject {
            language: "Python",
            plugin: "hello-py",
            tool: "greet_py",
            component: built("target/plugins/python/hello_py.wasm"),
            // plugins/python/hello/toolhost.toml: memory = "32 MiB".
            budget: CallBudget {
                memory: ByteSize::mib(32),
                ..CallBudget::DEFAULT
            },
        },
        Subject {
            language: "TypeScript",
            plugin: "hello-ts",
            tool: "greet_ts",
            component: built("target/plugins/ts/hello_ts.wasm"),
            budget: CallBudget::DEFAULT,
        },
    ]
}

struct Stats {
    p50: Duration,
    p99: Duration,
    per_sec: f64,
}

fn stats(mut samples: Vec<Duration>, wall: Duration) -> Stats {
    samples.sort();
    Stats {
        p50: samples[samples.len() / 2],
        p99: samples[samples.len() * 99 / 100],
        per_sec: samples.len() as f64 / wall.as_secs_f64(),
    }
}

/// This process's resident set, its peak, and the anonymous part of it (the
/// private pages; the rest is mapped files, chiefly the compiled components
/// and each slot's read-only view of its heap image, shared in the page
/// cache however many slots map it), in MiB, from `/proc`.
fn rss_mib() -> (f64, f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"), field("RssAnon:"))
}

async fn greet(runtime: &Runtime, plugin: &Plugin, subject: &Subject) -> Duration {
    let ctx = CallContext::new("bench", "bench");
    let t = Instant::now();
    let reply = runtime
        .call(
            plugin,
            &ctx,
            subject.tool,
            r#"{"name":"Ada"}"#,
            &subject.budget,
        )
        .await
        .unwrap_or_else(|e| panic!("{} greets: {e}", subject.language));
    let took = t.elapsed();
    std::hint::black_box(reply);
    took
}

async fn sequential(runtime: &Runtime, plugin: &Plugin, subject: &Subject, n: usize) -> Stats {
    for _ in 0..WARMUP {
        greet(runtime, plugin, subject).await;
    }
    let started = Instant::now();
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        samples.push(greet(runtime, plugin, subject).await);
    }
    stats(samples, started.elapsed())
}

async fn set_up(runtime: &Runtime, plugin: &Plugin, subject: &Subject, n: usize) -> Stats {
    let started = Instant::now();
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        runtime
            .probe(plugin, &subject.budget)
            .await
            .unwrap_or_else(|e| panic!("{} instantiates: {e}", subject.language));
        samples.push(t.elapsed());
    }
    stats(samples, started.elapsed())
}

async fn concurrent(
    runtime: &Arc<Runtime>,
    plugin: &Arc<Plugin>,
    subject: &Arc<Subject>,
    per_task: usize,
) -> Stats {
    let started = Instant::now();
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let (runtime, plugin, subject) = (runtime.clone(), plugin.clone(), subject.clone());
            tokio::spawn(async move {
                let mut samples = Vec::with_capacity(per_task);
                for _ in 0..per_task {
                    samples.push(greet(&runtime, &plugin, &subject).await);
                }
                samples
            })
        })
        .collect();
    let mut samples = Vec::with_capacity(TASKS * per_task);
    for task in tasks {
        samples.extend(task.await.expect("a task"));
    }
    stats(samples, started.elapsed())
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

/// Set (to the cache directory) in the child that compiles the components.
const WARM_ENV: &str = "TOOLHOST_BENCH_WARM";

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio");
    rt.block_on(bench());
}

async fn load_all(runtime: &Runtime) -> Vec<(Arc<Subject>, Arc<Plugin>)> {
    let mut loaded = Vec::new();
    for subject in subjects() {
        let bytes = std::fs::read(&subject.component).expect("a component");
        let (plugin, report) = runtime
            .load_within(
                subject.plugin.parse().expect("a name"),
                &bytes,
                &subject.budget,
                &toolhost_runtime::Payer::Host,
            )
            .await
            .unwrap_or_else(|e| panic!("{} loads: {e}", subject.language));
        eprintln!(
            "{}: {:.1} MB component, {:?} in {:.2} s",
            subject.language,
            bytes.len() as f64 / 1e6,
            report.cache,
            report.compile.as_secs_f64()
        );
        loaded.push((Arc::new(subject), Arc::new(plugin)));
    }
    loaded
}

/// `TOOLHOST_BENCH_KEEP_RESIDENT=BYTES` overrides the pool's default, to
/// compare settings in one build.
fn runtime_over(cache: &std::path::Path) -> Runtime {
    let defaults = RuntimeConfig::default();
    let keep_resident = std::env::var("TOOLHOST_BENCH_KEEP_RESIDENT")
        .ok()
        .map(|v| {
            v.parse()
                .expect("TOOLHOST_BENCH_KEEP_RESIDENT is a byte count")
        })
        .unwrap_or(defaults.keep_resident);
    Runtime::new(RuntimeConfig {
        cache_dir: Some(cache.to_path_buf()),
        keep_resident,
        ..defaults
    })
    .expect("runtime")
}

async fn bench() {
    if let Some(cache) = std::env::var_os(WARM_ENV) {
        load_all(&runtime_over(std::path::Path::new(&cache))).await;
        return;
    }
    let cache = tempfile::tempdir().expect("temp dir");
    let warmed = std::process::Command::new(std::env::current_exe().expect("this bench"))
        .env(WARM_ENV, cache.path())
        .status()
        .expect("the warming child runs");
    assert!(warmed.success(), "the warming child: {warmed}");
    let runtime = Arc::new(runtime_over(cache.path()));
    let (before, _, _) = rss_mib();
    let loaded = load_all(&runtime).await;
    let (all_loaded, _, loaded_anon) = rss_mib();

    let mut rows = Vec::new();
    for (i, (subject, plugin)) in loaded.iter().enumerate() {
        let setup = set_up(&runtime, plugin, subject, SEQUENTIAL[i]).await;
        let one = sequential(&runtime, plugin, subject, SEQUENTIAL[i]).await;
        let many = concurrent(&runtime, plugin, subject, PER_TASK[i]).await;
        rows.push((subject.language, setup, one, many));
    }
    let (after, peak, after_anon) = rss_mib();

    println!(
        "| `greet`, fresh instance per call | set-up p50 ms | c=1 p50 ms | c=1 p99 ms | c=1 calls/s | × Rust p50 | c=32 p50 ms | c=32 p99 ms | c=32 calls/s | × Rust p50 |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let (rust_one, rust_many) = (rows[0].2.p50, rows[0].3.p50);
    for (language, setup, one, many) in &rows {
        println!(
            "| {language} | {} | {} | {} | {:.0} | {:.1} | {} | {} | {:.0} | {:.1} |",
            ms(setup.p50),
            ms(one.p50),
            ms(one.p99),
            one.per_sec,
            one.p50.as_secs_f64() / rust_one.as_secs_f64(),
            ms(many.p50),
            ms(many.p99),
            many.per_sec,
            many.p50.as_secs_f64() / rust_many.as_secs_f64(),
        );
    }
    println!();
    println!(
        "Resident memory: {before:.1} MiB before the loads, {all_loaded:.1} MiB with all three \
         loaded ({loaded_anon:.1} MiB anonymous), {after:.1} MiB after the runs ({after_anon:.1} MiB \
         anonymous; peak {peak:.1} MiB)."
    );
}
