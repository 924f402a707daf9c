//! The authoring workspace end to end, through the real binary and real
//! clients: a tool authored from the Python SDK (upload, propose, explore,
//! diff, promote) is listed only once a second person approved its review;
//! a test plan authored in the testbench plugin's domain is promoted into
//! draft tests only after a person approved the production call, in one
//! batch of backend writes; twenty concurrent proposals against one version
//! write one; replays answer the first result; authority in a proposal is
//! refused with nothing stored; another tenant, and anyone without the
//! permission, sees nothing.

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::bench::{Backend, call_at, post_at, request_at, serve_on};
use support::oauth::user_token;
use support::workspace::{admin, mcp_upload, ok, person, refused, role, sha256_hex};
use support::{PgSchema, Server, Tools, fresh_window, new_signer, pin_into, python3, sign, trust};
use toolhost_fixtures::{HELLO, HELLO_NEXT, T_RUN_ESCAPE};

/// The people: `alice` authors (and may run what she authors), `bob`
/// reviews and decides approvals, `vic` may only read hello and testbench,
/// and `olga` authors in another tenant. Their tokens, by name.
fn people(server: &Server) -> BTreeMap<&'static str, String> {
    let url = server.database_url().to_owned();
    let author = [
        "workspace:author",
        "explorations:run",
        "hello:read",
        "testbench:read",
        "testbench:run",
    ];
    role(&url, "demo", "author", &author);
    role(
        &url,
        "demo",
        "reviewer",
        &[
            "catalog:review",
            "approvals:read",
            "approvals:decide",
            "testbench:run",
        ],
    );
    role(&url, "demo", "viewer", &["hello:read", "testbench:read"]);
    admin(&url, &["tenant", "add", "globex"]);
    role(&url, "globex", "author", &author);
    let mut tokens = BTreeMap::new();
    for (user, tenant, roles) in [
        ("alice", "demo", &["author"][..]),
        ("bob", "demo", &["reviewer"]),
        ("vic", "demo", &["viewer"]),
        ("olga", "globex", &["author"]),
    ] {
        let password = person(&url, tenant, user, roles);
        tokens.insert(user, user_token(server, user, &password));
    }
    tokens
}

fn listed(url: &str, token: &str) -> Vec<String> {
    support::names_listed(&request_at(url, token, "tools/list", "", json!({})))
}

/// Rows of `table` in the server's store: the PostgreSQL schema `pg`, or
/// its SQLite file.
fn count(server: &Server, pg: Option<&PgSchema>, table: &str) -> i64 {
    match pg {
        Some(pg) => pg.count(table),
        None => rows(server, table),
    }
}

/// Rows of `table` in the server's SQLite file, read with Python's sqlite3.
fn rows(server: &Server, table: &str) -> i64 {
    let script = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); \
                  print(c.execute('SELECT COUNT(*) FROM ' + sys.argv[2]).fetchone()[0])";
    let db = server.database_path();
    python3(script, &[&db.to_string_lossy(), table])
        .parse()
        .expect("a count")
}

#[test]
fn a_tool_authored_from_the_python_sdk_is_listed_only_after_a_second_person_approves_on_sqlite() {
    tool_chain(None);
}

#[test]
fn a_tool_authored_from_the_python_sdk_is_listed_only_after_a_second_person_approves_on_postgres() {
    tool_chain(Some(&PgSchema::create("workspace_tool")));
}

/// The tool chain from the Python SDK, on the store at `pg` (default: a
/// SQLite file).
fn tool_chain(pg: Option<&PgSchema>) {
    let tools = Tools::require();
    // testbench too, whose test plans the script authors first.
    let backend = Backend::start();
    let (server, _) = serve_on(&backend, &[HELLO], &[], pg.map(|p| p.url.as_str()));
    let url = server.database_url().to_owned();
    let tokens = people(&server);
    let work = server.scratch("author");
    let key = new_signer("alice", &work.join("keys"));
    trust("alice", &work.join("keys/alice.pub"), "hello", &url);
    let release = work.join("hello-0.2.0");
    let manifest = pin_into(&HELLO_NEXT, &release);
    sign(&manifest, &key);
    let component = release.join("hello_next.wasm");
    let signature = release.join("hello.sig.json");
    assert!(
        component.exists() && signature.exists(),
        "the release: {release:?}"
    );

    // Someone without the permission sees no workspace tool; calling one is
    // refused before anything is read.
    let vic = &tokens["vic"];
    assert!(
        !listed(&server.url, vic)
            .iter()
            .any(|t| t.contains("authoring"))
    );
    refused(
        &server.url,
        vic,
        "list_authoring_sessions",
        json!({}),
        "PERMISSION_DENIED",
    );

    let cmd = tools.python(
        "python_authoring.py",
        &[
            &server.url,
            &component.to_string_lossy(),
            &manifest.to_string_lossy(),
            &signature.to_string_lossy(),
            "shout",
        ],
    );
    let stdout = server.run_client_as(
        "python_authoring.py",
        cmd,
        Duration::from_secs(300),
        &tokens["alice"],
    );
    let ids: Value = stdout
        .lines()
        .find_map(|l| l.strip_prefix("AUTHORED "))
        .map(|l| serde_json::from_str(l).expect("ids"))
        .expect("an AUTHORED line");
    let (session, revision) = (
        ids["session_id"].as_str().expect("a session"),
        ids["revision_id"].as_str().expect("a revision"),
    );
    let plan = ok(
        &server.url,
        &tokens["alice"],
        "get_authoring_session",
        json!({"session_id": ids["plan_session_id"]}),
    );
    assert_eq!(plan["state"], json!("closed"), "{plan}");

    // A second session, bound before the review is decided: the approval
    // below moves the plugin on under it.
    let (url_mcp, alice) = (&server.url, &tokens["alice"]);
    let later = ok(
        url_mcp,
        alice,
        "create_authoring_session",
        json!({"subject": "plugin:hello"}),
    );
    let later = later["session_id"].as_str().expect("a session").to_owned();
    let read = |p: &std::path::Path| std::fs::read(p).expect("the release's file");
    let draft = json!({
        "component": mcp_upload(url_mcp, alice, "component", &read(&component), 256 * 1024)["handle"],
        "manifest": mcp_upload(url_mcp, alice, "manifest", &read(&manifest), 256 * 1024)["handle"],
    });
    let stale = ok(
        url_mcp,
        alice,
        "propose_revision",
        json!({"session_id": later, "proposal": {"revision": draft},
               "expected_version": 1, "idempotency_key": "later-1"}),
    );
    let stale = stale["proposal"]["proposal_id"].clone();

    // The promotion is a review like any other: the host's diff, no
    // approval by the author, nothing listed until another person approves.
    let shown: Value =
        serde_json::from_str(&admin(&url, &["plugin", "review", "show", revision])).expect("JSON");
    assert_eq!(shown["state"], json!("pending_review"));
    let source = shown["source"].as_str().expect("a source");
    assert!(
        source.starts_with(&format!("workspace:{session}/prop_")),
        "{shown}"
    );
    assert!(!listed(&server.url, &tokens["alice"]).contains(&"shout".to_owned()));
    let own = call_at(
        &server.url,
        &tokens["alice"],
        "decide_plugin_review",
        json!({"revision": revision, "decision": "approve", "reason": "mine"}),
    );
    assert_eq!(
        own["result"]["isError"],
        json!(true),
        "alice may not review: {own}"
    );
    ok(
        &server.url,
        &tokens["bob"],
        "decide_plugin_review",
        json!({"revision": revision, "decision": "approve", "reason": "read the diff"}),
    );
    let started = Instant::now();
    while !listed(&server.url, &tokens["alice"]).contains(&"shout".to_owned()) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "shout is never listed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let view = ok(
        &server.url,
        &tokens["alice"],
        "get_authoring_session",
        json!({"session_id": session}),
    );
    assert_eq!(
        view["promotions"][0]["review_state"],
        json!("active"),
        "{view}"
    );

    // The later session's subject moved: its proposal is not promoted
    // until the session is rebound, and then only when proposed again.
    let promote = |version: i64, key: &str| {
        json!({"session_id": later, "proposal_id": stale, "expected_version": version,
               "idempotency_key": key})
    };
    refused(
        url_mcp,
        alice,
        "promote_revision",
        promote(2, "later-promote"),
        "SUBJECT_CHANGED",
    );
    let rebound = ok(
        url_mcp,
        alice,
        "rebind_authoring_session",
        json!({"session_id": later, "expected_version": 2, "idempotency_key": "later-rebind"}),
    );
    assert_eq!(
        (
            &rebound["moved"],
            &rebound["version"],
            &rebound["subject_version"]
        ),
        (&json!(true), &json!(3), &json!(revision)),
        "{rebound}"
    );
    assert_eq!(rebound["outdated_proposals"], json!([stale]), "{rebound}");
    let outdated = refused(
        url_mcp,
        alice,
        "promote_revision",
        promote(3, "later-promote-2"),
        "PROPOSAL_OUTDATED",
    );
    assert_eq!(outdated["bound_version"], json!(revision), "{outdated}");
    let closed = ok(
        url_mcp,
        alice,
        "close_authoring_session",
        json!({"session_id": later, "expected_version": 3, "idempotency_key": "later-close"}),
    );
    assert_eq!(closed["state"], json!("closed"), "{closed}");

    // Another tenant's author, and the viewer, see nothing of it.
    for (who, code) in [("olga", "SESSION_NOT_FOUND"), ("vic", "PERMISSION_DENIED")] {
        refused(
            &server.url,
            &tokens[who],
            "get_authoring_session",
            json!({"session_id": session}),
            code,
        );
    }
    let olga = ok(
        &server.url,
        &tokens["olga"],
        "list_authoring_sessions",
        json!({}),
    );
    assert_eq!(olga["sessions"], json!([]), "{olga}");
    let uploads = count(&server, pg, "workspace_uploads");
    let (status, body) = post_upload(&server, &tokens["vic"], "manifest", b"[plugin]");
    assert_eq!(status, 403, "{body}");
    refused(
        &server.url,
        &tokens["vic"],
        "begin_upload",
        json!({"kind": "manifest", "size": 8}),
        "PERMISSION_DENIED",
    );
    assert_eq!(
        count(&server, pg, "workspace_uploads"),
        uploads,
        "vic's uploads stored nothing"
    );
}

/// `POST /workspace/uploads?kind=KIND` with `bytes`: status and body.
fn post_upload(server: &Server, token: &str, kind: &str, bytes: &[u8]) -> (u16, String) {
    let path = format!("/workspace/uploads?kind={kind}");
    let authorization = format!("Bearer {token}");
    let headers = [
        ("Content-Type", "application/octet-stream"),
        ("Authorization", authorization.as_str()),
    ];
    let body = String::from_utf8_lossy(bytes).into_owned();
    let a = support::exchange_full(&server.url, "POST", &path, &headers, &body);
    (a.status, a.body)
}

/// The structured answer of a finished run of `run_id`.
fn finished(url: &str, token: &str, run_id: &str) -> Value {
    for _ in 0..10 {
        let run = ok(
            url,
            token,
            "get_exploration_result",
            json!({"run_id": run_id, "wait_seconds": 30}),
        );
        if ["succeeded", "failed", "cancelled", "timed_out"]
            .contains(&run["state"].as_str().unwrap_or(""))
        {
            assert_eq!(run["state"], json!("succeeded"), "{run}");
            return run;
        }
    }
    panic!("run {run_id} never ended");
}

/// The JSON text of the artifact at `uri`, read back as `token`.
fn artifact(url: &str, token: &str, uri: &str) -> Value {
    let read = request_at(url, token, "resources/read", uri, json!({"uri": uri}));
    let text = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("the artifact's text: {read}"));
    serde_json::from_str(text).expect("JSON")
}

/// The session of a test plan for project `payments`, opened by `token`.
fn plan_session(url: &str, token: &str) -> Value {
    ok(
        url,
        token,
        "create_authoring_session",
        json!({"subject": "testbench/test_plan:payments"}),
    )
}

#[test]
fn a_test_plan_is_promoted_into_drafts_only_after_a_person_approves_the_production_call_on_sqlite()
{
    plan_chain(None);
}

#[test]
fn a_test_plan_is_promoted_into_drafts_only_after_a_person_approves_the_production_call_on_postgres()
 {
    plan_chain(Some(&PgSchema::create("workspace_plan")));
}

/// A plan whose steps mention a URL, an API path and a commit is data, kept
/// as written; the field the promoting tool declares a location (a test's
/// `start_url`) is taken when it is a public address and refused, typed,
/// when it points inside.
#[test]
fn urls_paths_and_hashes_in_a_plan_are_data_and_its_start_url_a_checked_location() {
    let backend = Backend::start();
    let (server, _) = serve_on(&backend, &[], &[], None);
    let tokens = people(&server);
    let (url, alice) = (&server.url, &tokens["alice"]);
    let sid = plan_session(url, alice)["session_id"]
        .as_str()
        .expect("a session id")
        .to_owned();
    let commit = "9fceb02d0ae598e95dc970b74767f19372d61af8";
    let steps = json!([
        "open https://shop.example/login",
        "POST /api/login with the shopper's name",
        format!("expect the build of commit {commit}"),
    ]);
    let plan = |start_url: &str| {
        json!({"object": {"environment": "dev", "tests": [
            {"name": "Login flow", "tags": ["smoke"], "steps": steps, "start_url": start_url},
        ]}, "summary": "see /api/login and https://shop.example"})
    };
    let inside = refused(
        url,
        alice,
        "propose_revision",
        json!({"session_id": sid, "proposal": plan("http://10.0.0.7/login"),
               "expected_version": 1, "idempotency_key": "inside"}),
        "AUTHORITY_REFUSED",
    );
    assert_eq!(
        (inside["pointer"].clone(), inside["kind"].clone()),
        (json!("/object/tests/0/start_url"), json!("location")),
        "{inside}"
    );
    let p = ok(
        url,
        alice,
        "propose_revision",
        json!({"session_id": sid, "proposal": plan("https://shop.example/login"),
               "expected_version": 1, "idempotency_key": "public"}),
    );
    let change = &p["diff"]["changes"][0];
    let after: Value = match &change["after"] {
        Value::String(text) => serde_json::from_str(text).expect("JSON"),
        other => other.clone(),
    };
    assert_eq!(after["steps"], steps, "kept as written: {p}");
    assert_eq!(after["start_url"], "https://shop.example/login", "{p}");
}

/// The test-plan chain on the store at `pg` (default: a SQLite file).
fn plan_chain(pg: Option<&PgSchema>) {
    let backend = Backend::start();
    let flags = ["--exploration-backend", "testbench"];
    let (server, _) = serve_on(&backend, &[], &flags, pg.map(|p| p.url.as_str()));
    let tokens = people(&server);
    let (url, alice) = (&server.url, &tokens["alice"]);

    let s = plan_session(url, alice);
    let sid = s["session_id"].as_str().expect("a session id").to_owned();
    assert_eq!(
        (s["version"].clone(), s["bound_to"]["name"].clone()),
        (json!(1), json!("payments")),
        "{s}"
    );

    // An exploration of the project's environments joins the session; its
    // plan for prod is what the proposal is built from.
    let started = ok(
        url,
        alice,
        "start_exploration",
        json!({
        "session_id": sid, "tool": "explore_environments", "arguments": {"project": "payments"},
        "expected_version": 1, "idempotency_key": "explore-1"}),
    );
    let run_id = started["run_id"].as_str().expect("a run").to_owned();
    let run = finished(url, alice, &run_id);
    let prod = run["artifacts"]
        .as_array()
        .expect("artifacts")
        .iter()
        .find(|a| a["name"] == json!("plan-prod.json"))
        .unwrap_or_else(|| panic!("no plan for prod: {run}"));
    let plan = artifact(url, alice, prod["uri"].as_str().expect("a uri"));
    let mut tests: Vec<Value> = plan["run"]
        .as_array()
        .expect("the plan's tests")
        .iter()
        .map(|t| json!({"name": t["name"], "tags": t["tags"]}))
        .collect();
    assert!(
        tests.iter().any(|t| t["name"] == json!("Login flow")),
        "{plan}"
    );
    for t in &mut tests {
        if t["name"] == json!("Login flow") {
            t["tags"] = json!(["smoke", "auth"]);
        }
    }
    tests.push(json!({"name": "Checkout timeout", "tags": ["smoke"]}));
    let proposal = json!({"object": {"environment": "prod", "tests": tests}, "evidence": [run_id],
                          "summary": "smoke plan for prod, from the exploration"});
    let p = ok(
        url,
        alice,
        "propose_revision",
        json!({
        "session_id": sid, "proposal": proposal, "expected_version": 2, "idempotency_key": "plan-1"}),
    );
    let pid = p["proposal"]["proposal_id"]
        .as_str()
        .expect("a proposal")
        .to_owned();
    let diff = ok(
        url,
        alice,
        "get_revision_diff",
        json!({"session_id": sid, "proposal_id": pid}),
    );
    let changes: Vec<(String, String)> = diff["diff"]["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            (
                c["op"].as_str().expect("an op").into(),
                c["item"].as_str().expect("an item").into(),
            )
        })
        .collect();
    assert_eq!(
        changes,
        [
            ("changed".to_owned(), "Login flow".to_owned()),
            ("added".into(), "Checkout timeout".into())
        ],
        "{diff}"
    );

    // Promotion into prod is a call of the plugin's promoting tool, and
    // waits for a person: nothing reaches the backend until then.
    let writes = backend.writes();
    let first = ok(
        url,
        alice,
        "promote_revision",
        json!({
        "session_id": sid, "proposal_id": pid, "expected_version": 3, "idempotency_key": "promote-1"}),
    );
    let promotion = &first["promotion"];
    assert_eq!(promotion["state"], json!("awaiting_approval"), "{first}");
    let gate = promotion["gate_id"].as_str().expect("a gate").to_owned();
    assert_eq!(
        backend.writes(),
        writes,
        "nothing written before the approval"
    );
    refused(
        url,
        alice,
        "promote_revision",
        json!({
        "session_id": sid, "proposal_id": pid, "expected_version": 4, "idempotency_key": "promote-early"}),
        "PROMOTION_AWAITING_APPROVAL",
    );
    let pending = ok(url, &tokens["bob"], "list_pending_approvals", json!({}));
    assert!(
        pending.to_string().contains(&gate),
        "bob sees the gate: {pending}"
    );
    ok(
        url,
        &tokens["bob"],
        "decide_approval",
        json!({
        "gate_id": gate, "decision": "confirm", "reason": "the smoke plan is right for prod"}),
    );
    let retry = json!({"session_id": sid, "proposal_id": pid, "expected_version": 4,
                       "idempotency_key": "promote-2", "gate_id": gate});
    let done = ok(url, alice, "promote_revision", retry.clone());
    assert_eq!(done["promotion"]["state"], json!("promoted"), "{done}");
    assert_eq!(done["state"], json!("promoted"), "{done}");
    assert_eq!(
        backend.writes(),
        writes + 1,
        "exactly one batch of backend writes"
    );
    let drafts = done["promotion"]["result"]["drafts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(drafts.len(), tests.len(), "{done}");
    assert!(
        drafts.iter().all(|d| d["status"] == json!("draft")),
        "{drafts:?}"
    );

    // A replay answers the same and writes nothing; the session is closed.
    assert_eq!(ok(url, alice, "promote_revision", retry), done);
    assert_eq!(backend.writes(), writes + 1);
    refused(
        url,
        alice,
        "propose_revision",
        json!({
        "session_id": sid, "proposal": proposal, "expected_version": 5, "idempotency_key": "late"}),
        "WORKSPACE_CLOSED",
    );
    let view = ok(
        url,
        alice,
        "get_authoring_session",
        json!({"session_id": sid}),
    );
    assert_eq!(
        view["runs"][0]["receipt_sha256"], run["receipt_sha256"],
        "{view}"
    );
    assert_eq!(
        (
            count(&server, pg, "workspace_sessions"),
            count(&server, pg, "workspace_proposals")
        ),
        (1, 1)
    );
    assert_eq!(
        count(&server, pg, "workspace_promotions"),
        1,
        "one promotion, moved on"
    );
}

#[test]
fn concurrent_proposals_write_one_replays_answer_first_and_authority_stores_nothing_on_sqlite() {
    concurrent_proposals(None);
}

#[test]
fn concurrent_proposals_write_one_replays_answer_first_and_authority_stores_nothing_on_postgres() {
    concurrent_proposals(Some(&PgSchema::create("workspace_cas")));
}

/// Twenty concurrent proposals, replays, a reused key and authority, on the
/// store at `pg` (default: the server's SQLite file).
fn concurrent_proposals(pg: Option<&PgSchema>) {
    let backend = Backend::start();
    let flags = ["--exploration-backend", "testbench"];
    let (server, _) = serve_on(&backend, &[], &flags, pg.map(|p| p.url.as_str()));
    let rows = |table: &str| count(&server, pg, table);
    let tokens = people(&server);
    let (url, alice) = (server.url.clone(), tokens["alice"].clone());
    let sid = plan_session(&url, &alice)["session_id"]
        .as_str()
        .expect("an id")
        .to_owned();
    let object = |i: usize| json!({"environment": "dev", "tests": [{"name": format!("Check {i}"), "tags": ["smoke"]}]});

    let threads: Vec<_> = (0..20)
        .map(|i| {
            let (url, alice, sid) = (url.clone(), alice.clone(), sid.clone());
            std::thread::spawn(move || {
                call_at(
                    &url,
                    &alice,
                    "propose_revision",
                    json!({"session_id": sid,
                    "proposal": {"object": object(i)}, "expected_version": 1,
                    "idempotency_key": format!("race-{i}")}),
                )
            })
        })
        .collect();
    let answers: Vec<Value> = threads
        .into_iter()
        .map(|t| t.join().expect("joined"))
        .collect();
    let won: Vec<usize> = (0..20)
        .filter(|i| answers[*i]["result"]["isError"] == json!(false))
        .collect();
    assert_eq!(won.len(), 1, "exactly one of twenty wins: {answers:?}");
    for (i, a) in answers.iter().enumerate().filter(|(i, _)| *i != won[0]) {
        let error = &a["result"]["structuredContent"]["error"];
        assert_eq!(
            error["code"],
            json!("WORKSPACE_VERSION_CONFLICT"),
            "{i}: {a}"
        );
        assert_eq!(error["current_version"], json!(2), "{i}: {a}");
    }
    let w = won[0];
    let winner = json!({"session_id": sid, "proposal": {"object": object(w)}, "expected_version": 1,
                        "idempotency_key": format!("race-{w}")});
    let replay = ok(&url, &alice, "propose_revision", winner.clone());
    assert_eq!(
        replay, answers[w]["result"]["structuredContent"],
        "a replay answers the first result"
    );
    let mut changed = winner;
    changed["proposal"]["object"]["environment"] = json!("staging");
    refused(
        &url,
        &alice,
        "propose_revision",
        changed,
        "IDEMPOTENCY_KEY_REUSED",
    );

    // Authority in a proposal is refused by where and what, and stores
    // nothing (URLs, paths and hashes elsewhere are data: see
    // `urls_paths_and_hashes_in_a_plan_are_data_and_its_start_url_a_checked_location`);
    // so is a plugin subject's component named by path or URL.
    let test = |extra: Value| {
        let mut t = json!({"name": "Z", "tags": []});
        t.as_object_mut()
            .expect("a test")
            .extend(extra.as_object().expect("fields").clone());
        json!({"object": {"environment": "dev", "tests": [t]}})
    };
    let carried = [
        (
            json!({"object": {"environment": "dev", "tests": [], "cookie": "sid=1"}}),
            "/object/cookie",
            "cookie",
        ),
        (
            json!({"object": {"environment": "dev", "tests": [], "api_token": "x"}}),
            "/object/api_token",
            "credential",
        ),
        (
            test(json!({"steps": ["send Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123"]})),
            "/object/tests/0/steps/0",
            "credential",
        ),
        (
            test(json!({"start_url": "http://169.254.169.254/latest/meta-data"})),
            "/object/tests/0/start_url",
            "location",
        ),
        (
            test(json!({"start_url": "http://localhost:8080/admin"})),
            "/object/tests/0/start_url",
            "location",
        ),
        (
            test(json!({"start_url": "file:///etc/passwd"})),
            "/object/tests/0/start_url",
            "location",
        ),
    ];
    for (i, (proposal, pointer, kind)) in carried.iter().enumerate() {
        let e = refused(
            &url,
            &alice,
            "propose_revision",
            json!({"session_id": sid, "proposal": proposal,
            "expected_version": 2, "idempotency_key": format!("authority-{i}")}),
            "AUTHORITY_REFUSED",
        );
        assert_eq!(
            (e["pointer"].clone(), e["kind"].clone()),
            (json!(pointer), json!(kind)),
            "{e}"
        );
    }
    let tool = ok(
        &url,
        &alice,
        "create_authoring_session",
        json!({"subject": "plugin:hello", "idempotency_key": "open-hello"}),
    );
    let again = ok(
        &url,
        &alice,
        "create_authoring_session",
        json!({"subject": "plugin:hello", "idempotency_key": "open-hello"}),
    );
    assert_eq!(tool, again, "a replayed open answers the same session");
    let tsid = tool["session_id"].as_str().expect("an id");
    for (i, component) in [
        "./target/hello.wasm",
        "https://example.com/hello.wasm",
        "/tmp/hello.wasm",
    ]
    .iter()
    .enumerate()
    {
        refused(
            &url,
            &alice,
            "propose_revision",
            json!({"session_id": tsid,
            "proposal": {"revision": {"component": component, "manifest": "upl_00000000000000000000000000000000"}},
            "expected_version": 1, "idempotency_key": format!("tool-{i}")}),
            "AUTHORITY_REFUSED",
        );
    }
    refused(
        &url,
        &alice,
        "propose_revision",
        json!({"session_id": tsid,
        "proposal": {"revision": {"component": "upl_00000000000000000000000000000000", "manifest": "upl_00000000000000000000000000000001"}},
        "expected_version": 1, "idempotency_key": "tool-unknown"}),
        "UPLOAD_NOT_FOUND",
    );
    let view = ok(
        &url,
        &alice,
        "get_authoring_session",
        json!({"session_id": sid}),
    );
    assert_eq!(
        (
            view["version"].clone(),
            view["proposals"].as_array().map(Vec::len)
        ),
        (json!(2), Some(1)),
        "{view}"
    );
    assert_eq!(rows("workspace_sessions"), 2);
    assert_eq!(
        rows("workspace_proposals"),
        1,
        "nothing partial of nineteen losers and every refusal"
    );
    assert_eq!(
        rows("workspace_mutations"),
        2,
        "the winner's answer, and the replayed open"
    );
    assert_eq!(rows("workspace_runs") + rows("workspace_promotions"), 0);
}

/// A session ends once: closing or abandoning it is a step of its version
/// under a key (a stale version is refused with the current one, a replay
/// answers the first result); abandoning it cancels its run still going in
/// the same step; an ended session takes no proposal, run, rebinding or
/// second end, and stays readable.
#[test]
fn a_session_ends_once_under_its_version_and_key_and_abandoning_it_cancels_its_runs() {
    let server = Server::start_with(&[T_RUN_ESCAPE], &["--run-workers", "1"]);
    let db = server.database_url().to_owned();
    let author = ["workspace:author", "explorations:run", "fixture:run"];
    role(&db, "demo", "author", &author);
    let password = person(&db, "demo", "alice", &["author"]);
    let alice = user_token(&server, "alice", &password);
    let url = &server.url;
    let open = || {
        let s = ok(
            url,
            &alice,
            "create_authoring_session",
            json!({"subject": "plugin:t-run-escape"}),
        );
        s["session_id"].as_str().expect("a session").to_owned()
    };

    let sid = open();
    let run = ok(
        url,
        &alice,
        "start_exploration",
        json!({"session_id": sid, "tool": "spin", "arguments": {},
               "expected_version": 1, "idempotency_key": "spin"}),
    );
    let run_id = run["run_id"].as_str().expect("a run").to_owned();
    let stale = refused(
        url,
        &alice,
        "abandon_authoring_session",
        json!({"session_id": sid, "expected_version": 1, "idempotency_key": "stale"}),
        "WORKSPACE_VERSION_CONFLICT",
    );
    assert_eq!(stale["current_version"], json!(2), "{stale}");
    let give_up = json!({"session_id": sid, "expected_version": 2, "idempotency_key": "give-up"});
    let gone = ok(url, &alice, "abandon_authoring_session", give_up.clone());
    assert_eq!(
        (&gone["state"], &gone["version"], &gone["runs_cancelled"]),
        (&json!("abandoned"), &json!(3), &json!([run_id])),
        "{gone}"
    );
    assert_eq!(
        ok(url, &alice, "abandon_authoring_session", give_up),
        gone,
        "a replayed key answers the first result"
    );
    let mut state = Value::Null;
    for _ in 0..10 {
        let r = ok(
            url,
            &alice,
            "get_exploration_result",
            json!({"run_id": run_id, "wait_seconds": 30}),
        );
        state = r["state"].clone();
        if state != json!("queued") && state != json!("running") && state != json!("cancelling") {
            break;
        }
    }
    assert_eq!(state, json!("cancelled"), "the session's run was cancelled");

    let late = |tool: &str, mut args: Value| {
        args["session_id"] = json!(sid);
        args["expected_version"] = json!(3);
        args["idempotency_key"] = json!(format!("late-{tool}"));
        refused(url, &alice, tool, args, "WORKSPACE_CLOSED");
    };
    late(
        "propose_revision",
        json!({"proposal": {"revision": {"component": "upl_x", "manifest": "upl_y"}}}),
    );
    late(
        "start_exploration",
        json!({"tool": "ping", "arguments": {}}),
    );
    late("close_authoring_session", json!({}));
    late("rebind_authoring_session", json!({}));
    let view = ok(
        url,
        &alice,
        "get_authoring_session",
        json!({"session_id": sid}),
    );
    assert_eq!(
        (&view["state"], &view["version"]),
        (&json!("abandoned"), &json!(3)),
        "{view}"
    );

    let done = open();
    let closed = ok(
        url,
        &alice,
        "close_authoring_session",
        json!({"session_id": done, "expected_version": 1, "idempotency_key": "done"}),
    );
    assert_eq!(
        (
            &closed["state"],
            &closed["version"],
            &closed["runs_cancelled"]
        ),
        (&json!("closed"), &json!(2), &json!([])),
        "{closed}"
    );
    let listed = ok(url, &alice, "list_authoring_sessions", json!({}));
    let states: Vec<&Value> = listed["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|s| &s["state"])
        .collect();
    assert_eq!(states, [&json!("closed"), &json!("abandoned")], "{listed}");

    // A page at a time, by the cursors each page gives.
    let page = |args: Value| ok(url, &alice, "list_authoring_sessions", args);
    let first = page(json!({"limit": 1}));
    assert_eq!(first["sessions"][0]["session_id"], json!(done), "{first}");
    assert_eq!(first["newer"], Value::Null, "{first}");
    let second = page(json!({"limit": 1, "before": first["older"]}));
    assert_eq!(second["sessions"][0]["session_id"], json!(sid), "{second}");
    assert_eq!(second["older"], Value::Null, "the last page: {second}");
    let back = page(json!({"limit": 1, "after": second["newer"]}));
    assert_eq!(back["sessions"], first["sessions"], "{back}");
    assert_eq!(back["newer"], Value::Null, "the first page again: {back}");
    refused(
        url,
        &alice,
        "list_authoring_sessions",
        json!({"before": "12.ws_forged"}),
        "INVALID_ARGUMENTS",
    );
}

/// Bytes reach the workspace over MCP, in chunks, each its own call: at
/// the offset the upload holds (a chunk sent twice, or one that skips
/// bytes, changes nothing and names the offset to send), from their
/// uploader only, checked against the digest given on the last chunk
/// (a mismatch drops the upload), within the kind's bound and a chunk's,
/// and begun within the upload rate the HTTP route shares.
#[test]
fn an_upload_over_mcp_arrives_in_order_from_its_uploader_within_its_bounds_and_rate() {
    let flags = ["--rate-limit-uploads", "4", "--rate-limit-window", "1h"];
    let server = Server::start_with(&[HELLO], &flags);
    let db = server.database_url().to_owned();
    role(&db, "demo", "author", &["workspace:author"]);
    let tokens: Vec<String> = ["alice", "bob"]
        .iter()
        .map(|who| {
            let password = person(&db, "demo", who, &["author"]);
            user_token(&server, who, &password)
        })
        .collect();
    let (url, alice, bob) = (&server.url, &tokens[0], &tokens[1]);

    // Four uploads begin below: all in one window.
    fresh_window(3600, Duration::from_secs(120));

    // 1: three chunks, in order, make one upload with the host's digest.
    let bytes: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
    let done = mcp_upload(url, alice, "manifest", &bytes, 1000);
    assert_eq!(
        (&done["size"], &done["kind"]),
        (&json!(3000), &json!("manifest")),
        "{done}"
    );
    assert!(
        done["handle"]
            .as_str()
            .is_some_and(|h| h.starts_with("upl_"))
    );

    // 2: out of order, another's, or not the bytes said.
    let begun = ok(
        url,
        alice,
        "begin_upload",
        json!({"kind": "manifest", "size": 6}),
    );
    let handle = begun["upload"].clone();
    let chunk = |token: &str, offset: u64, data: &[u8], last: Option<&str>| {
        let mut args = json!({"upload": handle, "offset": offset,
            "data": base64_of(data), "last": last.is_some()});
        if let Some(digest) = last {
            args["sha256"] = json!(digest);
        }
        call_at(url, token, "upload_chunk", args)
    };
    let code = |answer: &Value| answer["result"]["structuredContent"]["error"].clone();
    let first = chunk(alice, 0, b"aaa", None);
    assert_eq!(
        first["result"]["structuredContent"]["received"],
        json!(3),
        "{first}"
    );
    for offset in [0, 10] {
        let moved = code(&chunk(alice, offset, b"aaa", None));
        assert_eq!(
            (&moved["code"], &moved["received"]),
            (&json!("UPLOAD_OFFSET_MISMATCH"), &json!(3)),
            "{moved}"
        );
    }
    let bobs = code(&chunk(bob, 3, b"bbb", None));
    assert_eq!(bobs["code"], json!("UPLOAD_NOT_FOUND"), "{bobs}");
    let wrong = sha256_hex(b"something else");
    let mismatch = code(&chunk(alice, 3, b"bbb", Some(&wrong)));
    assert_eq!(
        (&mismatch["code"], &mismatch["sha256"]),
        (
            &json!("UPLOAD_DIGEST_MISMATCH"),
            &json!(sha256_hex(b"aaabbb"))
        ),
        "{mismatch}"
    );
    let dropped = code(&chunk(alice, 3, b"bbb", None));
    assert_eq!(
        dropped["code"],
        json!("UPLOAD_NOT_FOUND"),
        "dropped: {dropped}"
    );

    // 3 and 4: over the kind's bound before a byte, over a chunk's.
    let large = refused(
        url,
        alice,
        "begin_upload",
        json!({"kind": "signature", "size": 300_000}),
        "LIMIT_EXCEEDED",
    );
    assert_eq!(large["kind"], json!("signature"), "{large}");
    let big = ok(
        url,
        alice,
        "begin_upload",
        json!({"kind": "component", "size": 600_000}),
    );
    refused(
        url,
        alice,
        "upload_chunk",
        json!({"upload": big["upload"], "offset": 0, "data": base64_of(&vec![7u8; 600_000])}),
        "INVALID_ARGUMENTS",
    );

    // Four begun this window: the fifth, over MCP or HTTP, waits.
    let params = json!({"name": "begin_upload", "arguments": {"kind": "manifest", "size": 1}});
    let over = post_at(url, alice, "tools/call", "begin_upload", params);
    assert_eq!(over.status, 429, "{}", over.body);
    let body: Value = serde_json::from_str(&over.body).expect("JSON");
    assert_eq!(body["error"]["data"]["limit"], json!("uploads"), "{body}");
    let (status, body) = post_upload(&server, alice, "manifest", b"[plugin]");
    assert_eq!(status, 429, "the HTTP route shares the rate: {body}");
    // Bob's rate is his own.
    ok(
        url,
        bob,
        "begin_upload",
        json!({"kind": "manifest", "size": 1}),
    );
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
