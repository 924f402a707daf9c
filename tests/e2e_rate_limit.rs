//! Rate limits end to end: a burst above a principal's rate is refused with
//! 429 and `Retry-After` before anything runs, and passes again once the
//! client has waited that long; mutating tools have their own, lower limit;
//! two hosts on one PostgreSQL lease their tokens from the same counters, so
//! requests split between them are limited by their sum, one at a time or
//! many at once.

mod support;

use std::thread;
use std::time::Duration;

use serde_json::{Value, json};
use support::bench::post_at;
use support::{Answer, PgSchema, Server, fresh_window};
use toolhost_fixtures::HELLO;

/// Two hosts on one PostgreSQL schema with `flags`, and a token from each
/// for one service client in the shared store: one principal, whichever
/// host it calls.
fn two_hosts(schema: &PgSchema, flags: &[&str]) -> ([Server; 2], [String; 2]) {
    let a = Server::start_on(&[HELLO], flags, Some(&schema.url));
    let b = Server::start_on(&[HELLO], flags, Some(&schema.url));
    let (id, secret) = a.add_service("demo", "mcp hello:read");
    let tokens = [&a, &b].map(|s| s.client_credentials_token(&id, &secret));
    ([a, b], tokens)
}

/// A stateless `tools/call` of `tool` on `server` with the bearer `token`.
fn call(server: &Server, token: &str, tool: &str, arguments: Value) -> Answer {
    let params = json!({"name": tool, "arguments": arguments});
    post_at(&server.url, token, "tools/call", tool, params)
}

fn greet(server: &Server, token: &str) -> Answer {
    call(server, token, "greet", json!({"name": "Ada"}))
}

/// The statuses of `answers`, in order.
fn statuses(answers: &[Answer]) -> Vec<u16> {
    answers.iter().map(|a| a.status).collect()
}

/// Checks `a` is the host's refusal for `limit` and returns its
/// `Retry-After` (whole seconds, at most `window`).
fn refusal(a: &Answer, limit: &str, window: u64) -> u64 {
    assert_eq!(a.status, 429, "{}", a.body);
    let secs: u64 = a
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("a numeric Retry-After: {:?}", a.headers));
    assert!((1..=window).contains(&secs), "Retry-After {secs}");
    let body: Value = serde_json::from_str(&a.body).expect("a JSON body");
    assert_eq!(body["error"]["code"], -31002, "{body}");
    let data = &body["error"]["data"];
    assert_eq!(
        (&data["code"], &data["limit"]),
        (&json!("RATE_LIMITED"), &json!(limit))
    );
    assert_eq!(data["retry_after"], secs, "{body}");
    secs
}

#[test]
fn a_burst_over_the_rate_gets_429_with_retry_after_and_passes_after_waiting() {
    let window = 4;
    let server = Server::start_with(
        &[HELLO],
        &[
            "--rate-limit-per-principal",
            "5",
            "--rate-limit-window",
            "4s",
        ],
    );
    fresh_window(window, Duration::from_secs(window));
    let burst: Vec<Answer> = (0..8).map(|_| greet(&server, server.token())).collect();
    assert_eq!(
        statuses(&burst),
        [200, 200, 200, 200, 200, 429, 429, 429],
        "{}",
        burst[5].body
    );
    assert!(burst[0].body.contains("Hello, Ada"), "{}", burst[0].body);
    let waits: Vec<u64> = burst[5..]
        .iter()
        .map(|a| refusal(a, "principal", window))
        .collect();

    // Another principal (another service client) has its own count.
    let other = server.service_token("mcp hello:read");
    assert_eq!(greet(&server, &other).status, 200);

    thread::sleep(Duration::from_secs(waits[2]));
    let after = greet(&server, server.token());
    assert_eq!(after.status, 200, "after Retry-After: {}", after.body);
}

#[test]
fn mutating_tools_have_their_own_lower_limit() {
    let server = Server::start_with(
        &[HELLO],
        &["--rate-limit-writes", "2", "--rate-limit-window", "1h"],
    );
    fresh_window(3600, Duration::from_secs(60));
    // `decide_approval` changes state: a service may not decide (a tool
    // error, 200), but each call counts as a write all the same.
    let decide = || call(&server, server.token(), "decide_approval", json!({}));
    let writes: Vec<Answer> = (0..3).map(|_| decide()).collect();
    assert_eq!(statuses(&writes), [200, 200, 429], "{}", writes[1].body);
    refusal(&writes[2], "writes", 3600);
    // Reads by the same principal are still within theirs.
    assert_eq!(greet(&server, server.token()).status, 200);
}

#[test]
fn two_hosts_on_one_postgres_share_the_limit() {
    let schema = PgSchema::create("rate");
    let flags = [
        "--rate-limit-per-principal",
        "6",
        "--rate-limit-window",
        "1h",
    ];
    let ([a, b], [token_a, token_b]) = two_hosts(&schema, &flags);
    fresh_window(3600, Duration::from_secs(60));
    let answers: Vec<Answer> = (0..10)
        .map(|i| match i % 2 {
            0 => greet(&a, &token_a),
            _ => greet(&b, &token_b),
        })
        .collect();
    // Each host alone saw five requests, under the limit of six: the
    // refusals come from the shared count.
    assert_eq!(
        statuses(&answers),
        [200, 200, 200, 200, 200, 200, 429, 429, 429, 429],
        "{}",
        answers[6].body
    );
    for refused in &answers[6..] {
        refusal(refused, "principal", 3600);
    }
}

/// The acceptance check of leased tokens: 32 callers at once, half on each
/// host, far over the limit. The hosts together admit no more than the
/// limit (no slack above it), and since both kept getting requests until
/// the shared count was spent, no leased token was left unused either.
#[test]
fn two_hosts_under_concurrent_load_admit_the_limit_between_them_and_no_more() {
    let schema = PgSchema::create("rate_load");
    let limit = 96;
    let flags = [
        "--rate-limit-per-principal",
        "96",
        "--rate-limit-per-client",
        "0",
        "--rate-limit-window",
        "1h",
    ];
    let (hosts, tokens) = two_hosts(&schema, &flags);
    fresh_window(3600, Duration::from_secs(120));
    let answers: Vec<Vec<u16>> = thread::scope(|s| {
        let callers: Vec<_> = (0..32)
            .map(|i| {
                let (url, token) = (&hosts[i % 2].url, &tokens[i % 2]);
                let params = json!({"name": "greet", "arguments": {"name": "Ada"}});
                let greet = move || post_at(url, token, "tools/call", "greet", params.clone());
                s.spawn(move || (0..8).map(|_| greet().status).collect())
            })
            .collect();
        callers
            .into_iter()
            .map(|c| c.join().expect("a caller"))
            .collect()
    });
    let all: Vec<u16> = answers.into_iter().flatten().collect();
    let admitted = all.iter().filter(|s| **s == 200).count();
    let refused = all.iter().filter(|s| **s == 429).count();
    println!(
        "{admitted} of {} admitted by two hosts at a limit of {limit}",
        all.len()
    );
    assert_eq!(admitted + refused, all.len(), "only 200 and 429: {all:?}");
    assert_eq!(admitted, limit, "the limit, and every leased token used");
    // Each host now knows the window is spent, without another lease.
    for (host, token) in hosts.iter().zip(&tokens) {
        refusal(&greet(host, token), "principal", 3600);
    }
}
