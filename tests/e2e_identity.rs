//! Identity to backends end to end (issue 46): the real `toolhost serve`
//! tells the real testbench backend who acts (`--backend-assertion
//! testbench`), the backend verifies each assertion against the host's
//! JWKS and shows each person only the projects they may see, so the
//! resolver's candidates are the caller's own.

mod support;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use support::Server;
use support::bench::{Backend, answer, serve_on};
use support::echo::{Echo, nowhere, reach_echo};
use support::oauth::approver;

/// The project only `demo` may see: a name no other text of the host has.
const HIDDEN: &str = "vault";

/// The `sub` of an access token (its payload, undecoded by any key).
fn subject(token: &str) -> String {
    let payload = token.split('.').nth(1).expect("a JWT");
    let claims: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).expect("base64url"))
            .expect("JSON claims");
    claims["sub"].as_str().expect("a subject").to_owned()
}

/// From now on the backend requires the host's identity assertions.
fn require_assertions(backend: &Backend, server: &Server) {
    let check = testbench::AssertionCheck {
        issuer: server.issuer(),
        audience: "testbench".into(),
    };
    backend.running.handle.require_assertions(check);
}

/// The candidates' names of a clarification.
fn names(v: &Value) -> Vec<String> {
    let candidates = v["candidates"].as_array();
    let candidates = candidates.unwrap_or_else(|| panic!("a clarification: {v}"));
    (candidates.iter())
        .map(|c| c["name"].as_str().expect("a name").to_owned())
        .collect()
}

/// Every audit row: (call id, principal, client id, tool, outcome), read
/// with Python's sqlite3 from the server's store.
fn audit_rows(server: &Server) -> Vec<[String; 5]> {
    let script = "import sqlite3,sys\nfor r in sqlite3.connect(sys.argv[1]).execute('SELECT call_id, principal, client_id, tool, outcome FROM audit ORDER BY id'): print('\\t'.join(str(c) for c in r))";
    let database = server.database_path();
    let text = support::python3(script, &[database.to_str().expect("a UTF-8 path")]);
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            [f[0], f[1], f[2], f[3], f[4]].map(str::to_owned)
        })
        .collect()
}

#[test]
fn two_people_get_their_own_candidates_and_no_foreign_project_is_named() {
    let backend = Backend::start();
    let (server, demo) = serve_on(&backend, &[], &["--backend-assertion", "testbench"], None);
    let ann = approver(&server);
    // The contract's `auth` project, renamed and restricted to demo.
    let mut seed = testbench::Seed::contract();
    for p in seed.projects.iter_mut().filter(|p| p.id == 2) {
        p.name = HIDDEN.into();
        p.people = Some(vec![subject(&demo)]);
    }
    backend.running.handle.load(seed).expect("a valid seed");
    require_assertions(&backend, &server);

    // demo sees both projects: the three-turn conversation converges.
    let staging = json!({"tags": ["smoke"], "environment": "staging"});
    let asked = answer(&server, &demo, "run_by_tag", staging.clone());
    assert_eq!(names(&asked), ["payments", HIDDEN], "{asked}");
    let chosen = json!({"tags": ["smoke"], "environment": "staging", "project": "payments"});
    let done = answer(&server, &demo, "run_by_tag", chosen);
    assert_eq!(done["project"], "payments", "{done}");

    // ann sees payments alone: turn 2 has nothing to choose, so it runs.
    let mut said = Vec::new();
    let ran = answer(&server, &ann, "run_by_tag", staging);
    assert_eq!(ran["project"], "payments", "no question: {ran}");
    said.push(ran.to_string());
    let listed = answer(&server, &ann, "list_environments", json!({}));
    assert_eq!(names(&listed), ["payments"], "{listed}");
    said.push(listed.to_string());
    let pipelines = answer(&server, &ann, "list_pipelines", json!({}));
    said.push(pipelines.to_string());
    for text in &said {
        assert!(!text.contains(HIDDEN), "ann was told of {HIDDEN}: {text}");
    }

    // Every request carried a verified assertion naming who acted; ann's
    // name ann's own calls, whose audit rows record the same identity.
    let asserted = backend.running.handle.assertions();
    let (ann_sub, demo_sub) = (subject(&ann), subject(&demo));
    let anns: Vec<_> = asserted.iter().filter(|a| a.sub == ann_sub).collect();
    assert!(!anns.is_empty() && asserted.iter().any(|a| a.sub == demo_sub));
    let rows = audit_rows(&server);
    for a in &anns {
        assert_eq!((a.sub_kind.as_str(), a.tenant.as_str()), ("user", "demo"));
        let row = rows.iter().find(|r| r[0] == a.call_id);
        let row = row.unwrap_or_else(|| panic!("no audit row for call {}: {rows:?}", a.call_id));
        assert_eq!(
            (&row[1], &row[2], &row[3]),
            (&a.sub, &a.act.sub, &a.tool),
            "{row:?}"
        );
    }
    let ann_rows: Vec<String> = (rows.iter().filter(|r| r[1] == ann_sub))
        .map(|r| r.join(" "))
        .collect();
    assert_eq!(ann_rows.len(), 3, "{ann_rows:?}");
    assert!(!ann_rows.join("\n").contains(HIDDEN), "{ann_rows:?}");
    assert!(!server.log().contains(HIDDEN), "the log names {HIDDEN}");

    // A service is named as itself, and is no person who may see vault.
    let (service, token) = server.service_client("mcp testbench:read testbench:run");
    let listed = answer(&server, &token, "list_environments", json!({}));
    assert_eq!(names(&listed), ["payments"], "{listed}");
    let last = backend.running.handle.assertions().pop().expect("asserted");
    assert_eq!(
        (last.sub.as_str(), last.sub_kind.as_str()),
        (service.as_str(), "service")
    );
    assert_eq!(last.act.sub, service);
}

#[test]
fn a_backend_told_who_acts_refuses_a_request_without_a_valid_assertion() {
    let backend = Backend::start();
    // The host sends no assertion to this backend, which requires one.
    let (server, demo) = serve_on(&backend, &[], &[], None);
    require_assertions(&backend, &server);
    let refused = support::bench::call(&server, &demo, "list_environments", json!({}));
    let failed = refused["result"]["isError"] == json!(true) || refused.get("error").is_some();
    assert!(failed, "{refused}");
    assert!(backend.running.handle.assertions().is_empty());
    assert_eq!(
        backend.requests("GET /api/projects"),
        0,
        "refused before counting"
    );
}

/// The audience the provider knows the testbench by.
const TESTBENCH_AUDIENCE: &str = "https://testbench.example";

/// A claim of an access token (its payload, undecoded by any key).
fn claim(token: &str, name: &str) -> String {
    let payload = token.split('.').nth(1).expect("a JWT");
    let claims: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).expect("base64url"))
            .expect("JSON claims");
    claims[name].as_str().expect("a string claim").to_owned()
}

#[test]
fn each_persons_token_is_exchanged_at_their_provider_and_names_the_host_and_client() {
    use support::openid::{Provider, account, corp_section, printed_token, sign_in};
    let tools = support::Tools::require();
    let dir = tempfile::tempdir().expect("a temp dir");
    let backend = Backend::start();
    let accounts = json!({
        "alice": account("alice-pw", "alice-sub-1", "alice@example.com", &["tool-admins"]),
        "bob": account("bob-pw", "bob-sub-2", "bob@example.com", &["tool-admins"]),
    });
    let provider = Provider::start(&tools, dir.path(), &accounts, true);
    // The testbench backend reached with the person's own token, never
    // the operator's credential: no token file at all.
    let config = dir.path().join("toolhost.toml");
    let backends = format!(
        "[backends.testbench]\n\
         url = \"{}\"\n\
         auth = \"token-exchange\"\n\
         exchange_provider = \"corp\"\n\
         exchange_audience = \"{TESTBENCH_AUDIENCE}\"\n\
         exchange_scope = \"testbench.read\"\n",
        backend.running.url()
    );
    let toml = corp_section(dir.path(), &provider.issuer) + &backends;
    std::fs::write(&config, toml).expect("write the host config");
    let config = config.to_str().expect("utf-8");
    let server = Server::start_with(&[toolhost_fixtures::TESTBENCH], &["--config", config]);
    provider.trust_host(&server.issuer(), &[TESTBENCH_AUDIENCE]);
    let private = (HIDDEN, "alice-sub-1");
    support::openid::private_project_behind(&backend, private, &provider, TESTBENCH_AUDIENCE);

    // alice and bob sign in through the provider with the Python SDK.
    let tool = ["--expect-tool", "run_by_tag", "--print-token"];
    let out = sign_in(&tools, &server, "alice, SSO", ("alice", "alice-pw"), &tool);
    let alice = printed_token(&out);
    let out = sign_in(&tools, &server, "bob, SSO", ("bob", "bob-pw"), &tool);
    let bob = printed_token(&out);

    // alice may see vault: her question offers both projects.
    let staging = json!({"tags": ["smoke"], "environment": "staging"});
    let asked = answer(&server, &alice, "run_by_tag", staging.clone());
    assert_eq!(names(&asked), ["payments", HIDDEN], "{asked}");
    let listed = answer(&server, &alice, "list_environments", json!({}));
    assert!(listed.to_string().contains(HIDDEN), "{listed}");
    // bob may not: nothing to choose, and vault is named nowhere.
    let ran = answer(&server, &bob, "run_by_tag", staging);
    assert_eq!(ran["project"], "payments", "no question: {ran}");
    let listed = answer(&server, &bob, "list_environments", json!({}));
    assert_eq!(names(&listed), ["payments"], "{listed}");
    assert!(!ran.to_string().contains(HIDDEN) && !listed.to_string().contains(HIDDEN));

    // Every request carried the provider's token for its person, naming
    // the host as the actor now and the person's MCP client before it;
    // each person's token was exchanged once and kept across their calls.
    let tokens = backend.running.handle.provider_tokens();
    let of = |sub: &str| -> Vec<&testbench::ProviderToken> {
        tokens.iter().filter(|t| t.sub == sub).collect()
    };
    let (alices, bobs) = (of("alice-sub-1"), of("bob-sub-2"));
    assert!(alices.len() >= 2 && bobs.len() >= 2, "{tokens:?}");
    assert_eq!(alices.len() + bobs.len(), tokens.len(), "{tokens:?}");
    for (person, theirs) in [(&alice, &alices), (&bob, &bobs)] {
        let client = claim(person, "client_id");
        for t in theirs.iter() {
            let act = t.act.as_ref().expect("an act claim");
            assert_eq!(act.sub, "toolhost", "the host acts: {t:?}");
            let before = act.act.as_ref().expect("a prior actor");
            assert_eq!(before.sub, client, "through the person's client: {t:?}");
            assert_eq!(
                (t.aud.as_str(), t.client_id.as_str()),
                (TESTBENCH_AUDIENCE, "toolhost")
            );
            assert_eq!(t.scope.as_deref(), Some("testbench.read"));
            assert_eq!(t.jti, theirs[0].jti, "one exchange, kept: {theirs:?}");
        }
    }
    assert_ne!(alices[0].jti, bobs[0].jti);
    let exchanged = provider.log().matches("exchanged a token of").count();
    assert_eq!(exchanged, 2, "{}", provider.log());

    // demo signed in with a password: no identity at the provider, so no
    // token and no request; a service never gets a person's token.
    let demo = support::oauth::user_token(&server, "demo", support::DEMO_PASSWORD);
    let (_, service) = server.service_client("mcp testbench:read testbench:run");
    let before = backend.running.handle.provider_tokens().len();
    for (who, token) in [("demo", &demo), ("a service", &service)] {
        let refused = support::bench::call(&server, token, "list_environments", json!({}));
        let failed = refused["result"]["isError"] == json!(true) || refused.get("error").is_some();
        assert!(failed, "{who}: {refused}");
        assert!(!refused.to_string().contains(HIDDEN), "{who}: {refused}");
    }
    assert_eq!(backend.running.handle.provider_tokens().len(), before);
    assert_eq!(provider.log().matches("exchanged a token of").count(), 2);

    // No exchanged token is in the host's log or its audit trail.
    let log = server.log();
    for t in ["eyJ", "subject_token="] {
        assert!(!log.contains(t), "the log holds {t}");
    }
    let verify = server.admin(&["audit", "verify"]);
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
}

#[test]
fn no_assertion_or_exchanged_token_reaches_the_plugin_the_store_the_log_or_an_answer() {
    use support::openid::{Provider, account, corp_section, printed_token, sign_in};
    use toolhost_fixtures::T_ESCAPE_BACKEND;

    // The host's own assertion.
    let echo = Echo::start();
    let decoy = format!("decoy={}", echo.url);
    let flags = ["--backend", &decoy, "--backend-assertion", "decoy"];
    let server = Server::start_with(&[T_ESCAPE_BACKEND], &flags);
    let demo = support::oauth::user_token(&server, "demo", support::DEMO_PASSWORD);
    let got = reach_echo(&server, &demo, "X-Toolhost-Assertion");
    nowhere(
        &server,
        &echo.sent("x-toolhost-assertion"),
        &[got.to_string()],
    );
    drop(server);

    // A person's token from their provider.
    let tools = support::Tools::require();
    let dir = tempfile::tempdir().expect("a temp dir");
    let accounts = json!({
        "alice": account("alice-pw", "alice-sub-1", "alice@example.com", &["tool-admins"]),
    });
    let provider = Provider::start(&tools, dir.path(), &accounts, true);
    let echo = Echo::start();
    let backends = format!(
        "[backends.decoy]\n\
         url = \"{}\"\n\
         auth = \"token-exchange\"\n\
         exchange_provider = \"corp\"\n\
         exchange_audience = \"https://decoy.example\"\n",
        echo.url
    );
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        corp_section(dir.path(), &provider.issuer) + &backends,
    )
    .expect("write the host config");
    let config = config.to_str().expect("utf-8");
    let server = Server::start_with(&[T_ESCAPE_BACKEND], &["--config", config]);
    provider.trust_host(&server.issuer(), &["https://decoy.example"]);
    let args = ["--expect-tool", "reach", "--print-token"];
    let alice = printed_token(&sign_in(
        &tools,
        &server,
        "alice",
        ("alice", "alice-pw"),
        &args,
    ));
    let first = reach_echo(&server, &alice, "Authorization");
    let again = reach_echo(&server, &alice, "Authorization");
    let sent = echo.sent("authorization");
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0], sent[1], "one token, kept");
    nowhere(&server, &sent, &[first.to_string(), again.to_string()]);
}
