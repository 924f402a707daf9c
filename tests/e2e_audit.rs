//! The audit trail end to end (issue 8): every call leaves one hash-chained
//! row; `toolhost audit verify` passes on an untouched trail and names the
//! row someone edited; after a `kill -9` under 32 concurrent callers, every
//! call that got its reply has its row, and the chain still verifies;
//! `audit tail` and `audit search` show the rows.

mod support;

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::bench::{Backend, answer, call, serve_on};
use support::{PgSchema, Server, python3};
use toolhost_audit::argument_digest;

/// `toolhost audit ARGS…` on `server`'s store: (exit code, stdout, stderr).
fn audit(server: &Server, args: &[&str]) -> (Option<i32>, String, String) {
    let mut all = vec!["audit"];
    all.extend_from_slice(args);
    let Output {
        status,
        stdout,
        stderr,
    } = server.admin(&all);
    (
        status.code(),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

/// Asserts `audit verify` passes; the number of rows it verified.
fn verified(server: &Server) -> u64 {
    let (code, out, err) = audit(server, &["verify"]);
    assert_eq!(code, Some(0), "audit verify: {out}{err}");
    out.lines()
        .next()
        .and_then(|l| l.strip_prefix("ok: "))
        .and_then(|l| l.strip_suffix(" rows verified"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("audit verify printed {out:?}"))
}

/// The writer chains and anchors `audit verify` reports.
fn chains_and_anchors(server: &Server) -> (u64, u64) {
    let (code, out, err) = audit(server, &["verify"]);
    assert_eq!(code, Some(0), "audit verify: {out}{err}");
    out.lines()
        .find_map(|l| {
            let (chains, rest) = l.split_once(" writer chains and the legacy chain walked, ")?;
            let anchors = rest.strip_suffix(" anchors checked")?;
            Some((chains.parse().ok()?, anchors.parse().ok()?))
        })
        .unwrap_or_else(|| panic!("audit verify printed {out:?}"))
}

/// The commands that published the plugin each appended to a chain of
/// their own and exited at once; each anchored its chain before it did, so
/// a walk holds their rows to an anchor (the server's own chain is
/// anchored within a second of its rows).
#[test]
fn every_command_anchors_the_chain_it_wrote_before_it_exits() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (chains, anchors) = chains_and_anchors(&server);
        assert!(chains >= 1, "the publishing commands wrote rows");
        if anchors >= chains {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{chains} chains but {anchors} anchors"
        );
        thread::sleep(Duration::from_millis(200));
    }
}

/// A third party's check of an export, with nothing of toolhost's: in
/// every chain hashed as JCS, each row's `row_hash` is the SHA-256 of its
/// object's RFC 8785 text and the next row links to it; each JCS anchor
/// likewise. For these objects (ASCII keys, strings, integers a double
/// holds) Python's sorted, compact `json.dumps` writes RFC 8785's text.
/// Prints the rows and anchors it checked.
const THIRD_PARTY_CHECK: &str = r#"
import hashlib, json, sys
def digest(o):
    text = json.dumps(o, sort_keys=True, separators=(',', ':'), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
rows = anchors = 0
last_anchor = None
head = None
for text in open(sys.argv[1], encoding='utf-8'):
    line = json.loads(text)
    kind = line['type']
    if kind == 'anchor' and line['anchor']['encoding'] == 'toolhost-audit-anchor-v2':
        anchor = line['anchor']
        assert digest(anchor) == line['anchor_hash'], line
        assert last_anchor is None or anchor['prev_hash'] == last_anchor, line
        last_anchor = line['anchor_hash']
        anchors += 1
    elif kind == 'chain':
        head = line['start_hash'] if line['encoding'] == 2 else None
        if head is not None and line['start_place'] == 0:
            genesis = {'encoding': 'toolhost-audit-chain-genesis-v2', 'chain': line['chain']}
            assert head == digest(genesis), line
    elif kind == 'row' and head is not None:
        assert line['row']['prev_hash'] == head, line
        assert digest(line['row']) == line['row_hash'], line
        head = line['row_hash']
        rows += 1
print(rows, anchors)
"#;

/// `audit export ARGS…` of `server` into `file`, once it holds at least
/// `rows` rows (the server anchors its chain within a second of a
/// call); the export's last line.
fn export_with(server: &Server, file: &std::path::Path, args: &[&str], rows: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mut all = vec!["export", "--output", file.to_str().expect("a UTF-8 path")];
        all.extend_from_slice(args);
        let (code, out, err) = audit(server, &all);
        assert_eq!(code, Some(0), "audit export: {out}{err}");
        let text = std::fs::read_to_string(file).expect("the export");
        let end: Value = serde_json::from_str(text.lines().last().expect("lines")).expect("JSON");
        assert_eq!(end["type"], "end", "{text}");
        if end["rows"].as_u64() >= Some(rows) {
            return end;
        }
        assert!(Instant::now() < deadline, "only {end} exported");
        thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn an_export_checks_offline_with_toolhost_and_with_any_rfc_8785_implementation() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    some_calls(&server);
    let dir = tempfile::tempdir().expect("temp dir");
    let first = dir.path().join("trail-1.jsonl");
    let end = export_with(&server, &first, &[], 5 + PUBLISHED);
    let first_path = first.to_str().expect("UTF-8");

    // Anyone's check: every JCS row and anchor re-derived in Python.
    let checked = python3(THIRD_PARTY_CHECK, &[first_path]);
    let (rows, anchors) = checked.trim().split_once(' ').expect("two numbers");
    assert!(
        rows.parse::<u64>().expect("rows") >= 5 + PUBLISHED,
        "{checked}"
    );
    assert!(anchors.parse::<u64>().expect("anchors") >= 1, "{checked}");
    // And toolhost's, offline.
    let (code, out, err) = audit(&server, &["verify", "--file", first_path]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.starts_with(&format!("ok: {first_path}: ")), "{out}");

    // A row edited in the file: named by its line.
    let text = std::fs::read_to_string(&first).expect("read");
    let (at, edited) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(r#""outcome":"executed""#) && l.contains(r#""tool":"greet""#))
        .map(|(i, l)| {
            (
                i + 1,
                l.replace(r#""outcome":"executed""#, r#""outcome":"denied""#),
            )
        })
        .expect("a greeting's row");
    let mut lines: Vec<&str> = text.lines().collect();
    lines[at - 1] = &edited;
    let tampered = dir.path().join("tampered.jsonl");
    std::fs::write(&tampered, lines.join("\n") + "\n").expect("write");
    let (code, out, err) = audit(
        &server,
        &["verify", "--file", tampered.to_str().expect("UTF-8")],
    );
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(err.contains(&format!("export line {at}: ")), "{err}");
    assert!(err.contains("was edited"), "{err}");

    // The next segment resumes where the first ended and joins it.
    greet(&server, "after the first export");
    let second = dir.path().join("trail-2.jsonl");
    let from = end["next_from_anchor"].to_string();
    export_with(&server, &second, &["--from-anchor", &from], 1);
    let second_path = second.to_str().expect("UTF-8");
    let (code, out, err) = audit(
        &server,
        &["verify", "--file", first_path, "--file", second_path],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    // Read alone after a segment it does not follow, it is refused.
    let (code, _, err) = audit(
        &server,
        &["verify", "--file", second_path, "--file", second_path],
    );
    assert_eq!(code, Some(1));
    assert!(err.contains("the segment before ended"), "{err}");

    // A tenant's export: its rows, checked offline, and nobody else's.
    let tenant = sqlite(
        &server,
        "SELECT tenant FROM audit WHERE tool = 'greet' LIMIT 1",
    );
    let own = dir.path().join("tenant.jsonl");
    export_with(&server, &own, &["--tenant", &tenant], 5);
    let (code, out, err) = audit(&server, &["verify", "--file", own.to_str().expect("UTF-8")]);
    assert_eq!(code, Some(0), "{out}{err}");
    for line in std::fs::read_to_string(&own).expect("read").lines() {
        let line: Value = serde_json::from_str(line).expect("JSON");
        assert_ne!(line["type"], "anchor");
        if line["type"] == "row" {
            assert_eq!(line["row"]["tenant"], json!(tenant), "{line}");
        }
    }
}

/// The rows `audit search ARGS…` prints (without its header).
fn search(server: &Server, args: &[&str]) -> Vec<String> {
    let mut all = vec!["search"];
    all.extend_from_slice(args);
    let (code, out, err) = audit(server, &all);
    assert_eq!(code, Some(0), "audit search: {out}{err}");
    out.lines().skip(1).map(str::to_owned).collect()
}

fn greet(server: &Server, name: &str) {
    let answer = call(server, server.token(), "greet", json!({"name": name}));
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
}

/// The rows publishing the harness's plugin leaves before any call: its
/// signer trusted, its revision submitted, and approved.
const PUBLISHED: u64 = 3;

/// Makes five calls: three greetings, an unknown tool, one more greeting.
fn some_calls(server: &Server) {
    for name in ["Ada", "Grace", "Barbara"] {
        greet(server, name);
    }
    let unknown = call(server, server.token(), "no_such_tool", json!({}));
    assert_eq!(unknown["result"]["isError"], json!(true), "{unknown}");
    greet(server, "Edsger");
}

/// One SQL statement on the server's SQLite file; the first column of the
/// first row it returns, if any (changes are committed).
fn sqlite(server: &Server, sql: &str) -> String {
    let script = "import sqlite3, sys\n\
                  c = sqlite3.connect(sys.argv[1])\n\
                  row = c.execute(sys.argv[2]).fetchone()\n\
                  c.commit()\n\
                  print('' if row is None else row[0])";
    let database = server.database_path();
    python3(script, &[&database.to_string_lossy(), sql])
}

#[test]
fn editing_one_audit_row_makes_verify_fail_at_that_row() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    some_calls(&server);
    assert_eq!(verified(&server), 5 + PUBLISHED);

    // The row says who, through which client, and which catalog version served it.
    let row = sqlite(
        &server,
        "SELECT client_id || ' ' || catalog_version || ' ' || length(row_hash) \
         FROM audit WHERE tool = 'greet' ORDER BY id LIMIT 1",
    );
    assert!(
        row.ends_with(" 1.1.0 64"),
        "client, catalog version, hash: {row:?}"
    );

    // Someone turns the second greeting into a denial.
    let id = sqlite(
        &server,
        "SELECT id FROM audit WHERE tool = 'greet' ORDER BY id LIMIT 1 OFFSET 1",
    );
    let call_id = sqlite(
        &server,
        &format!("SELECT call_id FROM audit WHERE id = {id}"),
    );
    sqlite(
        &server,
        &format!("UPDATE audit SET outcome = 'denied' WHERE id = {id}"),
    );
    let (code, out, err) = audit(&server, &["verify"]);
    assert_eq!(code, Some(1), "verify fails: {out}{err}");
    let want = format!("audit chain broken at row {id} (call {call_id}): ");
    assert!(err.starts_with(&want), "want {want:?}, got {err:?}");
    assert!(err.contains("edited"), "{err}");

    // Putting it back restores the chain.
    sqlite(
        &server,
        &format!("UPDATE audit SET outcome = 'executed' WHERE id = {id}"),
    );
    assert_eq!(verified(&server), 5 + PUBLISHED);
}

#[test]
fn deleting_a_row_makes_verify_fail_at_the_next_row_on_postgres() {
    let schema = PgSchema::create("audit");
    let server = Server::start_on(&[toolhost_fixtures::HELLO], &[], Some(&schema.url));
    some_calls(&server);
    assert_eq!(verified(&server), 5 + PUBLISHED);

    // psql does not read sqlx's `options[search_path]`: name the schema.
    let (admin_url, name) = schema
        .url
        .rsplit_once("options[search_path]=")
        .expect("a schema URL");
    let admin_url = admin_url.trim_end_matches(['?', '&']);
    let psql = |sql: &str| {
        let out = Command::new("psql")
            .args([admin_url, "-v", "ON_ERROR_STOP=1", "-tAc", sql])
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    // The rows of the server's chain (each writer appends to its own; the
    // publishing commands' rows are in theirs), in place order.
    let ids = psql(&format!(
        "SELECT string_agg(id::text, ' ' ORDER BY chain_seq) FROM {name}.audit \
         WHERE chain_id = (SELECT chain_id FROM {name}.audit GROUP BY chain_id \
         ORDER BY count(*) DESC LIMIT 1)"
    ));
    let ids: Vec<&str> = ids.split(' ').collect();
    psql(&format!("DELETE FROM {name}.audit WHERE id = {}", ids[2]));
    let (code, out, err) = audit(&server, &["verify"]);
    assert_eq!(code, Some(1), "verify fails: {out}{err}");
    let want = format!("audit chain broken at row {} (call ", ids[3]);
    assert!(err.starts_with(&want), "want {want:?}, got {err:?}");
}

#[test]
fn a_gated_call_its_decision_and_its_approved_retry_are_linked_to_the_gate() {
    let backend = Backend::start();
    let (server, demo) = serve_on(&backend, &[], &["--allow-self-approval"], None);
    let run = json!({"tags": ["smoke"], "environment": "prod", "project": "payments"});
    let first = answer(&server, &demo, "run_by_tag", run.clone());
    let gate = first["approval_required"]["gate_id"]
        .as_str()
        .unwrap_or_else(|| panic!("approval_required: {first}"))
        .to_owned();
    let decision = json!({"gate_id": gate, "decision": "confirm", "reason": "smoke on prod"});
    answer(&server, &demo, "decide_approval", decision);
    let mut retry = run;
    retry["gate_id"] = json!(gate);
    answer(&server, &demo, "run_by_tag", retry);

    let rows = sqlite(
        &server,
        "SELECT group_concat(tool || ':' || outcome || ':' || coalesce(gate_id, '-'), ' ') \
         FROM (SELECT * FROM audit WHERE tool IN ('run_by_tag', 'decide_approval') ORDER BY id)",
    );
    assert_eq!(
        rows,
        format!(
            "run_by_tag:approval_required:{gate} decide_approval:executed:{gate} \
             run_by_tag:executed:{gate}"
        )
    );
    verified(&server);
}

#[test]
fn tail_and_search_show_the_calls() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    some_calls(&server);

    let (code, out, err) = audit(&server, &["tail", "--limit", "2"]);
    assert_eq!(code, Some(0), "audit tail: {out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "a header and two rows: {out}");
    assert!(lines[0].starts_with("ID "), "{out}");
    // Oldest first: the unknown tool, then the last greeting.
    assert!(
        lines[1].contains("no_such_tool") && lines[1].contains(" error "),
        "{out}"
    );
    assert!(lines[1].contains("TOOL_NOT_FOUND"), "{out}");
    assert!(
        lines[2].contains(" greet ") && lines[2].contains(" executed "),
        "{out}"
    );
    assert!(lines[2].contains(" demo "), "the tenant: {out}");

    assert_eq!(search(&server, &["--tool", "greet"]).len(), 4);
    assert_eq!(search(&server, &["--outcome", "error"]).len(), 1);
    assert_eq!(search(&server, &["--tenant", "nobody"]).len(), 0);
    assert_eq!(
        search(&server, &["--since", "1h"]).len(),
        5 + PUBLISHED as usize
    );
    assert_eq!(
        search(&server, &["--since", "2999-01-01T00:00:00Z"]).len(),
        0
    );
    assert_eq!(
        search(&server, &["--tool", "greet", "--limit", "1"]).len(),
        1
    );
    let (code, _, err) = audit(&server, &["search", "--outcome", "maybe"]);
    assert_eq!(code, Some(2), "clap refuses an unknown outcome: {err}");
}

/// The outcome of one greeting sent on a connection of its own: `None` if
/// no complete answer came back (the server is gone), else whether it was
/// a 200 carrying a successful result.
fn try_greet(url: &str, bearer: &str, n: usize) -> Option<bool> {
    let body = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
        "name": "greet", "arguments": {"name": format!("caller {n}")},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    }})
    .to_string();
    let authority = url.trim_start_matches("http://").split('/').next()?;
    let mut stream = TcpStream::connect(authority).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: greet\r\n\
         Authorization: {bearer}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut raw = String::new();
    stream.read_to_string(&mut raw).ok()?;
    let (head, body) = raw.split_once("\r\n\r\n")?;
    if !head.starts_with("HTTP/1.1 200") {
        return Some(false);
    }
    let answer: Value = serde_json::from_str(body.trim()).ok()?;
    Some(answer["result"]["isError"] == json!(false))
}

/// Callers at once in the kill test: the issue's load (32 clients).
const CALLERS: usize = 32;

#[test]
fn after_a_kill_9_under_load_every_replied_call_has_its_row_and_the_chain_verifies() {
    let first = Server::start(&[toolhost_fixtures::HELLO]);
    // Each caller's greetings that got a successful reply, by number.
    let replied: Arc<Mutex<Vec<usize>>> = Arc::default();
    let refused = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let callers: Vec<_> = (0..CALLERS)
        .map(|t| {
            let (url, bearer) = (first.url.clone(), first.bearer().to_owned());
            let (replied, refused, stop) = (replied.clone(), refused.clone(), stop.clone());
            thread::spawn(move || {
                for n in (t..).step_by(CALLERS) {
                    match try_greet(&url, &bearer, n) {
                        Some(true) => replied.lock().expect("replies").push(n),
                        Some(false) => drop(refused.fetch_add(1, Ordering::SeqCst)),
                        None if stop.load(Ordering::SeqCst) => break,
                        None => panic!("call {n} got no answer from a live server"),
                    };
                }
            })
        })
        .collect();

    // Kill the host mid-stream, once the load is up and calls are answered.
    let deadline = Instant::now() + Duration::from_secs(120);
    while replied.lock().expect("replies").len() < 4 * CALLERS {
        assert!(Instant::now() < deadline, "the stream never got going");
        thread::sleep(Duration::from_millis(5));
    }
    stop.store(true, Ordering::SeqCst);
    let killed = Command::new("kill")
        .args(["-9", &first.pid().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    assert!(first.wait_exit(Duration::from_secs(10)).is_some(), "killed");
    for caller in callers {
        caller.join().expect("a caller thread");
    }
    let replied = std::mem::take(&mut *replied.lock().expect("replies"));
    assert_eq!(refused.load(Ordering::SeqCst), 0, "no call was refused");

    // Every replied call's row is in the file the killed host left: its
    // arguments' digest (each caller greets a name of its own).
    let stored = sqlite(
        &first,
        "SELECT group_concat(argument_digest, ' ') FROM audit \
         WHERE tool = 'greet' AND outcome = 'executed'",
    );
    let stored: HashSet<&str> = stored.split_whitespace().collect();
    for n in &replied {
        let digest = argument_digest(&json!({"name": format!("caller {n}")})).to_string();
        assert!(
            stored.contains(digest.as_str()),
            "call {n} was answered but has no audit row"
        );
    }
    let replied = replied.len();

    // A new host on the same database: the rows are there, the chain intact.
    let second = Server::start_on(&[toolhost_fixtures::HELLO], &[], Some(first.database_url()));
    let executed = search(
        &second,
        &[
            "--tool",
            "greet",
            "--outcome",
            "executed",
            "--limit",
            "100000",
        ],
    );
    assert!(
        executed.len() >= replied,
        "{replied} calls were answered but only {} greet rows survived",
        executed.len()
    );
    println!(
        "{replied} calls answered before the kill; {} greet rows after the restart",
        executed.len()
    );
    let before = verified(&second);
    assert!(before >= replied as u64);
    // And the new host chains on from the old head.
    greet(&second, "after the crash");
    assert_eq!(verified(&second), before + 1);
}
