//! Concurrent refreshes with one refresh token: exactly one wins (a
//! conditional update) and every other gets `invalid_grant`.

mod common;

use std::sync::Arc;

use toolhost_auth::{AuthConfig, AuthServer, AuthStore, Family, RefreshToken, admin, secret};
use toolhost_storage::Store;
use toolhost_types::PrincipalKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_refreshes_have_exactly_one_winner() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("race.db").display());
    let store = Arc::new(Store::connect(&url).await.expect("store"));
    let (listener, base) = common::bind().await;
    let auth = AuthServer::start(AuthConfig::new(base.clone()), store.clone())
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
        created_at: 0,
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

    let http = reqwest::Client::new();
    let attempts: Vec<_> = (0..8)
        .map(|_| {
            let (http, base, token) = (http.clone(), base.clone(), token.clone());
            tokio::spawn(async move {
                let form = [
                    ("grant_type", "refresh_token"),
                    ("client_id", "app"),
                    ("refresh_token", token.as_str()),
                ];
                let token_url = format!("{base}/oauth/token");
                let req = common::post_form(&http, token_url, &form);
                let resp = req.send().await.expect("a response");
                let status = resp.status().as_u16();
                let body: serde_json::Value =
                    serde_json::from_slice(&resp.bytes().await.expect("a body")).expect("JSON");
                (status, body)
            })
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
    let form = [
        ("grant_type", "refresh_token"),
        ("client_id", "app"),
        ("refresh_token", next),
    ];
    let req = common::post_form(&http, format!("{base}/oauth/token"), &form);
    let resp = req.send().await.expect("a response");
    assert_eq!(resp.status().as_u16(), if revoked { 400 } else { 200 });
}
