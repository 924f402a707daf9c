//! `make bench`, part 1: the sandbox in-process.
//!
//! Measures, over at least 10 000 iterations each, median and p99 of:
//! - the `greet` tool written natively (the baseline: parse JSON arguments,
//!   build the answer, serialize it),
//! - per-call sandbox set-up alone (fresh store + instantiate + drop),
//! - a full fresh-instance call of `hello`'s `greet`;
//!
//! and the cost of obtaining the compiled component cold vs from the cache.
//! Prints a Markdown table; the ratios are against the native baseline of
//! the same run.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost_fixtures::HELLO;
use toolhost_limits::CallBudget;
use toolhost_runtime::{CallContext, Runtime, RuntimeConfig};

const ITERATIONS: usize = 20_000;
const WARMUP: usize = 1_000;

/// The same tool, natively: what a host without a sandbox would run.
fn native_greet(args: &str) -> String {
    let v: Value = serde_json::from_str(args).expect("valid JSON");
    let name = v["name"].as_str().expect("a name").trim();
    serde_json::to_string(&json!({"message": format!("Hello, {name}!")})).expect("serializes")
}

struct Stats {
    median: Duration,
    p99: Duration,
    per_sec: f64,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let total: Duration = samples.iter().sum();
    Stats {
        median: samples[samples.len() / 2],
        p99: samples[samples.len() * 99 / 100],
        per_sec: samples.len() as f64 / total.as_secs_f64(),
    }
}

async fn measure<F, Fut>(mut f: F) -> Stats
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for _ in 0..WARMUP {
        f().await;
    }
    let mut samples = Vec::with_capacity(ITERATIONS);
    for _ in 0..ITERATIONS {
        let t = Instant::now();
        f().await;
        samples.push(t.elapsed());
    }
    stats(samples)
}

fn us(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e6)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    rt.block_on(bench());
}

async fn bench() {
    let bytes = HELLO.bytes();
    let cache = tempfile::tempdir().expect("temp dir");
    let config = RuntimeConfig {
        cache_dir: Some(cache.path().to_path_buf()),
        ..RuntimeConfig::default()
    };
    let runtime = Runtime::new(config.clone()).expect("runtime");
    let (_, cold) = runtime
        .load("hello".parse().expect("name"), &bytes)
        .await
        .expect("loads");
    drop(runtime);
    let runtime = Runtime::new(config).expect("runtime");
    let (plugin, warm) = runtime
        .load("hello".parse().expect("name"), &bytes)
        .await
        .expect("loads");

    let args = r#"{"name":"Ada"}"#;
    let budget = CallBudget::DEFAULT;
    let ctx = CallContext::new("bench", "bench");
    let native = measure(|| async {
        std::hint::black_box(native_greet(std::hint::black_box(args)));
    })
    .await;
    let setup =
        measure(|| async { runtime.probe(&plugin, &budget).await.expect("instantiates") }).await;
    let call = measure(|| async {
        std::hint::black_box(
            runtime
                .call(&plugin, &ctx, "greet", args, &budget)
                .await
                .expect("greets"),
        );
    })
    .await;

    println!(
        "| measurement ({ITERATIONS} iterations) | median µs | p99 µs | per second | × native (median) |"
    );
    println!("|---|---|---|---|---|");
    let ratio = |s: &Stats| s.median.as_secs_f64() / native.median.as_secs_f64();
    for (name, s) in [
        ("`greet` native (baseline)", &native),
        ("sandbox set-up: fresh store + instantiate + drop", &setup),
        ("full call: fresh instance + `greet` + drop", &call),
    ] {
        println!(
            "| {name} | {} | {} | {:.0} | {:.1} |",
            us(s.median),
            us(s.p99),
            s.per_sec,
            ratio(s)
        );
    }
    println!();
    println!(
        "Component load: compiled {:.1} ms ({:?}), from the precompiled cache {:.2} ms ({:?}).",
        cold.compile.as_secs_f64() * 1e3,
        cold.cache,
        warm.compile.as_secs_f64() * 1e3,
        warm.cache
    );
}
