//! What the console's browser tests share: people and roles made with
//! the CLI, a gate or a plugin revision waiting for someone, what MCP
//! lists for a token and where a run stands, and the checks every page
//! visited gets (no error in the browser's console; screenshots at a
//! desktop and a phone width).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost_fixtures::Fixture;

use super::bench::{answer, request_at};
use super::browser::Browser;
use super::oauth::{self, REDIRECT, VERIFIER, stdout};
use super::{Server, new_signer, pin_into, plugin_name, sign, trust};

/// The widths each page is photographed at: a phone's, then a desktop's
/// (the window is left at the desktop width the other steps use).
pub const WIDTHS: [u32; 2] = [390, 1280];

/// A CSS selector for the element whose id is `id` (ids are the host's,
/// not CSS identifiers).
pub fn id(id: &str) -> String {
    format!("[id=\"{id}\"]")
}

/// Fails with the browser's `SEVERE` console entries since the last look.
pub fn no_console_errors(browser: &Browser, after: &str) {
    let errors = browser.console_errors();
    assert!(
        errors.is_empty(),
        "console errors after {after}: {errors:#?}"
    );
}

/// Fails unless the only console entries since the last look are the
/// page's own refusal: a document answered with `status` (a refused form
/// re-rendered, a 403 page) logs that, and nothing else may appear.
pub fn only_refusals(browser: &Browser, status: u16, after: &str) {
    let errors = browser.console_errors();
    let own = format!("status of {status}");
    assert!(
        errors.iter().all(|e| e.contains(&own)),
        "console errors after {after} besides the {status}: {errors:#?}"
    );
}

/// `toolhost ARGS…` on `server`'s store, which must succeed: its stdout.
pub fn cli(server: &Server, args: &[&str]) -> String {
    stdout(&server.admin(args), &args.join(" "))
}

/// `user add NAME --tenant TENANT`: the generated password.
pub fn add_user(server: &Server, name: &str, tenant: &str) -> String {
    let text = cli(server, &["user", "add", name, "--tenant", tenant]);
    text.lines()
        .find_map(|l| l.strip_prefix("password: "))
        .unwrap_or_else(|| panic!("a generated password: {text}"))
        .to_owned()
}

/// Tenant `acme` with an admin role held by `ada`: her password.
pub fn acme_admin(server: &Server) -> String {
    cli(server, &["tenant", "add", "acme"]);
    cli(
        server,
        &["role", "add", "admin", "--tenant", "acme", "--admin"],
    );
    let password = add_user(server, "ada", "acme");
    cli(server, &["grant", "admin", "ada", "--tenant", "acme"]);
    password
}

/// `run_by_tag` of payments' `tags` on prod: a high-risk gate.
pub fn prod_run(tags: &[&str]) -> Value {
    json!({"tags": tags, "environment": "prod", "project": "payments"})
}

/// Calls `run_by_tag` with `args` as `token`; the gate it opened.
pub fn open_gate(server: &Server, token: &str, args: &Value) -> String {
    let v = answer(server, token, "run_by_tag", args.clone());
    v["approval_required"]["gate_id"]
        .as_str()
        .unwrap_or_else(|| panic!("approval_required: {v}"))
        .to_owned()
}

/// `user`'s bearer token through a client registered for it (the login
/// and consent pages, the code exchange), with that client's id: the id
/// audit rows of the token's calls name. (client id, token)
pub fn signed_in(server: &Server, user: &str, password: &str) -> (String, String) {
    let client = oauth::register(server, REDIRECT, "e2e");
    let mut pages = oauth::Browser::default();
    let location = oauth::approve(server, &mut pages, &client, user, password);
    let code = oauth::query(&location, "code").unwrap_or_else(|| panic!("no code: {location}"));
    let (status, tokens) = oauth::redeem(server, &client, &code, VERIFIER);
    assert_eq!(status, 200, "{tokens}");
    let token = tokens["access_token"].as_str().expect("an access token");
    (client, token.to_owned())
}

/// The tool names a stateless `tools/list` shows `token`.
pub fn tool_names(server: &Server, token: &str) -> BTreeSet<String> {
    let listed = request_at(&server.url, token, "tools/list", "", json!({}));
    listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("tools: {listed}"))
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

/// Waits (at most `within`) until `token`'s `tools/list` shows `tool`:
/// how long it took.
pub fn until_listed(server: &Server, token: &str, tool: &str, within: Duration) -> Duration {
    let started = Instant::now();
    while !tool_names(server, token).contains(tool) {
        assert!(
            started.elapsed() < within,
            "{tool} still not listed after {within:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    started.elapsed()
}

/// Polls `get_exploration_result` of `run_id` until `done` holds of it
/// (at most `within`): the run.
pub fn run_until(
    server: &Server,
    token: &str,
    run_id: &str,
    within: Duration,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let started = Instant::now();
    loop {
        let run = answer(
            server,
            token,
            "get_exploration_result",
            json!({"run_id": run_id}),
        );
        if done(&run) {
            return run;
        }
        assert!(
            started.elapsed() < within,
            "run {run_id} after {within:?}: {run}\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The error code of a call that must fail.
pub fn code(v: &Value) -> String {
    assert_eq!(v["result"]["isError"], json!(true), "{v}");
    v["result"]["structuredContent"]["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Runs the demo tenant's human-step scenario until it waits at its
/// checkpoint: the execution and the checkpoint.
pub fn waiting_checkpoint(server: &Server, demo: &str) -> (String, String) {
    let args = json!({
        "scenario": "Checkout manual review", "environment": "staging", "project": "payments",
    });
    let run = answer(server, demo, "execute_scenario", args);
    let execution = run["queued"][0]["executionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{run}"))
        .to_owned();
    // Reading the status moves it on; it stops at the human review step.
    for _ in 0..4 {
        let status = answer(
            server,
            demo,
            "get_execution_status",
            json!({"execution_id": execution}),
        );
        if status["status"] == "WAITING_HUMAN" {
            let checkpoint = status["checkpoint"]["checkpoint_id"]
                .as_str()
                .unwrap_or_else(|| panic!("{status}"));
            return (execution, checkpoint.to_owned());
        }
    }
    panic!("{execution} never waited for a person");
}

/// `fixture` released by `alice` (her new key, trusted for its plugin;
/// the manifest pinned and signed) and submitted as her: the pending
/// revision's id. alice must hold `catalog:submit`.
pub fn submitted_by_alice(server: &Server, fixture: &Fixture) -> String {
    let work = server.scratch("alice");
    let key = new_signer("alice", &work.join("keys"));
    let public = work.join("keys/alice.pub");
    trust(
        "alice",
        &public,
        &plugin_name(fixture),
        server.database_url(),
    );
    let release = work.join("release");
    sign(&pin_into(fixture, &release), &key);
    let dir = release.to_string_lossy();
    let out = cli(server, &["plugin", "submit", &dir, "--as", "alice"]);
    out.split_whitespace()
        .next()
        .unwrap_or_else(|| panic!("a revision id: {out}"))
        .to_owned()
}

/// Photographs the page shown at each of [`WIDTHS`] as
/// `target/console-screenshots/<name>-<width>.png`, checking each is a
/// PNG that wide.
pub fn photograph(browser: &Browser, name: &str) {
    for width in WIDTHS {
        let shot = browser.screenshot(name, width);
        let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("{}: {e}", shot.display()));
        assert!(
            png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 1000,
            "{} is no screenshot ({} bytes)",
            shot.display(),
            png.len()
        );
        // The IHDR chunk: the picture is as wide as asked.
        let shot_width = u32::from_be_bytes(png[16..20].try_into().expect("4 bytes"));
        assert_eq!(shot_width, width, "{}", shot.display());
        println!("{}", shot.display());
    }
}
