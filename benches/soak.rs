//! `make soak` (and the last part of `make bench`): the real `toolhost`
//! binary (release build) under a steady mixed load for ten minutes, to see
//! that nothing grows that should stay flat.
//!
//! 32 client threads call without pause, each request one of:
//! - a plain call (`greet`): seventeen in twenty;
//! - a call that needs a clarification (`run_by_tag` without an
//!   environment: the host asks which);
//! - a gate's whole life: a production run opens a gate, a second person
//!   confirms it, the retry runs;
//! - every fiftieth request of two clients, an exploration run, queued
//!   and run by the host's workers while the load goes on.
//!
//! Every 30 s the server's resident memory, open files, threads and store
//! connections (from `/metrics`) are sampled, with the latency of the calls
//! answered in that window. Prints a Markdown table for BENCHMARKS.md,
//! each kind's latency over the whole run (a gate's is its three calls),
//! and the first and last window side by side. `TOOLHOST_SOAK_SECONDS` shortens
//! the run (default 600).

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use support::bench::{Backend, UNLIMITED, call_at};
use support::mix::{Callers, Kind, mixed_server, request};
use support::{Server, exchange};

const CLIENTS: usize = 32;
const WINDOW: Duration = Duration::from_secs(30);

/// One request: when it ended (since the start), what it was, how long
/// it took, and whether it got the answer it should.
struct Done {
    at: Duration,
    kind: Kind,
    took: Duration,
    ok: bool,
}

/// One sample of the server process.
struct Sample {
    at: Duration,
    rss_kib: u64,
    fds: usize,
    threads: u64,
    store_connections: f64,
}

fn main() {
    let seconds: u64 = std::env::var("TOOLHOST_SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let length = Duration::from_secs(seconds);
    let backend = Backend::start();
    // Every rate limit off: the load must never be refused.
    let server = mixed_server(&backend, &UNLIMITED);
    let (done, samples) = soak(&server, length);
    report(&done, &samples, length);
    let out = server.admin(&["audit", "verify"]);
    println!(
        "\naudit chain after the soak: {}",
        String::from_utf8_lossy(&out.stdout).trim()
    );
    assert!(out.status.success(), "the chain verifies");
}

/// `CLIENTS` clients calling `server` for `length` while its process is
/// sampled every `WINDOW`: every request done, and every sample.
fn soak(server: &Server, length: Duration) -> (Vec<Done>, Vec<Sample>) {
    let callers = Callers::sign_in(server);
    let started = Instant::now();
    let stop = AtomicBool::new(false);
    let done: Mutex<Vec<Done>> = Mutex::new(Vec::new());
    let samples: Mutex<Vec<Sample>> = Mutex::new(Vec::new());
    thread::scope(|s| {
        for c in 0..CLIENTS {
            let (url, callers) = (&server.url, &callers);
            let (stop, done) = (&stop, &done);
            s.spawn(move || {
                let mut mine = Vec::new();
                for n in 0usize.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let kind = Kind::of(c, n);
                    let t = Instant::now();
                    let mut caller =
                        |token: &str, tool: &str, arguments| call_at(url, token, tool, arguments);
                    let name = format!("soak {c} {n}");
                    let ok = request(&mut caller, kind, callers, &name).is_ok();
                    mine.push(Done {
                        at: started.elapsed(),
                        kind,
                        took: t.elapsed(),
                        ok,
                    });
                }
                done.lock().expect("results").extend(mine);
            });
        }
        let (stop, samples) = (&stop, &samples);
        let server = (server.pid(), server.metrics_url());
        s.spawn(move || {
            let mut next = Duration::ZERO;
            while started.elapsed() < length {
                if started.elapsed() >= next {
                    samples
                        .lock()
                        .expect("samples")
                        .push(sample(server, started));
                    next += WINDOW;
                }
                thread::sleep(Duration::from_millis(200));
            }
            samples
                .lock()
                .expect("samples")
                .push(sample(server, started));
            stop.store(true, Ordering::Relaxed);
        });
    });
    let done = done.into_inner().expect("results");
    let samples = samples.into_inner().expect("samples");
    (done, samples)
}

/// The server process (`pid`, its metrics at `metrics`) now.
fn sample((pid, metrics): (u32, &str), started: Instant) -> Sample {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count);
    let (_, metrics) = exchange(metrics, "GET", "/metrics", &[], "");
    let store_connections = metrics
        .lines()
        .filter(|l| l.starts_with("toolhost_store_connections{") && l.contains("state=\"open\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    Sample {
        at: started.elapsed(),
        rss_kib: field("VmRSS:"),
        fds,
        threads: field("Threads:"),
        store_connections,
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

/// How long each request of `done` that `which` picks took, shortest first.
fn sorted_took(done: &[Done], which: impl Fn(&Done) -> bool) -> Vec<Duration> {
    let mut took: Vec<Duration> = done.iter().filter(|d| which(d)).map(|d| d.took).collect();
    took.sort();
    took
}

fn report(done: &[Done], samples: &[Sample], length: Duration) {
    println!(
        "## Soak: {} s at {CLIENTS} clients, calls, clarifications, gates and runs\n",
        length.as_secs()
    );
    println!(
        "| window ends s | requests | failed | p50 ms | p99 ms | RSS MiB | open fds | threads | store connections |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut from = Duration::ZERO;
    for s in samples.iter().skip(1) {
        let took = sorted_took(done, |d| d.at > from && d.at <= s.at);
        let failed = done
            .iter()
            .filter(|d| d.at > from && d.at <= s.at && !d.ok)
            .count();
        println!(
            "| {:.0} | {} | {failed} | {:.2} | {:.2} | {:.1} | {} | {} | {:.0} |",
            s.at.as_secs_f64(),
            took.len(),
            percentile(&took, 0.5),
            percentile(&took, 0.99),
            s.rss_kib as f64 / 1024.0,
            s.fds,
            s.threads,
            s.store_connections,
        );
        from = s.at;
    }
    let by_kind = |k: Kind| done.iter().filter(|d| d.kind == k).count();
    let failed = done.iter().filter(|d| !d.ok).count();
    println!(
        "\n{} requests: {} calls, {} clarifications, {} gates (open, confirm, run), {} runs; {failed} failed",
        done.len(),
        by_kind(Kind::Call),
        by_kind(Kind::Clarification),
        by_kind(Kind::Gate),
        by_kind(Kind::Run),
    );
    for kind in Kind::ALL {
        let took = sorted_took(done, |d| d.kind == kind);
        println!(
            "{kind:?}: p50 {:.2} ms, p99 {:.2} ms",
            percentile(&took, 0.5),
            percentile(&took, 0.99),
        );
    }
    if let (Some(first), Some(last)) = (samples.get(1), samples.last()) {
        println!(
            "first window → last: RSS {:.1} → {:.1} MiB, open fds {} → {}, threads {} → {}, store connections {:.0} → {:.0}",
            first.rss_kib as f64 / 1024.0,
            last.rss_kib as f64 / 1024.0,
            first.fds,
            last.fds,
            first.threads,
            last.threads,
            first.store_connections,
            last.store_connections,
        );
    }
}
