//! `make bench` and `make bench-quick`: what users feel, with the server
//! in its own process. The real release `toolhost serve` (SQLite file,
//! fsynced, the reference `hello` plugin, rate limits counting but never
//! refusing) is loaded by clients in this bench's process on keep-alive
//! connections (stateless 2026-07-28 `tools/call`s answered as JSON,
//! each with a service client's OAuth bearer), and the server's CPU time
//! is read from the kernel (`/proc/PID/stat`), so the load generator's
//! own CPU is never counted as the server's.
//!
//! 1. **Server CPU per `greet` call** at 1 and 32 clients, for the host
//!    as shipped and for the ceiling in a process of its own (this
//!    executable run again as a bare rmcp server with a native `greet`,
//!    `host/server/benches/ceiling`), measured back to back in rounds;
//!    `R on server CPU` is the ceiling's CPU per call over the host's.
//! 2. **The baseline in the same run**: with `TOOLHOST_BENCH_BASELINE`
//!    naming an older build's `toolhost` (`make bench-baseline`), it is
//!    measured the same way in the same rounds, and `server CPU per call,
//!    current / baseline` is the median of the rounds' ratios.
//! 3. **Latency at a realistic load**: the soak's mix, closed-loop at 32
//!    clients for the capacity, then open-loop at half of it, latency
//!    counted from each request's due time; p50 and p99 per kind.
//! 4. **One client**: the host's p50 on its SQLite file against the same
//!    binary on `sqlite::memory:` (the binary has no in-memory audit sink
//!    of its own; on an in-memory database the audit rows are written
//!    through the store's one connection instead of the writer's own)
//!    and on a SQLite file in tmpfs (the shipped path, whose syncs cost
//!    nothing), beside the disk's fsync floor measured
//!    in the host's database directory. These three carry the demo
//!    user's token: nothing else can sign in to an in-memory store.
//!
//! 5. **Where the server's CPU goes**: what an idle server spends per
//!    second (its background work), and `perf`'s samples of the shipped
//!    server at 32 clients, charged to their owners (`served/owners.rs`).
//! 6. **Discovery over catalog-300** (`served/discovery.rs`): one
//!    client's `find_tools` p50 and p99 against issue 48's 1 ms, beside
//!    `greet` on the same server in the same rounds, on the shipped store
//!    and on a SQLite file in tmpfs (the disk's sync out), and the bytes of
//!    `tools/list` for a caller permitted all 300 tools with discovery on
//!    and off.
//!
//! `-- --owners` runs part 5 alone, `-- --discovery` part 6. `-- --quick` runs shorter windows
//! and fewer rounds. Answers are checked: a wrong one panics; timings
//! never do. Ends with a Markdown block for `BENCHMARKS.md`.

#[path = "../host/server/benches/ceiling/mod.rs"]
mod ceiling;
#[path = "../tests/support/mod.rs"]
mod support;

#[path = "served/at_load.rs"]
mod at_load;
#[path = "served/closed_loop.rs"]
mod closed_loop;
#[path = "served/discovery.rs"]
mod discovery;
#[path = "served/fsync_floor.rs"]
mod fsync_floor;
#[path = "served/one_client.rs"]
mod one_client;
#[path = "served/open_loop.rs"]
mod open_loop;
#[path = "served/owners.rs"]
mod owners;
#[path = "served/process.rs"]
mod process;
#[path = "served/report.rs"]
mod report;
#[path = "served/rounds.rs"]
mod rounds;

use std::path::{Path, PathBuf};
use std::time::Duration;

use closed_loop::Span;
use process::{CEILING_ROLE, Ceiling, Target};
use report::Report;

/// The `toolhost` this bench was built with.
const TOOLHOST: &str = env!("CARGO_BIN_EXE_toolhost");
/// Names an older build's `toolhost` to measure beside this one.
const BASELINE_ENV: &str = "TOOLHOST_BENCH_BASELINE";

/// How long each part runs.
struct Plan {
    /// Each closed-loop measurement of parts 1, 2, 4 and 6.
    span: Span,
    /// Rounds of parts 1, 2 (each concurrency), 4 and 6.
    rounds: usize,
    /// Part 3's closed loop (the capacity).
    capacity: Span,
    /// Part 3's open loop.
    open: Duration,
    /// How long the idle server's CPU is read.
    idle: Duration,
}

const QUICK: Plan = Plan {
    span: Span {
        warmup: Duration::from_millis(500),
        window: Duration::from_secs(2),
    },
    rounds: 3,
    capacity: Span {
        warmup: Duration::from_secs(1),
        window: Duration::from_secs(5),
    },
    open: Duration::from_secs(15),
    idle: Duration::from_secs(3),
};

const FULL: Plan = Plan {
    span: Span {
        warmup: Duration::from_secs(1),
        window: Duration::from_secs(5),
    },
    rounds: 5,
    capacity: Span {
        warmup: Duration::from_secs(2),
        window: Duration::from_secs(10),
    },
    open: Duration::from_secs(60),
    idle: Duration::from_secs(10),
};

fn main() {
    if std::env::var_os(CEILING_ROLE).is_some() {
        process::serve_ceiling();
        return;
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let plan = if quick { QUICK } else { FULL };
    let baseline = baseline();
    let mut report = Report::new(quick, baseline.as_deref());

    if std::env::args().any(|a| a == "--owners") {
        // Part 5 alone, for profiling a change quickly.
        let shipped = process::host(Path::new(TOOLHOST), None);
        idle(&mut report, &shipped, &plan);
        by_owner(&mut report, &shipped, &plan);
        return;
    }
    if std::env::args().any(|a| a == "--discovery") {
        report.discovery(&discovery::measure(plan.span, plan.rounds));
        report.summary();
        return;
    }
    let ceiling = Ceiling::start();
    let shipped = process::host(Path::new(TOOLHOST), None);
    let old = baseline.as_deref().map(|exe| process::host(exe, None));
    idle(&mut report, &shipped, &plan);
    let mut targets = vec![ceiling.target(), Target::host(&shipped, shipped.token())];
    targets.extend(old.iter().map(|s| Target::host(s, s.token())));
    let targets: Vec<&Target> = targets.iter().collect();
    for clients in [1, 32] {
        let rounds = rounds::greet_rounds(&targets, clients, plan.span, plan.rounds);
        report.cpu_per_call(clients, &rounds);
    }
    drop(old);
    drop(ceiling);
    by_owner(&mut report, &shipped, &plan);

    let floor = fsync_floor::fsync_floor(shipped.database_path().parent().expect("a dir"));
    let one = one_client::measure(&shipped, plan.span, plan.rounds);
    drop(shipped);
    report.one_client(&one, floor);
    report.discovery(&discovery::measure(plan.span, plan.rounds));

    let load = at_load::measure(plan.capacity, plan.open);
    report.at_load(&load, floor);
    report.summary();
}

/// Part 5: what the just started `shipped` spends idle, a second after
/// it started.
fn idle(report: &mut Report, shipped: &support::Server, plan: &Plan) {
    std::thread::sleep(Duration::from_secs(1));
    report.idle(owners::idle_cpu_per_second(shipped.pid(), plan.idle));
}

/// Part 5: `shipped`'s CPU by owner at 32 clients (the samples kept
/// under `target/`).
fn by_owner(report: &mut Report, shipped: &support::Server, plan: &Plan) {
    let target = Target::host(shipped, shipped.token());
    report.owners(&owners::measure(
        &target,
        32,
        plan.span,
        Path::new("target"),
    ));
}

/// The baseline build `TOOLHOST_BENCH_BASELINE` names, if set; it must exist.
fn baseline() -> Option<PathBuf> {
    let exe = PathBuf::from(std::env::var_os(BASELINE_ENV)?);
    assert!(
        exe.is_file(),
        "{BASELINE_ENV}={}: no such file (make bench-baseline builds it)",
        exe.display()
    );
    Some(exe)
}
