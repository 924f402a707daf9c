//! Python and TypeScript plugins as workspace subjects, end to end through
//! the real binary: each language's reference plugin (built by `make
//! python-plugins` and `make ts-plugins`) authors a project's API scenarios
//! (`hello-py/scenarios:payments`, `hello-ts/…`) through its SDK's
//! `authoring` export. A session binds to the project's state as the
//! plugin reads it; a bad proposal is refused with the plugin's problems at
//! their pointers and stores nothing; a good one is normalized and diffed
//! in the plugin; promotion calls its promoting tool through the call path,
//! which writes once (a replay writes nothing), and a new session sees the
//! scenario. Whoever may not call the promoting tool may not author.
//! The Rust SDK's case is `e2e_workspace` (the testbench plugin's test plan).

mod support;

use serde_json::{Value, json};
use support::bench::Backend;
use support::languages::{reference, serve};
use support::oauth::user_token;
use support::workspace::{ok, person, refused, role};

#[test]
fn a_python_plugin_authors_scenarios_proposed_diffed_and_promoted_through_its_sdk() {
    scenarios_chain("python", "hello_py", "hello-py");
}

#[test]
fn a_typescript_plugin_authors_scenarios_proposed_diffed_and_promoted_through_its_sdk() {
    scenarios_chain("ts", "hello_ts", "hello-ts");
}

/// The chain for the reference plugin of `lang` (component `stem`, plugin
/// `plugin`), on a SQLite store.
fn scenarios_chain(lang: &str, stem: &str, plugin: &str) {
    let backend = Backend::start();
    let (server, _) = serve(&backend, reference(lang, "hello", stem));
    let url = server.database_url().to_owned();
    let suffix = stem.trim_start_matches("hello_");
    role(
        &url,
        "demo",
        "author",
        &["workspace:author", "hello:read", "hello:write"],
    );
    role(&url, "demo", "reader", &["workspace:author", "hello:read"]);
    let token = |user: &str, roles: &[&str]| {
        let password = person(&url, "demo", user, roles);
        user_token(&server, user, &password)
    };
    let (alice, rita) = (token("alice", &["author"]), token("rita", &["reader"]));
    let mcp = server.url.as_str();
    let subject = format!("{plugin}/scenarios:payments");

    // Who may not call the promoting tool may not author its kind.
    let open = json!({"subject": subject});
    let denied = refused(
        mcp,
        &rita,
        "create_authoring_session",
        open.clone(),
        "PERMISSION_DENIED",
    );
    assert!(
        denied
            .to_string()
            .contains(&format!("add_scenarios_{suffix}")),
        "{denied}"
    );

    let session = ok(mcp, &alice, "create_authoring_session", open.clone());
    let sid = session["session_id"]
        .as_str()
        .expect("a session id")
        .to_owned();
    assert_eq!(
        (&session["version"], &session["bound_to"]["name"]),
        (&json!(1), &json!("payments")),
        "{session}"
    );
    let bound = session["subject_version"].clone();

    // The plugin's problems, each at its pointer; nothing stored.
    let bad =
        json!({"object": {"scenarios": [{"name": " "}, {"name": "Refund", "tags": ["smoke"]}]}});
    let error = refused(
        mcp,
        &alice,
        "propose_revision",
        propose(&sid, bad, 1, "bad"),
        "PROPOSAL_INVALID",
    );
    assert_eq!(
        pointers(&error["problems"]),
        ["/scenarios/0/name", "/scenarios/1/tags"],
        "{error}"
    );

    // A good one: normalized (trimmed, deduped, only what is new) and
    // diffed by the plugin.
    let scenarios = json!([{"name": "Login flow", "tags": ["smoke"]}, {"name": " Checkout timeout ", "tags": ["smoke", "smoke"]}]);
    let good = json!({"object": {"scenarios": scenarios}, "summary": "a timeout check"});
    let proposed = ok(
        mcp,
        &alice,
        "propose_revision",
        propose(&sid, good.clone(), 1, "good"),
    );
    let added = json!({"name": "Checkout timeout", "tags": ["smoke"]});
    assert_eq!(
        proposed["proposal"]["validation"]["normalized"],
        json!({"project": 1, "scenarios": [added]}),
        "{proposed}"
    );
    let pid = proposed["proposal"]["proposal_id"]
        .as_str()
        .expect("a proposal")
        .to_owned();
    let diff = ok(
        mcp,
        &alice,
        "get_revision_diff",
        json!({"session_id": sid, "proposal_id": pid}),
    );
    assert_eq!(
        diff["diff"]["changes"],
        json!([{"op": "added", "item": "Checkout timeout", "after": added}]),
        "{diff}"
    );

    // Promotion is one call of the promoting tool, which writes once; a
    // replay answers the same and writes nothing.
    let writes = backend.writes();
    let promote = json!({"session_id": sid, "proposal_id": pid, "expected_version": 2, "idempotency_key": "promote"});
    let done = ok(mcp, &alice, "promote_revision", promote.clone());
    assert_eq!(done["promotion"]["state"], json!("promoted"), "{done}");
    assert_eq!(
        done["promotion"]["result"]["added"][0]["name"],
        json!("Checkout timeout"),
        "{done}"
    );
    assert_eq!(backend.writes(), writes + 1, "one scenario created");
    assert_eq!(ok(mcp, &alice, "promote_revision", promote), done);
    assert_eq!(backend.writes(), writes + 1, "a replay writes nothing");

    // The project moved: a new session is bound to its new state, in which
    // the scenario exists, so the same proposal adds nothing.
    let again = ok(
        mcp,
        &alice,
        "create_authoring_session",
        json!({"subject": subject, "idempotency_key": "again"}),
    );
    assert_ne!(again["subject_version"], bound, "{again}");
    let sid = again["session_id"].as_str().expect("a session id");
    let error = refused(
        mcp,
        &alice,
        "propose_revision",
        propose(sid, good, 1, "good-again"),
        "PROPOSAL_INVALID",
    );
    assert_eq!(pointers(&error["problems"]), [""], "{error}");
    assert!(error.to_string().contains("nothing to add"), "{error}");
}

/// `propose_revision`'s arguments.
fn propose(session: &str, proposal: Value, expected: i64, key: &str) -> Value {
    json!({"session_id": session, "proposal": proposal, "expected_version": expected, "idempotency_key": key})
}

/// The pointers of a refusal's problems, in order.
fn pointers(problems: &Value) -> Vec<&str> {
    let list = problems.as_array().map(Vec::as_slice).unwrap_or_default();
    list.iter()
        .map(|p| p["path"].as_str().unwrap_or("?"))
        .collect()
}
