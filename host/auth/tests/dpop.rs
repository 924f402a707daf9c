//! DPoP through the authorization server and the resource server check,
//! on a real store: the token endpoint binds what it issues to the proof's
//! key, and `authenticate_request` takes a bound token only with a fresh
//! proof by that key, once, whichever replica sees it.

mod common;

use std::sync::Arc;

use common::{now, serve_auth, service_token};
use toolhost_auth::dpop::DpopError;
use toolhost_auth::dpop::client::Prover;
use toolhost_auth::{AuthConfig, AuthServer, BearerError, Presented, admin};
use toolhost_storage::Store;

const ISSUER: &str = "http://toolhost.test";

/// Two replicas of one issuer on one store, the first serving HTTP, and
/// a bound service token (with the prover that holds its key).
async fn bound_token() -> (Arc<AuthServer>, Arc<AuthServer>, Prover, String) {
    let store = Arc::new(Store::connect("sqlite::memory:").await.expect("store"));
    let a = AuthServer::start(AuthConfig::new(ISSUER), store.clone())
        .await
        .expect("a");
    let b = AuthServer::start(AuthConfig::new(ISSUER), store.clone())
        .await
        .expect("b");
    let (client, secret) = admin::add_service(store.as_ref(), "demo", "svc", "mcp")
        .await
        .expect("service");
    let base = serve_auth(a.clone()).await;
    let prover = Prover::generate();
    let proof = prover.proof("POST", &format!("{ISSUER}/oauth/token"), now(), None);
    let body = "grant_type=client_credentials";
    let answer = service_token(&base, &client.client_id, &secret, body, Some(&proof)).await;
    assert_eq!(answer["token_type"], "DPoP", "{answer}");
    let token = answer["access_token"].as_str().expect("a token").to_owned();
    (a, b, prover, token)
}

async fn present(
    auth: &AuthServer,
    scheme: &str,
    token: &str,
    proofs: &[&str],
) -> Result<String, BearerError> {
    let authorization = format!("{scheme} {token}");
    let url = format!("{ISSUER}/mcp");
    auth.authenticate_request(&Presented {
        authorization: Some(&authorization),
        dpop: proofs,
        method: "POST",
        url: &url,
    })
    .await
    .map(|p| p.client_id)
}

#[tokio::test]
async fn a_bound_token_is_served_once_per_proof_across_replicas() {
    let (a, b, prover, token) = bound_token().await;
    let url = format!("{ISSUER}/mcp");
    let proof = prover.proof("POST", &url, now(), Some(&token));
    assert!(present(&a, "DPoP", &token, &[&proof]).await.is_ok());
    assert_eq!(
        present(&b, "DPoP", &token, &[&proof]).await,
        Err(BearerError::Proof(DpopError::Replayed)),
        "spent at a, refused at b"
    );
    let fresh = prover.proof("POST", &url, now(), Some(&token));
    assert!(present(&b, "DPoP", &token, &[&fresh]).await.is_ok());
}

#[tokio::test]
async fn a_bound_token_without_its_keys_proof_is_refused() {
    let (a, _, prover, token) = bound_token().await;
    let url = format!("{ISSUER}/mcp");
    let thief = Prover::generate();
    let theirs = thief.proof("POST", &url, now(), Some(&token));
    let elsewhere = prover.proof(
        "POST",
        &format!("{ISSUER}/oauth/token"),
        now(),
        Some(&token),
    );
    let ours = prover.proof("POST", &url, now(), Some(&token));
    let cases: Vec<(&str, &str, Vec<&str>, BearerError)> = vec![
        (
            "no proof",
            "DPoP",
            vec![],
            BearerError::Proof(DpopError::Missing),
        ),
        (
            "another key",
            "DPoP",
            vec![&theirs],
            BearerError::Proof(DpopError::OtherKey),
        ),
        (
            "another URL",
            "DPoP",
            vec![&elsewhere],
            BearerError::Proof(DpopError::Url),
        ),
        (
            "two proofs",
            "DPoP",
            vec![&ours, &ours],
            BearerError::Proof(DpopError::NotOne),
        ),
    ];
    for (what, scheme, proofs, error) in cases {
        assert_eq!(
            present(&a, scheme, &token, &proofs).await,
            Err(error),
            "{what}"
        );
    }
    assert!(
        matches!(
            present(&a, "Bearer", &token, &[&ours]).await,
            Err(BearerError::DpopToken(_))
        ),
        "a bound token as Bearer"
    );
    assert!(
        matches!(
            a.authenticate(Some(&format!("Bearer {token}"))).await,
            Err(BearerError::DpopToken(_))
        ),
        "the bearer-only check refuses it too"
    );
    assert!(
        matches!(
            present(&a, "DPoP", "not-a-token", &[&ours]).await,
            Err(BearerError::DpopToken(_))
        ),
        "an invalid token under the DPoP scheme is answered under that scheme"
    );
    // None of the refusals spent the owner's proof.
    assert!(present(&a, "DPoP", &token, &[&ours]).await.is_ok());
}
