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
use support::bench::{Backend, call_at, request_at, serve_on};
use support::oauth::user_token;
use support::workspace::{admin, ok, person, refused, role};
use support::{PgSchema, Server, Tools, new_signer, pin_into, python3, sign, trust};
use toolhost_fixtures::{HELLO, HELLO_NEXT};

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
    let server = Server::start_on(&[HELLO], &[], pg.map(|p| p.url.as_str()));
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
    let (status, body) = post_upload(&server, &tokens["vic"], "manifest", b"[plugin]");
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        count(&server, pg, "workspace_uploads"),
        3,
        "vic's upload stored nothing"
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
