//! Where the shipped server's CPU goes, by owner: `perf` samples the
//! server's process (every thread) while 32 clients call `greet`, and
//! each sample's function is charged to the part of the host that owns
//! it (the sandbox, the store, the transport, …). Also the CPU an idle
//! server spends per second: the background work (anchoring, polls) that
//! every call of a quiet server shares.
//!
//! Needs `perf` and the right to sample another process
//! (`kernel.perf_event_paranoid` ≤ 1, or root); without them the
//! breakdown is skipped and says why.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use crate::closed_loop::{Span, Window, greet};
use crate::process::{Target, cpu_time};

/// The owners a sampled function can belong to, each with the names that
/// mark it. A function goes to the owner whose name appears first in it,
/// so `<rmcp::model::Request as serde::Serialize>::serialize` is the
/// transport's and `drop_in_place<hyper::…>` is too.
const OWNERS: [(&str, &[&str]); 10] = [
    (
        "sandbox: wasmtime, the component's host side",
        &[
            "wasmtime",
            "cranelift",
            "wasmparser",
            "wit_bindgen",
            "toolhost_runtime",
            "toolhost_wasi",
        ],
    ),
    (
        "store: SQLite, sqlx",
        &["sqlite3", "sqlx", "toolhost_storage"],
    ),
    (
        "transport: HTTP, MCP",
        &[
            "hyper", "h2::", "http::", "axum", "tower", "rmcp", "httparse",
        ],
    ),
    ("JSON", &["serde_json", "serde::", "serde_core"]),
    (
        "hashing, tokens",
        &[
            "sha2",
            "jsonwebtoken",
            "ring::",
            "aws_lc",
            "ed25519",
            "base64",
            "hex::",
        ],
    ),
    (
        "runtime: tasks, timers, locks",
        &[
            "tokio",
            "mio::",
            "parking_lot",
            "futures",
            "std::sync",
            "crossbeam",
        ],
    ),
    (
        "tracing, metrics",
        &["tracing", "metrics", "prometheus", "opentelemetry"],
    ),
    ("audit", &["toolhost_audit", "serde_json_canonicalizer"]),
    ("host: policy, catalog, call path", &["toolhost"]),
    ("memory: allocation, copies", &["alloc::"]),
];

/// The owner of a sampled function `symbol` in the object `dso`.
fn owner(dso: &str, symbol: &str, kernel: bool) -> &'static str {
    if kernel {
        return "kernel: syscalls, network, scheduling";
    }
    // Code compiled from the component has no object of its own.
    if dso.starts_with("[JIT]") || dso.starts_with("[unknown]") || dso.starts_with("memfd:") {
        return "sandbox: the component's own code";
    }
    // mimalloc's functions (the binary's allocator).
    if symbol.starts_with("mi_") || symbol.starts_with("_mi_") {
        return "memory: allocation, copies";
    }
    if dso.starts_with("libc") {
        let memory = [
            "malloc", "free", "realloc", "memcpy", "memmove", "memset", "_int_",
        ];
        return if memory.iter().any(|m| symbol.contains(m)) {
            "memory: allocation, copies"
        } else {
            "other"
        };
    }
    OWNERS
        .iter()
        .filter_map(|(name, marks)| {
            marks
                .iter()
                .filter_map(|m| symbol.find(m))
                .min()
                .map(|at| (at, *name))
        })
        .min_by_key(|(at, _)| *at)
        .map_or("other", |(_, name)| name)
}

/// Each owner's share of the server's sampled CPU (0–1), largest first.
pub struct Owners {
    pub shares: Vec<(&'static str, f64)>,
    /// The functions with the largest shares: (share, object, function).
    pub top: Vec<(f64, String, String)>,
    /// The window the samples were taken in.
    pub window: Window,
}

/// Samples `target`'s process with `perf` while `clients` call `greet`
/// over `span`; `Err` says why no breakdown was made.
pub fn measure(target: &Target, clients: usize, span: Span, dir: &Path) -> Result<Owners, String> {
    let data = dir.join(DATA);
    let seconds = (span.warmup + span.window).as_secs_f64();
    let record = Command::new("perf")
        .args(["record", "-q", "-F", "1999", "-p"])
        .arg(target.pid.to_string())
        .arg("-o")
        .arg(&data)
        .args(["--", "sleep"])
        .arg(format!("{seconds:.1}"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("perf cannot run: {e}"))?;
    // perf needs a moment to attach; the warm-up covers it.
    thread::sleep(Duration::from_millis(100));
    let window = greet(target, clients, span);
    succeeded("perf record", record.wait_with_output())?;
    let report = Command::new("perf")
        .args([
            "report",
            "--stdio",
            "--no-children",
            "-q",
            "--percent-limit",
            "0",
        ])
        .args(["--sort", "dso,sym", "-i"])
        .arg(&data)
        .output();
    let report = succeeded("perf report", report)?;
    let samples = samples(&String::from_utf8_lossy(&report.stdout));
    if samples.is_empty() {
        return Err("perf took no samples".into());
    }
    let mut by_owner: BTreeMap<&'static str, f64> = BTreeMap::new();
    for s in &samples {
        *by_owner
            .entry(owner(&s.dso, &s.symbol, s.kernel))
            .or_default() += s.share;
    }
    let mut shares: Vec<_> = by_owner.into_iter().collect();
    shares.sort_by(|a, b| b.1.total_cmp(&a.1));
    let top = samples
        .into_iter()
        .take(TOP)
        .map(|s| (s.share, s.dso, s.symbol))
        .collect();
    Ok(Owners {
        shares,
        top,
        window,
    })
}

/// `output` of the command `what`, if it ran and succeeded; else why not.
fn succeeded(
    what: &str,
    output: std::io::Result<std::process::Output>,
) -> Result<std::process::Output, String> {
    let output = output.map_err(|e| format!("{what}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{what} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(output)
}

/// The samples, kept for `perf report -i target/served-owners.perf.data`.
const DATA: &str = "served-owners.perf.data";

/// How many of the largest functions the report names.
const TOP: usize = 25;

/// One line of `perf report --sort dso,sym`.
struct Sampled {
    share: f64,
    dso: String,
    symbol: String,
    kernel: bool,
}

/// The lines of `perf report --sort dso,sym` (`  12.34%  toolhost  [.]
/// sqlite3VdbeExec`), largest first.
fn samples(report: &str) -> Vec<Sampled> {
    let mut samples = Vec::new();
    for line in report.lines() {
        let Some((percent, rest)) = line.trim().split_once('%') else {
            continue;
        };
        let Ok(percent) = percent.trim().parse::<f64>() else {
            continue;
        };
        let rest = rest.trim();
        let (dso, symbol, kernel) = match (rest.find("[.]"), rest.find("[k]")) {
            (Some(at), _) => (&rest[..at], &rest[at + 3..], false),
            (None, Some(at)) => (&rest[..at], &rest[at + 3..], true),
            (None, None) => continue,
        };
        samples.push(Sampled {
            share: percent / 100.0,
            dso: dso.trim().to_owned(),
            symbol: symbol.trim().to_owned(),
            kernel,
        });
    }
    samples.sort_by(|a, b| b.share.total_cmp(&a.share));
    samples
}

/// The CPU the idle server at `pid` spends per second, over `over`.
pub fn idle_cpu_per_second(pid: u32, over: Duration) -> Duration {
    let before = cpu_time(pid);
    thread::sleep(over);
    cpu_time(pid)
        .saturating_sub(before)
        .div_f64(over.as_secs_f64())
}
