//! Approval gates end to end (seed 002, story 3): a run on the `prod`
//! environment stops with `approval_required` before any side effect, a
//! person decides it with `decide_approval` from an MCP client, and the
//! retry with the gate runs exactly once; deny, expiry, replay, changed
//! arguments and a deciding service are each refused with their own code;
//! idempotency keys answer a retried mutation with its first result.

mod support;

use std::thread;

use serde_json::{Value, json};
use support::bench::{Backend, answer, call, call_at, serve, serve_on};
use support::oauth::approver;
use support::{PgSchema, Server};

/// `run_by_tag` on prod for payments' smoke tests.
fn prod_run() -> Value {
    json!({"tags": ["smoke"], "environment": "prod", "project": "payments"})
}

/// [`prod_run`] again, with the id of the gate that approved it.
fn gated_prod_run(gate: &str) -> Value {
    with_gate(&prod_run(), gate)
}

/// The gate of an `approval_required` answer.
fn gate_of(v: &Value) -> (String, Value) {
    let g = &v["approval_required"];
    let id = g["gate_id"]
        .as_str()
        .unwrap_or_else(|| panic!("approval_required: {v}"));
    (id.to_owned(), g.clone())
}

/// The error code of a call that must fail.
fn code(v: &Value) -> String {
    assert_eq!(v["result"]["isError"], json!(true), "{v}");
    v["result"]["structuredContent"]["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn with_gate(args: &Value, gate: &str) -> Value {
    let mut a = args.clone();
    a["gate_id"] = json!(gate);
    a
}

#[test]
fn a_prod_run_waits_for_a_person_then_runs_once_on_sqlite() {
    let backend = Backend::start();
    let (server, demo) = serve(&backend, &[]);
    approval_round_trip(&backend, &server, &demo);
}

#[test]
fn a_prod_run_waits_for_a_person_then_runs_once_on_postgres() {
    let schema = PgSchema::create("gates");
    let backend = Backend::start();
    let (server, demo) = serve_on(&backend, &[], &[], Some(&schema.url));
    approval_round_trip(&backend, &server, &demo);
}

/// The whole loop: gate, refusals before the decision, the decision, fifty
/// concurrent retries of which one runs, replay.
fn approval_round_trip(backend: &Backend, server: &Server, demo: &str) {
    let ann = approver(server);
    let demo = demo.to_owned();

    let first = answer(server, &demo, "run_by_tag", prod_run());
    let (gate, view) = gate_of(&first);
    assert_eq!(view["risk"], "high");
    assert_eq!(view["reason_required"], json!(true));
    assert!(
        view["expires_at"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        "{view}"
    );
    let targets = view["targets"].as_array().expect("targets");
    assert!(
        targets
            .iter()
            .any(|t| t["kind"] == "environment" && t["tags"] == json!(["prod"])),
        "{view}"
    );
    assert_eq!(backend.writes(), 0, "nothing ran before approval");
    // An identical retry before the decision answers with the same gate.
    let again = answer(server, &demo, "run_by_tag", prod_run());
    assert_eq!(gate_of(&again).0, gate);
    // Retrying with the gate before the decision is refused.
    assert_eq!(
        code(&call(server, &demo, "run_by_tag", gated_prod_run(&gate))),
        "GATE_PENDING"
    );

    // The approver sees it, and must give a reason for a high-risk gate.
    let listed = answer(server, &ann, "list_pending_approvals", json!({}));
    let ids: Vec<&str> = listed["gates"]
        .as_array()
        .expect("gates")
        .iter()
        .filter_map(|g| g["gate_id"].as_str())
        .collect();
    assert_eq!(ids, [gate.as_str()]);
    let no_reason = call(
        server,
        &ann,
        "decide_approval",
        json!({"gate_id": gate, "decision": "confirm"}),
    );
    assert_eq!(code(&no_reason), "REASON_REQUIRED");
    // The requester may not approve their own gate.
    let own = call(
        server,
        &demo,
        "decide_approval",
        json!({"gate_id": gate, "decision": "confirm", "reason": "mine"}),
    );
    assert_eq!(code(&own), "SELF_APPROVAL");
    // A service may list but never decide.
    let service = server.service_token("mcp approvals:read approvals:decide");
    let listed = answer(server, &service, "list_pending_approvals", json!({}));
    assert!(listed["gates"].is_array(), "{listed}");
    let by_service = call(
        server,
        &service,
        "decide_approval",
        json!({"gate_id": gate, "decision": "confirm", "reason": "bot"}),
    );
    assert_eq!(code(&by_service), "PERMISSION_DENIED");

    let decided = answer(
        server,
        &ann,
        "decide_approval",
        json!({"gate_id": gate, "decision": "confirm", "reason": "release window"}),
    );
    assert_eq!(decided["state"], "confirmed");
    assert_eq!(decided["reason"], "release window");
    // A second decision is refused.
    let twice = call(
        server,
        &ann,
        "decide_approval",
        json!({"gate_id": gate, "decision": "deny", "reason": "x"}),
    );
    assert_eq!(code(&twice), "GATE_DECIDED");
    // Changed arguments with the same gate are refused, and run nothing.
    let mut changed = gated_prod_run(&gate);
    changed["dry_run"] = json!(true);
    assert_eq!(
        code(&call(server, &demo, "run_by_tag", changed)),
        "GATE_MISMATCH"
    );
    assert_eq!(backend.writes(), 0);

    // Fifty concurrent retries with the gate: exactly one runs.
    let url = server.url.clone();
    let answers: Vec<Value> = thread::scope(|s| {
        let handles: Vec<_> = (0..50)
            .map(|_| s.spawn(|| call_at(&url, &demo, "run_by_tag", gated_prod_run(&gate))))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a retry"))
            .collect()
    });
    let ran = answers
        .iter()
        .filter(|a| a["result"]["isError"] == json!(false))
        .count();
    assert_eq!(ran, 1, "exactly one retry ran");
    assert!(
        answers
            .iter()
            .filter(|a| a["result"]["isError"] == json!(true))
            .all(|a| code(a) == "GATE_CONSUMED")
    );
    assert_eq!(
        backend.writes(),
        2,
        "one batch: the two payments smoke scenarios"
    );
    // Replay after consumption is refused.
    assert_eq!(
        code(&call(server, &demo, "run_by_tag", gated_prod_run(&gate))),
        "GATE_CONSUMED"
    );
    assert_eq!(backend.writes(), 2);
    // A non-prod run is not gated.
    let staging = answer(
        server,
        &demo,
        "run_by_tag",
        json!({"tags": ["smoke"], "environment": "staging", "project": "payments"}),
    );
    assert_eq!(
        staging["queued"].as_array().map(Vec::len),
        Some(2),
        "{staging}"
    );
}

#[test]
fn a_denied_or_expired_gate_never_runs() {
    let backend = Backend::start();
    let (server, demo) = serve_on(&backend, &[], &["--gate-ttl", "3s"], None);
    let ann = approver(&server);

    let (denied, _) = gate_of(&answer(&server, &demo, "run_by_tag", prod_run()));
    let d = answer(
        &server,
        &ann,
        "decide_approval",
        json!({"gate_id": denied, "decision": "deny", "reason": "freeze"}),
    );
    assert_eq!(d["state"], "denied");
    assert_eq!(
        code(&call(&server, &demo, "run_by_tag", gated_prod_run(&denied))),
        "GATE_DENIED"
    );

    // A new request opens a new gate; left to expire, it is refused.
    let other = json!({"tags": ["smoke"], "environment": "prod", "project": "auth"});
    let (expiring, _) = gate_of(&answer(&server, &demo, "run_by_tag", other.clone()));
    thread::sleep(std::time::Duration::from_millis(3500));
    let late = call(
        &server,
        &ann,
        "decide_approval",
        json!({"gate_id": expiring, "decision": "confirm", "reason": "late"}),
    );
    assert_eq!(code(&late), "GATE_EXPIRED");
    assert_eq!(
        code(&call(
            &server,
            &demo,
            "run_by_tag",
            with_gate(&other, &expiring)
        )),
        "GATE_EXPIRED"
    );
    assert_eq!(backend.writes(), 0, "nothing ran");
}

#[test]
fn an_idempotency_key_answers_a_retry_with_the_first_result() {
    let backend = Backend::start();
    let (server, demo) = serve(&backend, &[]);
    let args = json!({"project": "payments", "name": "Checkout smoke", "tags": ["smoke"], "idempotency_key": "k-1"});
    let first = answer(&server, &demo, "create_api_scenario", args.clone());
    let second = answer(&server, &demo, "create_api_scenario", args.clone());
    assert_eq!(first, second, "the stored result");
    assert_eq!(backend.writes(), 1, "one side effect");
    let mut other = args.clone();
    other["name"] = json!("Another");
    let reused = call(&server, &demo, "create_api_scenario", other);
    assert_eq!(code(&reused), "IDEMPOTENCY_KEY_REUSED");
    assert_eq!(backend.writes(), 1);
    // Without a key, each call is its own.
    let mut plain = args;
    plain
        .as_object_mut()
        .expect("object")
        .remove("idempotency_key");
    answer(&server, &demo, "create_api_scenario", plain.clone());
    answer(&server, &demo, "create_api_scenario", plain);
    assert_eq!(backend.writes(), 3);
}

#[test]
fn a_run_waiting_at_a_human_checkpoint_continues_once_a_person_decides() {
    let backend = Backend::start();
    let (server, demo) = serve(&backend, &[]);
    let ann = approver(&server);
    let run = answer(
        &server,
        &demo,
        "execute_scenario",
        json!({"scenario": "Checkout manual review", "environment": "staging", "project": "payments"}),
    );
    let execution = run["queued"][0]["executionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{run}"))
        .to_owned();
    // Reading the status moves it on; it stops at the human review step.
    let mut status = Value::Null;
    for _ in 0..4 {
        status = answer(
            &server,
            &demo,
            "get_execution_status",
            json!({"execution_id": execution}),
        );
        if status["status"] == "WAITING_HUMAN" {
            break;
        }
    }
    assert_eq!(status["status"], "WAITING_HUMAN", "{status}");
    let checkpoint = status["checkpoint"]["checkpoint_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{status}"))
        .to_owned();

    let listed = answer(&server, &ann, "list_checkpoints", json!({}));
    let row = listed["checkpoints"]
        .as_array()
        .expect("checkpoints")
        .iter()
        .find(|c| c["checkpoint_id"] == json!(checkpoint))
        .unwrap_or_else(|| panic!("listed: {listed}"))
        .clone();
    assert_eq!(
        (row["version"].clone(), row["state"].clone()),
        (json!(1), json!("waiting"))
    );

    let decide = |token: &str, version: u32| {
        call(
            &server,
            token,
            "decide_checkpoint",
            json!({
                "checkpoint_id": checkpoint, "disposition": "confirm", "expected_version": version,
                "reason": "checked the receipt by hand",
            }),
        )
    };
    let service = server.service_token("mcp checkpoints:read checkpoints:decide");
    assert_eq!(
        code(&decide(&service, 1)),
        "PERMISSION_DENIED",
        "no automated origin decides"
    );
    assert_eq!(code(&decide(&ann, 2)), "CHECKPOINT_VERSION_CONFLICT");
    let decided = decide(&ann, 1);
    assert_eq!(decided["result"]["isError"], json!(false), "{decided}");
    let view = &decided["result"]["structuredContent"];
    assert_eq!(
        (view["version"].clone(), view["outcome"].clone()),
        (json!(2), json!("passed"))
    );
    assert_eq!(code(&decide(&ann, 2)), "CHECKPOINT_DECIDED");

    // The next status read carries the disposition to the backend, once.
    let done = answer(
        &server,
        &demo,
        "get_execution_status",
        json!({"execution_id": execution}),
    );
    assert_eq!(done["status"], "PASSED", "{done}");
    let again = answer(
        &server,
        &demo,
        "get_execution_status",
        json!({"execution_id": execution}),
    );
    assert_eq!(again["status"], "PASSED", "{again}");
    assert_eq!(
        backend.requests("POST /api/executions/{executionId}/disposition"),
        1
    );
}

/// Gates opened for the paging test: more than a page of 50, twice over.
const GATES: usize = 120;

#[test]
fn pending_approvals_page_from_the_newest_by_cursor_and_a_tool_filter_is_the_stores() {
    let backend = Backend::start();
    let flags = [
        "--rate-limit-per-principal",
        "10000",
        "--rate-limit-writes",
        "10000",
    ];
    let (server, demo) = serve_on(&backend, &[], &flags, None);
    let mut opened: Vec<String> = (0..GATES)
        .map(|i| {
            let tags = ["smoke".to_owned(), format!("t{i}")];
            let args = json!({"tags": tags, "environment": "prod", "project": "payments"});
            let first = answer(&server, &demo, "run_by_tag", args);
            let (gate, _) = gate_of(&first);
            gate
        })
        .collect();
    opened.reverse();

    let mut listed = Vec::new();
    let mut sizes = Vec::new();
    let mut args = json!({"limit": 50});
    loop {
        let page = answer(&server, &demo, "list_pending_approvals", args);
        let gates = page["gates"].as_array().expect("gates");
        sizes.push(gates.len());
        listed.extend(
            gates
                .iter()
                .map(|g| g["gate_id"].as_str().expect("an id").to_owned()),
        );
        match page["next_cursor"].as_str() {
            Some(next) => args = json!({"limit": 50, "cursor": next}),
            None => break,
        }
    }
    assert_eq!(sizes, [50, 50, 20]);
    assert_eq!(listed, opened, "every gate once, newest first");

    // The tool's filter is the store's: its gates past the first hundred
    // are found; another tool's are none.
    let all = json!({"filter": {"tool": "run_by_tag"}});
    let first = answer(&server, &demo, "list_pending_approvals", all);
    assert_eq!(first["gates"].as_array().map(Vec::len), Some(100));
    let older = json!({"filter": {"tool": "run_by_tag"}, "cursor": first["next_cursor"]});
    let rest = answer(&server, &demo, "list_pending_approvals", older);
    assert_eq!(rest["gates"].as_array().map(Vec::len), Some(20));
    assert!(rest.get("next_cursor").is_none(), "{rest}");
    let other = json!({"filter": {"tool": "list_projects"}});
    let none = answer(&server, &demo, "list_pending_approvals", other);
    assert_eq!(none["gates"], json!([]));

    // A cursor the listing did not answer is refused, and lists nothing.
    let forged = call(
        &server,
        &demo,
        "list_pending_approvals",
        json!({"cursor": "12.svc_1"}),
    );
    assert_eq!(code(&forged), "INVALID_ARGUMENTS", "{forged}");
}
