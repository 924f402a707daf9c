//! Signing keys live in the store: made on first start, rotated on
//! schedule, published until every token they signed has expired.

use std::sync::Arc;
use std::time::Duration;

use toolhost_auth::AuthStore;
use toolhost_auth::keys::{KeyRing, KeySchedule};
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
    let stored = store.signing_keys().await.expect("keys");
    assert!(
        stored
            .iter()
            .any(|k| k.kid == first[0] && k.retired_at == Some(1_160))
    );
}
