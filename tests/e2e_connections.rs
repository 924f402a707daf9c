//! Each person's own connection to a backend, end to end (issue 46): the
//! real `toolhost serve` with the testbench backend configured
//! `auth = "connection"` against a real authorization server (npm
//! `oidc-provider`, `tests/e2e/oidc_provider.mjs`) that issues JWT access
//! tokens for the testbench's resource; the testbench accepts only those
//! tokens and shows each person what that person may see. The Python SDK
//! is asked to connect by URL elicitation, and a headless browser
//! (`tests/e2e/python_connect.py`) plays the person through the host's
//! connect page and the server's login.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::bench::Backend;
use support::openid::{Provider, account};
use support::{Server, Tools};

/// How the authorization server knows the testbench.
const RESOURCE: &str = "https://testbench.example";
/// The host's client at the authorization server.
const CLIENT_ID: &str = "toolhost-testbench";
const CLIENT_SECRET: &str = "toolhost-secret-at-the-testbench-server";
/// The project only alice may see: a name no other text of the host has.
const HIDDEN: &str = "vault";
/// The access tokens' life: 32 s, so with the host's 30 s margin a token
/// is refreshed from 2 s after it was issued.
const TOKEN_TTL: u64 = 32;

/// The host config: backend `name` at `url` reached with each person's
/// own token for `resource` (no token file at all), sealed under a key
/// of `dir`.
fn config(
    dir: &std::path::Path,
    (name, url, resource): (&str, &str, &str),
    issuer: &str,
) -> String {
    let secret = dir.join("testbench-client.secret");
    std::fs::write(&secret, CLIENT_SECRET).expect("write the client secret");
    let keys = dir.join("connection-keys");
    let key = base64_key();
    std::fs::write(&keys, format!("# sealing keys, newest first\nk1 {key}\n")).expect("keys");
    format!(
        "connection_keys_file = \"{}\"\n\
         [backends.{name}]\n\
         url = \"{url}\"\n\
         auth = \"connection\"\n\
         connect_issuer = \"{issuer}\"\n\
         connect_client_id = \"{CLIENT_ID}\"\n\
         connect_client_secret_file = \"{}\"\n\
         connect_scope = \"testbench.read\"\n\
         connect_resource = \"{resource}\"\n",
        keys.display(),
        secret.display(),
    )
}

/// A test's sealing key: 32 bytes in standard base64 (an operator's come
/// from `openssl rand -base64 32`).
fn base64_key() -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(*b"a test key of 32 bytes, no more.")
}

/// A person: their name and password at the host and at the server.
struct Person {
    name: &'static str,
    host_password: String,
    upstream_password: &'static str,
    token: String,
}

/// Runs `python_connect.py` as `who` through `steps`; its output.
fn python(tools: &Tools, server: &Server, who: &Person, steps: &[&str]) -> String {
    python_at(tools, server, (who, "testbench"), steps)
}

/// [`python`] with the connect page of `backend`.
fn python_at(
    tools: &Tools,
    server: &Server,
    (who, backend): (&Person, &str),
    steps: &[&str],
) -> String {
    let mut args = vec![server.url.as_str()];
    args.extend_from_slice(steps);
    let mut cmd = tools.python("python_connect.py", &args);
    cmd.env("TOOLHOST_E2E_BEARER", &who.token)
        .env("TOOLHOST_E2E_HOST_USER", who.name)
        .env("TOOLHOST_E2E_HOST_PASSWORD", &who.host_password)
        .env("TOOLHOST_E2E_UPSTREAM_USER", who.name)
        .env("TOOLHOST_E2E_UPSTREAM_PASSWORD", who.upstream_password)
        .env("TOOLHOST_E2E_BACKEND", backend);
    let what = format!("python connect client ({}: {})", who.name, steps.join(" "));
    let out = server.run_client(&what, cmd, Duration::from_secs(180));
    assert!(out.contains("ok  all"), "{out}");
    out
}

/// The environments' project names each completed call of `out` listed.
fn listed(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("step").is_some())
        .map(|v| {
            let text = v["structured"].to_string();
            ["payments", HIDDEN]
                .iter()
                .filter(|p| text.contains(*p))
                .map(|p| (*p).to_owned())
                .collect()
        })
        .collect()
}

/// A password user of tenant `demo` holding its admin role, with a token.
fn person(server: &Server, name: &'static str, upstream_password: &'static str) -> Person {
    let host_password = support::console::add_user(server, name, "demo");
    support::console::cli(server, &["grant", "admin", name, "--tenant", "demo"]);
    let token = support::oauth::user_token(server, name, &host_password);
    Person {
        name,
        host_password,
        upstream_password,
        token,
    }
}

#[test]
fn each_person_connects_their_own_account_and_only_their_token_serves_them() {
    let tools = Tools::require();
    let dir = tempfile::tempdir().expect("a temp dir");
    let backend = Backend::start();
    let accounts = json!({
        "alice": account("alice-up-pw", "alice-up-1", "alice@example.com", &[]),
        "bob": account("bob-up-pw", "bob-up-2", "bob@example.com", &[]),
    });
    let client = json!({
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "application_type": "native",
        "grant_types": ["authorization_code", "refresh_token"],
        "redirect_uris": ["http://127.0.0.1/admin/connections/testbench/callback"],
    });
    let resources = json!({ RESOURCE: {"scope": "testbench.read", "ttl": TOKEN_TTL} });
    let provider =
        Provider::start_with_resources(&tools, dir.path(), &accounts, &[client], resources);
    let config_file = dir.path().join("toolhost.toml");
    let url = backend.running.url();
    let testbench = ("testbench", url.as_str(), RESOURCE);
    std::fs::write(
        &config_file,
        config(dir.path(), testbench, &provider.issuer),
    )
    .expect("write");
    let config_path = config_file.to_str().expect("utf-8");
    let server = Server::start_with(&[toolhost_fixtures::TESTBENCH], &["--config", config_path]);
    let private = (HIDDEN, "alice-up-1");
    support::openid::private_project_behind(&backend, private, &provider, RESOURCE);
    let alice = person(&server, "alice", "alice-up-pw");
    let bob = person(&server, "bob", "bob-up-pw");

    // alice is asked in her session, connects in the browser, and the same
    // call completes with what she may see.
    let out = python(&tools, &server, &alice, &["in-session"]);
    assert_eq!(listed(&out), [vec!["payments", HIDDEN]], "{out}");
    let tokens = backend.running.handle.provider_tokens();
    assert!(!tokens.is_empty(), "the backend saw no token");
    for t in &tokens {
        assert_eq!(t.sub, "alice-up-1", "only alice's token so far: {t:?}");
        assert_eq!(
            (t.aud.as_str(), t.client_id.as_str()),
            (RESOURCE, CLIENT_ID)
        );
        assert_eq!(t.scope.as_deref(), Some("testbench.read"));
    }
    let alices_first = tokens[0].jti.clone();

    // bob has not connected: a stateless client is told to, and no
    // request reaches the backend for him; alice's token never serves him.
    let seen = backend.running.handle.provider_tokens().len();
    let out = python(&tools, &server, &bob, &["required"]);
    assert!(listed(&out).is_empty(), "{out}");
    assert_eq!(backend.running.handle.provider_tokens().len(), seen);
    // He connects at the page the error named; his calls then see only
    // what he may see, with his own token.
    let out = python(&tools, &server, &bob, &["connect-on-error", "connected"]);
    assert_eq!(listed(&out), [vec!["payments"], vec!["payments"]], "{out}");
    let tokens = backend.running.handle.provider_tokens();
    let bobs: Vec<_> = tokens[seen..].iter().collect();
    assert!(!bobs.is_empty());
    assert!(bobs.iter().all(|t| t.sub == "bob-up-2"), "{bobs:?}");

    // Past the margin, alice's call refreshes her token: a new one, hers.
    std::thread::sleep(Duration::from_secs(3));
    let seen = backend.running.handle.provider_tokens().len();
    let out = python(&tools, &server, &alice, &["connected"]);
    assert_eq!(listed(&out), [vec!["payments", HIDDEN]], "{out}");
    let tokens = backend.running.handle.provider_tokens();
    let refreshed: Vec<_> = tokens[seen..].iter().collect();
    assert!(
        refreshed.iter().all(|t| t.sub == "alice-up-1"),
        "{refreshed:?}"
    );
    assert!(
        refreshed.iter().all(|t| t.jti != alices_first),
        "a refreshed token: {refreshed:?}"
    );

    // alice administers the tenant: she revokes bob's connection, and his
    // next call asks him again.
    python(&tools, &server, &alice, &["revoke-other"]);
    python(&tools, &server, &bob, &["required"]);
    let tokens = backend.running.handle.provider_tokens();

    // alice revokes her connection in the console: her next call asks
    // again, and nothing reaches the backend for her meanwhile.
    let out = python(&tools, &server, &alice, &["revoke", "required"]);
    assert!(listed(&out).is_empty(), "{out}");
    let seen_after = backend.running.handle.provider_tokens().len();
    assert_eq!(seen_after, tokens.len());

    // No token is in the host's log, its store or its audit trail; the
    // trail verifies, and names each stop CONNECTION_REQUIRED.
    let log = server.log();
    assert!(!log.contains("eyJ"), "the log holds a JWT");
    let database = server.database_path();
    let jwt_header = b"eyJhbGciOi";
    let wal = std::path::PathBuf::from(format!("{}-wal", database.display()));
    for file in [database.clone(), wal] {
        let stored = std::fs::read(&file).unwrap_or_default();
        assert!(
            !stored.windows(jwt_header.len()).any(|w| w == jwt_header),
            "{} holds a JWT",
            file.display()
        );
    }
    let script = "import sqlite3,sys\nfor r in sqlite3.connect(sys.argv[1]).execute(\"SELECT error_code FROM audit WHERE error_code IS NOT NULL\"): print(r[0])";
    let codes = support::python3(script, &[database.to_str().expect("utf-8")]);
    assert!(codes.lines().any(|c| c == "CONNECTION_REQUIRED"), "{codes}");
    let verify = server.admin(&["audit", "verify"]);
    assert!(verify.status.success(), "{verify:?}");
}

#[test]
fn a_connection_token_never_reaches_the_plugin_the_store_the_log_or_an_answer() {
    use support::echo::{Echo, nowhere, reach_echo};
    let tools = Tools::require();
    let dir = tempfile::tempdir().expect("a temp dir");
    let echo = Echo::start();
    let accounts = json!({"demo": account("demo-up-pw", "demo-up-1", "demo@example.com", &[])});
    let client = json!({
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "application_type": "native",
        "grant_types": ["authorization_code", "refresh_token"],
        "redirect_uris": ["http://127.0.0.1/admin/connections/decoy/callback"],
    });
    let decoy = "https://decoy.example";
    let resources = json!({ decoy: {"scope": "decoy.read", "ttl": 3600} });
    let provider =
        Provider::start_with_resources(&tools, dir.path(), &accounts, &[client], resources);
    let config_file = dir.path().join("toolhost.toml");
    let backend = ("decoy", echo.url.as_str(), decoy);
    let toml =
        config(dir.path(), backend, &provider.issuer).replace("testbench.read", "decoy.read");
    std::fs::write(&config_file, toml).expect("write");
    let config_path = config_file.to_str().expect("utf-8");
    let server = Server::start_with(
        &[toolhost_fixtures::T_ESCAPE_BACKEND],
        &["--config", config_path],
    );
    let demo = Person {
        name: "demo",
        host_password: support::DEMO_PASSWORD.to_owned(),
        upstream_password: "demo-up-pw",
        token: support::oauth::user_token(&server, "demo", support::DEMO_PASSWORD),
    };
    python_at(&tools, &server, (&demo, "decoy"), &["connect"]);
    // The plugin forges Authorization and reads back what the host sent:
    // redacted, and no JWT in its memory.
    let first = reach_echo(&server, &demo.token, "Authorization");
    let again = reach_echo(&server, &demo.token, "Authorization");
    let sent = echo.sent("authorization");
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0], sent[1], "the person's one token");
    nowhere(&server, &sent, &[first.to_string(), again.to_string()]);
    // Nor the refresh token the server issued with it.
    let log = provider.log();
    let refresh: Vec<&str> = log
        .lines()
        .filter_map(|l| l.strip_prefix("oidc_provider: issued refresh token "))
        .collect();
    assert_eq!(refresh.len(), 1, "{log}");
    let database = server.database_path();
    let mut store = std::fs::read(&database).expect("the database");
    store.extend(std::fs::read(format!("{}-wal", database.display())).unwrap_or_default());
    let (host_log, answers) = (server.log(), format!("{first}{again}"));
    for token in refresh {
        assert!(token.len() > 20, "{token}");
        assert!(!host_log.contains(token) && !answers.contains(token));
        assert!(!store.windows(token.len()).any(|w| w == token.as_bytes()));
    }
}
