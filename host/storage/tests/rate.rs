//! The rate-limit counters: one set of test bodies, run against SQLite (a
//! temp file) and PostgreSQL (a schema per test); see `common/mod.rs`.

#[macro_use]
mod common;

use common::TestDb;
use tokio::task::JoinSet;
use toolhost_storage::Store;

on_both_engines!(
    fifty_concurrent_bumps_of_one_bucket_count_one_to_fifty,
    two_stores_on_one_database_share_each_count,
    concurrent_bumps_naming_shared_buckets_in_either_order_all_count,
    counts_come_back_in_the_order_the_buckets_were_named,
    each_bucket_and_each_window_counts_on_its_own,
    a_bucket_named_twice_is_counted_once,
    no_buckets_count_nothing,
    purge_deletes_ended_windows_and_keeps_current_ones,
);

/// A one-minute window, unix milliseconds.
const START: i64 = 1_764_000_000_000;
const END: i64 = START + 60_000;

async fn bump(store: &Store, buckets: &[&str]) -> Vec<u64> {
    store.count_hits(buckets, START, END).await.expect("count")
}

/// `n` concurrent single-bucket bumps, spread over `stores` in turn; the
/// counts they saw, sorted.
async fn concurrent_counts(stores: &[Store], n: usize) -> Vec<u64> {
    let mut bumps = JoinSet::new();
    for i in 0..n {
        let store = stores[i % stores.len()].clone();
        bumps.spawn(async move { bump(&store, &["principal:acme/alice"]).await[0] });
    }
    let mut counts = bumps.join_all().await;
    counts.sort_unstable();
    counts
}

async fn fifty_concurrent_bumps_of_one_bucket_count_one_to_fifty(db: &TestDb) {
    let store = db.store().await;
    let counts = concurrent_counts(&[store], 50).await;
    assert_eq!(
        counts,
        (1..=50).collect::<Vec<u64>>(),
        "each count seen once"
    );
}

/// Two hosts on one database: their bumps land on the same rows.
async fn two_stores_on_one_database_share_each_count(db: &TestDb) {
    let stores = [db.store().await, db.store().await];
    let counts = concurrent_counts(&stores, 40).await;
    assert_eq!(counts, (1..=40).collect::<Vec<u64>>());
}

/// Bumps naming the same rows in opposite orders: without the store's own
/// ordering, PostgreSQL could deadlock two of them (and fail one).
async fn concurrent_bumps_naming_shared_buckets_in_either_order_all_count(db: &TestDb) {
    let store = db.store().await;
    let mut bumps = JoinSet::new();
    for i in 0..40 {
        let store = store.clone();
        let buckets = if i % 2 == 0 {
            ["principal:acme/alice", "client:acme/c1"]
        } else {
            ["client:acme/c1", "principal:acme/alice"]
        };
        bumps.spawn(async move { bump(&store, &buckets).await });
    }
    let counts = bumps.join_all().await;
    assert!(counts.iter().all(|c| c[0] == c[1]), "{counts:?}");
    assert_eq!(bump(&store, &["client:acme/c1"]).await, [41]);
}

async fn counts_come_back_in_the_order_the_buckets_were_named(db: &TestDb) {
    let store = db.store().await;
    bump(&store, &["tool:write:acme/alice"]).await;
    bump(&store, &["tool:write:acme/alice", "client:acme/c1"]).await;
    // Sorted, these would be client, principal, tool: the answer keeps the caller's order.
    let counts = bump(
        &store,
        &[
            "principal:acme/alice",
            "client:acme/c1",
            "tool:write:acme/alice",
        ],
    )
    .await;
    assert_eq!(counts, [1, 2, 3]);
}

async fn each_bucket_and_each_window_counts_on_its_own(db: &TestDb) {
    let store = db.store().await;
    for _ in 0..3 {
        bump(&store, &["principal:acme/alice"]).await;
    }
    assert_eq!(bump(&store, &["principal:acme/bob"]).await, [1]);
    assert_eq!(bump(&store, &["principal:globex/alice"]).await, [1]);
    let next = store
        .count_hits(&["principal:acme/alice"], END, END + 60_000)
        .await
        .expect("count");
    assert_eq!(next, [1], "a new window starts from zero");
    assert_eq!(bump(&store, &["principal:acme/alice"]).await, [4]);
}

async fn a_bucket_named_twice_is_counted_once(db: &TestDb) {
    let store = db.store().await;
    let counts = bump(&store, &["client:acme/c1", "client:acme/c1"]).await;
    assert_eq!(counts, [1, 1]);
    assert_eq!(bump(&store, &["client:acme/c1"]).await, [2]);
}

async fn no_buckets_count_nothing(db: &TestDb) {
    let store = db.store().await;
    assert!(bump(&store, &[]).await.is_empty());
}

async fn purge_deletes_ended_windows_and_keeps_current_ones(db: &TestDb) {
    let store = db.store().await;
    let (earlier, earlier_end) = (START - 60_000, START);
    for _ in 0..2 {
        store
            .count_hits(&["principal:acme/alice"], earlier, earlier_end)
            .await
            .expect("count");
        bump(&store, &["principal:acme/alice"]).await;
    }
    // At START the earlier window has just ended; the current one has not.
    assert_eq!(store.purge_hits(START).await.expect("purge"), 1);
    let again = store
        .count_hits(&["principal:acme/alice"], earlier, earlier_end)
        .await
        .expect("count");
    assert_eq!(again, [1], "the purged window's count is gone");
    assert_eq!(bump(&store, &["principal:acme/alice"]).await, [3]);
}
