//! OAuth 2.1 at the HTTP edge of the real binary: what the resource server
//! refuses on `/mcp`, and every negative case of the authorization server,
//! each answered with the RFC's error and changing nothing it should not.
//! (The happy paths with real clients are in e2e_oauth.rs.)

mod support;

use std::time::Duration;

use serde_json::Value;
use support::oauth::{
    Browser, REDIRECT, VERIFIER, approve, authorize_path, bearer, code, encode, json, list_tools,
    query, redeem, register, token,
};
use support::{DEMO_PASSWORD, Server, exchange, exchange_full, post_form};

fn refresh(server: &Server, client_id: &str, refresh_token: &str, extra: &str) -> (u16, Value) {
    token(
        server,
        &format!(
            "grant_type=refresh_token&client_id={}&refresh_token={refresh_token}{extra}",
            encode(client_id)
        ),
    )
}

/// RFC 7009 at `server`: revokes the grant of `tokens` by its refresh
/// token, as `client_id`; the status.
fn revoke(server: &Server, client_id: &str, tokens: &Value) -> u16 {
    let form = format!(
        "token={}&client_id={}",
        tokens["refresh_token"].as_str().expect("rt"),
        encode(client_id)
    );
    post_form(&server.url, "/oauth/revoke", &form).0
}

fn assert_error(answer: (u16, Value), status: u16, code: &str) {
    assert_eq!(
        (answer.0, answer.1["error"].as_str()),
        (status, Some(code)),
        "{}",
        answer.1
    );
}

#[test]
fn the_resource_server_refuses_without_a_valid_token_and_points_at_discovery() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let issuer = server.issuer();

    let none = list_tools(&server, "");
    assert_eq!(none.status, 401);
    let challenge = none.header("www-authenticate").expect("a challenge");
    assert!(
        challenge.starts_with("Bearer ")
            && challenge.contains(&format!(
                "resource_metadata=\"{issuer}/.well-known/oauth-protected-resource/mcp\""
            ))
            && challenge.contains("scope=\"mcp\""),
        "{challenge}"
    );
    // A token anywhere but the Authorization header does not count.
    let in_query = exchange(
        &server.url,
        "POST",
        &format!("/mcp?access_token={}", server.token()),
        &[],
        "{}",
    );
    assert_eq!(in_query.0, 401);
    let forged = list_tools(&server, "Bearer not.a.jwt");
    assert_eq!(forged.status, 401);
    assert!(
        forged
            .header("www-authenticate")
            .is_some_and(|c| c.contains("error=\"invalid_token\""))
    );
    let basic = list_tools(&server, "Basic ZGVtbzpkZW1v");
    assert_eq!(basic.status, 401);

    // A valid token without the `mcp` scope: 403 insufficient_scope.
    let narrow = server.service_token("hello:read");
    let refused = list_tools(&server, &format!("Bearer {narrow}"));
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(
        refused.header("www-authenticate").is_some_and(|c| c
            .contains("error=\"insufficient_scope\"")
            && c.contains("scope=\"mcp\"")),
        "{:?}",
        refused.headers
    );
    assert_eq!(list_tools(&server, server.bearer()).status, 200);

    // Discovery documents: one issuer string everywhere.
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let (s, b) = exchange(&server.url, "GET", path, &[], "");
        assert_eq!(s, 200);
        let prm = json(&b);
        assert_eq!(prm["resource"], Value::from(server.url.clone()));
        assert_eq!(prm["authorization_servers"], serde_json::json!([issuer]));
    }
    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        let (s, b) = exchange(&server.url, "GET", path, &[], "");
        assert_eq!(s, 200);
        let meta = json(&b);
        assert_eq!(meta["issuer"], Value::from(issuer.clone()));
        assert_eq!(
            meta["code_challenge_methods_supported"],
            serde_json::json!(["S256"])
        );
        assert_eq!(
            meta["authorization_response_iss_parameter_supported"],
            Value::Bool(true)
        );
    }
    let (s, b) = exchange(&server.url, "GET", "/oauth/jwks", &[], "");
    assert_eq!(s, 200);
    let keys = json(&b)["keys"].as_array().expect("keys").clone();
    assert!(
        keys.iter()
            .all(|k| k["kty"] == "OKP" && k["kid"].is_string() && k.get("d").is_none()),
        "{b}"
    );
}

#[test]
fn authorization_requests_and_code_redemptions_are_refused_with_the_rfc_errors() {
    let server = Server::start_with(&[toolhost_fixtures::HELLO], &["--code-ttl", "2s"]);
    let client = register(&server, REDIRECT, "e2e");
    let mut browser = Browser::default();

    // Before the redirect URI is known good: a page, never a redirect.
    let wrong_redirect =
        authorize_path(&client, "").replace(&encode(REDIRECT), &encode("http://127.0.0.1:9/other"));
    let page = browser.send(&server, "GET", &wrong_redirect, None);
    assert_eq!(
        (page.status, page.header("location")),
        (400, None),
        "{}",
        page.body
    );
    let unknown = browser.send(&server, "GET", &authorize_path("no-such-client", ""), None);
    assert_eq!((unknown.status, unknown.header("location")), (400, None));

    // After, for a client nobody has consented to yet (anyone can register
    // one with any redirect URI): our page naming the error, never a
    // redirect (RFC 9700 §4.11.2).
    let issuer = server.issuer();
    let refusals = [
        (
            authorize_path(&client, "").replace("&code_challenge_method=S256", ""),
            "invalid_request",
        ),
        (
            authorize_path(&client, "")
                .replace("code_challenge_method=S256", "code_challenge_method=plain"),
            "invalid_request",
        ),
        (
            format!(
                "/oauth/authorize?response_type=code&client_id={}&redirect_uri={}&state=s1",
                encode(&client),
                encode(REDIRECT)
            ),
            "invalid_request",
        ),
        (
            authorize_path(&client, "&resource=https%3A%2F%2Fother.example%2Fmcp"),
            "invalid_target",
        ),
        (authorize_path(&client, "&scope=admin"), "invalid_scope"),
        (
            authorize_path(&client, "").replace("response_type=code", "response_type=token"),
            "unsupported_response_type",
        ),
    ];
    for (path, error) in &refusals {
        let page = browser.send(&server, "GET", path, None);
        assert_eq!(
            (page.status, page.header("location")),
            (400, None),
            "{path}"
        );
        assert!(page.body.contains(error), "{path}: {}", page.body);
    }

    // A good flow issues a code with state and iss.
    let location = approve(&server, &mut browser, &client, "demo", DEMO_PASSWORD);
    assert_eq!(query(&location, "state").as_deref(), Some("s1"));
    assert_eq!(query(&location, "iss").as_deref(), Some(issuer.as_str()));
    // Once this person has consented to the client, its errors go back to
    // it with error, state and iss.
    for (path, error) in &refusals {
        let answer = browser.send(&server, "GET", path, None);
        let location = answer
            .header("location")
            .unwrap_or_else(|| panic!("{path}: {}", answer.body));
        assert!(location.starts_with(REDIRECT), "{location}");
        assert_eq!(
            query(location, "error").as_deref(),
            Some(*error),
            "{path} → {location}"
        );
        assert_eq!(query(location, "state").as_deref(), Some("s1"));
        assert_eq!(query(location, "iss").as_deref(), Some(issuer.as_str()));
    }

    // The wrong verifier: invalid_grant, and the code is spent.
    let first = query(&location, "code").expect("a code");
    assert_error(
        redeem(&server, &client, &first, &format!("{VERIFIER}x")),
        400,
        "invalid_grant",
    );
    assert_error(
        redeem(&server, &client, &first, VERIFIER),
        400,
        "invalid_grant",
    );
    // The logged-in browser skips the password and the remembered consent.
    let again = browser.send(&server, "GET", &authorize_path(&client, ""), None);
    assert_eq!(
        again.status, 302,
        "an active session goes straight back: {}",
        again.body
    );
    // No verifier at all.
    let code_2 = query(again.header("location").expect("location"), "code").expect("a code");
    let no_verifier = token(
        &server,
        &format!(
            "grant_type=authorization_code&client_id={}&code={code_2}&redirect_uri={}",
            encode(&client),
            encode(REDIRECT)
        ),
    );
    assert_error(no_verifier, 400, "invalid_grant");
    // A redirect URI that differs from the request's.
    let code_3 = code(&server, &client);
    let other_redirect = token(
        &server,
        &format!(
            "grant_type=authorization_code&client_id={}&code={code_3}&redirect_uri={}&code_verifier={VERIFIER}",
            encode(&client),
            encode("http://127.0.0.1:9/other")
        ),
    );
    assert_error(other_redirect, 400, "invalid_grant");
    // Another resource.
    let code_4 = code(&server, &client);
    let foreign = token(
        &server,
        &format!(
            "grant_type=authorization_code&client_id={}&code={code_4}&redirect_uri={}&code_verifier={VERIFIER}&resource={}",
            encode(&client),
            encode(REDIRECT),
            encode("https://other.example/mcp")
        ),
    );
    assert_error(foreign, 400, "invalid_target");

    // Replay: the second use fails and revokes what the first minted.
    let code_5 = code(&server, &client);
    let (s, minted) = redeem(&server, &client, &code_5, VERIFIER);
    assert_eq!(s, 200, "{minted}");
    assert_eq!(list_tools(&server, &bearer(&minted)).status, 200);
    assert_error(
        redeem(&server, &client, &code_5, VERIFIER),
        400,
        "invalid_grant",
    );
    assert_eq!(
        list_tools(&server, &bearer(&minted)).status,
        401,
        "the first token died with the replay"
    );
    let rt = minted["refresh_token"].as_str().expect("a refresh token");
    assert_error(refresh(&server, &client, rt, ""), 400, "invalid_grant");

    // An expired code: alive 2–3 s (whole seconds), so gone after 3.1 s.
    let code_6 = code(&server, &client);
    std::thread::sleep(Duration::from_millis(3100));
    assert_error(
        redeem(&server, &client, &code_6, VERIFIER),
        400,
        "invalid_grant",
    );

    // Unknown grant types and clients.
    assert_error(
        token(
            &server,
            &format!("grant_type=password&client_id={}", encode(&client)),
        ),
        400,
        "unsupported_grant_type",
    );
    assert_error(
        token(
            &server,
            "grant_type=authorization_code&client_id=nobody&code=x",
        ),
        401,
        "invalid_client",
    );
    assert_error(
        token(
            &server,
            &format!(
                "grant_type=client_credentials&client_id={}",
                encode(&client)
            ),
        ),
        400,
        "unauthorized_client",
    );
}

#[test]
fn refresh_tokens_rotate_and_a_replay_revokes_the_whole_family() {
    let server = Server::start_with(&[toolhost_fixtures::HELLO], &["--access-token-ttl", "2s"]);
    let client = register(&server, REDIRECT, "e2e");
    let (s, first) = redeem(&server, &client, &code(&server, &client), VERIFIER);
    assert_eq!(s, 200, "{first}");
    assert_eq!(first["token_type"], "Bearer");
    let rt_1 = first["refresh_token"].as_str().expect("rt").to_owned();

    // Asking for more than was granted: invalid_scope, and nothing changes.
    assert_error(
        refresh(&server, &client, &rt_1, "&scope=mcp%20admin"),
        400,
        "invalid_scope",
    );

    // An expired access token: a typed 401, then a refresh gives one that works.
    // `exp` is the next whole second plus the TTL, valid through its
    // second: under 4 s from now.
    std::thread::sleep(Duration::from_millis(5200));
    let expired = list_tools(&server, &bearer(&first));
    assert_eq!(expired.status, 401);
    assert!(
        expired
            .header("www-authenticate")
            .is_some_and(|c| c.contains("invalid_token") && c.contains("expired")),
        "{:?}",
        expired.headers
    );
    let (s, second) = refresh(&server, &client, &rt_1, "");
    assert_eq!(s, 200, "{second}");
    let rt_2 = second["refresh_token"].as_str().expect("rt").to_owned();
    assert_ne!(rt_1, rt_2, "rotated");
    assert_eq!(list_tools(&server, &bearer(&second)).status, 200);

    // Replaying the rotated token revokes the family: the newest tokens die too.
    assert_error(refresh(&server, &client, &rt_1, ""), 400, "invalid_grant");
    assert_eq!(list_tools(&server, &bearer(&second)).status, 401);
    assert_error(refresh(&server, &client, &rt_2, ""), 400, "invalid_grant");

    // RFC 7009: revoking a refresh token ends its grant at once.
    let (_, third) = redeem(&server, &client, &code(&server, &client), VERIFIER);
    assert_eq!(list_tools(&server, &bearer(&third)).status, 200);
    assert_eq!(revoke(&server, &client, &third), 200);
    assert_eq!(list_tools(&server, &bearer(&third)).status, 401);
}

#[test]
fn revoking_a_client_or_disabling_a_user_from_the_cli_kills_their_tokens_within_the_live_bound() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let added = server.admin(&["user", "add", "alice", "--tenant", "demo"]);
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let out = String::from_utf8_lossy(&added.stdout).into_owned();
    let password = out
        .lines()
        .find_map(|l| l.strip_prefix("password: "))
        .expect("a generated password")
        .to_owned();

    let client = register(&server, REDIRECT, "e2e");
    let location = approve(
        &server,
        &mut Browser::default(),
        &client,
        "alice",
        &password,
    );
    let (s, alice) = redeem(
        &server,
        &client,
        &query(&location, "code").expect("code"),
        VERIFIER,
    );
    assert_eq!(s, 200, "{alice}");
    assert_eq!(list_tools(&server, &bearer(&alice)).status, 200);
    assert!(server.admin(&["user", "disable", "alice"]).status.success());
    support::eventually("disabled user's token refused", || {
        list_tools(&server, &bearer(&alice)).status == 401
    });
    // A disabled user cannot log in.
    let mut browser = Browser::default();
    let page = browser.send(&server, "GET", &authorize_path(&client, ""), None);
    let refused = browser.submit(
        &server,
        &page,
        &[("username", "alice"), ("password", &password)],
    );
    assert_eq!(refused.status, 401);
    // A wrong password neither.
    let page = browser.send(&server, "GET", &authorize_path(&client, ""), None);
    let refused = browser.submit(
        &server,
        &page,
        &[("username", "demo"), ("password", "wrong-password")],
    );
    assert_eq!(refused.status, 401);

    let (s, demo) = redeem(&server, &client, &code(&server, &client), VERIFIER);
    assert_eq!(s, 200, "{demo}");
    assert_eq!(list_tools(&server, &bearer(&demo)).status, 200);
    let listed = String::from_utf8_lossy(&server.admin(&["client", "list"]).stdout).into_owned();
    let line = listed
        .lines()
        .find(|l| l.starts_with(&client))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(
        line.contains("dcr") && line.contains(REDIRECT) && line.contains("active"),
        "{line}"
    );
    let revoked = server.admin(&["client", "revoke", &client]);
    assert!(
        revoked.status.success(),
        "client revoke: {}{}",
        String::from_utf8_lossy(&revoked.stdout),
        String::from_utf8_lossy(&revoked.stderr)
    );
    support::eventually("revoked client's token refused", || {
        list_tools(&server, &bearer(&demo)).status == 401
    });
    let rt = demo["refresh_token"].as_str().expect("rt");
    assert_error(refresh(&server, &client, rt, ""), 401, "invalid_client");
    let listed = String::from_utf8_lossy(&server.admin(&["client", "list"]).stdout).into_owned();
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with(&client) && l.contains("revoked")),
        "{listed}"
    );
}

#[test]
fn bad_registrations_are_refused_and_registration_is_rate_limited() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let clients = || {
        String::from_utf8_lossy(&server.admin(&["client", "list"]).stdout)
            .lines()
            .count()
    };
    let before = clients();
    let post = |body: &str| {
        let (s, b) = exchange(
            &server.url,
            "POST",
            "/oauth/register",
            &[("Content-Type", "application/json")],
            body,
        );
        (s, json(&b))
    };
    assert_error(post("{not json"), 400, "invalid_client_metadata");
    assert_error(
        post(r#"{"client_name":"no redirect"}"#),
        400,
        "invalid_redirect_uri",
    );
    assert_error(
        post(r#"{"redirect_uris":["javascript:alert(1)"]}"#),
        400,
        "invalid_redirect_uri",
    );
    assert_error(
        post(r#"{"redirect_uris":["http://evil.example/cb"]}"#),
        400,
        "invalid_redirect_uri",
    );
    assert_error(
        post(&format!(
            r#"{{"redirect_uris":["{REDIRECT}"],"scope":"mcp admin"}}"#
        )),
        400,
        "invalid_client_metadata",
    );
    assert_error(
        post(&format!(
            r#"{{"redirect_uris":["{REDIRECT}"],"grant_types":["client_credentials"]}}"#
        )),
        400,
        "invalid_client_metadata",
    );
    let huge = format!(
        r#"{{"redirect_uris":["{REDIRECT}"],"client_name":"{}"}}"#,
        "x".repeat(20_000)
    );
    assert_error(post(&huge), 400, "invalid_client_metadata");
    assert_eq!(clients(), before, "no refused registration left a client");
    let events = String::from_utf8_lossy(&server.admin(&["client", "events"]).stdout).into_owned();
    assert!(
        events.contains("client.registration.refused"),
        "refusals are audited: {events}"
    );

    // A metadata document on a private address is never fetched, and the
    // page does not say where the name points.
    let mut browser = Browser::default();
    let cimd = authorize_path("https://localhost/client.json", "");
    let page = browser.send(&server, "GET", &cimd, None);
    assert_eq!(page.status, 400);
    assert!(page.body.contains("could not be fetched"), "{}", page.body);
    for leak in ["127.0.0.1", "::1", "private address"] {
        assert!(!page.body.contains(leak), "{leak}: {}", page.body);
    }

    // Seven refusals above counted toward the per-source limit (10 a minute).
    let mut limited = None;
    for _ in 0..12 {
        let answer = exchange_full(
            &server.url,
            "POST",
            "/oauth/register",
            &[("Content-Type", "application/json")],
            &format!(r#"{{"redirect_uris":["{REDIRECT}"]}}"#),
        );
        if answer.status == 429 {
            limited = Some(answer);
            break;
        }
        assert_eq!(answer.status, 201, "{}", answer.body);
    }
    let limited = limited.expect("registration is rate-limited");
    let events = String::from_utf8_lossy(&server.admin(&["client", "events"]).stdout).into_owned();
    assert!(
        events.contains("client.registered"),
        "registrations are audited: {events}"
    );
    assert!(
        limited
            .header("retry-after")
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|s| s >= 1),
        "{:?}",
        limited.headers
    );
    assert_eq!(json(&limited.body)["error"], "rate_limited");
}

/// Two hosts on one PostgreSQL: a grant redeemed on `b` and revoked on `a`
/// (RFC 7009, by its refresh token) is refused by `b` within the live
/// views' bound, by the triggers' notification or `b`'s poll, with no
/// restart and no request to `a` in between; on `a` itself the same kind
/// of revocation applies to the very next request (the test above).
#[test]
fn a_grant_revoked_on_one_replica_is_refused_by_the_other_within_the_live_bound() {
    let schema = support::PgSchema::create("live_views");
    let a = Server::start_on(&[toolhost_fixtures::HELLO], &[], Some(&schema.url));
    let b = Server::start_on(&[toolhost_fixtures::HELLO], &[], Some(&schema.url));
    let client = register(&b, REDIRECT, "e2e");
    let (s, tokens) = redeem(&b, &client, &code(&b, &client), VERIFIER);
    assert_eq!(s, 200, "{tokens}");
    // b remembers the grant: this and the next answer come from its views.
    assert_eq!(list_tools(&b, &bearer(&tokens)).status, 200);
    assert_eq!(list_tools(&b, &bearer(&tokens)).status, 200);

    assert_eq!(revoke(&a, &client, &tokens), 200);
    support::eventually("the grant revoked on the other replica refused", || {
        list_tools(&b, &bearer(&tokens)).status == 401
    });
}
