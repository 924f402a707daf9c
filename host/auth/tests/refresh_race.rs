//! Refreshing a grant: concurrent refreshes with one refresh token have
//! exactly one winner (a conditional update) and every other gets
//! `invalid_grant`; a grant past the host's `grant_max_age` is not
//! refreshed at all.

mod common;

use std::sync::Arc;

use toolhost_auth::{AuthConfig, AuthServer, AuthStore, Family, RefreshToken, admin, secret};
use toolhost_storage::Store;
use toolhost_types::PrincipalKind;

/// A served authorization server with `config`'s lifetimes, user `ada`,
/// client `app` and a grant of hers made `age` seconds ago, with one
/// refresh token: (store, base URL, the refresh token).
async fn a_grant(
    dir: &tempfile::TempDir,
    config: impl FnOnce(&mut AuthConfig),
    age: i64,
) -> (Arc<Store>, String, String) {
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("race.db").display());
    let store = Arc::new(Store::connect(&url).await.expect("store"));
    let (listener, base) = common::bind().await;
    let mut settings = AuthConfig::new(base.clone());
    config(&mut settings);
    let auth = AuthServer::start(settings, store.clone())
        .await
        .expect("auth server");
    common::serve(listener, toolhost_auth::router(auth.clone()));

    let user = admin::add_user(store.as_ref(), "demo", "ada", "ada-password")
        .await
        .expect("user");
    let client = common::admin_client("app", &["http://127.0.0.1:9/cb"]);
    store.insert_client(&client).await.expect("client");
    let family = Family {
        id: "grant-1".into(),
        client_id: "app".into(),
        subject: user.id.clone(),
        subject_kind: PrincipalKind::User,
        scope: "mcp".into(),
        created_at: common::now() - age,
        revoked_at: None,
    };
    store.insert_family(&family).await.expect("family");
    let token = secret::random(32);
    let record = RefreshToken {
        token_hash: secret::digest(&token),
        family_id: "grant-1".into(),
        client_id: "app".into(),
        scope: "mcp".into(),
        resource: format!("{base}/mcp"),
        expires_at: i64::MAX / 2,
        used_at: None,
        dpop_jkt: None,
    };
    store.insert_refresh(&record).await.expect("refresh token");
    (store, base, token)
}

/// One refresh of `token` at `base`: the status and the JSON answer.
async fn refresh(http: &reqwest::Client, base: &str, token: &str) -> (u16, serde_json::Value) {
    let form = [
        ("grant_type", "refresh_token"),
        ("client_id", "app"),
        ("refresh_token", token),
    ];
    let resp = common::post_form(http, format!("{base}/oauth/token"), &form)
        .send()
        .await
        .expect("a response");
    let status = resp.status().as_u16();
    let body = serde_json::from_slice(&resp.bytes().await.expect("a body")).expect("JSON");
    (status, body)
}

/// A grant ends `grant_max_age` after it was made, however often it was
/// refreshed: the bound on how long a person removed at a single-sign-on
/// provider keeps access.
#[tokio::test]
async fn a_grant_past_its_max_age_is_not_refreshed() {
    let http = reqwest::Client::new();
    let hour = std::time::Duration::from_secs(3600);
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, base, token) = a_grant(&dir, |c| c.grant_max_age = hour, 3601).await;
    let (status, body) = refresh(&http, &base, &token).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
    assert!(
        body["error_description"]
            .as_str()
            .is_some_and(|d| d.contains("grant_max_age")),
        "{body}"
    );

    // Younger than the bound: refreshed, and the new refresh token ends
    // with the grant, not a refresh lifetime later.
    let dir = tempfile::tempdir().expect("temp dir");
    let (store, base, token) = a_grant(&dir, |c| c.grant_max_age = hour, 3000).await;
    let (status, body) = refresh(&http, &base, &token).await;
    assert_eq!(status, 200, "{body}");
    let next = body["refresh_token"].as_str().expect("a new refresh token");
    let record = store
        .refresh_token(&secret::digest(next))
        .await
        .expect("read")
        .expect("stored");
    let grant_ends = common::now() - 3000 + 3600;
    assert!(
        (grant_ends - 2..=grant_ends + 2).contains(&record.expires_at),
        "the new refresh token expires with the grant: {} vs {grant_ends}",
        record.expires_at
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_refreshes_have_exactly_one_winner() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (store, base, token) = a_grant(&dir, |_| {}, 0).await;

    let http = reqwest::Client::new();
    let attempts: Vec<_> = (0..8)
        .map(|_| {
            let (http, base, token) = (http.clone(), base.clone(), token.clone());
            tokio::spawn(async move { refresh(&http, &base, &token).await })
        })
        .collect();
    let mut winners = Vec::new();
    for attempt in attempts {
        let (status, body) = attempt.await.expect("joins");
        match status {
            200 => winners.push(body),
            400 => assert_eq!(body["error"], "invalid_grant", "{body}"),
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one refresh wins: {winners:?}");
    // A request that read the token before the winner's update lost the
    // race and only got invalid_grant; one that read it after is a replay
    // of a rotated token and revoked the grant. Either way the grant's
    // state and the winner's token agree.
    let revoked = store
        .live_grant("grant-1")
        .await
        .expect("read")
        .expect("exists")
        .family
        .revoked_at
        .is_some();
    let next = winners[0]["refresh_token"]
        .as_str()
        .expect("a new refresh token");
    let (status, _) = refresh(&http, &base, next).await;
    assert_eq!(status, if revoked { 400 } else { 200 });
}
