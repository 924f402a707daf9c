//! Signing keys live in the store: made on first start, rotated on
//! schedule, published until every token they signed has expired.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{serve_auth, service_token};
use toolhost_auth::keys::{KeyRing, KeySchedule};
use toolhost_auth::{AuthStore, KeyPurpose};
use toolhost_storage::Store;

fn kids(ring: &KeyRing) -> Vec<String> {
    ring.jwks()["keys"]
        .as_array()
        .expect("keys")
        .iter()
        .map(|k| k["kid"].as_str().expect("a kid").to_owned())
        .collect()
}

#[tokio::test]
async fn keys_are_made_once_rotated_on_schedule_and_retired_after_their_tokens() {
    let store: Arc<dyn AuthStore> =
        Arc::new(Store::connect("sqlite::memory:").await.expect("store"));
    let schedule = KeySchedule {
        rotate_after: Duration::from_secs(100),
        publish_after_superseded: Duration::from_secs(50),
    };
    let ring = KeyRing::load(store.as_ref(), schedule, 1_000)
        .await
        .expect("loads");
    let first = kids(&ring);
    assert_eq!(first.len(), 1);

    // Another replica starting before rotation is due shares the key.
    let replica = KeyRing::load(store.as_ref(), schedule, 1_050)
        .await
        .expect("loads");
    assert_eq!(kids(&replica), first);

    // Due: a new key signs; the old one stays published.
    ring.reload(store.as_ref(), schedule, 1_100)
        .await
        .expect("rotates");
    let both = kids(&ring);
    assert_eq!(both.len(), 2);
    assert_eq!(both[1], first[0]);
    // The replica picks the rotation up on its next reload, without making another.
    replica
        .reload(store.as_ref(), schedule, 1_120)
        .await
        .expect("reloads");
    assert_eq!(kids(&replica), both);

    // Once the old key's tokens have all expired, it is retired.
    ring.reload(store.as_ref(), schedule, 1_160)
        .await
        .expect("retires");
    assert_eq!(kids(&ring), vec![both[0].clone()]);
    let stored = store.signing_keys(KeyPurpose::Access).await.expect("keys");
    assert!(
        stored
            .iter()
            .any(|k| k.kid == first[0] && k.retired_at == Some(1_160))
    );
}

/// Two replicas on one store: one rotates (here: made due at start) and
/// signs with a key the other has not loaded. The other reads the keys
/// again when a token names it, instead of refusing the token until its
/// next periodic reload.
#[tokio::test]
async fn a_token_signed_with_another_replicas_new_key_is_accepted_at_once() {
    use toolhost_auth::admin;

    let (store, a, b) = two_replicas().await;
    assert_ne!(kids(a_ring(&a)), kids(a_ring(&b)), "a made a key b lacks");

    let (client, secret) = admin::add_service(store.as_ref(), "demo", "svc", "mcp")
        .await
        .expect("service");
    let base = serve_auth(a.clone()).await;
    let body = "grant_type=client_credentials&scope=mcp";
    let answer = service_token(&base, &client.client_id, &secret, body, None).await;
    let token = answer["access_token"].as_str().expect("a token");
    let principal = b
        .authenticate(Some(&format!("Bearer {token}")))
        .await
        .expect("b accepts a's token");
    assert_eq!(principal.client_id, client.client_id);
    let sorted = |ring: &KeyRing| {
        let mut k = kids(ring);
        k.sort();
        k
    };
    assert_eq!(
        sorted(a_ring(&b)),
        sorted(a_ring(&a)),
        "b now holds a's keys"
    );

    // A key id nobody made is refused (and reads the keys at most once a second).
    let forged = format!("Bearer {}", token.replacen('e', "f", 1));
    assert!(b.authenticate(Some(&forged)).await.is_err());
}

/// Two replicas on one store: `a` rotates at once (so it makes keys `b`
/// has not loaded), `b` does not. (store, a, b)
async fn two_replicas() -> (
    Arc<Store>,
    Arc<toolhost_auth::AuthServer>,
    Arc<toolhost_auth::AuthServer>,
) {
    use toolhost_auth::{AuthConfig, AuthServer};
    let store = Arc::new(Store::connect("sqlite::memory:").await.expect("store"));
    let issuer = "http://toolhost.test";
    let b = AuthServer::start(AuthConfig::new(issuer), store.clone())
        .await
        .expect("b");
    let mut rotating = AuthConfig::new(issuer);
    rotating.key_rotation = Duration::ZERO;
    let a = AuthServer::start(rotating, store.clone()).await.expect("a");
    (store, a, b)
}

fn a_ring(server: &toolhost_auth::AuthServer) -> &KeyRing {
    server.keys()
}

/// The assertion keys are a ring of their own: published at their own
/// JWKS, sharing no key with the access tokens', and an assertion is never
/// accepted as an access token.
#[tokio::test]
async fn assertion_keys_are_apart_from_access_token_keys() {
    use toolhost_auth::assertion::ASSERTION_JWKS_PATH;
    use toolhost_auth::{AuthConfig, AuthServer};
    use toolhost_backend::{Asserter, Identity};

    let store = Arc::new(Store::connect("sqlite::memory:").await.expect("store"));
    let auth = AuthServer::start(AuthConfig::new("http://toolhost.test"), store.clone())
        .await
        .expect("starts");
    let (access, assertion) = (kids(auth.keys()), kids(auth.assertion_keys()));
    assert_eq!((access.len(), assertion.len()), (1, 1));
    assert_ne!(access, assertion);
    let stored = store
        .signing_keys(KeyPurpose::BackendAssertion)
        .await
        .expect("keys");
    assert_eq!(stored.len(), 1);

    let base = serve_auth(auth.clone()).await;
    let text = reqwest::get(format!("{base}{ASSERTION_JWKS_PATH}"))
        .await
        .expect("the JWKS")
        .text()
        .await
        .expect("a body");
    let served: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(served, auth.assertion_keys().jwks());

    let who = Identity {
        subject: "u_ann".into(),
        kind: "user",
        tenant: "demo".into(),
        client_id: "c1".into(),
        tool: "t".into(),
        call_id: "call".into(),
    };
    let assertion = auth
        .backend_assertions()
        .assert(&who, "testbench")
        .expect("signed");
    let presented = auth
        .authenticate(Some(&format!("Bearer {assertion}")))
        .await;
    assert!(presented.is_err(), "an assertion is not an access token");
}

/// Two replicas on one store: one makes a new assertion key; the other's
/// JWKS publishes it at once (read again on the request, at most once a
/// second), so a backend refetching for an unknown key id finds it there.
#[tokio::test]
async fn another_replicas_new_assertion_key_is_in_this_replicas_jwks() {
    use toolhost_auth::assertion::ASSERTION_JWKS_PATH;

    let (_, a, b) = two_replicas().await;
    let newest = kids(a.assertion_keys())[0].clone();
    assert!(
        !kids(b.assertion_keys()).contains(&newest),
        "b has not read it yet"
    );
    let base = serve_auth(b.clone()).await;
    let text = reqwest::get(format!("{base}{ASSERTION_JWKS_PATH}"))
        .await
        .expect("the JWKS")
        .text()
        .await
        .expect("a body");
    assert!(text.contains(&newest), "{text}");
}
