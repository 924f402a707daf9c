//! Exploration runs end to end (issue 15): the real `toolhost serve` with
//! its run workers, the testbench plugin's run tool against the real
//! testbench backend (in this process, so its request counters are read),
//! the Python SDK in both eras, the operator's `toolhost runs receipt`,
//! a hostile run, cancellation, a host killed mid-run, and two hosts
//! sharing one PostgreSQL queue.

mod support;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::bench::{Backend, all_runs_over, call, call_at, post_at, serve_on};
use support::cluster::Cluster;
use support::oauth::user_token;
use support::{DEMO_PASSWORD, new_signer, pin_into, sign, toolhost, trust};
use support::{PgSchema, Server, Tools, python3};
use toolhost_fixtures::{HELLO, HELLO_NEXT, T_RUN_ESCAPE};

/// A service that may run the hostile fixture's tools and follow its runs.
const FIXTURE_SCOPES: &str = "mcp fixture:run explorations:run";

/// `serve` flags: the testbench backend marked as one runs may reach.
const EXPLORATION: [&str; 2] = ["--exploration-backend", "testbench"];

/// The structured answer of a call that must not be an error.
fn answered(v: &Value, what: &str) -> Value {
    let result = &v["result"];
    assert_eq!(result["isError"], json!(false), "{what}: {v}");
    result["structuredContent"].clone()
}

/// The run `get_exploration_result` answers for `arguments`; it must not
/// be an error.
fn run_result(server: &Server, token: &str, arguments: Value) -> Value {
    let got = call(server, token, "get_exploration_result", arguments);
    answered(&got, "get_exploration_result")
}

/// Polls `get_exploration_result` until the run is over (at most `within`).
fn finished(server: &Server, token: &str, run_id: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let run = run_result(server, token, json!({"run_id": run_id, "wait_seconds": 5}));
        let state = run["state"].as_str().unwrap_or_default().to_owned();
        if ["succeeded", "failed", "cancelled", "timed_out"].contains(&state.as_str()) {
            return run;
        }
        assert!(
            Instant::now() < deadline,
            "run {run_id} still {state} after {within:?}: {run}\n{}",
            server.log()
        );
    }
}

/// Waits until the run is `running` and has reported progress.
fn running(server: &Server, token: &str, run_id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let run = run_result(server, token, json!({"run_id": run_id}));
        if run["state"] == json!("running") && !run["progress"].is_null() {
            return run;
        }
        assert!(Instant::now() < deadline, "run {run_id} never ran: {run}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Starts `tool` as a run; its id.
fn start(server: &Server, token: &str, tool: &str, arguments: Value) -> String {
    let run = answered(&call(server, token, tool, arguments), tool);
    assert_eq!(run["state"], json!("queued"), "{run}");
    run["run_id"].as_str().expect("a run id").to_owned()
}

/// `toolhost runs receipt ID`: the receipt, checked by the CLI (its
/// digest, its audit row).
fn receipt(server: &Server, run_id: &str) -> Value {
    let out = server.admin(&["runs", "receipt", run_id]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "runs receipt {run_id}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (json_text, verdict) = text.rsplit_once("\nok: ").expect("a verdict line");
    assert!(
        verdict.contains("verified; linked from 1 audit row"),
        "{verdict}"
    );
    serde_json::from_str(json_text).expect("the receipt is JSON")
}

/// SHA-256 of `text`, by Python's hashlib (not the host's code).
fn sha256(server: &Server, text: &str) -> String {
    let path = server.scratch("artifact").join("bytes");
    std::fs::write(&path, text).expect("write the bytes read");
    let script =
        "import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],'rb').read()).hexdigest())";
    python3(script, &[&path.to_string_lossy()])
}

fn read_resource(server: &Server, token: &str, uri: &str) -> Value {
    let answer = post_at(
        &server.url,
        token,
        "resources/read",
        uri,
        json!({"uri": uri}),
    );
    serde_json::from_str(&answer.body).expect("a JSON-RPC answer")
}

/// Runs the Python SDK script `script` against `server` with `token`: the
/// run (or task) ids it prints on its `marker` line.
fn python_ids(
    server: &Server,
    token: &str,
    script: &str,
    args: &[&str],
    marker: &str,
) -> Vec<String> {
    let tools = Tools::require();
    let mut all = vec![server.url.as_str()];
    all.extend_from_slice(args);
    let mut cmd = tools.python(script, &all);
    cmd.env(support::TOKEN_ENV, token);
    let run = support::run(&mut cmd, Duration::from_secs(300));
    assert!(
        run.ok(),
        "{script}: {}\n{}\n{}\n{}",
        run.verdict(),
        run.stdout,
        run.stderr,
        server.log()
    );
    run.stdout
        .lines()
        .find_map(|l| l.strip_prefix(marker))
        .map(|l| serde_json::from_str(l).expect("ids"))
        .unwrap_or_else(|| panic!("{script} printed no {marker:?} line"))
}

#[test]
fn a_run_from_the_python_sdk_reports_progress_and_leaves_a_verified_receipt_and_artifacts() {
    let backend = Backend::start();
    let (server, token) = serve_on(&backend, &[], &EXPLORATION, None);
    let ids = python_ids(
        &server,
        &token,
        "python_run.py",
        // A pace of 2.5 s between steps: the waiting run takes about 10 s.
        &["payments", "2500"],
        "RUNS ",
    );
    assert_eq!(ids.len(), 4, "two runs per era");

    // Every receipt verifies, and together they list exactly the requests
    // the backend counted: nothing else reached it.
    let mut listed = 0;
    for id in &ids {
        let r = receipt(&server, id);
        assert_eq!(r["state"], json!("succeeded"), "{r}");
        assert_eq!(
            r["refused"],
            json!([]),
            "a well-behaved run is refused nothing: {r}"
        );
        assert_eq!(r["attempts"].as_array().map(Vec::len), Some(1), "{r}");
        assert_eq!(r["revision"]["plugin"], json!("testbench"));
        for o in r["outbound"].as_array().expect("outbound") {
            assert_eq!(o["method"], json!("GET"), "{o}");
            assert_eq!(o["status"], json!(200), "{o}");
            listed += 1;
        }
    }
    assert_eq!(listed, backend.running.handle.counters().total());
    assert_eq!(backend.writes(), 0, "a run never writes");

    // Its artifact reads back with the digest the receipt records, for
    // its principal only.
    let r = receipt(&server, &ids[0]);
    let artifact = &r["artifacts"][0];
    let uri = artifact["uri"].as_str().expect("an artifact uri");
    let read = read_resource(&server, &token, uri);
    let text = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("the artifact's text: {read}"));
    assert_eq!(json!(sha256(&server, text)), artifact["sha256"]);
    let plan: Value = serde_json::from_str(text).expect("a candidate plan");
    assert_eq!(plan["project"], json!("payments"), "{plan}");

    let same_tenant = server.service_token("mcp testbench:read explorations:run");
    let other_tenant = server
        .service_client_in("acme", "mcp testbench:read explorations:run")
        .1;
    for (who, t) in [
        ("same tenant", &same_tenant),
        ("other tenant", &other_tenant),
    ] {
        let refused = read_resource(&server, t, uri);
        assert_eq!(refused["error"]["code"], json!(-32602), "{who}: {refused}");
        let got = call(
            &server,
            t,
            "get_exploration_result",
            json!({"run_id": ids[0]}),
        );
        assert_eq!(got["result"]["isError"], json!(true), "{who}: {got}");
        assert_eq!(
            got["result"]["structuredContent"]["error"]["code"],
            json!("RUN_NOT_FOUND"),
            "{who}: {got}"
        );
        let cancel = call(&server, t, "cancel_exploration", json!({"run_id": ids[0]}));
        assert_eq!(
            cancel["result"]["structuredContent"]["error"]["code"],
            json!("RUN_NOT_FOUND"),
            "{who}: {cancel}"
        );
        let listed = answered(&call(&server, t, "list_explorations", json!({})), "list");
        assert_eq!(listed["runs"], json!([]), "{who} sees no runs: {listed}");
    }

    // A service runs only what its scopes allow.
    let no_tool = server.service_token("mcp explorations:run");
    let denied = call(
        &server,
        &no_tool,
        "start_exploration",
        json!({"tool": "explore_environments", "arguments": {"project": "payments"}}),
    );
    assert_eq!(
        denied["result"]["structuredContent"]["error"]["code"],
        json!("PERMISSION_DENIED"),
        "{denied}"
    );
    let started = answered(
        &call(
            &server,
            &same_tenant,
            "start_exploration",
            json!({"tool": "explore_environments", "arguments": {"project": "payments"}}),
        ),
        "start_exploration",
    );
    let run = finished(
        &server,
        &same_tenant,
        started["run_id"].as_str().expect("id"),
        Duration::from_secs(60),
    );
    assert_eq!(run["state"], json!("succeeded"), "{run}");
    assert_eq!(
        run["principal"],
        Value::Null,
        "the snapshot names no principal"
    );

    server.verified_rows();
}

#[test]
fn a_hostile_run_is_refused_each_escape_and_the_production_backend_sees_nothing() {
    let sandbox = Backend::start();
    let prod = Backend::start();
    // Both with the backend's credential: a refusal is the host's, never a 401.
    let token_of = |b: &Backend, name: &str| b.flags()[3].replacen("testbench", name, 1);
    let flags = [
        "--backend".to_owned(),
        format!("prod={}", prod.running.url()),
        "--backend-token-file".to_owned(),
        token_of(&prod, "prod"),
        "--backend".to_owned(),
        format!("sandbox={}", sandbox.running.url()),
        "--backend-token-file".to_owned(),
        token_of(&sandbox, "sandbox"),
    ];
    let mut all: Vec<&str> = flags.iter().map(String::as_str).collect();
    all.extend(["--exploration-backend", "sandbox"]);
    let server = Server::start_with(&[T_RUN_ESCAPE], &all);
    let token = server.service_token(FIXTURE_SCOPES);
    let socket = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = socket.local_addr().expect("addr").port();
    let id = start(&server, &token, "escape", json!({"port": port}));
    let run = finished(&server, &token, &id, Duration::from_secs(60));
    assert_eq!(run["state"], json!("succeeded"), "{run}");
    let attempts = run["outcome"]["structured"]["attempts"]
        .as_array()
        .unwrap_or_else(|| panic!("attempts: {run}"));
    let (tried, allowed) = attempts.split_at(attempts.len() - 1);
    for a in tried {
        assert_eq!(a["ok"], json!(false), "refused inside the guest: {a}");
    }
    assert_eq!(
        allowed[0]["ok"],
        json!(true),
        "the sandbox read: {}",
        allowed[0]
    );

    let r = receipt(&server, &id);
    let refused: BTreeSet<&str> = r["refused"]
        .as_array()
        .expect("refused")
        .iter()
        .map(|x| x["what"].as_str().expect("what"))
        .collect();
    for what in ["backend", "method", "filesystem", "environment", "socket"] {
        assert!(refused.contains(what), "{what} is in the receipt: {r}");
    }
    assert_eq!(
        prod.running.handle.counters().total(),
        0,
        "prod saw nothing"
    );
    assert_eq!(sandbox.writes(), 0, "the POST never arrived");
    assert_eq!(
        sandbox.running.handle.counters().total(),
        r["outbound"].as_array().map_or(0, Vec::len) as u64
    );

    // Outside a run, no artifact is kept.
    let outside = answered(
        &call(&server, &token, "put_outside", json!({})),
        "put_outside",
    );
    assert_eq!(outside["kept"], json!(false), "{outside}");
}

#[test]
fn a_cancelled_run_stops_at_its_next_tick_and_a_queued_one_at_once() {
    let flags = ["--run-workers", "1", "--runs-per-principal", "2"];
    let server = Server::start_with(&[T_RUN_ESCAPE], &flags);
    let token = server.service_token(FIXTURE_SCOPES);
    let spinning = start(&server, &token, "spin", json!({}));
    running(&server, &token, &spinning);
    // The only worker is busy: this one waits in the queue.
    let waiting = start(&server, &token, "spin", json!({}));
    // Two queued or running are this principal's bound: a third is refused
    // and nothing is queued.
    let over = call(&server, &token, "spin", json!({}));
    assert_eq!(
        over["result"]["structuredContent"]["error"]["code"],
        json!("RATE_LIMITED"),
        "{over}"
    );
    let listed = answered(
        &call(&server, &token, "list_explorations", json!({})),
        "list",
    );
    assert_eq!(listed["runs"].as_array().map(Vec::len), Some(2), "{listed}");

    let cancelled = answered(
        &call(
            &server,
            &token,
            "cancel_exploration",
            json!({"run_id": waiting}),
        ),
        "cancel a queued run",
    );
    assert_eq!(cancelled["state"], json!("cancelled"), "{cancelled}");
    let r = receipt(&server, &waiting);
    assert_eq!(r["attempts"], json!([]), "it never started: {r}");

    let asked = Instant::now();
    let cancel = answered(
        &call(
            &server,
            &token,
            "cancel_exploration",
            json!({"run_id": spinning}),
        ),
        "cancel a running run",
    );
    // The cancel signals the worker here, which stops the guest at its
    // next epoch tick; the answer waits for the run to settle.
    assert_eq!(cancel["state"], json!("cancelled"), "{cancel}");
    let run = finished(&server, &token, &spinning, Duration::from_secs(30));
    assert_eq!(run["state"], json!("cancelled"), "{run}");
    assert!(
        asked.elapsed() < Duration::from_secs(8),
        "stopped after {:?}",
        asked.elapsed()
    );
    assert_eq!(run["outcome"]["code"], json!("CANCELLED"), "{run}");
    receipt(&server, &spinning);
}

#[test]
fn a_host_killed_mid_run_is_taken_over_after_its_lease_and_the_run_completes_once() {
    let backend = Backend::start();
    let flags = [EXPLORATION[0], EXPLORATION[1], "--run-lease", "2s"];
    let (first, token) = serve_on(&backend, &[], &flags, None);
    let id = start(
        &first,
        &token,
        "explore_environments",
        json!({"project": "payments", "pace_ms": 1500}),
    );
    running(&first, &token, &id);
    let killed = std::process::Command::new("kill")
        .args(["-9", &first.pid().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    assert!(
        first.wait_exit(Duration::from_secs(10)).is_some(),
        "the host died"
    );

    // The same store, a new host: it takes the run over once the dead
    // host's lease has expired, and runs it again from the start.
    let (second, token) = serve_on(&backend, &[], &flags, Some(first.database_url()));
    let run = finished(&second, &token, &id, Duration::from_secs(120));
    assert_eq!(run["state"], json!("succeeded"), "{run}");
    assert_eq!(run["attempt"], json!(2), "{run}");
    let r = receipt(&second, &id);
    let ended: Vec<&str> = r["attempts"]
        .as_array()
        .expect("attempts")
        .iter()
        .map(|a| a["ended"].as_str().expect("ended"))
        .collect();
    assert_eq!(ended, ["lost", "finished"], "{r}");
    assert!(
        r["note"]
            .as_str()
            .is_some_and(|n| n.contains("side-effect free")),
        "the receipt says why the re-run is safe: {r}"
    );

    // One row per attempt: the lost one (written by the host that took
    // over) and the one that finished; the start's own row besides.
    let out = second.admin(&["audit", "search", "--tool", "explore_environments"]);
    let rows = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        rows.lines()
            .filter(|l| l.contains("RUN_ATTEMPT_LOST"))
            .count(),
        1,
        "{rows}"
    );
    let rows = rows
        .lines()
        .filter(|l| l.contains("explore_environments"))
        .count();
    assert_eq!(rows, 3, "start, lost attempt, finished attempt");
    let out = second.admin(&["runs", "list"]);
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !listed.contains(" running "),
        "nothing is left running: {listed}"
    );
    second.verified_rows();
}

/// The flags of a host with exploration backends and four run workers,
/// and `more`.
fn with_four_workers<'a>(more: &[&'a str]) -> Vec<&'a str> {
    let mut flags = vec![EXPLORATION[0], EXPLORATION[1], "--run-workers", "4"];
    flags.extend_from_slice(more);
    flags
}

/// SIGTERM to `server`; waits for it to exit (cleanly) within `within`.
fn stop_gracefully(server: &Server, within: Duration) {
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let status = server.wait_exit(within);
    assert!(
        status.is_some_and(|s| s.success()),
        "the host did not stop cleanly within {within:?}: {status:?}\n{}",
        server.log()
    );
}

/// A rolling restart of both replicas while four long runs are in flight:
/// each replica, told to stop, claims nothing more, gives its runs a
/// second of grace and hands them over; the other replica claims them at
/// once (NOTIFY), far sooner than the 60 s lease would allow a takeover,
/// and every run succeeds once, no attempt lost and none spent on a stop.
#[test]
fn a_rolling_restart_hands_every_run_over_and_spends_no_attempt() {
    const RUNS: usize = 4;
    let pg = PgSchema::create("handover");
    let backend = Backend::start();
    let flags = with_four_workers(&["--run-lease", "60s", "--shutdown-grace", "1s"]);
    let (a, token) = serve_on(&backend, &[], &flags, Some(&pg.url));
    let (b, _) = serve_on(&backend, &[], &flags, Some(&pg.url));
    let ids: Vec<String> = (0..RUNS)
        .map(|_| {
            let arguments = json!({"project": "payments", "pace_ms": 2500});
            start(&a, &token, "explore_environments", arguments)
        })
        .collect();
    for id in &ids {
        running(&a, &token, id);
    }
    let restarting = Instant::now();
    stop_gracefully(&a, Duration::from_secs(20));
    let (a2, token) = serve_on(&backend, &[], &flags, Some(&pg.url));
    stop_gracefully(&b, Duration::from_secs(20));
    let (_b2, _) = serve_on(&backend, &[], &flags, Some(&pg.url));
    for id in &ids {
        let run = finished(&a2, &token, id, Duration::from_secs(120));
        assert_eq!(run["state"], json!("succeeded"), "{run}");
        let r = receipt(&a2, id);
        let ended: Vec<&str> = r["attempts"]
            .as_array()
            .expect("attempts")
            .iter()
            .map(|a| a["ended"].as_str().expect("ended"))
            .collect();
        assert_eq!(ended.last(), Some(&"finished"), "{r}");
        assert!(!ended.contains(&"lost"), "no attempt was lost: {r}");
    }
    assert!(
        restarting.elapsed() < Duration::from_secs(55),
        "handed over, not left to the 60 s lease: {:?}",
        restarting.elapsed()
    );
    let handed = pg.count_where("audit", "error_code = 'RUN_HANDED_OVER'");
    assert!(handed >= 1, "at least the first stop handed runs over");
    assert_eq!(
        pg.count_where("audit", "error_code = 'RUN_ATTEMPT_LOST'"),
        0
    );
    // Each handover allowed one more attempt: none was spent on a stop.
    let spent = pg.column(
        "runs",
        "CAST(max_attempts - attempt AS TEXT)",
        "state = 'succeeded'",
    );
    assert_eq!(spent.len(), RUNS);
    for left in spent {
        let left: i64 = left.parse().expect("a number");
        assert_eq!(
            left,
            3 - 1,
            "attempts left (of MAX_ATTEMPTS, 3) as after one"
        );
    }
    let handovers = pg.column("runs", "CAST(handed_over AS TEXT)", "handed_over <> 0");
    assert!(!handovers.is_empty(), "the runs record their handovers");
    a2.verified_rows();
}

#[test]
fn two_hosts_on_one_postgresql_run_a_hundred_queued_runs_each_exactly_once() {
    const RUNS: usize = 100;
    let pg = PgSchema::create("runs");
    let backend = Backend::start();
    let flags = with_four_workers(&["--runs-per-principal", "200", "--runs-per-tenant", "200"]);
    let (a, token) = serve_on(&backend, &[], &flags, Some(&pg.url));
    let (b, _) = serve_on(&backend, &[], &flags, Some(&pg.url));
    // Queued through host A (its token is its own); workers on both claim.
    let mut ids = BTreeSet::new();
    for _ in 0..RUNS {
        ids.insert(start(
            &a,
            &token,
            "explore_environments",
            json!({"project": "payments"}),
        ));
    }
    assert_eq!(ids.len(), RUNS);
    let runs = all_runs_over(&a.url, &token, RUNS, Duration::from_secs(300), || a.log());

    let mut workers = BTreeSet::new();
    let mut listed = 0;
    for run in &runs {
        assert_eq!(run["state"], json!("succeeded"), "{run}");
        assert_eq!(run["attempt"], json!(1), "run once: {run}");
        let r = &run["receipt"];
        workers.insert(r["host"]["worker"].as_str().expect("a worker").to_owned());
        listed += r["outbound"].as_array().map_or(0, Vec::len) as u64;
    }
    // Had any run executed twice, the backend would have seen requests no
    // receipt lists.
    assert_eq!(listed, backend.running.handle.counters().total());
    assert_eq!(workers.len(), 2, "both hosts ran some: {workers:?}");
    for id in ids.iter().take(10) {
        receipt(&b, id);
    }
}

#[test]
fn tasks_on_2026_07_28_are_the_same_runs_driven_by_the_python_sdk() {
    let backend = Backend::start();
    let (server, token) = serve_on(&backend, &[], &EXPLORATION, None);
    let ids = python_ids(&server, &token, "python_tasks.py", &["payments"], "TASKS ");
    // Each task is a run, with its receipt, read through the tools too.
    let completed = receipt(&server, &ids[0]);
    assert_eq!(completed["state"], json!("succeeded"), "{completed}");
    let cancelled = receipt(&server, &ids[1]);
    assert_eq!(cancelled["state"], json!("cancelled"), "{cancelled}");
    let run = finished(&server, &token, &ids[1], Duration::from_secs(5));
    assert_eq!(run["outcome"]["code"], json!("CANCELLED"), "{run}");
}

#[test]
fn an_author_runs_a_candidate_revision_before_review_and_nobody_else_can() {
    let server = Server::start(&[HELLO]);
    let url = server.database_url().to_owned();
    let work = server.scratch("author");
    let key = new_signer("alice", &work.join("keys"));
    trust("alice", &work.join("keys/alice.pub"), "hello", &url);
    let release = work.join("hello-next");
    sign(&pin_into(&HELLO_NEXT, &release), &key);
    let submitted = toolhost(&[
        "plugin",
        "submit",
        &release.to_string_lossy(),
        "--as",
        "demo",
        "--database-url",
        &url,
    ]);
    assert!(submitted.contains("pending_review"), "{submitted}");
    let revision = submitted.split_whitespace().next().expect("a revision id");
    let token = user_token(&server, "demo", DEMO_PASSWORD);

    // The candidate's new tool is not served, but its author may try it.
    let served = call(&server, &token, "shout", json!({"text": "hi"}));
    assert_eq!(
        served["result"]["structuredContent"]["error"]["code"],
        json!("TOOL_NOT_FOUND"),
        "{served}"
    );
    let start = json!({"tool": "shout", "revision": revision, "arguments": {"text": "hi"}});
    let started = answered(
        &call(&server, &token, "start_exploration", start.clone()),
        "start",
    );
    let id = started["run_id"].as_str().expect("a run id");
    let run = finished(&server, &token, id, Duration::from_secs(60));
    assert_eq!(run["state"], json!("succeeded"), "{run}");
    let r = receipt(&server, id);
    assert_eq!(
        r["source"],
        json!({"kind": "candidate", "revision": revision}),
        "{r}"
    );
    assert_eq!(r["revision"]["id"], json!(revision), "{r}");
    assert!(
        r["revision"]["signer"]
            .as_str()
            .is_some_and(|s| s == "alice"),
        "{r}"
    );

    // Anyone else is told there is no such revision of theirs.
    let other = server.service_token("mcp hello:read explorations:run");
    let refused = call(&server, &other, "start_exploration", start);
    assert_eq!(
        refused["result"]["structuredContent"]["error"]["code"],
        json!("INVALID_ARGUMENTS"),
        "{refused}"
    );
}

#[test]
fn a_worker_process_alone_runs_what_a_host_without_workers_queued() {
    let backend = Backend::start();
    let flags = [EXPLORATION[0], EXPLORATION[1], "--run-workers", "0"];
    let (server, token) = serve_on(&backend, &[], &flags, None);
    let id = start(
        &server,
        &token,
        "explore_environments",
        json!({"project": "payments"}),
    );
    std::thread::sleep(Duration::from_millis(500));
    let still = run_result(&server, &token, json!({"run_id": id}));
    assert_eq!(still["state"], json!("queued"), "no worker here: {still}");

    // `toolhost worker`: the same store and backends, no HTTP.
    let backend_flags = backend.flags();
    let mut worker = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .arg("worker")
        .args(["--database-url", server.database_url()])
        .args(&backend_flags)
        .args(EXPLORATION)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn toolhost worker");
    let run = finished(&server, &token, &id, Duration::from_secs(60));
    let _ = worker.kill();
    let _ = worker.wait();
    assert_eq!(run["state"], json!("succeeded"), "{run}");
    let r = receipt(&server, &id);
    let by = r["host"]["worker"].as_str().expect("a worker");
    assert!(by.ends_with("/worker"), "run by the worker process: {by}");
}

/// Rounds of the cancel stress test (issue 49).
const CANCEL_ROUNDS: usize = 50;

/// The documented worst case between a stored cancel and the running
/// guest's stop: the heartbeat (docs/runs/explorations.md, "Cancelling").
const CANCEL_BOUND_MS: i64 = 1_000;

/// `serve` flags for the cancel stress test: two workers, and bounds that
/// let every round's runs be queued at once.
const CANCEL_FLAGS: [&str; 12] = [
    "--run-workers",
    "2",
    "--runs-per-principal",
    "64",
    "--runs-per-tenant",
    "64",
    "--rate-limit-per-principal",
    "100000",
    "--rate-limit-per-client",
    "100000",
    "--rate-limit-writes",
    "100000",
];

/// `rounds` rounds of `per_round` runs of the spinning tool, queued through
/// the first of `urls` while the workers claim them, then every one
/// cancelled at once, the cancels spread over `urls`. Every cancel is
/// answered without error; every run ends `cancelled` (a spinning run
/// never completes); each receipt names its cancel's time; no guest runs
/// past its cancel by more than [`CANCEL_BOUND_MS`]. The worst lateness
/// seen, in ms.
fn cancel_every_run_at_once(urls: &[&str], token: &str, rounds: usize, per_round: usize) -> i64 {
    let mut latest = 0;
    for round in 0..rounds {
        let ids: Vec<String> = (0..per_round)
            .map(|_| {
                let run = call_at(urls[0], token, "spin", json!({}));
                let run = &run["result"]["structuredContent"];
                run["run_id"].as_str().expect("a run id").to_owned()
            })
            .collect();
        // Vary the moment: while the workers are still claiming the first
        // runs, a little later, or once they spin.
        match round % 3 {
            0 => {}
            1 => std::thread::sleep(Duration::from_millis(20)),
            _ => std::thread::sleep(Duration::from_millis(300)),
        }
        let answers: Vec<Value> = std::thread::scope(|s| {
            let cancels: Vec<_> = ids
                .iter()
                .enumerate()
                .map(|(i, id)| {
                    let url = urls[i % urls.len()];
                    s.spawn(move || {
                        call_at(url, token, "cancel_exploration", json!({"run_id": id}))
                    })
                })
                .collect();
            cancels
                .into_iter()
                .map(|c| c.join().expect("a cancel"))
                .collect()
        });
        for a in &answers {
            let result = &a["result"];
            assert_eq!(result["isError"], json!(false), "round {round}: {a}");
            let state = &result["structuredContent"]["state"];
            assert!(
                *state == json!("cancelled") || *state == json!("cancelling"),
                "round {round}: {a}"
            );
        }
        for id in &ids {
            let deadline = Instant::now() + Duration::from_secs(30);
            let run = loop {
                let got = call_at(
                    urls[0],
                    token,
                    "get_exploration_result",
                    json!({"run_id": id, "wait_seconds": 5}),
                );
                let run = got["result"]["structuredContent"].clone();
                if !run["receipt_sha256"].is_null() {
                    break run;
                }
                assert!(
                    Instant::now() < deadline,
                    "round {round}: {id} never settled: {run}"
                );
            };
            assert_eq!(run["state"], json!("cancelled"), "round {round}: {run}");
            let r = &run["receipt"];
            let asked = r["cancel_requested_at_ms"].as_i64();
            let asked = asked.unwrap_or_else(|| panic!("round {round}: no cancel time: {r}"));
            if let Some(stopped) = r["guest_stopped_at_ms"].as_i64() {
                let late = stopped - asked;
                assert!(
                    late <= CANCEL_BOUND_MS,
                    "round {round}: the guest ran {late} ms past its cancel: {r}"
                );
                latest = latest.max(late);
            }
        }
    }
    latest
}

#[test]
fn every_run_cancelled_while_workers_claim_ends_cancelled_on_sqlite() {
    // Four workers, so that more claims meet the cancels.
    let mut flags = CANCEL_FLAGS;
    flags[1] = "4";
    let server = Server::start_with(&[T_RUN_ESCAPE], &flags);
    let token = server.service_token(FIXTURE_SCOPES);
    let latest = cancel_every_run_at_once(&[&server.url], &token, CANCEL_ROUNDS, 8);
    eprintln!("the latest guest stopped {latest} ms after its cancel");
    server.verified_rows();
}

#[test]
fn every_run_cancelled_while_two_replicas_claim_ends_cancelled_on_postgresql() {
    let pg = PgSchema::create("cancels");
    let cluster = Cluster::start(2, &[T_RUN_ESCAPE], &CANCEL_FLAGS, &pg);
    let [a, b] = [&cluster.replicas[0], &cluster.replicas[1]];
    let token = a.service_token(FIXTURE_SCOPES);
    // Queued through the balancer; each cancel through one replica or the
    // other, so most are stored on the replica that does not run the run.
    let urls = [cluster.url.as_str(), a.url.as_str(), b.url.as_str()];
    let latest = cancel_every_run_at_once(&urls, &token, CANCEL_ROUNDS, 8);
    eprintln!("the latest guest stopped {latest} ms after its cancel");
    a.verified_rows();
}
