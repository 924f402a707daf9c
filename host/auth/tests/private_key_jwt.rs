//! Service clients that authenticate with a signed assertion (RFC 7523
//! `private_key_jwt`) at the token endpoint of two replicas on one store:
//! an assertion by a registered key gets a token once, whichever replica
//! sees it; a replay, another key's, a secret or two methods at once are
//! refused with `invalid_client`, and each refused assertion is an event.
//! Also what a service's token carries when it asks for `mcp` alone, as
//! the MCP SDK's client-credentials providers do.

mod common;

use std::sync::Arc;

use common::{encode, now, serve_auth, service_token};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use toolhost_auth::{AuthConfig, AuthServer, AuthStore, admin};
use toolhost_storage::Store;

const ISSUER: &str = "http://toolhost.test";

/// A workload's key: what it signs with and the public JWK it registers.
fn workload_key() -> (EncodingKey, Jwk) {
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
    let rng = aws_lc_rs::rand::SystemRandom::new();
    let der = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("key");
    let key = EncodingKey::from_ec_der(der.as_ref());
    let jwk = Jwk::from_encoding_key(&key, Algorithm::ES256).expect("a public JWK");
    (key, jwk)
}

/// An assertion by `key` for client `id`, to `aud`, with a fresh `jti`
/// unless one is given.
fn assertion(key: &EncodingKey, id: &str, aud: &str, jti: Option<&str>) -> String {
    let claims = json!({
        "iss": id, "sub": id, "aud": aud,
        "iat": now(), "exp": now() + 300,
        "jti": jti.map_or_else(|| toolhost_auth::secret::random(12), str::to_owned),
    });
    jsonwebtoken::encode(&Header::new(Algorithm::ES256), &claims, key).expect("signed")
}

/// A token request with `pairs` as its form, no Basic credentials.
async fn token(base: &str, pairs: &[(&str, &str)]) -> (u16, Value) {
    let answer = reqwest::Client::new()
        .post(format!("{base}/oauth/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(encode(pairs))
        .send()
        .await
        .expect("token");
    let status = answer.status().as_u16();
    let text = answer.text().await.expect("a body");
    (status, serde_json::from_str(&text).expect("JSON"))
}

fn with_assertion(assertion: &str) -> Form<'_> {
    vec![
        ("grant_type", "client_credentials"),
        (
            "client_assertion_type",
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        ),
        ("client_assertion", assertion),
    ]
}

/// A token request's form fields.
type Form<'a> = Vec<(&'a str, &'a str)>;

struct Replicas {
    store: Arc<Store>,
    a: String,
    b: String,
}

async fn replicas() -> Replicas {
    let store = Arc::new(Store::connect("sqlite::memory:").await.expect("store"));
    let mut bases = Vec::new();
    for _ in 0..2 {
        let auth = AuthServer::start(AuthConfig::new(ISSUER), store.clone())
            .await
            .expect("a replica");
        bases.push(serve_auth(auth).await);
    }
    let b = bases.pop().expect("b");
    let a = bases.pop().expect("a");
    Replicas { store, a, b }
}

#[tokio::test]
async fn an_assertion_by_a_registered_key_is_taken_once_across_replicas() {
    let r = replicas().await;
    let (key, jwk) = workload_key();
    let jwks = json!({ "keys": [jwk] }).to_string();
    let client = admin::add_keyed_service(r.store.as_ref(), "demo", "ci", "mcp", &jwks)
        .await
        .expect("a keyed service");
    let id = client.client_id.as_str();

    let first = assertion(&key, id, ISSUER, Some("j-1"));
    let (status, answer) = token(&r.a, &with_assertion(&first)).await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer["access_token"].is_string(), "{answer}");

    // The same assertion at the other replica: spent.
    let (status, answer) = token(&r.b, &with_assertion(&first)).await;
    assert_eq!(
        (status, answer["error"].as_str()),
        (401, Some("invalid_client"))
    );
    assert!(
        answer["error_description"]
            .as_str()
            .is_some_and(|d| d.contains("used before")),
        "{answer}"
    );

    // A fresh one for the token endpoint's URL works at either.
    let at_endpoint = assertion(&key, id, &format!("{ISSUER}/oauth/token"), None);
    let (status, answer) = token(&r.b, &with_assertion(&at_endpoint)).await;
    assert_eq!(status, 200, "{answer}");

    let events = r.store.recent_events(20).await.expect("events");
    let refused: Vec<&str> = events
        .iter()
        .filter(|e| e.kind == "client.assertion.refused")
        .map(|e| e.detail.as_str())
        .collect();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].contains("used before"), "{refused:?}");
}

#[tokio::test]
async fn every_other_way_in_is_refused_with_invalid_client() {
    let r = replicas().await;
    let (key, jwk) = workload_key();
    let jwks = json!({ "keys": [jwk] }).to_string();
    let keyed = admin::add_keyed_service(r.store.as_ref(), "demo", "ci", "mcp", &jwks)
        .await
        .expect("a keyed service");
    let id = keyed.client_id.as_str();
    let (secret_client, secret) = admin::add_service(r.store.as_ref(), "demo", "old", "mcp")
        .await
        .expect("a secret service");
    let (thief, _) = workload_key();

    let theirs = assertion(&thief, id, ISSUER, None);
    let foreign_aud = assertion(&key, id, "https://other.example", None);
    let for_secret_client = assertion(&key, &secret_client.client_id, ISSUER, None);
    let cases: Vec<(&str, Form, &str)> = vec![
        ("another key", with_assertion(&theirs), "does not verify"),
        ("another server", with_assertion(&foreign_aud), "aud"),
        (
            "a client with no keys",
            with_assertion(&for_secret_client),
            "no registered keys",
        ),
    ];
    for (what, pairs, says) in cases {
        let (status, answer) = token(&r.a, &pairs).await;
        assert_eq!(
            (status, answer["error"].as_str()),
            (401, Some("invalid_client")),
            "{what}: {answer}"
        );
        let description = answer["error_description"].as_str().unwrap_or_default();
        assert!(description.contains(says), "{what}: {answer}");
    }

    // Two methods at once.
    let fresh = assertion(&key, id, ISSUER, None);
    let mut both = with_assertion(&fresh);
    both.push(("client_secret", &secret));
    let (status, answer) = token(&r.a, &both).await;
    assert_eq!(
        (status, answer["error"].as_str()),
        (400, Some("invalid_request"))
    );

    // A keyed client's secret, even the right one, is refused once it has
    // keys: give the secret client keys, and its secret stops working.
    let body = "grant_type=client_credentials";
    let answer = service_token(&r.a, &secret_client.client_id, &secret, body, None).await;
    assert!(answer["access_token"].is_string(), "before keys: {answer}");
    admin::set_service_keys(r.store.as_ref(), &secret_client.client_id, &jwks)
        .await
        .expect("keys");
    let answer = service_token(&r.a, &secret_client.client_id, &secret, body, None).await;
    assert_eq!(answer["error"], "invalid_client", "{answer}");
}

#[tokio::test]
async fn metadata_advertises_private_key_jwt_and_its_algorithms() {
    let r = replicas().await;
    let text = reqwest::get(format!("{}/.well-known/oauth-authorization-server", r.a))
        .await
        .expect("metadata")
        .text()
        .await
        .expect("a body");
    let metadata: Value = serde_json::from_str(&text).expect("JSON");
    let methods = metadata["token_endpoint_auth_methods_supported"].to_string();
    assert!(methods.contains("private_key_jwt"), "{metadata}");
    assert_eq!(
        metadata["token_endpoint_auth_signing_alg_values_supported"],
        json!(["EdDSA", "ES256", "RS256"])
    );
}

#[test]
fn registered_keys_must_be_public_and_of_a_kind_an_assertion_uses() {
    let (_, jwk) = workload_key();
    let mut value = serde_json::to_value(&jwk).expect("JSON");
    assert!(admin::client_keys(&value.to_string()).is_ok(), "one JWK");
    value["d"] = "private".into();
    let refused = admin::client_keys(&value.to_string()).expect_err("a private member");
    assert!(refused.to_string().contains("private"), "{refused}");
    let secret = json!({"kty": "oct", "k": "c2VjcmV0"}).to_string();
    assert!(admin::client_keys(&secret).is_err(), "a symmetric key");
    let many = json!({ "keys": vec![jwk; 9] }).to_string();
    assert!(admin::client_keys(&many).is_err(), "too many");
    assert!(admin::client_keys("not JSON").is_err());
}

/// What MCP SDKs ask for after reading the resource's challenge is `mcp`
/// alone: a service asking that gets its whole scope set; naming
/// permissions narrows it, and naming one it lacks is refused.
#[tokio::test]
async fn a_service_asking_for_mcp_alone_gets_its_whole_scope_set() {
    let r = replicas().await;
    let (client, secret) =
        admin::add_service(r.store.as_ref(), "demo", "svc", "mcp hello:read crm:read")
            .await
            .expect("a service");
    let granted = |body: &'static str| {
        let (base, id, secret) = (r.a.clone(), client.client_id.clone(), secret.clone());
        async move {
            let answer = service_token(&base, &id, &secret, body, None).await;
            let mut scopes: Vec<String> = answer["scope"]
                .as_str()
                .unwrap_or_else(|| panic!("{answer}"))
                .split(' ')
                .map(str::to_owned)
                .collect();
            scopes.sort();
            scopes.join(" ")
        }
    };
    let whole = "crm:read hello:read mcp";
    assert_eq!(granted("grant_type=client_credentials").await, whole);
    assert_eq!(
        granted("grant_type=client_credentials&scope=mcp").await,
        whole
    );
    assert_eq!(
        granted("grant_type=client_credentials&scope=mcp%20hello:read").await,
        "hello:read mcp"
    );
    let answer = service_token(
        &r.a,
        &client.client_id,
        &secret,
        "grant_type=client_credentials&scope=mcp%20admin:all",
        None,
    )
    .await;
    assert_eq!(answer["error"], "invalid_scope", "{answer}");
}

/// Anyone who knows a client's id can send forged assertions: each is
/// refused, but only a bounded number a minute become events.
#[tokio::test]
async fn forged_assertions_are_refused_but_their_events_are_bounded() {
    let r = replicas().await;
    let (_, jwk) = workload_key();
    let jwks = json!({ "keys": [jwk] }).to_string();
    let client = admin::add_keyed_service(r.store.as_ref(), "demo", "ci", "mcp", &jwks)
        .await
        .expect("a keyed service");
    let (forger, _) = workload_key();
    let sent = 25;
    for _ in 0..sent {
        let forged = assertion(&forger, &client.client_id, ISSUER, None);
        let (status, _) = token(&r.a, &with_assertion(&forged)).await;
        assert_eq!(status, 401);
    }
    let events = r.store.recent_events(100).await.expect("events");
    let kept = events
        .iter()
        .filter(|e| e.kind == "client.assertion.refused")
        .count();
    // 10 a minute per client; a run that straddles a minute keeps two
    // minutes' worth.
    assert!((10..=20).contains(&kept), "kept {kept} of {sent}");
}
