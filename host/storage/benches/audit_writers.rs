//! Audit appends on one PostgreSQL from one writer process and from three
//! (`make bench`; `-- --quick` for `make bench-quick`): rows per second
//! and each call's audit latency (from `record` to its durable commit),
//! as ratios in one run. Each writer process is this binary again, with a
//! store of its own (its own pool and writers, as a replica has) and
//! `CALLERS` tasks recording rows back to back for the run's length.
//!
//! Issue 42's targets: three processes append at least twice the rows per
//! second of one, and their per-call latency is at most 1.2 times one's.
//! With the chain's old cluster-wide lock the three waited for each other:
//! about the rows of one, at three times the latency.
//!
//! PostgreSQL: `TOOLHOST_TEST_PG_URL`, default
//! `postgres://postgres@127.0.0.1:5432/test`; each run gets its own schema,
//! dropped at the end.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sqlx::{AssertSqlSafe, Connection, PgConnection};
use toolhost_audit::{AuditEvent, AuditSink, argument_digest};
use toolhost_storage::Store;

const DEFAULT_PG_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// Concurrent callers per writer process, unless
/// `TOOLHOST_AUDIT_BENCH_CALLERS` says otherwise.
const CALLERS: usize = 16;

fn callers_per_process() -> usize {
    std::env::var("TOOLHOST_AUDIT_BENCH_CALLERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(CALLERS)
}

/// The child's role, and where it writes.
const WRITER_ENV: &str = "TOOLHOST_AUDIT_BENCH_WRITER";

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let seconds = if quick { 3 } else { 10 };
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    if let Ok(url) = std::env::var(WRITER_ENV) {
        let report = runtime.block_on(write_for(&url, Duration::from_secs(seconds)));
        println!("{}", report.line());
        return;
    }
    let admin = std::env::var("TOOLHOST_TEST_PG_URL").unwrap_or(DEFAULT_PG_URL.into());
    println!(
        "audit appends on one PostgreSQL, {} callers per writer process, {seconds} s",
        callers_per_process()
    );
    let mut results = Vec::new();
    for processes in [1usize, 3] {
        let schema = runtime.block_on(Schema::create(&admin));
        // Migrate once, before the writers start.
        runtime.block_on(async {
            Store::connect(&schema.url)
                .await
                .expect("store")
                .close()
                .await;
        });
        let before = cpu_ticks();
        let total = run_writers(&schema.url, processes);
        let busy = busy_share(before, cpu_ticks());
        runtime.block_on(schema.drop());
        println!(
            "  {processes} writer process(es): {:>7.0} rows/s, p50 {:>6.2} ms, p99 {:>6.2} ms, \
             machine CPU {:>3.0}% busy",
            total.rows as f64 / seconds as f64,
            total.p50_ms,
            total.p99_ms,
            busy * 100.0
        );
        results.push(total);
    }
    let (one, three) = (&results[0], &results[1]);
    println!(
        "  3 / 1 processes: rows per second x{:.2} (target >= 2), p50 latency x{:.2} (target <= 1.2)",
        three.rows as f64 / one.rows as f64,
        three.p50_ms / one.p50_ms
    );
}

/// The machine's CPU time so far, from `/proc/stat`: (idle, total) ticks.
fn cpu_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse().ok())
        .collect();
    // idle and iowait are the CPU's idle time.
    let idle = ticks.get(3).copied().unwrap_or(0) + ticks.get(4).copied().unwrap_or(0);
    (idle, ticks.iter().sum())
}

/// The share of CPU time busy between two readings: writers, PostgreSQL
/// and everything else on the machine. Near 100% the run is bound by the
/// CPU, not by the database's flushes.
fn busy_share((idle0, total0): (u64, u64), (idle1, total1): (u64, u64)) -> f64 {
    let total = total1.saturating_sub(total0).max(1) as f64;
    1.0 - idle1.saturating_sub(idle0) as f64 / total
}

/// What one writer process (or all of them) did.
struct Report {
    rows: u64,
    p50_ms: f64,
    p99_ms: f64,
}

impl Report {
    fn line(&self) -> String {
        format!("{} {} {}", self.rows, self.p50_ms, self.p99_ms)
    }

    fn parse(line: &str) -> Report {
        let mut parts = line
            .split_whitespace()
            .map(|p| p.parse::<f64>().expect("a number"));
        let mut next = || parts.next().expect("three numbers");
        Report {
            rows: next() as u64,
            p50_ms: next(),
            p99_ms: next(),
        }
    }
}

/// Starts `processes` writers on `url` at once; their rows summed and
/// their latencies' percentiles averaged.
fn run_writers(url: &str, processes: usize) -> Report {
    let exe = std::env::current_exe().expect("this bench");
    let children: Vec<_> = (0..processes)
        .map(|_| {
            Command::new(&exe)
                .args(std::env::args().skip(1))
                .env(WRITER_ENV, url)
                .stdout(Stdio::piped())
                .spawn()
                .expect("a writer process")
        })
        .collect();
    let reports: Vec<Report> = children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().expect("a writer's report");
            assert!(out.status.success(), "a writer failed");
            let text = String::from_utf8_lossy(&out.stdout);
            Report::parse(text.lines().last().expect("a report line"))
        })
        .collect();
    let n = reports.len() as f64;
    Report {
        rows: reports.iter().map(|r| r.rows).sum(),
        p50_ms: reports.iter().map(|r| r.p50_ms).sum::<f64>() / n,
        p99_ms: reports.iter().map(|r| r.p99_ms).sum::<f64>() / n,
    }
}

/// One writer process: `CALLERS` tasks recording rows for `length`.
async fn write_for(url: &str, length: Duration) -> Report {
    let store = Store::connect(url).await.expect("store");
    let deadline = Instant::now() + length;
    let tag = std::process::id();
    let mut callers = tokio::task::JoinSet::new();
    for caller in 0..callers_per_process() {
        let store = store.clone();
        callers.spawn(async move {
            let mut latencies = Vec::new();
            let mut n = 0u64;
            while Instant::now() < deadline {
                let event = event(&format!("{tag}-{caller}-{n}"));
                let started = Instant::now();
                store.record(&event).await.expect("recorded");
                latencies.push(started.elapsed());
                n += 1;
            }
            latencies
        });
    }
    let mut latencies = Vec::new();
    while let Some(done) = callers.join_next().await {
        latencies.extend(done.expect("a caller"));
    }
    store.close().await;
    latencies.sort();
    let at = |q: f64| {
        let i = ((latencies.len() as f64 * q) as usize).min(latencies.len() - 1);
        latencies[i].as_secs_f64() * 1000.0
    };
    Report {
        rows: latencies.len() as u64,
        p50_ms: at(0.5),
        p99_ms: at(0.99),
    }
}

fn event(call_id: &str) -> AuditEvent {
    AuditEvent {
        call_id: call_id.into(),
        at: SystemTime::now(),
        client_id: Some("bench".into()),
        plugin: Some("hello".into()),
        duration: Duration::from_micros(250),
        ..AuditEvent::new(
            "acme",
            "alice",
            "greet",
            argument_digest(&serde_json::json!({})),
        )
    }
}

/// A schema of its own on the server, dropped at the end.
struct Schema {
    admin: String,
    name: String,
    url: String,
}

impl Schema {
    async fn create(admin: &str) -> Schema {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("clock")
            .subsec_nanos();
        let name = format!("toolhost_bench_{}_{nanos}", std::process::id());
        let mut c = PgConnection::connect(admin)
            .await
            .unwrap_or_else(|e| panic!("PostgreSQL at {admin}: {e}"));
        sqlx::raw_sql(AssertSqlSafe(format!("CREATE SCHEMA {name}")))
            .execute(&mut c)
            .await
            .expect("schema");
        let sep = if admin.contains('?') { '&' } else { '?' };
        Schema {
            url: format!("{admin}{sep}options[search_path]={name}"),
            admin: admin.to_owned(),
            name,
        }
    }

    async fn drop(self) {
        let mut c = PgConnection::connect(&self.admin).await.expect("connects");
        sqlx::raw_sql(AssertSqlSafe(format!("DROP SCHEMA {} CASCADE", self.name)))
            .execute(&mut c)
            .await
            .expect("dropped");
    }
}
