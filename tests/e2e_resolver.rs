//! The resolver end to end (seeds 000 and 003): the real `toolhost serve`
//! with the `testbench` plugin, talking through the host's backend import
//! to the real testbench backend (in this process, so the tests read its
//! request counters), driven over HTTP like a stateless 2026-07-28 client
//! without elicitation, and by the Python SDK with and without it.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::bench::{BACKEND_TOKEN, Backend, answer, call, serve};
use support::oauth::user_token;
use support::{DEMO_PASSWORD, Server, Tools};
use toolhost_fixtures::T_ESCAPE_BACKEND;

/// A clarification's parts a test compares, one by one.
fn question(v: &Value) -> (String, String, Vec<(i64, String)>, Value, String) {
    let candidates = v["candidates"]
        .as_array()
        .unwrap_or_else(|| panic!("a clarification: {v}"))
        .iter()
        .map(|c| {
            (
                c["id"].as_i64().expect("id"),
                c["name"].as_str().expect("name").to_owned(),
            )
        })
        .collect();
    (
        v["reason"].as_str().expect("reason").to_owned(),
        v["ask_user"].as_str().expect("ask_user").to_owned(),
        candidates,
        v["scoped_by"].clone(),
        v["field"].as_str().expect("field").to_owned(),
    )
}

fn pairs(items: &[(i64, &str)]) -> Vec<(i64, String)> {
    items.iter().map(|(i, n)| (*i, n.to_string())).collect()
}

/// Turn 3 of the contract: the two smoke scenarios of payments, queued.
fn assert_queued(v: &Value) {
    assert_eq!(v["dry_run"], json!(false), "{v}");
    assert_eq!(v["tags"], json!(["smoke"]));
    assert_eq!(v["environment"], "staging");
    assert_eq!(v["project"], "payments");
    assert_eq!(v["skipped"], json!([]));
    let queued = v["queued"].as_array().expect("queued");
    let got: Vec<(&str, i64, &str, &str)> = queued
        .iter()
        .map(|q| {
            assert!(
                q["executionId"].as_str().is_some_and(|s| !s.is_empty()),
                "an opaque execution id: {q}"
            );
            (
                q["kind"].as_str().expect("kind"),
                q["id"].as_i64().expect("id"),
                q["name"].as_str().expect("name"),
                q["status"].as_str().expect("status"),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("api_scenario", 204, "Login flow", "QUEUED"),
            ("api_scenario", 205, "Cart", "QUEUED")
        ]
    );
}

#[test]
fn the_contract_conversation_reproduces_by_names_and_by_ids() {
    let tools = Tools::require();
    let backend = Backend::start();
    let (server, token) = serve(&backend, &[]);

    // Turn 1: no environment.
    let turn1 = answer(&server, &token, "run_by_tag", json!({"tags": ["smoke"]}));
    assert_eq!(
        question(&turn1),
        (
            "missing_required".into(),
            "Which environment do you want to run these tests in? Available: dev, staging, prod."
                .into(),
            pairs(&[(11, "dev"), (12, "staging"), (13, "prod")]),
            json!({}),
            "environment".into()
        )
    );
    // Turn 2: staging; the project is ambiguous between the two with smoke tests.
    let turn2 = answer(
        &server,
        &token,
        "run_by_tag",
        json!({"tags": ["smoke"], "environment": "staging"}),
    );
    assert_eq!(
        question(&turn2),
        (
            "ambiguous".into(),
            "Tag(s) ['smoke'] match tests across multiple projects: payments, auth. Which project do you want to run in?".into(),
            pairs(&[(1, "payments"), (2, "auth")]),
            json!({}),
            "project".into()
        )
    );
    assert_eq!(backend.writes(), 0, "a question runs nothing");
    // Turn 3: payments; queued.
    let turn3 = answer(
        &server,
        &token,
        "run_by_tag",
        json!({"tags": ["smoke"], "environment": "staging", "project": "payments"}),
    );
    assert_queued(&turn3);
    assert_eq!(backend.writes(), 2);

    // The same conversation with ids, as digits and as integers.
    let by_id = answer(
        &server,
        &token,
        "run_by_tag",
        json!({"tags": ["smoke"], "environment": "12"}),
    );
    assert_eq!(question(&by_id), question(&turn2));
    let by_id = answer(
        &server,
        &token,
        "run_by_tag",
        json!({"tags": ["smoke"], "environment": 12, "project": 1}),
    );
    assert_queued(&by_id);
    assert_eq!(backend.writes(), 4);

    // The answer is a normal result: text = ask_user, no error.
    let raw = call(&server, &token, "run_by_tag", json!({"tags": ["smoke"]}));
    assert_eq!(
        raw["result"]["content"][0]["text"], turn1["ask_user"],
        "{raw}"
    );
    // One audit row per call, questions stamped needs_clarification.
    let rows = audit(&tools, &server, "run_by_tag");
    assert_eq!(
        rows,
        [
            "needs_clarification",
            "needs_clarification",
            "executed",
            "needs_clarification",
            "executed",
            "needs_clarification"
        ]
    );
}

/// The outcomes of `tool`'s audit rows, oldest first (read with Python's
/// sqlite3 from the server's store).
fn audit(tools: &Tools, server: &Server, tool: &str) -> Vec<String> {
    let database = server.database_path();
    let script = "import sqlite3,sys\nfor (o,) in sqlite3.connect(sys.argv[1]).execute('SELECT outcome FROM audit WHERE tool = ? ORDER BY id', (sys.argv[2],)): print(o)";
    let out = std::process::Command::new(&tools.python)
        .args(["-c", script])
        .arg(&database)
        .arg(tool)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_branch_of_the_tree_once_end_to_end() {
    let backend = Backend::start();
    let (server, token) = serve(&backend, &[]);
    let ask = |args: Value| answer(&server, &token, "list_environments", args);
    // missing_required: every project.
    let (reason, _, candidates, _, field) = question(&ask(json!({})));
    assert_eq!(
        (reason.as_str(), field.as_str()),
        ("missing_required", "project")
    );
    assert_eq!(candidates, pairs(&[(1, "payments"), (2, "auth")]));
    // exact name (any case), a unique substring, an id: answers.
    for value in [json!("PAYMENTS"), json!("pay"), json!(1), json!("1")] {
        let v = ask(json!({"project": value}));
        assert_eq!(v["project"], "payments", "{value}: {v}");
    }
    // several substrings: ambiguous between them.
    let (reason, _, candidates, _, _) = question(&ask(json!({"project": "a"})));
    assert_eq!(reason, "ambiguous");
    assert_eq!(candidates, pairs(&[(1, "payments"), (2, "auth")]));
    // nothing: not_found with everything in scope.
    let (reason, text, candidates, _, _) = question(&ask(json!({"project": "zzz"})));
    assert_eq!(reason, "not_found");
    assert!(text.contains("zzz") && !text.contains('\n'), "{text}");
    assert_eq!(candidates.len(), 2);

    // Pins narrow through parents, and say so in scoped_by: the "Login
    // flow" in two projects is ambiguous until the project is named.
    let run = |args: Value| answer(&server, &token, "execute_scenario", args);
    let (reason, _, candidates, scoped, _) = question(&run(
        json!({"scenario": "Login flow", "environment": "dev"}),
    ));
    assert_eq!(reason, "ambiguous");
    assert_eq!(
        candidates,
        pairs(&[(204, "Login flow"), (301, "Login flow")])
    );
    assert_eq!(scoped, json!({}));
    let asked = run(json!({"scenario": "Login flow", "environment": "dev"}));
    let labels: Vec<&str> = asked["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .map(|c| c["label"].as_str().expect("label"))
        .collect();
    assert_eq!(
        labels,
        ["Login flow · payments", "Login flow · auth"],
        "namesakes get distinct labels"
    );
    let (reason, _, candidates, scoped, _) = question(&run(
        json!({"scenario": "nothing", "project": "auth", "environment": "dev"}),
    ));
    assert_eq!(reason, "not_found");
    assert_eq!(
        candidates,
        pairs(&[(301, "Login flow"), (302, "Password reset")]),
        "never wider than the pin"
    );
    assert_eq!(scoped, json!({"project": "auth"}));
    let done = run(json!({"scenario": "Login flow", "project": "payments", "environment": "dev"}));
    assert_eq!(done["queued"][0]["id"], 204, "{done}");

    // The cap: 30 projects offer 25.
    let mut seed = testbench::Seed::contract();
    for i in 0..30 {
        seed.projects.push(testbench::Project {
            id: 700 + i,
            name: format!("bulk {i:02}"),
            tenant: "demo".into(),
            people: None,
        });
    }
    backend.running.handle.load(seed).expect("a valid seed");
    // A conversation keeps its snapshot; a new one (another client) sees the new rows.
    let cached = question(&answer(&server, &token, "list_pipelines", json!({})));
    assert_eq!(
        cached.2.len(),
        2,
        "the conversation's snapshot is unchanged"
    );
    let fresh = user_token(&server, "demo", DEMO_PASSWORD);
    let (_, text, candidates, _, _) =
        question(&answer(&server, &fresh, "list_pipelines", json!({})));
    assert_eq!(candidates.len(), 25);
    assert!(text.contains("and 7 more"), "{text}");
}

#[test]
fn a_five_turn_conversation_fetches_the_projects_once() {
    let backend = Backend::start();
    let (server, token) = serve(&backend, &[]);
    let turns = [
        ("list_environments", json!({"project": "payments"})),
        ("find_scenarios", json!({"project": "pay"})),
        ("list_pipelines", json!({"project": 1})),
        ("list_project_applications", json!({"project": "payments"})),
        ("find_ui_tests", json!({"project": "PAYMENTS"})),
    ];
    for (tool, args) in turns {
        let v = answer(&server, &token, tool, args);
        assert_eq!(v["project"], "payments", "{tool}: {v}");
    }
    assert_eq!(backend.requests("GET /api/projects"), 1);
    // Another client of the same person is another conversation.
    let other = user_token(&server, "demo", DEMO_PASSWORD);
    answer(
        &server,
        &other,
        "list_environments",
        json!({"project": "payments"}),
    );
    assert_eq!(backend.requests("GET /api/projects"), 2);
}

/// Adds tenant `acme` with an admin `ann`; her token.
fn acme_admin(server: &Server) -> String {
    for args in [
        vec!["tenant", "add", "acme"],
        vec!["role", "add", "admin", "--tenant", "acme", "--admin"],
    ] {
        assert!(server.admin(&args).status.success(), "{args:?}");
    }
    let out = server.admin(&["user", "add", "ann", "--tenant", "acme"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let password = text
        .lines()
        .find_map(|l| l.strip_prefix("password: "))
        .expect("a generated password")
        .to_owned();
    assert!(
        server
            .admin(&["grant", "admin", "ann", "--tenant", "acme"])
            .status
            .success()
    );
    user_token(server, "ann", &password)
}

#[test]
fn another_tenants_namesake_never_appears_even_when_the_backend_leaks() {
    let backend = Backend::start();
    let (server, _demo) = serve(&backend, &[]);
    let ann = acme_admin(&server);
    // The backend forgets its tenant predicate: every tenant's rows come back.
    backend.running.handle.set_leak(true);
    let v = answer(&server, &ann, "list_environments", json!({}));
    let (_, text, candidates, _, _) = question(&v);
    assert_eq!(candidates, pairs(&[(101, "payments"), (102, "billing")]));
    assert!(!text.contains("auth"), "{text}");
    let v = answer(
        &server,
        &ann,
        "list_environments",
        json!({"project": "payments"}),
    );
    assert_eq!(v["project"], "payments");
    // The other tenant's id is answered exactly like one that exists nowhere.
    let foreign = answer(&server, &ann, "list_pipelines", json!({"project": 1}));
    let nowhere = answer(&server, &ann, "list_pipelines", json!({"project": 999}));
    assert_eq!(question(&foreign).0, "not_found");
    let masked = |v: &Value, id: &str| {
        let mut v = v.clone();
        let text = v["ask_user"].as_str().expect("ask_user").replace(id, "N");
        v["ask_user"] = json!(text);
        v
    };
    assert_eq!(
        masked(&foreign, "\"1\""),
        masked(&nowhere, "\"999\""),
        "a foreign id is answered like a missing one"
    );
    assert!(
        server.log().contains("tenancy violation"),
        "the dropped rows are logged as a violation"
    );
}

#[test]
fn the_backend_token_never_leaves_the_host_and_undeclared_backends_are_refused() {
    let backend = Backend::start();
    let (server, token) = serve(&backend, &[T_ESCAPE_BACKEND]);
    let mut seen = Vec::new();
    for (tool, args) in [
        (
            "run_by_tag",
            json!({"tags": ["smoke"], "environment": "dev", "project": "auth"}),
        ),
        ("list_environments", json!({"project": "payments"})),
        ("summarize_execution", json!({"execution_id": "ex-1"})),
        ("get_execution_status", json!({"execution_id": "ex-1"})),
    ] {
        seen.push(call(&server, &token, tool, args).to_string());
    }
    // A plugin that does not declare the backend cannot reach it, whatever
    // path it tries; the one it declares is not configured.
    let before = backend.running.handle.counters().total();
    for path in ["/api/_echo", "//127.0.0.1/api/_echo", "/../api/_echo"] {
        for name in ["testbench", "decoy"] {
            let r = answer(
                &server,
                server.token(),
                "reach",
                json!({"backend": name, "path": path, "headers": [["Authorization", "Bearer forged"]]}),
            );
            assert_eq!(r["ok"], json!(false), "{name} {path}: {r}");
            seen.push(r.to_string());
        }
    }
    assert_eq!(
        backend.running.handle.counters().total(),
        before,
        "the backend saw nothing"
    );
    let log = server.log();
    let store = std::fs::read(server.database_path()).expect("read the store");
    for (what, text) in [("results", seen.join("\n")), ("server log", log)] {
        assert!(
            !text.contains(BACKEND_TOKEN),
            "the backend token is in the {what}"
        );
    }
    assert!(
        !store
            .windows(BACKEND_TOKEN.len())
            .any(|w| w == BACKEND_TOKEN.as_bytes()),
        "the backend token is in the store"
    );
}

#[test]
fn the_python_sdk_answers_questions_by_elicitation_or_gets_the_clarification() {
    let tools = Tools::require();
    let backend = Backend::start();
    let (server, _) = serve(&backend, &[]);
    let token = server.service_token("mcp testbench:read testbench:run");
    let mut cmd = tools.python("python_elicit.py", &[&server.url]);
    cmd.env("TOOLHOST_E2E_BEARER", &token);
    let out = server.run_client("python elicitation client", cmd, Duration::from_secs(180));
    assert!(out.contains("ok  all"), "{out}");
    // Each elicited run queued the two payments scenarios once.
    assert_eq!(backend.writes(), 4);
}

/// `completion/complete` of `argument` of `prompt` starting with `value`,
/// stateless, as `token`: the completion's values.
fn complete(
    server: &Server,
    token: &str,
    prompt: &str,
    argument: &str,
    value: &str,
) -> Vec<String> {
    let params = json!({
        "ref": {"type": "ref/prompt", "name": prompt},
        "argument": {"name": argument, "value": value},
    });
    let answer = support::bench::request_at(&server.url, token, "completion/complete", "", params);
    let values = answer["result"]["completion"]["values"]
        .as_array()
        .unwrap_or_else(|| panic!("a completion: {answer}"));
    values
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn a_prompt_argument_completes_from_the_callers_tenant_only_even_when_the_backend_leaks() {
    let backend = Backend::start();
    let (server, demo) = serve(&backend, &[]);
    let ann = acme_admin(&server);
    backend.running.handle.set_leak(true);
    // demo's projects include auth; acme's are payments and billing: the
    // namesake `payments` of each tenant is its own, and auth never
    // reaches acme even though the backend answers every tenant's rows.
    let demo_all = complete(&server, &demo, "review_test_plan", "project", "");
    assert!(demo_all.contains(&"auth".to_owned()), "{demo_all:?}");
    assert!(!demo_all.contains(&"billing".to_owned()), "{demo_all:?}");
    let acme_all = complete(&server, &ann, "review_test_plan", "project", "");
    assert_eq!(acme_all, ["billing", "payments"]);
    assert_eq!(
        complete(&server, &ann, "review_test_plan", "project", "PA"),
        ["payments"]
    );
    assert!(complete(&server, &ann, "review_test_plan", "project", "au").is_empty());
    assert!(
        server
            .log()
            .contains("tenancy violation: the plugin listed rows of another tenant"),
        "the host's floor dropped the rows the backend leaked"
    );
    // The prompt itself: listed, and filled in for the caller.
    let listed = support::bench::request_at(&server.url, &ann, "prompts/list", "", json!({}));
    let names: Vec<&str> = (listed["result"]["prompts"]
        .as_array()
        .expect("prompts")
        .iter())
    .filter_map(|p| p["name"].as_str())
    .collect();
    assert!(names.contains(&"review_test_plan"), "{listed}");
    let params = json!({"name": "review_test_plan", "arguments": {"project": "payments"}});
    let got =
        support::bench::request_at(&server.url, &ann, "prompts/get", "review_test_plan", params);
    let text = got["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("project payments"), "{got}");
    // Without the argument it needs: invalid params, the plugin not run.
    let params = json!({"name": "review_test_plan", "arguments": {}});
    let missing =
        support::bench::post_at(&server.url, &ann, "prompts/get", "review_test_plan", params);
    assert!(missing.body.contains("needs argument"), "{}", missing.body);
    // Each get wrote one audit row: the filled-in one executed, the
    // refused one an error with its code.
    let rows = ["audit", "search", "--tool", "prompt:review_test_plan"];
    let listed = String::from_utf8_lossy(&server.admin(&rows).stdout).into_owned();
    assert_eq!(listed.matches("executed").count(), 1, "{listed}");
    assert_eq!(listed.matches("INVALID_ARGUMENTS").count(), 1, "{listed}");
}
