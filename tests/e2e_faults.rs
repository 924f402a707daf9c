//! Faults injected into the real binary (issue 22), each followed by the
//! same checks: no half-written row, no answered call without its audit
//! row, the audit chain verifies, the store is intact, and the host serves
//! again without a restart (or, after a kill, right after its restart).
//!
//! * the store's disk fills up mid-run (a size-capped tmpfs the test
//!   mounts: the tests run as root, as CI does);
//! * a backend hangs, resets the connection, or answers garbage;
//! * the wall clock jumps forward two hours and back (libfaketime,
//!   installed by `make e2e-tools`);
//! * `kill -9` under load at 32 clients;
//! * SIGTERM while gated calls consume their gates.
//!
//! PostgreSQL killed mid-transaction under load, and a replica killed
//! behind the balancer, are in tests/e2e_replica_faults.rs; SIGKILL during
//! a run in tests/e2e_runs.rs; SIGTERM during a call in
//! tests/e2e_shutdown.rs.

mod support;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::bench::{Backend, answer, call, confirmed_gate, try_post_at};
use support::oauth::{self, approver, user_token};
use support::{DEMO_PASSWORD, Server, python3};
use toolhost_fixtures::{HELLO, T_ESCAPE_BACKEND, TESTBENCH};

/// One value of `sql` on the SQLite file at `database` (Python's sqlite3).
fn sqlite(database: &Path, sql: &str) -> String {
    let script = "import sqlite3, sys\n\
                  c = sqlite3.connect(sys.argv[1])\n\
                  row = c.execute(sys.argv[2]).fetchone()\n\
                  print('' if row is None else row[0])";
    python3(script, &[&database.to_string_lossy(), sql])
        .trim()
        .to_owned()
}

/// SQLite's own check of every page and index of `database`.
fn store_intact(database: &Path) {
    assert_eq!(sqlite(database, "PRAGMA integrity_check"), "ok");
}

/// The argument digests of `greet`'s executed audit rows.
fn greet_rows(database: &Path) -> BTreeSet<String> {
    let script = "import sqlite3, sys\n\
                  c = sqlite3.connect(sys.argv[1])\n\
                  for (d,) in c.execute(\"SELECT argument_digest FROM audit \
                  WHERE tool = 'greet' AND outcome = 'executed'\"): print(d)";
    python3(script, &[&database.to_string_lossy()])
        .lines()
        .map(str::to_owned)
        .collect()
}

fn digest(args: &Value) -> String {
    toolhost_audit::argument_digest(args).to_string()
}

/// How one `greet` ended.
#[derive(Debug, Clone, PartialEq)]
enum Greeting {
    /// Answered: its arguments' digest.
    Answered(String),
    /// Refused with a typed, retryable answer: the tool error's code, or
    /// the HTTP status with its `Retry-After`.
    Refused(String),
    /// No answer: the connection failed (the host was killed).
    Lost(String),
}

fn greet(url: &str, token: &str, name: &str) -> Greeting {
    let args = json!({"name": name});
    let params = json!({"name": "greet", "arguments": args});
    match try_post_at(url, token, "tools/call", "greet", params) {
        Err(e) => Greeting::Lost(e),
        Ok(a) if a.status != 200 => Greeting::Refused(format!(
            "HTTP {} retry-after {:?}",
            a.status,
            a.header("retry-after")
        )),
        Ok(a) => {
            let v: Value = serde_json::from_str(&a.body).unwrap_or(Value::Null);
            if v["result"]["isError"] == json!(false) {
                Greeting::Answered(digest(&args))
            } else {
                let code = v["result"]["structuredContent"]["error"]["code"]
                    .as_str()
                    .map_or_else(|| format!("untyped: {}", a.body), str::to_owned);
                Greeting::Refused(code)
            }
        }
    }
}

/// A size-capped tmpfs mounted on a temporary directory, unmounted when
/// dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> SmallDisk {
        let dir = tempfile::tempdir().expect("a mount point");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "mounting a {size} tmpfs (the tests run as root, as CI does): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        SmallDisk { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills the disk with one file: its path.
    fn fill(&self) -> PathBuf {
        let filler = self.path().join("filler");
        let mut f = std::fs::File::create(&filler).expect("create the filler");
        let chunk = vec![0u8; 64 * 1024];
        loop {
            match f.write(&chunk) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(28) => break, // ENOSPC
                Err(e) => panic!("filling the disk: {e}"),
            }
        }
        let _ = f.sync_all();
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .output();
    }
}

/// The disk under the store fills up: every call is refused with the
/// retryable `STORE_UNAVAILABLE` (or a 503 with `Retry-After`), none is
/// answered without its row, and once space returns the same host serves
/// again; the chain verifies and SQLite finds its file intact.
#[test]
fn a_full_disk_refuses_calls_retryably_and_the_host_serves_again_when_space_returns() {
    let disk = SmallDisk::mount("48m");
    let database = disk.path().join("toolhost.db");
    let url = format!("sqlite://{}?mode=rwc", database.display());
    let server = Server::start_on(&[HELLO], &[], Some(&url));
    let token = server.token().to_owned();
    let mut answered = BTreeSet::new();
    for n in 0..5 {
        match greet(&server.url, &token, &format!("before {n}")) {
            Greeting::Answered(d) => answered.insert(d),
            other => panic!("before the disk filled: {other:?}"),
        };
    }

    let filler = disk.fill();
    let mut refused = Vec::new();
    for n in 0..30 {
        match greet(&server.url, &token, &format!("full {n}")) {
            Greeting::Answered(d) => {
                // A page SQLite had free may still take a row.
                answered.insert(d);
            }
            Greeting::Refused(why) => refused.push(why),
            Greeting::Lost(e) => panic!("the host stopped answering: {e}\n{}", server.log()),
        }
    }
    assert!(!refused.is_empty(), "no call noticed the full disk");
    assert!(
        refused
            .iter()
            .all(|r| r == "STORE_UNAVAILABLE" || r.starts_with("HTTP 503 retry-after Some")),
        "{refused:?}"
    );
    let (ready, _) = support::exchange(&server.url, "GET", "/healthz", &[], "");
    assert_eq!(ready, 200, "the process is alive");

    std::fs::remove_file(&filler).expect("free the disk");
    let started = Instant::now();
    loop {
        match greet(&server.url, &token, "after") {
            Greeting::Answered(d) => {
                answered.insert(d);
                break;
            }
            other => assert!(
                started.elapsed() < Duration::from_secs(10),
                "still not serving after the space returned: {other:?}"
            ),
        }
        thread::sleep(Duration::from_millis(200));
    }
    eprintln!(
        "{} calls answered, {} refused while the disk was full",
        answered.len(),
        refused.len()
    );

    // Every answered call has its row, and no refused call left one.
    assert_eq!(greet_rows(&database), answered);
    server.verified_rows();
    store_intact(&database);
}

/// What the fault backend does with each request.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
enum Fault {
    /// Reads the request and never answers.
    Hang = 0,
    /// Closes with the request unread: the kernel resets the connection.
    Reset = 1,
    /// Answers bytes that are not HTTP.
    Garbage = 2,
    /// Answers `200 ok`.
    Healthy = 3,
}

/// A backend on 127.0.0.1 that misbehaves as told.
struct FaultBackend {
    port: u16,
    fault: Arc<AtomicU8>,
}

impl FaultBackend {
    fn start() -> FaultBackend {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let fault = Arc::new(AtomicU8::new(Fault::Healthy as u8));
        let now = fault.clone();
        thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let fault = now.load(Ordering::SeqCst);
                thread::spawn(move || misbehave(stream, fault));
            }
        });
        FaultBackend { port, fault }
    }

    fn set(&self, fault: Fault) {
        self.fault.store(fault as u8, Ordering::SeqCst);
    }
}

fn misbehave(mut stream: TcpStream, fault: u8) {
    let read_head = |s: &mut TcpStream| {
        let mut buf = [0u8; 4096];
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        let _ = s.read(&mut buf);
    };
    match fault {
        0 => {
            read_head(&mut stream);
            thread::sleep(Duration::from_secs(30));
        }
        1 => {
            // Unread bytes at close make the kernel send RST.
            thread::sleep(Duration::from_millis(100));
            drop(stream);
        }
        2 => {
            read_head(&mut stream);
            let _ = stream.write_all(b"\x00\xffSURPRISE not http at all\r\n\r\n\x7f");
        }
        _ => {
            read_head(&mut stream);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
        }
    }
}

/// A backend that hangs, resets or answers garbage: the plugin is told a
/// typed error within the backend's timeout, the call is answered and
/// audited, and the next call to a healthy backend works.
#[test]
fn a_backend_that_hangs_resets_or_answers_garbage_is_a_typed_error_and_the_host_serves_on() {
    let backend = FaultBackend::start();
    let dir = tempfile::tempdir().expect("temp");
    let token_file = dir.path().join("decoy.token");
    std::fs::write(&token_file, "decoy-secret\n").expect("write");
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "[backends.decoy]\nurl = \"http://127.0.0.1:{}/\"\ntoken_file = \"{}\"\ntimeout = \"1s\"\n",
            backend.port,
            token_file.display()
        ),
    )
    .expect("write the config");
    let config = config.display().to_string();
    let server = Server::start_with(&[T_ESCAPE_BACKEND], &["--config", &config]);
    let token = server.service_token("mcp fixture:run");
    let before = server.verified_rows();

    let mut calls = 0;
    for (fault, says) in [
        (Fault::Hang, "in time"),
        (Fault::Reset, "unavailable"),
        (Fault::Garbage, "unavailable"),
    ] {
        backend.set(fault);
        let started = Instant::now();
        let got = answer(
            &server,
            &token,
            "reach",
            json!({"backend": "decoy", "path": "/x"}),
        );
        calls += 1;
        let took = started.elapsed();
        assert_eq!(got["ok"], json!(false), "{fault:?}: {got}");
        let error = got["error"].as_str().unwrap_or_default().to_lowercase();
        assert!(error.contains(says), "{fault:?}: {error}");
        assert!(
            !error.contains("127.0.0.1") && !error.contains("decoy-secret"),
            "{fault:?} names the backend's address or secret: {error}"
        );
        assert!(took < Duration::from_secs(5), "{fault:?} took {took:?}");
        // The same backend, healthy again, answers the next call.
        backend.set(Fault::Healthy);
        let healthy = answer(
            &server,
            &token,
            "reach",
            json!({"backend": "decoy", "path": "/x"}),
        );
        calls += 1;
        assert_eq!(healthy["status"], json!(200), "after {fault:?}: {healthy}");
    }
    assert_eq!(server.verified_rows(), before + calls);
    store_intact(&server.database_path());
}

/// libfaketime's preload library for threaded programs, as Debian
/// installs it.
fn libfaketime() -> PathBuf {
    [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib",
    ]
    .iter()
    .map(|d| Path::new(d).join("faketime/libfaketimeMT.so.1"))
    .find(|p| p.exists())
    .expect("libfaketime (make e2e-tools installs Debian's faketime)")
}

/// The wall clock jumps two hours forward, then back: expired tokens and
/// gates are refused as expired, a refresh mints a working token, the
/// host serves throughout, and the chain (hashes, not times) verifies.
#[test]
fn a_clock_jump_forward_and_back_expires_what_it_should_and_the_host_serves_on() {
    let backend = Backend::start();
    let dir = tempfile::tempdir().expect("temp");
    let offset = dir.path().join("offset");
    std::fs::write(&offset, "+0\n").expect("write");
    let preload = libfaketime();
    let env = [
        ("LD_PRELOAD", preload.to_str().expect("a path")),
        ("FAKETIME_TIMESTAMP_FILE", offset.to_str().expect("a path")),
        ("FAKETIME_NO_CACHE", "1"),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
    ];
    let flags = backend.flags();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let server = Server::start_env(&[TESTBENCH], &flags, None, &env);
    let client = oauth::register(&server, oauth::REDIRECT, "clock");
    let (s, tokens) = oauth::redeem(
        &server,
        &client,
        &oauth::code(&server, &client),
        oauth::VERIFIER,
    );
    assert_eq!(s, 200, "{tokens}");
    let demo = tokens["access_token"].as_str().expect("a token").to_owned();
    let ann_password = oauth::add_ann(&server);
    let gate = answer(
        &server,
        &demo,
        "run_by_tag",
        json!({"tags": ["smoke"], "environment": "prod", "project": "payments"}),
    )["approval_required"]["gate_id"]
        .as_str()
        .expect("a gate")
        .to_owned();

    // Two hours on: past the access token's and the gate's lifetimes.
    std::fs::write(&offset, "+7200\n").expect("jump");
    let expired = oauth::list_tools(&server, &format!("Bearer {demo}"));
    assert_eq!(expired.status, 401, "{}", expired.body);
    let ann = user_token(&server, "ann", &ann_password);
    let decided = call(
        &server,
        &ann,
        "decide_approval",
        json!({"gate_id": gate, "decision": "confirm", "reason": "late"}),
    );
    let ann_expired = decided["error"].is_object()
        || decided["result"]["structuredContent"]["error"]["code"] == json!("GATE_EXPIRED");
    assert!(ann_expired, "{decided}");
    let rt = tokens["refresh_token"].as_str().expect("a refresh token");
    let (s, fresh) = oauth::token(
        &server,
        &format!(
            "grant_type=refresh_token&client_id={}&refresh_token={rt}",
            oauth::encode(&client)
        ),
    );
    assert_eq!(s, 200, "{fresh}");
    let fresh = fresh["access_token"].as_str().expect("a token").to_owned();
    let listed = answer(&server, &fresh, "list_pending_approvals", json!({}));
    assert!(!listed.to_string().contains(&gate), "expired: {listed}");

    // And back: the token minted "in the future" works until it expires,
    // new sign-ins work, and rows written earlier in time still chain.
    std::fs::write(&offset, "+0\n").expect("jump back");
    assert_eq!(
        oauth::list_tools(&server, &format!("Bearer {fresh}")).status,
        200
    );
    let again = user_token(&server, "demo", DEMO_PASSWORD);
    let opened = answer(
        &server,
        &again,
        "run_by_tag",
        json!({"tags": ["smoke"], "environment": "prod", "project": "payments"}),
    );
    assert!(
        opened["approval_required"]["gate_id"].is_string(),
        "{opened}"
    );
    server.verified_rows();
    store_intact(&server.database_path());
}

/// Client threads of the load.
const CLIENTS: usize = 32;

/// `kill -9` under load at 32 clients: every call a client was answered
/// has its row after the restart, the chain verifies, the file is intact,
/// and the restarted host serves.
#[test]
fn kill_9_under_load_loses_no_answered_call() {
    let server = Server::start(&[HELLO]);
    let token = server.token().to_owned();
    let stop = AtomicBool::new(false);
    let greetings: Vec<Greeting> = thread::scope(|s| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (url, token, stop) = (&server.url, &token, &stop);
                s.spawn(move || {
                    let mut seen = Vec::new();
                    for n in 0.. {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let g = greet(url, token, &format!("client {c} call {n}"));
                        let lost = matches!(g, Greeting::Lost(_));
                        seen.push(g);
                        if lost {
                            break;
                        }
                    }
                    seen
                })
            })
            .collect();
        thread::sleep(Duration::from_millis(1500));
        let killed = Command::new("kill")
            .args(["-9", &server.pid().to_string()])
            .status()
            .expect("kill");
        assert!(killed.success());
        server.wait_exit(Duration::from_secs(10));
        stop.store(true, Ordering::Relaxed);
        clients
            .into_iter()
            .flat_map(|c| c.join().expect("a client"))
            .collect()
    });
    let answered: BTreeSet<String> = greetings
        .iter()
        .filter_map(|g| match g {
            Greeting::Answered(d) => Some(d.clone()),
            _ => None,
        })
        .collect();
    let lost = greetings
        .iter()
        .filter(|g| matches!(g, Greeting::Lost(_)))
        .count();
    assert!(answered.len() > 100, "the load ran: {}", answered.len());
    eprintln!("{} answered, {lost} lost at the kill", answered.len());

    let database = server.database_path();
    let rows = greet_rows(&database);
    let missing = answered.difference(&rows).count();
    assert_eq!(missing, 0, "{missing} answered calls have no audit row");
    let again = Server::start_on(&[HELLO], &[], Some(server.database_url()));
    again.verified_rows();
    store_intact(&database);
    assert!(matches!(
        greet(&again.url, again.token(), "after the kill"),
        Greeting::Answered(_)
    ));
}

/// SIGTERM while gated calls consume their gates: the calls in flight
/// finish and are audited; every consumed gate has its call's row; a gate
/// not consumed runs once on the restarted host; none runs twice.
#[test]
fn sigterm_while_gates_are_consumed_leaves_each_gate_used_once_with_its_row() {
    const GATES: usize = 8;
    let backend = Backend::start();
    let flags = backend.flags();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let server = Server::start_with(&[TESTBENCH], &flags);
    let demo = user_token(&server, "demo", DEMO_PASSWORD);
    let ann = approver(&server);
    let args = || json!({"tags": ["smoke"], "environment": "prod", "project": "payments"});
    let gates: Vec<String> = (0..GATES)
        .map(|_| confirmed_gate(&server.url, &demo, &server.url, &ann, "run_by_tag", args()))
        .collect();
    assert_eq!(gates.iter().collect::<BTreeSet<_>>().len(), GATES);

    let results: Vec<Result<Value, String>> = thread::scope(|s| {
        let retries: Vec<_> = gates
            .iter()
            .map(|gate| {
                let (url, demo) = (&server.url, &demo);
                let mut a = args();
                a["gate_id"] = json!(gate);
                s.spawn(move || {
                    let params = json!({"name": "run_by_tag", "arguments": a});
                    try_post_at(url, demo, "tools/call", "run_by_tag", params)
                        .map(|r| serde_json::from_str(&r.body).unwrap_or(Value::Null))
                })
            })
            .collect();
        thread::sleep(Duration::from_millis(20));
        let termed = Command::new("kill")
            .args(["-TERM", &server.pid().to_string()])
            .status()
            .expect("kill");
        assert!(termed.success());
        retries
            .into_iter()
            .map(|r| r.join().expect("a retry"))
            .collect()
    });
    let exit = server
        .wait_exit(Duration::from_secs(30))
        .expect("the host exits");
    assert!(exit.success(), "a clean exit: {exit:?}\n{}", server.log());

    let database = server.database_path();
    let unaudited = sqlite(
        &database,
        "SELECT count(*) FROM gates WHERE state = 'consumed' AND NOT EXISTS \
         (SELECT 1 FROM audit WHERE audit.call_id = gates.consumed_by)",
    );
    assert_eq!(unaudited, "0", "a consumed gate without its call's row");
    let answered = results
        .iter()
        .filter(|r| {
            r.as_ref()
                .is_ok_and(|v| v["result"]["structuredContent"]["queued"].is_array())
        })
        .count();
    let consumed: usize = sqlite(
        &database,
        "SELECT count(*) FROM gates WHERE state = 'consumed'",
    )
    .parse()
    .expect("a count");
    assert!(
        answered <= consumed,
        "{answered} answered, {consumed} consumed"
    );

    // On the restarted host, each gate not yet used runs once; a used one
    // is refused as consumed (or answered again under its key).
    let again = Server::start_on(&[TESTBENCH], &flags, Some(server.database_url()));
    let demo = user_token(&again, "demo", DEMO_PASSWORD);
    for gate in &gates {
        let mut a = args();
        a["gate_id"] = json!(gate);
        let retried = call(&again, &demo, "run_by_tag", a);
        let said = &retried["result"]["structuredContent"];
        assert!(
            said["queued"].is_array() || said["error"]["code"] == json!("GATE_CONSUMED"),
            "{gate}: {retried}"
        );
    }
    let twice = sqlite(
        &database,
        "SELECT count(*) FROM (SELECT gate_id FROM audit WHERE gate_id IS NOT NULL \
         AND tool = 'run_by_tag' AND outcome = 'executed' GROUP BY gate_id HAVING count(*) > 1)",
    );
    assert_eq!(twice, "0", "a gate ran twice");
    again.verified_rows();
    store_intact(&database);
}
