//! Closed-loop load: each client sends its next request when the last is
//! answered, on a keep-alive connection of its own, so the load is as
//! much as the server (and the two cores it shares with the clients) can
//! answer. A warm-up first; then, over a measured window, the requests
//! answered, each one's latency, and the CPU time the kernel charged the
//! server's process.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::process::{Target, cpu_time};
use crate::support::keep_alive::KeepAlive;

/// What a measured window saw.
#[derive(Default)]
pub struct Window {
    /// Requests answered within the window.
    pub requests: u64,
    /// The window's length.
    pub elapsed: Duration,
    /// CPU time charged to the server's process over the window.
    pub server_cpu: Duration,
    /// Each answered request's latency, shortest first.
    pub latencies: Vec<Duration>,
}

impl Window {
    /// µs of server CPU per request answered.
    pub fn cpu_per_request_us(&self) -> f64 {
        self.server_cpu.as_secs_f64() * 1e6 / self.requests as f64
    }

    /// Requests answered per second.
    pub fn per_sec(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }

    /// The latency at quantile `q` (0.5: the median).
    pub fn quantile(&self, q: f64) -> Duration {
        quantile(&self.latencies, q)
    }

    /// This window and `other` as one (rounds pooled).
    pub fn pooled(mut self, other: &Window) -> Window {
        self.requests += other.requests;
        self.elapsed += other.elapsed;
        self.server_cpu += other.server_cpu;
        self.latencies.extend_from_slice(&other.latencies);
        self.latencies.sort();
        self
    }
}

/// How long to load before measuring, and how long to measure.
#[derive(Clone, Copy)]
pub struct Span {
    pub warmup: Duration,
    pub window: Duration,
}

/// `clients` clients calling `target`'s `greet` back to back; every
/// answer must greet whom it was asked to.
pub fn greet(target: &Target, clients: usize, span: Span) -> Window {
    let call = |conn: &mut KeepAlive, _: usize, _: usize| {
        let v = conn.call(&target.token, target.tool, json!({"name": "Ada"}));
        let said = &v["result"]["structuredContent"]["message"];
        assert!(
            said == "Hello, Ada!" && v["result"]["isError"] != json!(true),
            "{} at {}: {v}",
            target.tool,
            target.url
        );
    };
    run(&target.url, target.pid, clients, span, &call)
}

/// `clients` clients of the endpoint `url` each doing `request(conn,
/// client, n)` back to back, n counting its requests; the server's
/// process is `pid`.
pub fn run(
    url: &str,
    pid: u32,
    clients: usize,
    span: Span,
    request: &(dyn Fn(&mut KeepAlive, usize, usize) + Sync),
) -> Window {
    let (stop, measuring) = (AtomicBool::new(false), AtomicBool::new(false));
    let answered = AtomicU64::new(0);
    thread::scope(|s| {
        let clients: Vec<_> = (0..clients)
            .map(|c| {
                let (stop, measuring, answered) = (&stop, &measuring, &answered);
                s.spawn(move || {
                    let mut conn = KeepAlive::new(url);
                    let mut took = Vec::new();
                    for n in 0.. {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let t = Instant::now();
                        request(&mut conn, c, n);
                        if measuring.load(Ordering::Relaxed) {
                            took.push(t.elapsed());
                            answered.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    took
                })
            })
            .collect();
        thread::sleep(span.warmup);
        let (cpu, started) = (cpu_time(pid), Instant::now());
        measuring.store(true, Ordering::Relaxed);
        thread::sleep(span.window);
        measuring.store(false, Ordering::Relaxed);
        let server_cpu = cpu_time(pid).saturating_sub(cpu);
        let elapsed = started.elapsed();
        let requests = answered.load(Ordering::Relaxed);
        stop.store(true, Ordering::Relaxed);
        let mut latencies: Vec<Duration> = clients
            .into_iter()
            .flat_map(|c| c.join().expect("a client"))
            .collect();
        latencies.sort();
        Window {
            requests,
            elapsed,
            server_cpu,
            latencies,
        }
    })
}

/// The value at quantile `q` of `sorted` (0.5: the median).
pub fn quantile(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}
