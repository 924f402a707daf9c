//! The rate-limit counters: one set of test bodies, run against SQLite (a
//! temp file) and PostgreSQL (a schema per test); see `common/mod.rs`.

#[macro_use]
mod common;

use common::TestDb;
use tokio::task::JoinSet;
use toolhost_storage::{Hits, Store};

on_both_engines!(
    concurrent_reports_of_one_bucket_each_see_a_distinct_running_total,
    two_stores_on_one_database_share_each_count,
    concurrent_reports_naming_shared_buckets_in_either_order_all_count,
    totals_come_back_in_the_order_the_hits_were_named,
    each_bucket_and_each_window_counts_on_its_own,
    a_key_named_twice_is_added_to_once_with_both_counts,
    nothing_to_add_writes_nothing,
    purge_deletes_ended_windows_and_keeps_current_ones,
);

/// A one-minute window, unix milliseconds.
const START: i64 = 1_764_000_000_000;
const END: i64 = START + 60_000;

fn hits(bucket: &str, n: u64) -> Hits {
    Hits {
        bucket: bucket.into(),
        window_start: START,
        window_end: END,
        n,
    }
}

/// Adds `n` to each bucket in the current window; their totals.
async fn add(store: &Store, buckets: &[(&str, u64)]) -> Vec<u64> {
    let hits: Vec<Hits> = buckets.iter().map(|(b, n)| hits(b, *n)).collect();
    store.add_hits(&hits).await.expect("add")
}

/// `reports` concurrent reports of `n` hits of one bucket, spread over
/// `stores` in turn; the totals they saw, sorted.
async fn concurrent_totals(stores: &[Store], reports: usize, n: u64) -> Vec<u64> {
    let mut adds = JoinSet::new();
    for i in 0..reports {
        let store = stores[i % stores.len()].clone();
        adds.spawn(async move { add(&store, &[("principal:acme/alice", n)]).await[0] });
    }
    let mut totals = adds.join_all().await;
    totals.sort_unstable();
    totals
}

async fn concurrent_reports_of_one_bucket_each_see_a_distinct_running_total(db: &TestDb) {
    let store = db.store().await;
    let totals = concurrent_totals(&[store], 50, 3).await;
    let expected: Vec<u64> = (1..=50).map(|i| i * 3).collect();
    assert_eq!(totals, expected, "each report is added once, atomically");
}

/// Two hosts on one database: their reports land on the same rows.
async fn two_stores_on_one_database_share_each_count(db: &TestDb) {
    let stores = [db.store().await, db.store().await];
    let totals = concurrent_totals(&stores, 40, 1).await;
    assert_eq!(totals, (1..=40).collect::<Vec<u64>>());
}

/// Reports naming the same rows in opposite orders: without the store's
/// own ordering, PostgreSQL could deadlock two of them (and fail one).
async fn concurrent_reports_naming_shared_buckets_in_either_order_all_count(db: &TestDb) {
    let store = db.store().await;
    let mut adds = JoinSet::new();
    for i in 0..40 {
        let store = store.clone();
        let buckets = if i % 2 == 0 {
            [("principal:acme/alice", 1), ("client:acme/c1", 1)]
        } else {
            [("client:acme/c1", 1), ("principal:acme/alice", 1)]
        };
        adds.spawn(async move { add(&store, &buckets).await });
    }
    let totals = adds.join_all().await;
    assert!(totals.iter().all(|c| c[0] == c[1]), "{totals:?}");
    assert_eq!(add(&store, &[("client:acme/c1", 1)]).await, [41]);
}

async fn totals_come_back_in_the_order_the_hits_were_named(db: &TestDb) {
    let store = db.store().await;
    add(&store, &[("tool:write:acme/alice", 3)]).await;
    add(&store, &[("client:acme/c1", 2)]).await;
    // Sorted, these would be client, principal, tool: the answer keeps the caller's order.
    let totals = add(
        &store,
        &[
            ("principal:acme/alice", 1),
            ("client:acme/c1", 1),
            ("tool:write:acme/alice", 1),
        ],
    )
    .await;
    assert_eq!(totals, [1, 3, 4]);
}

async fn each_bucket_and_each_window_counts_on_its_own(db: &TestDb) {
    let store = db.store().await;
    add(&store, &[("principal:acme/alice", 3)]).await;
    assert_eq!(add(&store, &[("principal:acme/bob", 1)]).await, [1]);
    assert_eq!(add(&store, &[("principal:globex/alice", 1)]).await, [1]);
    let next = Hits {
        window_start: END,
        window_end: END + 60_000,
        ..hits("principal:acme/alice", 2)
    };
    let both = store
        .add_hits(&[next, hits("principal:acme/alice", 1)])
        .await
        .expect("add");
    assert_eq!(both, [2, 4], "a new window starts from zero");
}

async fn a_key_named_twice_is_added_to_once_with_both_counts(db: &TestDb) {
    let store = db.store().await;
    let totals = add(&store, &[("client:acme/c1", 2), ("client:acme/c1", 5)]).await;
    assert_eq!(totals, [7, 7]);
    assert_eq!(add(&store, &[("client:acme/c1", 1)]).await, [8]);
}

async fn nothing_to_add_writes_nothing(db: &TestDb) {
    let store = db.store().await;
    assert!(add(&store, &[]).await.is_empty());
    assert_eq!(add(&store, &[("client:acme/c1", 0)]).await, [0]);
    // A zero beside a real count reads the key's total back.
    let totals = add(&store, &[("client:acme/c1", 2), ("client:acme/c1", 0)]).await;
    assert_eq!(totals, [2, 2]);
    assert_eq!(add(&store, &[("client:acme/c1", 1)]).await, [3]);
}

async fn purge_deletes_ended_windows_and_keeps_current_ones(db: &TestDb) {
    let store = db.store().await;
    let earlier = Hits {
        window_start: START - 60_000,
        window_end: START,
        ..hits("principal:acme/alice", 2)
    };
    store
        .add_hits(&[earlier.clone(), hits("principal:acme/alice", 2)])
        .await
        .expect("add");
    // At START the earlier window has just ended; the current one has not.
    assert_eq!(store.purge_hits(START).await.expect("purge"), 1);
    let again = Hits { n: 1, ..earlier };
    let totals = store
        .add_hits(&[again, hits("principal:acme/alice", 1)])
        .await
        .expect("add");
    assert_eq!(totals, [1, 3], "the purged window's count is gone");
}
