//! `make bench`: what more replicas buy as shipped. The real release
//! `toolhost serve`, one replica and then three, on one PostgreSQL schema
//! each, behind a real HAProxy running the shipped `deploy/haproxy.cfg`
//! (`tests/support/cluster.rs`, as `make cluster` runs them), loaded with
//! stateless 2026-07-28 `tools/call`s of `greet` closed-loop from this
//! process on keep-alive connections through the balancer, each with a
//! service client's bearer token.
//!
//! Both clusters run at once and are measured back to back in rounds, so
//! the machine's drift hits both alike; the figure is the median of the
//! rounds' ratios `three replicas / one replica` in calls per second. On
//! this machine's two cores the replicas, PostgreSQL, the balancer and the
//! clients share the CPU, so more replicas cannot add cores: the ratio
//! says whether the replicas' shared state (the audit chain, the rate
//! limits, the queue) costs throughput, not how a cluster of machines
//! scales. Answers are checked; timings never fail anything.
//!
//! `-- --quick` runs shorter windows and fewer rounds.

#[path = "../host/server/benches/ceiling/mod.rs"]
#[allow(dead_code)]
mod ceiling;
#[path = "../tests/support/mod.rs"]
mod support;

#[path = "served/closed_loop.rs"]
#[allow(dead_code)]
mod closed_loop;
#[path = "served/process.rs"]
#[allow(dead_code)]
mod process;

use std::time::Duration;

use closed_loop::{Span, Window};
use process::{NEVER_REFUSING, Target};
use support::PgSchema;
use support::cluster::Cluster;
use toolhost_fixtures::HELLO;

/// Concurrent clients: the figure the issue measured on a debug build.
const CLIENTS: usize = 16;

/// How long each measurement runs, and how many rounds.
struct Plan {
    span: Span,
    rounds: usize,
}

const QUICK: Plan = Plan {
    span: Span {
        warmup: Duration::from_millis(500),
        window: Duration::from_secs(3),
    },
    rounds: 3,
};

const FULL: Plan = Plan {
    span: Span {
        warmup: Duration::from_secs(1),
        window: Duration::from_secs(8),
    },
    rounds: 5,
};

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let plan = if quick { QUICK } else { FULL };
    let (one_schema, three_schema) = (PgSchema::create("bench_r1"), PgSchema::create("bench_r3"));
    let one = Cluster::start(1, &[HELLO], &NEVER_REFUSING, &one_schema);
    let three = Cluster::start(3, &[HELLO], &NEVER_REFUSING, &three_schema);
    let targets = [target(&one), target(&three)];

    let mut ratios = Vec::new();
    let (mut pooled_one, mut pooled_three) = (Window::default(), Window::default());
    for _ in 0..plan.rounds {
        let a = closed_loop::greet(&targets[0], CLIENTS, plan.span);
        let b = closed_loop::greet(&targets[1], CLIENTS, plan.span);
        ratios.push(b.per_sec() / a.per_sec());
        pooled_one = pooled_one.pooled(&a);
        pooled_three = pooled_three.pooled(&b);
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];

    println!();
    println!("## Replicas behind HAProxy on PostgreSQL (release build, {CLIENTS} clients)");
    println!();
    println!("| replicas | calls/s | p50 ms | p99 ms |");
    println!("|---|---|---|---|");
    for (n, w) in [(1, &pooled_one), (3, &pooled_three)] {
        println!(
            "| {n} | {:.0} | {:.2} | {:.2} |",
            w.per_sec(),
            w.quantile(0.5).as_secs_f64() * 1e3,
            w.quantile(0.99).as_secs_f64() * 1e3
        );
    }
    let rounds: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
    println!();
    println!(
        "three replicas / one, calls/s at {CLIENTS} clients: {median:.2} (rounds {})",
        rounds.join(", ")
    );
}

/// The balancer of `cluster` as a load target: `greet` as a service
/// client of its first replica (every replica shares the store, so any
/// accepts its token).
fn target(cluster: &Cluster) -> Target {
    let first = &cluster.replicas[0];
    Target {
        url: cluster.url.clone(),
        pid: first.pid(),
        token: first.token().to_owned(),
        tool: "greet",
    }
}
