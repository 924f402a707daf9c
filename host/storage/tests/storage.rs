//! The audit trail: one set of test bodies, run against SQLite (a temp
//! file) and PostgreSQL (a schema per test); see `common/mod.rs`.

#[macro_use]
mod common;

use common::TestDb;
use sqlx::{Connection, SqliteConnection};
use toolhost_audit::{AuditEvent, AuditSink, Outcome};
use toolhost_storage::{Engine, StorageError, Store};

on_both_engines!(
    an_event_reads_back_field_for_field,
    recent_lists_newest_first_up_to_the_limit,
    a_duplicate_call_id_is_refused_without_a_partial_row,
    the_outcome_check_refuses_an_unknown_outcome_written_by_raw_sql,
    every_outcome_is_stored_and_read_back,
    concurrent_appends_all_land,
    concurrent_records_share_commits_and_all_land,
    a_duplicate_in_a_batch_fails_only_its_own_caller,
    migrations_are_idempotent_across_connects,
    a_database_migrated_by_a_newer_build_is_refused,
    ping_answers_on_a_live_store,
    caller_chosen_texts_are_kept_bounded_and_the_chain_verifies,
);

/// An event with every optional field set, at a whole millisecond and a
/// whole microsecond of duration (the table's precision).
fn event(call_id: &str, at_ms: u64) -> AuditEvent {
    AuditEvent {
        gate_id: Some("gate_0123456789abcdef0123456789abcdef".into()),
        ..common::event(call_id, at_ms)
    }
}

async fn an_event_reads_back_field_for_field(db: &TestDb) {
    let store = db.store().await;
    let full = event("call-full", 1_764_000_000_123);
    let sparse = AuditEvent {
        client_id: None,
        plugin: None,
        catalog_version: None,
        plugin_digest: None,
        gate_id: None,
        outcome: Outcome::Error,
        error_code: Some("TOOL_NOT_FOUND".into()),
        ..event("call-sparse", 1_764_000_000_456)
    };
    store.record(&full).await.expect("recording the full event");
    store
        .record(&sparse)
        .await
        .expect("recording the sparse event");

    let rows = store.recent(10).await.expect("reading back");
    let events: Vec<&AuditEvent> = rows.iter().map(|r| &r.event).collect();
    assert_eq!(events, [&sparse, &full]);
    assert!(rows[0].id > rows[1].id, "ids follow recording order");
}

/// A tool name, gate id and client id a caller chose are kept whole up to
/// 128 bytes, else as their start and digest: a 4 MiB name adds a row of a
/// few hundred bytes, whichever way it is appended, and the chain verifies.
async fn caller_chosen_texts_are_kept_bounded_and_the_chain_verifies(db: &TestDb) {
    let store = db.store().await;
    let huge = "n".repeat(4 << 20);
    let long = AuditEvent {
        tool: huge.clone(),
        gate_id: Some(huge.clone()),
        client_id: Some(huge.clone()),
        ..event("call-long", 1_764_000_000_123)
    };
    store.record(&long).await.expect("recording");
    store
        .append(&AuditEvent {
            call_id: "call-long-append".into(),
            ..long.clone()
        })
        .await
        .expect("appending");
    for row in store.recent(10).await.expect("reading back") {
        let e = &row.event;
        assert_eq!(e.tool, toolhost_audit::kept_text(&huge));
        assert!(e.tool.len() < 200, "a kept name of {} bytes", e.tool.len());
        assert_eq!(e.gate_id.as_deref(), Some(e.tool.as_str()));
        assert_eq!(e.client_id.as_deref(), Some(e.tool.as_str()));
    }
    let checked = store
        .verify_chain()
        .await
        .expect("verifying")
        .expect("an intact chain");
    assert_eq!(checked.verified, 2, "{checked:?}");
}

async fn recent_lists_newest_first_up_to_the_limit(db: &TestDb) {
    let store = db.store().await;
    for (i, call) in ["first", "second", "third"].into_iter().enumerate() {
        store
            .append(&event(call, 1_000 * i as u64))
            .await
            .expect("appending");
    }
    let calls = |rows: Vec<toolhost_storage::AuditRecord>| -> Vec<String> {
        rows.into_iter().map(|r| r.event.call_id).collect()
    };
    assert_eq!(
        calls(store.recent(2).await.expect("recent 2")),
        ["third", "second"]
    );
    assert_eq!(
        calls(store.recent(10).await.expect("recent 10")),
        ["third", "second", "first"]
    );
    assert!(store.recent(0).await.expect("recent 0").is_empty());
}

async fn a_duplicate_call_id_is_refused_without_a_partial_row(db: &TestDb) {
    let store = db.store().await;
    let original = event("call-1", 1_000);
    store.append(&original).await.expect("the first write");

    let again = AuditEvent {
        tool: "other".into(),
        outcome: Outcome::Denied,
        ..original.clone()
    };
    match store.append(&again).await {
        Err(StorageError::DuplicateCallId { call_id }) => assert_eq!(call_id, "call-1"),
        other => panic!("expected DuplicateCallId, got {other:?}"),
    }
    let via_sink = store
        .record(&again)
        .await
        .expect_err("the sink refuses it too");
    assert!(via_sink.to_string().contains("call-1"), "{via_sink}");

    assert_eq!(store.count().await.expect("count"), 1);
    let rows = store.recent(10).await.expect("recent");
    assert_eq!(rows[0].event, original, "the first row is untouched");
}

async fn the_outcome_check_refuses_an_unknown_outcome_written_by_raw_sql(db: &TestDb) {
    let store = db.store().await;
    let insert_with = |outcome| {
        format!(
            "INSERT INTO audit (call_id, at, principal, tenant, tool, argument_digest, \
             outcome, duration_us) VALUES ('raw-{outcome}', 0, 'p', 't', 'x', '{}', '{outcome}', 0)",
            "0".repeat(64)
        )
    };
    // The same statement with a known outcome succeeds, so only the outcome can be at fault.
    db.raw(insert_with("executed"))
        .await
        .expect("a raw insert of a known outcome");
    let refused = db
        .raw(insert_with("maybe"))
        .await
        .expect_err("the CHECK constraint refuses 'maybe'");
    let message = refused.to_string();
    assert!(message.contains("audit_outcome_known"), "{message}");
    assert_eq!(store.count().await.expect("count"), 1);
}

async fn every_outcome_is_stored_and_read_back(db: &TestDb) {
    let store = db.store().await;
    // Every outcome, by the name the audit table's CHECK constraint knows.
    let names = "executed needs_clarification approval_required denied limit_rejected error";
    let outcomes: Vec<Outcome> = names
        .split(' ')
        .map(|name| Outcome::parse(name).expect("an outcome"))
        .collect();
    for (i, &outcome) in outcomes.iter().enumerate() {
        let e = AuditEvent {
            outcome,
            ..event(outcome.as_str(), i as u64)
        };
        store
            .append(&e)
            .await
            .expect("every outcome passes the CHECK");
    }
    let mut read: Vec<Outcome> = store
        .recent(10)
        .await
        .expect("recent")
        .into_iter()
        .map(|r| r.event.outcome)
        .collect();
    read.reverse();
    assert_eq!(read, outcomes);
}

async fn concurrent_appends_all_land(db: &TestDb) {
    let store = db.store().await;
    let mut writers = tokio::task::JoinSet::new();
    for i in 0..32u64 {
        let store = store.clone();
        writers.spawn(async move { store.append(&event(&format!("call-{i}"), i)).await });
    }
    while let Some(written) = writers.join_next().await {
        written
            .expect("a writer task")
            .expect("a concurrent append");
    }
    assert_eq!(store.count().await.expect("count"), 32);
}

async fn concurrent_records_share_commits_and_all_land(db: &TestDb) {
    let store = db.store().await;
    let mut writers = tokio::task::JoinSet::new();
    for i in 0..200u64 {
        let store = store.clone();
        writers.spawn(async move { store.record(&event(&format!("grouped-{i}"), i)).await });
    }
    while let Some(written) = writers.join_next().await {
        written.expect("a writer task").expect("a grouped record");
    }
    // Every acknowledged record is there, each exactly once.
    assert_eq!(store.count().await.expect("count"), 200);
    let ids: std::collections::BTreeSet<String> = store
        .recent(1000)
        .await
        .expect("recent")
        .into_iter()
        .map(|r| r.event.call_id)
        .collect();
    assert_eq!(ids.len(), 200);
}

async fn a_duplicate_in_a_batch_fails_only_its_own_caller(db: &TestDb) {
    let store = db.store().await;
    store
        .append(&event("taken", 1))
        .await
        .expect("the first row");
    let mut writers = tokio::task::JoinSet::new();
    for i in 0..40u64 {
        let store = store.clone();
        let id = if i == 20 {
            "taken".to_owned()
        } else {
            format!("fresh-{i}")
        };
        writers.spawn(async move { (i, store.record(&event(&id, i)).await) });
    }
    let mut failed = Vec::new();
    while let Some(joined) = writers.join_next().await {
        let (i, result) = joined.expect("a writer task");
        if result.is_err() {
            failed.push(i);
        }
    }
    assert_eq!(failed, [20], "only the duplicate's caller sees an error");
    assert_eq!(store.count().await.expect("count"), 40);
}

async fn migrations_are_idempotent_across_connects(db: &TestDb) {
    let first = db.store().await;
    first.append(&event("before", 1)).await.expect("appending");
    first.close().await;

    let second = db.store().await;
    assert_eq!(second.count().await.expect("count"), 1, "the row survived");
    second
        .append(&event("after", 2))
        .await
        .expect("appending again");
    assert_eq!(second.count().await.expect("count"), 2);
}

async fn a_database_migrated_by_a_newer_build_is_refused(db: &TestDb) {
    db.store().await.close().await;
    let checksum = match db {
        TestDb::Sqlite { .. } => "X'00'",
        TestDb::Postgres { .. } => "'\\x00'::bytea",
    };
    db.raw(format!(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (9999, 'from the future', TRUE, {checksum}, 0)"
    ))
    .await
    .expect("recording a migration this build does not have");
    match Store::connect(db.url()).await {
        Err(e @ StorageError::Migrate { .. }) => assert!(e.to_string().contains("9999"), "{e}"),
        other => panic!("expected a Migrate error, got {other:?}"),
    }
}

async fn ping_answers_on_a_live_store(db: &TestDb) {
    let store = db.store().await;
    store.ping().await.expect("ping");
    let want = match db {
        TestDb::Sqlite { .. } => Engine::Sqlite,
        TestDb::Postgres { .. } => Engine::Postgres,
    };
    assert_eq!(store.engine(), want);
    store.close().await;
    assert!(store.ping().await.is_err(), "a closed store is not ready");
}

// SQLite-only behaviour.

#[tokio::test]
async fn a_missing_sqlite_file_is_created_in_wal_mode() {
    let db = TestDb::sqlite();
    let TestDb::Sqlite { _dir: dir, .. } = &db else {
        unreachable!("TestDb::sqlite is SQLite")
    };
    let path = dir.path().join("audit.db");
    assert!(!path.exists());
    let store = db.store().await;
    assert!(path.exists(), "create_if_missing");
    store.close().await;

    let mut c = SqliteConnection::connect(db.url())
        .await
        .expect("a raw connection");
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut c)
        .await
        .expect("reading journal_mode");
    assert_eq!(mode, "wal");
}

#[tokio::test]
async fn an_in_memory_sqlite_store_keeps_its_rows_while_open() {
    let store = Store::connect("sqlite::memory:").await.expect("connecting");
    store.append(&event("mem-1", 1)).await.expect("appending");
    store.append(&event("mem-2", 2)).await.expect("appending");
    assert_eq!(store.count().await.expect("count"), 2);
}

#[tokio::test]
async fn an_unknown_scheme_is_refused_by_name() {
    match Store::connect("mysql://root:hunter2@localhost/db").await {
        Err(e @ StorageError::UnsupportedUrl { .. }) => {
            let message = e.to_string();
            assert!(
                message.contains("mysql://root:***@localhost/db"),
                "{message}"
            );
        }
        other => panic!("expected UnsupportedUrl, got {other:?}"),
    }
}
