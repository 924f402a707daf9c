//! Faults under load (issue 19): nothing a client was told is lost.
//!
//! * Three replicas behind HAProxy (the shipped `deploy/haproxy.cfg`) on
//!   one PostgreSQL, 32 clients calling through the balancer, and one
//!   replica killed with `kill -9`: every answered call has its audit row,
//!   no approval gate is used twice, every exploration run finishes once
//!   (a run the dead replica held is taken over after its lease), the
//!   audit chain verifies, and the clients' failures stop within a few
//!   seconds.
//! * PostgreSQL itself killed under load through the balancer (three
//!   replicas on a server of the test's own, stopped in `immediate` mode:
//!   transactions in flight are cut off and the restart recovers from the
//!   WAL): while it is down a request is answered `STORE_UNAVAILABLE` by a
//!   replica, 503 `temporarily_unavailable` when its token's grant cannot
//!   be read, or the balancer's 503 `STORE_UNAVAILABLE` once every
//!   `/readyz` is red, each with `Retry-After` and never HTML, each within
//!   `--database-timeout` + 1 s; every replica is ready within 2 s of the
//!   store's return; no queued run lacks its row or is lost.
//! * A replica killed with a run-backed call in flight, in each era of the
//!   Python SDK: the call fails rather than hangs, and the client follows
//!   the run its first progress message named to its end through the
//!   balancer (tests/e2e/python_replica_death.py).

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::bench::{Backend, UNLIMITED, all_runs_over, confirmed_gate, try_post_at};
use support::cluster::Cluster;
use support::oauth::{approver, user_token};
use support::private_pg::PrivatePg;
use support::{DEMO_PASSWORD, PgSchema, Server, exchange_full};
use toolhost_fixtures::{HELLO, TESTBENCH};

/// Client threads of the load through the balancer.
const CLIENTS: usize = 32;
/// How soon after a replica's death its clients may stop failing.
const RECOVERY: Duration = Duration::from_secs(5);
/// Runs queued before the load; they run while it goes on.
const RUNS: usize = 12;
/// Gates opened and confirmed before the load; its clients race to use them.
const GATES: usize = 6;

/// The gated call (a production run), and the exploration every run makes.
fn production() -> Value {
    json!({"tags": ["smoke"], "environment": "prod", "project": "payments"})
}
fn exploration() -> Value {
    json!({"project": "payments", "pace_ms": 300})
}

/// What one request of the load asked.
#[derive(Clone)]
enum Ask {
    /// `greet` with a name no other request uses.
    Greet(Value),
    /// The gated production run, presenting a confirmed gate.
    UseGate(String),
    /// An exploration run queued.
    QueueRun,
}

/// How it was answered.
#[derive(Debug)]
enum Answered {
    /// `greet` answered: the digest of its arguments (its audit row's).
    Greeted(String),
    /// The gate let the gated call run, for this request.
    GateUsed(String),
    /// The gate was used already (`GATE_CONSUMED`): the refusal expected.
    GateRefused,
    /// The run was queued: its id.
    Queued(String),
    /// The store was unreachable, and the answer said so, retryable: a
    /// call's `STORE_UNAVAILABLE`, the bearer check's 503
    /// `temporarily_unavailable` with `Retry-After` (no grant could be
    /// read), or the balancer's 503 JSON-RPC `STORE_UNAVAILABLE` with
    /// `Retry-After` (no replica ready): which of the three.
    Unavailable(&'static str),
    /// Anything else: a dropped connection, the balancer's 502, a JSON-RPC
    /// error, an unexpected code.
    Failed(String),
}

impl Answered {
    /// Why the request failed, if it did.
    fn failure(&self) -> Option<&str> {
        match self {
            Answered::Failed(why) => Some(why),
            Answered::Unavailable(by) => Some(by),
            _ => None,
        }
    }
}

/// One request of the load: when it was answered, how, and how long it
/// took.
#[derive(Debug)]
struct Sent {
    at: Duration,
    answered: Answered,
    took: Duration,
}

/// `ask` sent to `url` as a stateless (2026-07-28) call.
fn send(url: &str, token: &str, ask: &Ask) -> Answered {
    let (tool, arguments) = match ask {
        Ask::Greet(args) => ("greet", args.clone()),
        Ask::UseGate(gate) => {
            let mut args = production();
            args["gate_id"] = json!(gate);
            ("run_by_tag", args)
        }
        Ask::QueueRun => ("explore_environments", exploration()),
    };
    let params = json!({"name": tool, "arguments": arguments});
    let answer = match try_post_at(url, token, "tools/call", tool, params) {
        Ok(a) if a.status == 200 => a,
        Ok(a) if a.status == 503 && a.header("retry-after").is_some() => {
            if a.body.contains("temporarily_unavailable") {
                return Answered::Unavailable("the bearer check");
            }
            if balancer_unavailable(&a.body) {
                return Answered::Unavailable("the balancer");
            }
            return Answered::Failed(format!("HTTP 503: {}", a.body));
        }
        Ok(a) => return Answered::Failed(format!("HTTP {}: {}", a.status, a.body)),
        Err(e) => return Answered::Failed(e),
    };
    let Ok(v) = serde_json::from_str::<Value>(answer.body.trim()) else {
        return Answered::Failed(format!("not JSON: {}", answer.body));
    };
    let result = &v["result"];
    if result.is_null() {
        return Answered::Failed(format!("a JSON-RPC error: {v}"));
    }
    if result["isError"] == json!(false) {
        return match ask {
            Ask::Greet(args) => {
                Answered::Greeted(toolhost_audit::argument_digest(args).to_string())
            }
            Ask::UseGate(gate) => Answered::GateUsed(gate.clone()),
            Ask::QueueRun => match result["structuredContent"]["run_id"].as_str() {
                Some(id) => Answered::Queued(id.to_owned()),
                None => Answered::Failed(format!("no run id: {v}")),
            },
        };
    }
    let error = &result["structuredContent"]["error"];
    match error["code"].as_str() {
        Some("GATE_CONSUMED") if matches!(ask, Ask::UseGate(_)) => Answered::GateRefused,
        Some("STORE_UNAVAILABLE") if error["retryable"] == json!(true) => {
            Answered::Unavailable("the call")
        }
        _ => Answered::Failed(format!("{v}")),
    }
}

/// Whether `body` is the balancer's answer when no replica is ready: a
/// JSON-RPC `STORE_UNAVAILABLE`, retryable (`deploy/haproxy.cfg`).
fn balancer_unavailable(body: &str) -> bool {
    let Ok(v) = serde_json::from_str::<Value>(body.trim()) else {
        return false;
    };
    v["error"]["code"] == json!(-32050)
        && v["error"]["data"]["code"] == json!("STORE_UNAVAILABLE")
        && v["error"]["data"]["retryable"] == json!(true)
}

/// `clients` threads sending to `url` until `stop` is set; client `c`'s
/// `n`th request is `mix(c, n)`. Every request, in the order answered.
fn load(
    url: &str,
    token: &str,
    clients: usize,
    stop: &AtomicBool,
    mix: impl Fn(usize, usize) -> Ask + Sync,
) -> Vec<Sent> {
    let start = Instant::now();
    let mut all: Vec<Sent> = thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                let mix = &mix;
                s.spawn(move || {
                    let mut sent = Vec::new();
                    let mut n = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let asked = Instant::now();
                        let answered = send(url, token, &mix(c, n));
                        // Told to retry later, a client does not spin (the
                        // balancer answers at once while no replica is up).
                        let told_to_wait = matches!(answered, Answered::Unavailable(_));
                        sent.push(Sent {
                            at: start.elapsed(),
                            answered,
                            took: asked.elapsed(),
                        });
                        if told_to_wait {
                            thread::sleep(Duration::from_millis(100));
                        }
                        n += 1;
                    }
                    sent
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a client"))
            .collect()
    });
    all.sort_by_key(|s| s.at);
    all
}

/// `greet` with a name only client `c`'s `n`th request uses.
fn greeting(c: usize, n: usize) -> Ask {
    Ask::Greet(json!({"name": format!("client {c} request {n}")}))
}

/// Every answered `greet` has its executed audit row in `schema`.
fn every_greeting_audited(schema: &PgSchema, sent: &[Sent]) {
    let rows: BTreeSet<String> = schema
        .column(
            "audit",
            "argument_digest",
            "tool = 'greet' AND outcome = 'executed'",
        )
        .into_iter()
        .collect();
    let greeted: Vec<&String> = sent
        .iter()
        .filter_map(|s| match &s.answered {
            Answered::Greeted(d) => Some(d),
            _ => None,
        })
        .collect();
    assert!(!greeted.is_empty(), "no call was answered");
    let missing = greeted.iter().filter(|d| !rows.contains(**d)).count();
    assert_eq!(
        missing,
        0,
        "{missing} of {} answered calls have no audit row",
        greeted.len()
    );
}

/// `toolhost audit verify` on `server`'s store succeeds.
fn chain_verifies(server: &Server) {
    let out = server.admin(&["audit", "verify"]);
    assert!(
        out.status.success(),
        "the audit chain: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Each run succeeded, and exactly one of its attempts finished (any other
/// was lost with its worker and taken over).
fn each_ran_once(runs: &[Value]) -> usize {
    let mut retaken = 0;
    for run in runs {
        assert_eq!(run["state"], json!("succeeded"), "{run}");
        let ended: Vec<&str> = run["receipt"]["attempts"]
            .as_array()
            .unwrap_or_else(|| panic!("a receipt with its attempts: {run}"))
            .iter()
            .filter_map(|a| a["ended"].as_str())
            .collect();
        assert_eq!(
            ended.iter().filter(|e| **e == "finished").count(),
            1,
            "one attempt finished: {run}"
        );
        assert!(
            ended.iter().all(|e| ["finished", "lost"].contains(e)),
            "{run}"
        );
        retaken += usize::from(ended.len() > 1);
    }
    retaken
}

#[test]
fn a_replica_killed_under_load_loses_no_answered_call_gate_or_run() {
    let schema = PgSchema::create("replicas_kill");
    let backend = Backend::start();
    let flags = backend.flags();
    let mut flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    flags.extend_from_slice(&[
        "--exploration-backend",
        "testbench",
        "--run-lease",
        "2s",
        "--runs-per-principal",
        "100",
        "--runs-per-tenant",
        "100",
    ]);
    flags.extend_from_slice(&UNLIMITED);
    let cluster = Cluster::start(3, &[TESTBENCH, HELLO], &flags, &schema);
    let url = cluster.url.clone();
    let demo = user_token(&cluster.replicas[0], "demo", DEMO_PASSWORD);
    let ann = approver(&cluster.replicas[1]);

    // Gates opened and confirmed through the balancer, runs queued.
    let gates: Vec<String> = (0..GATES)
        .map(|_| confirmed_gate(&url, &demo, &url, &ann, "run_by_tag", production()))
        .collect();
    assert_eq!(gates.iter().collect::<BTreeSet<_>>().len(), GATES);
    let queued: BTreeSet<String> = (0..RUNS)
        .map(|_| match send(&url, &demo, &Ask::QueueRun) {
            Answered::Queued(id) => id,
            other => panic!("queued: {other:?}"),
        })
        .collect();

    // 32 clients; one in eight races for the gates. A replica is killed
    // after two seconds, the load goes on for RECOVERY and three more.
    let stop = AtomicBool::new(false);
    let victim = &cluster.replicas[1];
    let (sent, killed_at) = thread::scope(|s| {
        let started = Instant::now();
        let load = s.spawn(|| {
            load(&url, &demo, CLIENTS, &stop, |c, n| {
                if c % 8 == 0 {
                    Ask::UseGate(gates[(c / 8 + n) % GATES].clone())
                } else {
                    greeting(c, n)
                }
            })
        });
        thread::sleep(Duration::from_secs(2));
        // Taken before the signal: a request it fails is answered after.
        let killed_at = started.elapsed();
        let killed = Command::new("kill")
            .args(["-9", &victim.pid().to_string()])
            .status()
            .expect("kill runs");
        assert!(killed.success());
        thread::sleep(RECOVERY + Duration::from_secs(3));
        stop.store(true, Ordering::Relaxed);
        (load.join().expect("the load"), killed_at)
    });
    assert!(
        victim.wait_exit(Duration::from_secs(10)).is_some(),
        "the replica died"
    );

    // The clients' failures, if any, are the moments after the death.
    let failed: Vec<&Sent> = sent
        .iter()
        .filter(|s| s.answered.failure().is_some())
        .collect();
    let late: Vec<(Duration, &str)> = failed
        .iter()
        .filter(|s| s.at > killed_at + RECOVERY || s.at < killed_at)
        .filter_map(|s| Some((s.at, s.answered.failure()?)))
        .collect();
    assert!(
        late.is_empty(),
        "{} of {} requests failed outside the {RECOVERY:?} after the kill at {killed_at:?}: {:?}\n{}",
        late.len(),
        sent.len(),
        &late[..late.len().min(5)],
        cluster.balancer_log()
    );
    let after = sent.iter().filter(|s| s.at > killed_at + RECOVERY).count();
    assert!(after > 0, "the load went on after the recovery");
    eprintln!(
        "{} requests, {} failed, all within {:?} of the kill",
        sent.len(),
        failed.len(),
        failed.last().map(|s| s.at.saturating_sub(killed_at))
    );

    // No answered call lacks its row; the chain verifies.
    every_greeting_audited(&schema, &sent);
    chain_verifies(&cluster.replicas[0]);

    // No gate was used twice: by answers, by audit rows, by the backend.
    let mut used: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &sent {
        if let Answered::GateUsed(g) = &s.answered {
            *used.entry(g.as_str()).or_default() += 1;
        }
    }
    for gate in &gates {
        let answered = used.get(gate.as_str()).copied().unwrap_or(0);
        let rows = schema.count_where(
            "audit",
            &format!("gate_id = '{gate}' AND tool = 'run_by_tag' AND outcome = 'executed'"),
        );
        assert!(
            answered <= 1 && rows <= 1 && answered as i64 <= rows,
            "gate {gate}: used by {answered} answers, {rows} rows"
        );
    }

    // Every run finished, exactly once.
    let runs = all_runs_over(&url, &demo, RUNS, Duration::from_secs(120), String::new);
    let listed: BTreeSet<String> = runs
        .iter()
        .filter_map(|r| r["run_id"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(listed, queued);
    let retaken = each_ran_once(&runs);
    eprintln!("{retaken} of {RUNS} runs were taken over from the dead replica");
}

#[test]
fn postgresql_killed_under_load_answers_store_unavailable_then_serves_again() {
    let pg = PrivatePg::start();
    let schema = pg.schema("restart");
    let backend = Backend::start();
    let flags = backend.flags();
    let mut flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    flags.extend_from_slice(&[
        "--exploration-backend",
        "testbench",
        "--database-timeout",
        "1s",
        "--run-lease",
        "2s",
        "--runs-per-principal",
        "1000",
        "--runs-per-tenant",
        "1000",
    ]);
    flags.extend_from_slice(&UNLIMITED);
    let cluster = Cluster::start(3, &[TESTBENCH, HELLO], &flags, &schema);
    let server = &cluster.replicas[0];
    let token = user_token(server, "demo", DEMO_PASSWORD);
    let ready = |replica: &Server| exchange_full(&replica.url, "GET", "/readyz", &[], "").status;
    assert!(cluster.replicas.iter().all(|r| ready(r) == 200));

    // Eight clients through the balancer; two of them queue a run every
    // hundredth request (the list that checks them shows 100).
    let stop = AtomicBool::new(false);
    let (sent, down, up, back) = thread::scope(|s| {
        let started = Instant::now();
        let load = s.spawn(|| {
            load(&cluster.url, &token, 8, &stop, |c, n| {
                if c % 4 == 0 && n % 100 == 0 {
                    Ask::QueueRun
                } else {
                    greeting(c, n)
                }
            })
        });
        thread::sleep(Duration::from_secs(2));
        // Taken before the stop: a request it fails is answered after.
        let down = started.elapsed();
        pg.kill();
        let deadline = Instant::now() + Duration::from_secs(10);
        while cluster.replicas.iter().any(|r| ready(r) != 503) {
            assert!(Instant::now() < deadline, "/readyz never went red");
            thread::sleep(Duration::from_millis(100));
        }
        // Long enough for the balancer to take every replica out.
        thread::sleep(Duration::from_secs(3));
        pg.start_again();
        let up = started.elapsed();
        let deadline = Instant::now() + Duration::from_secs(20);
        while cluster.replicas.iter().any(|r| ready(r) != 200) {
            assert!(Instant::now() < deadline, "/readyz never went green again");
            thread::sleep(Duration::from_millis(50));
        }
        let back = started.elapsed() - up;
        thread::sleep(Duration::from_secs(3));
        stop.store(true, Ordering::Relaxed);
        (load.join().expect("the load"), down, up, back)
    });
    assert!(
        back <= Duration::from_secs(2),
        "every replica ready {back:?} after the store's return"
    );
    // Nobody waits past the database timeout (1 s) and a second.
    let slowest = sent.iter().map(|s| s.took).max().unwrap_or_default();
    let slow: Vec<&Sent> = sent
        .iter()
        .filter(|s| s.took > Duration::from_secs(2))
        .collect();
    assert!(
        slow.is_empty(),
        "{} requests waited past --database-timeout + 1 s: {:?}\n{}",
        slow.len(),
        &slow[..slow.len().min(5)],
        cluster
            .replicas
            .iter()
            .map(Server::log)
            .collect::<Vec<_>>()
            .join("\n-----\n")
    );
    eprintln!(
        "the slowest request took {slowest:?}; every replica was ready {back:?} after the store"
    );
    // At the default log level, every line a call logged names its call.
    for replica in &cluster.replicas {
        let log = replica.log();
        let unnamed: Vec<&str> = (log.lines())
            .filter(|l| l.contains("call failed: the store is unreachable"))
            .filter(|l| !l.contains("call_id"))
            .collect();
        assert!(
            unnamed.is_empty(),
            "lines of calls without their call id: {unnamed:?}"
        );
    }

    // While it was down: STORE_UNAVAILABLE and nothing else.
    let failed: Vec<(Duration, &str)> = sent
        .iter()
        .filter(|s| matches!(s.answered, Answered::Failed(_)))
        .filter_map(|s| Some((s.at, s.answered.failure()?)))
        .collect();
    assert!(
        failed.is_empty(),
        "{} requests failed otherwise: {:?}\n{}\n{}",
        failed.len(),
        &failed[..failed.len().min(5)],
        server.log(),
        cluster.balancer_log()
    );
    let unavailable: Vec<Duration> = sent
        .iter()
        .filter(|s| matches!(s.answered, Answered::Unavailable(_)))
        .map(|s| s.at)
        .collect();
    assert!(
        !unavailable.is_empty(),
        "no call was told the store is unreachable"
    );
    assert!(
        unavailable.iter().all(|at| *at >= down),
        "told the store is unreachable before it went down"
    );
    // The replicas serve again (the last seconds of load all succeeded).
    let resumed = sent
        .iter()
        .filter(|s| s.at > up + Duration::from_secs(1))
        .filter(|s| matches!(s.answered, Answered::Greeted(_)))
        .count();
    assert!(resumed > 0, "nothing was served after the restart");
    eprintln!(
        "{} requests, {} answered STORE_UNAVAILABLE between {down:?} and {up:?} (+ the pool's wait)",
        sent.len(),
        unavailable.len()
    );

    // Nothing half-written: every answered call has its row, every queued
    // run exists and finishes once, each run has exactly its start's row.
    every_greeting_audited(&schema, &sent);
    chain_verifies(server);
    let queued: BTreeSet<String> = sent
        .iter()
        .filter_map(|s| match &s.answered {
            Answered::Queued(id) => Some(id.clone()),
            _ => None,
        })
        .collect();
    let stored = schema.count("runs") as usize;
    let started_rows = schema.count_where(
        "audit",
        "tool = 'explore_environments' AND outcome = 'executed' AND receipt_sha256 IS NULL",
    ) as usize;
    assert_eq!(
        stored, started_rows,
        "a queued run without its row, or one without its run"
    );
    let runs = all_runs_over(
        &cluster.url,
        &token,
        stored,
        Duration::from_secs(180),
        || server.log(),
    );
    let listed: BTreeSet<String> = runs
        .iter()
        .filter_map(|r| r["run_id"].as_str().map(str::to_owned))
        .collect();
    assert!(
        queued.is_subset(&listed),
        "every run a client was told of exists"
    );
    each_ran_once(&runs);
}

/// The Python SDK client (2025-11-25, then 2026-07-28) calls a run tool
/// through the balancer and, as the first progress names the run, kills
/// the replica holding its stream; it gets the run's outcome from the
/// replicas left (see tests/e2e/python_replica_death.py).
#[test]
fn a_replica_killed_with_a_call_in_flight_leaves_its_client_the_run_to_follow() {
    let tools = support::Tools::require();
    let schema = PgSchema::create("replicas_death");
    let backend = Backend::start();
    let flags = backend.flags();
    let mut flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    flags.extend_from_slice(&["--exploration-backend", "testbench", "--run-lease", "2s"]);
    let cluster = Cluster::start(3, &[TESTBENCH], &flags, &schema);
    let demo = user_token(&cluster.replicas[0], "demo", DEMO_PASSWORD);
    let mut args = vec![cluster.url.clone()];
    for replica in &cluster.replicas {
        args.push(format!("{}={}", replica.url, replica.pid()));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let script = tools.python("python_replica_death.py", &args);
    let survivor = &cluster.replicas[2];
    let out = survivor.run_client_as(
        "replica death under a call",
        script,
        Duration::from_secs(300),
        &demo,
    );
    assert_eq!(out.matches("ok  ").count(), 2, "{out}");
}
