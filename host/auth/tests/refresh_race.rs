//! Concurrent refreshes with one refresh token: exactly one wins (a
//! conditional update) and every other gets `invalid_grant`.

use std::sync::Arc;

use toolhost_auth::{
    AuthConfig, AuthServer, AuthStore, Client, ClientKind, ClientOrigin, Family, RefreshToken,
    admin, secret,
};
use toolhost_storage::Store;
use toolhost_types::PrincipalKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_refreshes_have_exactly_one_winner() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("race.db").display());
    let store = Arc::new(Store::connect(&url).await.expect("store"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let auth = AuthServer::start(AuthConfig::new(base.clone()), store.clone())
        .await
        .expect("auth server");
    let app = toolhost_auth::router(auth.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serves") });

    let user = admin::add_user(store.as_ref(), "demo", "ada", "ada-password")
        .await
        .expect("user");
    let client = Client {
        client_id: "app".into(),
        secret_hash: None,
        kind: ClientKind::Public,
        origin: ClientOrigin::Admin,
        name: "app".into(),
        redirect_uris: vec!["http://127.0.0.1:9/cb".into()],
        scope: "mcp".into(),
        tenant: None,
        owner: None,
        created_at: 0,
        last_used_at: None,
        revoked_at: None,
        refresh_at: None,
    };
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
                let resp = http
                    .post(format!("{base}/oauth/token"))
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body(encode(&form))
                    .send()
                    .await
                    .expect("a response");
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
    let resp = http
        .post(format!("{base}/oauth/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(encode(&form))
        .send()
        .await
        .expect("a response");
    assert_eq!(resp.status().as_u16(), if revoked { 400 } else { 200 });
}

/// `application/x-www-form-urlencoded` of `pairs`.
fn encode<V: AsRef<str>>(pairs: &[(&str, V)]) -> String {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        form.append_pair(k, v.as_ref());
    }
    form.finish()
}
