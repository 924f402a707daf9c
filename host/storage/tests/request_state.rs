//! The MRTR request-state keys and spent states shared by replicas: one set
//! of test bodies, run against SQLite (a temp file) and PostgreSQL (a
//! schema per test); see `common/mod.rs`.

#[macro_use]
mod common;

use common::TestDb;
use toolhost_storage::REQUEST_STATE_KEY_PERIOD as DAY;

on_both_engines!(
    replicas_asking_at_once_hold_the_same_keys_made_a_day_ahead,
    a_state_is_spent_once_across_replicas_and_forgotten_when_expired,
);

const NOW: i64 = 1_764_000_000;

async fn replicas_asking_at_once_hold_the_same_keys_made_a_day_ahead(db: &TestDb) {
    let (a, b) = (db.store().await, db.store().await);
    let (ka, kb) = tokio::join!(a.request_state_keys(NOW), b.request_state_keys(NOW));
    let (ka, kb) = (ka.expect("a"), kb.expect("b"));
    assert_eq!(ka, kb, "both replicas read the same bytes");
    let today = NOW / DAY;
    assert_eq!(ka.active, format!("rs{today}"));
    let ids: Vec<&str> = ka.keys.iter().map(|(kid, _)| kid.as_str()).collect();
    assert_eq!(ids, [format!("rs{today}"), format!("rs{}", today + 1)]);
    assert!(ka.keys.iter().all(|(_, key)| key.len() == 32));
    assert_ne!(ka.keys[0].1, ka.keys[1].1);

    // A day later: yesterday's key still opens, tomorrow's is made, and
    // the day before yesterday's is gone two days on.
    let next = a.request_state_keys(NOW + DAY).await.expect("next day");
    assert_eq!(next.active, format!("rs{}", today + 1));
    assert_eq!(next.keys[..2], ka.keys[..]);
    assert_eq!(next.keys.len(), 3);
    let later = b
        .request_state_keys(NOW + 2 * DAY)
        .await
        .expect("two days on");
    assert_eq!(later.keys[0], ka.keys[1]);
    assert_eq!(db.count("request_state_keys").await, 3);
}

async fn a_state_is_spent_once_across_replicas_and_forgotten_when_expired(db: &TestDb) {
    let (a, b) = (db.store().await, db.store().await);
    let (x, y) = tokio::join!(
        a.spend_request_state("n-1", NOW + 600),
        b.spend_request_state("n-1", NOW + 600)
    );
    let mut won = [x.expect("a"), y.expect("b")];
    won.sort_unstable();
    assert_eq!(won, [false, true], "one replica spends it");
    assert!(
        a.spend_request_state("n-2", NOW + 600)
            .await
            .expect("other")
    );
    // Reading the keys purges what has expired.
    a.request_state_keys(NOW + 601).await.expect("keys");
    assert_eq!(db.count("request_state_spent").await, 0);
}
