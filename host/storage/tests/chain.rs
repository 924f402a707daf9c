//! The audit trail's hash chain and its queries: one set of test bodies,
//! run against SQLite (a temp file) and PostgreSQL (a schema per test); see
//! `common/mod.rs`.

#[macro_use]
mod common;

use std::time::{Duration, UNIX_EPOCH};

use common::{TestDb, event};
use serde_json::json;
use toolhost_audit::Encoding;
use toolhost_audit::chain::{ChainedRow, GENESIS, Problem, chain_genesis};
use toolhost_audit::export::{ExportBreak, ExportCheck, ExportProblem, ExportSummary};
use toolhost_audit::{AuditEvent, AuditSink, ChainSummary, ClientRound, Outcome, argument_digest};
use toolhost_storage::{AuditQuery, ExportRequest, Store};
use toolhost_types::Digest;

on_both_engines!(
    appended_and_recorded_rows_form_one_chain_that_verifies,
    an_edited_row_breaks_the_chain_at_that_row,
    a_walk_reads_page_after_page_and_finds_an_edit_in_a_later_one,
    an_edited_and_rehashed_row_breaks_the_chain_at_the_next_row,
    a_deleted_row_breaks_the_chain_at_the_next_row,
    rows_from_before_the_chain_are_counted_as_unverifiable,
    a_row_inserted_without_a_hash_after_the_chain_began_breaks_it,
    two_stores_appending_at_once_never_fork_the_chain,
    a_second_row_at_a_place_is_refused_and_a_skipped_place_is_found,
    rows_reordered_in_a_chain_are_found,
    a_chain_cut_short_or_removed_after_its_anchor_is_found,
    an_edited_or_removed_anchor_is_found,
    a_row_of_a_chain_no_writer_opened_is_found,
    search_applies_every_filter_and_returns_the_newest_first,
    a_calls_client_rounds_are_kept_in_its_chained_row,
    the_definition_a_call_was_served_is_kept_in_its_chained_row,
    a_refused_append_releases_the_chain_for_other_writers,
    a_tenants_walk_checks_its_rows_and_their_links_and_nothing_of_the_others,
    new_chains_and_anchors_are_hashed_as_rfc_8785_text,
    an_export_checks_offline_and_the_next_segment_joins_it,
    an_export_shows_rows_or_anchors_edited_removed_or_reordered,
    a_tenants_export_holds_its_rows_and_only_the_hashes_of_others,
);

/// Appends `n` events `call-0`… and returns their row ids.
async fn append_n(store: &Store, n: u64) -> Vec<i64> {
    let mut ids = Vec::new();
    for i in 0..n {
        let id = store
            .append(&event(&format!("call-{i}"), 1_000 + i))
            .await
            .expect("appending");
        ids.push(id);
    }
    ids
}

async fn intact(store: &Store) -> ChainSummary {
    match store.verify_chain().await.expect("reading the rows") {
        Ok(summary) => summary,
        Err(broken) => panic!("expected an intact chain: {broken}"),
    }
}

async fn broken(store: &Store) -> toolhost_audit::ChainBreak {
    match store.verify_chain().await.expect("reading the rows") {
        Ok(summary) => panic!("expected a broken chain, verified {summary:?}"),
        Err(broken) => broken,
    }
}

async fn appended_and_recorded_rows_form_one_chain_that_verifies(db: &TestDb) {
    let store = db.store().await;
    assert_eq!(intact(&store).await, ChainSummary::default(), "empty");
    append_n(&store, 3).await;
    let mut writers = tokio::task::JoinSet::new();
    for i in 0..100u64 {
        let store = store.clone();
        writers.spawn(async move { store.record(&event(&format!("grouped-{i}"), i)).await });
    }
    while let Some(written) = writers.join_next().await {
        written.expect("a writer task").expect("a grouped record");
    }
    let last = store.append(&event("last", 9)).await.expect("appending");

    let summary = intact(&store).await;
    assert_eq!((summary.verified, summary.unchained), (104, 0));
    let (head_id, head) = summary.head.expect("a head");
    assert_eq!(head_id, last);
    assert_eq!(head.len(), 64);
}

async fn an_edited_row_breaks_the_chain_at_that_row(db: &TestDb) {
    let store = db.store().await;
    let ids = append_n(&store, 5).await;
    db.raw(format!(
        "UPDATE audit SET outcome = 'denied' WHERE id = {}",
        ids[2]
    ))
    .await
    .expect("editing a row behind the store's back");

    let broken = broken(&store).await;
    assert_eq!((broken.id, broken.call_id.as_str()), (ids[2], "call-2"));
    assert!(matches!(broken.problem, Problem::Edited { .. }), "{broken}");
    let message = broken.to_string();
    assert!(
        message.starts_with(&format!(
            "audit chain broken at row {} (call call-2): ",
            ids[2]
        )),
        "{message}"
    );
}

async fn a_walk_reads_page_after_page_and_finds_an_edit_in_a_later_one(db: &TestDb) {
    let store = db.store().await;
    // More rows than a walk reads at once (1000), recorded as a host does.
    let mut writers = tokio::task::JoinSet::new();
    for i in 0..2_100u64 {
        let store = store.clone();
        writers.spawn(async move { store.record(&event(&format!("many-{i}"), i)).await });
    }
    while let Some(written) = writers.join_next().await {
        written.expect("a writer task").expect("a grouped record");
    }
    let summary = intact(&store).await;
    assert_eq!(summary.verified, 2_100);
    let (head, _) = summary.head.expect("a head");

    db.raw(format!(
        "UPDATE audit SET duration_us = duration_us + 1 WHERE id = {}",
        head - 5
    ))
    .await
    .expect("editing a row on the last page");
    assert_eq!(broken(&store).await.id, head - 5);
}

async fn an_edited_and_rehashed_row_breaks_the_chain_at_the_next_row(db: &TestDb) {
    let store = db.store().await;
    store
        .append(&event("call-0", 1_000))
        .await
        .expect("appending");
    let (_, first_hash) = intact(&store).await.head.expect("a head");
    let edited = store
        .append(&event("call-1", 1_001))
        .await
        .expect("appending");
    let next = store
        .append(&event("call-2", 1_002))
        .await
        .expect("appending");

    // A forger who edits a row and gives it the right hash for its new values...
    let digest = |d: Digest| d.to_string();
    let (plugin_digest, argument_digest) = (
        digest(Digest::of(b"hello.wasm")),
        digest(argument_digest(&json!({"name": "world"}))),
    );
    let forged = ChainedRow {
        call_id: "call-1",
        at_ms: 1_001,
        principal: "alice",
        tenant: "acme",
        client_id: Some("client-1"),
        tool: "greet",
        plugin: Some("hello"),
        catalog_version: Some("0.1.0"),
        plugin_digest: Some(&plugin_digest),
        argument_digest: &argument_digest,
        outcome: "error",
        error_code: None,
        duration_us: 1_234,
        gate_id: None,
        receipt_sha256: None,
        client_rounds: None,
        definition_digest: None,
    };
    db.raw(format!(
        "UPDATE audit SET outcome = 'error', row_hash = '{}' WHERE id = {edited}",
        Encoding::CURRENT.row_hash(&first_hash, &forged)
    ))
    .await
    .expect("editing a row and its hash");
    // ...passes at that row, and is caught at the next one, which still
    // points at the old hash.
    let broken = broken(&store).await;
    assert_eq!(broken.id, next);
    assert!(
        matches!(broken.problem, Problem::Unlinked { .. }),
        "{broken}"
    );
}

async fn a_deleted_row_breaks_the_chain_at_the_next_row(db: &TestDb) {
    let store = db.store().await;
    let ids = append_n(&store, 5).await;
    db.raw(format!("DELETE FROM audit WHERE id = {}", ids[2]))
        .await
        .expect("deleting a row");
    let broken = broken(&store).await;
    assert_eq!(broken.id, ids[3]);
    assert_eq!(broken.problem, Problem::Gap { place: 3 }, "{broken}");

    // Removed and the later rows renumbered: the link still fails.
    db.raw(format!(
        "UPDATE audit SET chain_seq = chain_seq - 1 WHERE id IN ({}, {})",
        ids[3], ids[4]
    ))
    .await
    .expect("closing the gap");
    let broken = self::broken(&store).await;
    assert_eq!(broken.id, ids[3]);
    assert!(
        matches!(broken.problem, Problem::Unlinked { .. }),
        "{broken}"
    );

    // Removing the first row is caught at the row that takes its place.
    db.raw(format!("DELETE FROM audit WHERE id = {}", ids[0]))
        .await
        .expect("deleting the first row");
    let broken = self::broken(&store).await;
    assert_eq!(broken.id, ids[1]);
    assert_eq!(broken.problem, Problem::Gap { place: 1 }, "{broken}");
}

/// A row as a build before migration 0006 wrote it: no hashes, no new columns.
fn legacy_row(call_id: &str) -> String {
    format!(
        "INSERT INTO audit (call_id, at, principal, tenant, tool, argument_digest, outcome, \
         duration_us) VALUES ('{call_id}', 0, 'p', 't', 'x', '{}', 'executed', 0)",
        "0".repeat(64)
    )
}

async fn rows_from_before_the_chain_are_counted_as_unverifiable(db: &TestDb) {
    let store = db.store().await;
    for call in ["old-1", "old-2"] {
        db.raw(legacy_row(call)).await.expect("a pre-chain row");
    }
    assert_eq!(
        intact(&store).await,
        ChainSummary {
            verified: 0,
            unchained: 2,
            ..ChainSummary::default()
        }
    );
    let ids = append_n(&store, 3).await;
    let summary = intact(&store).await;
    assert_eq!((summary.verified, summary.unchained), (3, 2));
    assert_eq!(summary.head.map(|(id, _)| id), ids.last().copied());

    // The first chained row starts from its chain's genesis, not from the
    // old rows.
    db.raw(format!(
        "UPDATE audit SET prev_hash = '{}' WHERE id = {}",
        "2".repeat(64),
        ids[0]
    ))
    .await
    .expect("editing the first link");
    let broken = broken(&store).await;
    assert_eq!(broken.id, ids[0]);
    let chain: String = db
        .scalar(format!("SELECT chain_id FROM audit WHERE id = {}", ids[0]))
        .await;
    match broken.problem {
        Problem::Unlinked { expected, .. } => {
            assert_eq!(expected, Encoding::CURRENT.genesis(&chain))
        }
        other => panic!("{other:?}"),
    }
}

async fn a_row_inserted_without_a_hash_after_the_chain_began_breaks_it(db: &TestDb) {
    let store = db.store().await;
    let ids = append_n(&store, 2).await;
    db.raw(legacy_row("smuggled")).await.expect("a raw insert");
    // The host keeps chaining after the newest hashed row...
    store.append(&event("after", 5)).await.expect("appending");
    // ...and the walk stops at the smuggled one.
    let broken = broken(&store).await;
    assert_eq!(broken.call_id, "smuggled");
    assert_eq!(
        broken.problem,
        Problem::Unhashed {
            chain_start: ids[0]
        }
    );
}

async fn two_stores_appending_at_once_never_fork_the_chain(db: &TestDb) {
    // Two stores: two pools, as two hosts on one database would have.
    let (a, b) = (db.store().await, db.store().await);
    let mut writers = tokio::task::JoinSet::new();
    for i in 0..60u64 {
        let store = if i % 2 == 0 { a.clone() } else { b.clone() };
        writers.spawn(async move {
            let e = event(&format!("race-{i}"), i);
            if i % 3 == 0 {
                store.append(&e).await.map(drop).map_err(|e| e.to_string())
            } else {
                store.record(&e).await.map_err(|e| e.to_string())
            }
        });
    }
    while let Some(written) = writers.join_next().await {
        written.expect("a writer task").expect("an append");
    }
    assert_eq!(intact(&a).await.verified, 60);
}

/// An append the database refuses (here a call id already recorded) leaves
/// the chain's lock to the next writer, another host's included.
async fn a_refused_append_releases_the_chain_for_other_writers(db: &TestDb) {
    let (a, b) = (db.store().await, db.store().await);
    a.append(&event("once", 1)).await.expect("appended");
    assert!(
        a.append(&event("once", 2)).await.is_err(),
        "a duplicate call id"
    );
    // A wait on a held lock never ends: a generous bound turns it into a
    // failure instead of a hung suite.
    let next = event("next", 3);
    tokio::time::timeout(Duration::from_secs(30), b.append(&next))
        .await
        .expect("the other writer was not kept waiting")
        .expect("appended");
    assert_eq!(intact(&a).await.verified, 2);
}

/// The chain id and place of row `id`.
async fn place_of(db: &TestDb, id: i64) -> (String, i64) {
    let chain: String = db
        .scalar(format!("SELECT chain_id FROM audit WHERE id = {id}"))
        .await;
    let place: i64 = db
        .scalar(format!("SELECT chain_seq FROM audit WHERE id = {id}"))
        .await;
    (chain, place)
}

/// A chained row of `chain` at `place`, written by hand.
fn forged_row(call_id: &str, chain: &str, place: i64, prev: &str) -> String {
    format!(
        "INSERT INTO audit (call_id, at, principal, tenant, tool, argument_digest, outcome, \
         duration_us, prev_hash, row_hash, chain_seq, chain_id) VALUES ('{call_id}', 0, 'p', \
         't', 'x', '{zero}', 'executed', 0, '{prev}', '{one}', {place}, '{chain}')",
        zero = GENESIS,
        one = "1".repeat(64)
    )
}

async fn a_second_row_at_a_place_is_refused_and_a_skipped_place_is_found(db: &TestDb) {
    let store = db.store().await;
    let ids = append_n(&store, 1).await;
    let (chain, place) = place_of(db, ids[0]).await;
    assert_eq!(place, 1);
    let (_, head) = intact(&store).await.head.expect("one chained row");
    let refused = db
        .raw(forged_row("fork", &chain, 1, &head))
        .await
        .expect_err("a second row at a place");
    assert!(
        refused.to_string().contains("audit_chain_place") || refused.to_string().contains("UNIQUE"),
        "{refused}"
    );
    // A place skipped is not refused by the database (the writer owns its
    // head and never skips one), but the walk finds it.
    db.raw(forged_row("skip", &chain, 3, &head))
        .await
        .expect("a row past a gap");
    let broken = broken(&store).await;
    assert_eq!(broken.call_id, "skip");
    assert_eq!(broken.problem, Problem::Gap { place: 2 });
}

async fn rows_reordered_in_a_chain_are_found(db: &TestDb) {
    let store = db.store().await;
    let ids = append_n(&store, 4).await;
    // Rows 2 and 3 trade places (through a free place: the index is unique).
    db.raw(format!(
        "UPDATE audit SET chain_seq = -1 WHERE id = {}",
        ids[1]
    ))
    .await
    .expect("moving");
    db.raw(format!(
        "UPDATE audit SET chain_seq = 2 WHERE id = {}",
        ids[2]
    ))
    .await
    .expect("moving");
    db.raw(format!(
        "UPDATE audit SET chain_seq = 3 WHERE id = {}",
        ids[1]
    ))
    .await
    .expect("moving");
    let broken = broken(&store).await;
    assert_eq!(broken.id, ids[2]);
    assert!(
        matches!(broken.problem, Problem::Unlinked { .. }),
        "{broken}"
    );
}

async fn a_chain_cut_short_or_removed_after_its_anchor_is_found(db: &TestDb) {
    let store = db.store().await;
    let ids = append_n(&store, 5).await;
    store.anchor_audit().await.expect("anchored");
    let summary = intact(&store).await;
    assert_eq!(
        (summary.verified, summary.chains, summary.anchors),
        (5, 1, 1)
    );
    let (chain, _) = place_of(db, ids[0]).await;

    // The newest rows removed: the anchor still names the last place.
    db.raw(format!("DELETE FROM audit WHERE id >= {}", ids[3]))
        .await
        .expect("truncating");
    let broken = broken(&store).await;
    assert_eq!(
        broken.problem,
        Problem::Truncated {
            chain: chain.clone(),
            place: 5
        }
    );
    assert_eq!(broken.id, ids[2]);

    // Every row of the chain removed, and its opening: the anchor names it.
    db.raw("DELETE FROM audit".to_owned())
        .await
        .expect("all rows");
    db.raw("DELETE FROM audit_chains".to_owned())
        .await
        .expect("the opening");
    let broken = self::broken(&store).await;
    assert_eq!(broken.problem, Problem::Truncated { chain, place: 5 });
    assert!(
        broken.to_string().starts_with("audit trail broken: "),
        "{broken}"
    );
}

async fn an_edited_or_removed_anchor_is_found(db: &TestDb) {
    let store = db.store().await;
    append_n(&store, 2).await;
    store.anchor_audit().await.expect("anchored");
    store.append(&event("later", 5)).await.expect("appended");
    store.anchor_audit().await.expect("anchored");
    store.append(&event("latest", 6)).await.expect("appended");
    store.anchor_audit().await.expect("anchored");
    let summary = intact(&store).await;
    assert_eq!(summary.anchors, 3);
    assert_eq!(summary.anchor_head.as_ref().map(|(seq, _)| *seq), Some(3));

    // An anchor moved back a place, as if the chain had been shorter.
    db.raw("UPDATE audit_anchors SET chain_seq = 1 WHERE seq = 1".to_owned())
        .await
        .expect("editing an anchor");
    assert_eq!(
        broken(&store).await.problem,
        Problem::AnchorEdited { anchor: 1 }
    );
    db.raw("UPDATE audit_anchors SET chain_seq = 2 WHERE seq = 1".to_owned())
        .await
        .expect("restoring it");
    intact(&store).await;

    db.raw("DELETE FROM audit_anchors WHERE seq = 2".to_owned())
        .await
        .expect("removing an anchor");
    assert_eq!(
        broken(&store).await.problem,
        Problem::AnchorUnlinked { anchor: 3 }
    );
}

async fn a_row_of_a_chain_no_writer_opened_is_found(db: &TestDb) {
    let store = db.store().await;
    append_n(&store, 1).await;
    let genesis = chain_genesis("smuggled-chain");
    db.raw(forged_row("smuggled", "smuggled-chain", 1, &genesis))
        .await
        .expect("a raw insert");
    let broken = broken(&store).await;
    assert_eq!(broken.call_id, "smuggled");
    assert_eq!(
        broken.problem,
        Problem::UnopenedChain {
            chain: "smuggled-chain".into()
        }
    );
}

async fn search_applies_every_filter_and_returns_the_newest_first(db: &TestDb) {
    let store = db.store().await;
    let rows = [
        ("a", "acme", "alice", "greet", Outcome::Executed, 1_000),
        ("b", "acme", "bob", "greet", Outcome::Denied, 2_000),
        ("c", "globex", "alice", "greet", Outcome::Executed, 3_000),
        ("d", "acme", "alice", "add", Outcome::Executed, 4_000),
        ("e", "acme", "alice", "greet", Outcome::Executed, 5_000),
    ];
    for (call, tenant, principal, tool, outcome, at) in rows {
        let e = AuditEvent {
            tenant: tenant.into(),
            principal: principal.into(),
            tool: tool.into(),
            outcome,
            client_id: match call {
                "d" => Some("toolhost-console".into()),
                _ => event(call, at).client_id,
            },
            ..event(call, at)
        };
        store.append(&e).await.expect("appending");
    }
    let calls = |query: AuditQuery| {
        let store = store.clone();
        async move {
            let found = store.search(&query).await.expect("searching");
            found
                .into_iter()
                .map(|r| r.event.call_id)
                .collect::<Vec<_>>()
        }
    };
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(
        calls(AuditQuery::default()).await,
        ["e", "d", "c", "b", "a"]
    );
    let acme_alice_greet = AuditQuery {
        tenant: some("acme"),
        principal: some("alice"),
        tool: some("greet"),
        ..AuditQuery::default()
    };
    assert_eq!(calls(acme_alice_greet.clone()).await, ["e", "a"]);
    let since = AuditQuery {
        since: Some(UNIX_EPOCH + Duration::from_millis(2_000)),
        ..acme_alice_greet.clone()
    };
    assert_eq!(calls(since).await, ["e"]);
    let denied = AuditQuery {
        outcome: Some(Outcome::Denied),
        ..AuditQuery::default()
    };
    assert_eq!(calls(denied).await, ["b"]);
    let newest_two = AuditQuery {
        limit: 2,
        ..AuditQuery::default()
    };
    assert_eq!(calls(newest_two).await, ["e", "d"]);
    let until = AuditQuery {
        until: Some(UNIX_EPOCH + Duration::from_millis(2_000)),
        ..acme_alice_greet.clone()
    };
    assert_eq!(calls(until).await, ["a"]);
    let one = AuditQuery {
        call_id: some("c"),
        ..AuditQuery::default()
    };
    assert_eq!(calls(one).await, ["c"]);
    let console = AuditQuery {
        client_id: some("toolhost-console"),
        ..AuditQuery::default()
    };
    assert_eq!(calls(console).await, ["d"]);
    // The new columns read back.
    let found = store.search(&acme_alice_greet).await.expect("searching");
    assert_eq!(found[0].event, event("e", 5_000));
}

/// What a call asked its client is stored with its row, read back as
/// written, chained (an edit breaks the chain there) and never anything
/// but a JSON array.
async fn a_calls_client_rounds_are_kept_in_its_chained_row(db: &TestDb) {
    let store = db.store().await;
    let round = |key: &str, method: &str, outcome: &str| ClientRound {
        key: key.into(),
        method: method.into(),
        outcome: outcome.into(),
    };
    let asked = AuditEvent {
        client_rounds: vec![
            round("greeting", "sampling/createMessage", "answered"),
            round("name", "elicitation/create", "declined"),
        ],
        ..event("asked", 1_764_000_000_000)
    };
    let plain = store
        .append(&event("plain", 1_764_000_000_001))
        .await
        .expect("appended");
    let id = store.append(&asked).await.expect("appended");
    store
        .record(&event("after", 1_764_000_000_002))
        .await
        .expect("recorded");
    let rows = store.recent(10).await.expect("read");
    assert_eq!(rows[1].event, asked, "field for field");
    assert!(rows[0].event.client_rounds.is_empty() && rows[2].event.client_rounds.is_empty());
    assert_eq!(intact(&store).await.verified, 3);

    db.raw(format!(
        "UPDATE audit SET client_rounds = '[]' WHERE id = {id}"
    ))
    .await
    .expect("editing the rounds");
    assert_eq!(broken(&store).await.id, id);
    let refused = db.raw(format!(
        "UPDATE audit SET client_rounds = '{{\"key\": 1}}' WHERE id = {plain}"
    ));
    assert!(refused.await.is_err(), "the rounds are a JSON array");
}

/// The digest of the definition a call was served is stored with its
/// row, read back as written (by a search too), chained (an edit breaks
/// the chain there) and never anything but a SHA-256 in lowercase hex;
/// rows without one verify beside it.
async fn the_definition_a_call_was_served_is_kept_in_its_chained_row(db: &TestDb) {
    let store = db.store().await;
    let served = AuditEvent {
        definition_digest: Some(Digest::of(b"greet, as reviewed")),
        ..event("served", 1_764_000_000_000)
    };
    store
        .append(&event("before", 1_764_000_000_001))
        .await
        .expect("appended");
    let id = store.append(&served).await.expect("appended");
    store
        .record(&event("after", 1_764_000_000_002))
        .await
        .expect("recorded");
    let rows = store.recent(10).await.expect("read");
    assert_eq!(rows[1].event, served, "field for field");
    assert_eq!(rows[0].event.definition_digest, None);
    assert_eq!(intact(&store).await.verified, 3);
    let found = AuditQuery {
        call_id: Some("served".into()),
        ..AuditQuery::default()
    };
    let found = store.search(&found).await.expect("searching");
    assert_eq!(found[0].event, served, "a search reads it too");

    let upper = Digest::of(b"greet, as reviewed").to_string().to_uppercase();
    let refused = db.raw(format!(
        "UPDATE audit SET definition_digest = '{upper}' WHERE id = {id}"
    ));
    assert!(refused.await.is_err(), "lowercase hex only");
    let other = Digest::of(b"greet, edited");
    db.raw(format!(
        "UPDATE audit SET definition_digest = '{other}' WHERE id = {id}"
    ))
    .await
    .expect("editing the digest");
    assert_eq!(broken(&store).await.id, id);
}

async fn a_tenants_walk_checks_its_rows_and_their_links_and_nothing_of_the_others(db: &TestDb) {
    let store = db.store().await;
    let mut ids = Vec::new();
    for (call, tenant) in [
        ("a0", "acme"),
        ("g0", "globex"),
        ("a1", "acme"),
        ("a2", "acme"),
        ("g1", "globex"),
    ] {
        let e = AuditEvent {
            tenant: tenant.into(),
            ..event(call, 1_000)
        };
        ids.push(store.append(&e).await.expect("appending"));
    }
    let walk = |tenant: &'static str| {
        let store = store.clone();
        async move {
            store
                .verify_tenant_chain(tenant)
                .await
                .expect("reading the rows")
        }
    };
    let acme = walk("acme").await.expect("acme's rows intact");
    assert_eq!((acme.verified, acme.unchained), (3, 0));
    assert_eq!(acme.newest.expect("a newest row").0, "a2");
    assert_eq!(walk("globex").await.expect("intact").verified, 2);
    assert_eq!(walk("initech").await.expect("no rows").verified, 0);

    // globex's row edited: globex's walk finds it, acme's is not about it.
    db.raw(format!(
        "UPDATE audit SET outcome = 'denied' WHERE id = {}",
        ids[1]
    ))
    .await
    .expect("editing a row behind the store's back");
    let broken = walk("globex").await.expect_err("edited");
    assert!(matches!(broken.problem, Problem::Edited { .. }), "{broken}");
    assert_eq!(walk("acme").await.expect("acme's rows intact").verified, 3);

    // acme's middle row removed: the walk finds the gap beside the next.
    db.raw(format!("DELETE FROM audit WHERE id = {}", ids[2]))
        .await
        .expect("deleting a row");
    let broken = walk("acme").await.expect_err("a gap");
    assert_eq!(broken.call_id, "a2");
    assert_eq!(broken.problem, Problem::Gap { place: 3 }, "{broken}");
}

async fn new_chains_and_anchors_are_hashed_as_rfc_8785_text(db: &TestDb) {
    let store = db.store().await;
    let ids = append_n(&store, 2).await;
    store.anchor_audit().await.expect("anchored");
    let (chain, _) = place_of(db, ids[0]).await;
    let encoding: i64 = db
        .scalar(format!(
            "SELECT encoding FROM audit_chains WHERE chain_id = '{chain}'"
        ))
        .await;
    assert_eq!(Encoding::from_number(encoding), Some(Encoding::Jcs));
    let anchor: i64 = db
        .scalar("SELECT encoding FROM audit_anchors".to_owned())
        .await;
    assert_eq!(Encoding::from_number(anchor), Some(Encoding::Jcs));

    // The chain's number edited back to the tagged encoding: every hash
    // is recomputed the other way, and the first row no longer fits.
    db.raw(format!(
        "UPDATE audit_chains SET encoding = 1 WHERE chain_id = '{chain}'"
    ))
    .await
    .expect("editing the encoding");
    assert_eq!(broken(&store).await.id, ids[0]);
    db.raw(format!(
        "UPDATE audit_chains SET encoding = 7 WHERE chain_id = '{chain}'"
    ))
    .await
    .expect("editing the encoding");
    assert_eq!(
        broken(&store).await.problem,
        Problem::ChainEncoding { chain, encoding: 7 }
    );
}

/// The lines of `store`'s export of `request`.
async fn exported(store: &Store, tenant: Option<&str>, from_anchor: i64) -> Vec<String> {
    let mut lines = Vec::new();
    let request = ExportRequest {
        tenant: tenant.map(str::to_owned),
        from_anchor,
    };
    store
        .export_audit(&request, &mut |line| {
            lines.push(serde_json::to_string(line).expect("a line serializes"));
            Ok(())
        })
        .await
        .expect("exported");
    lines
}

/// `lines` checked as one export, after `previous` if any.
fn checked(
    lines: &[String],
    previous: Option<ExportSummary>,
) -> Result<ExportSummary, ExportBreak> {
    let mut check = match previous {
        Some(previous) => ExportCheck::after(previous),
        None => ExportCheck::new(),
    };
    for line in lines {
        check.line(line)?;
    }
    check.finish()
}

/// The problem `lines` are refused with.
fn refused(lines: &[String]) -> ExportProblem {
    checked(lines, None).expect_err("a refused export").problem
}

async fn an_export_checks_offline_and_the_next_segment_joins_it(db: &TestDb) {
    let store = db.store().await;
    append_n(&store, 3).await;
    store.anchor_audit().await.expect("anchored");
    // A row after the last anchor: the next segment's.
    store
        .append(&event("unanchored", 9))
        .await
        .expect("appended");
    let first = exported(&store, None, 0).await;
    let summary = checked(&first, None).expect("the first segment checks");
    assert_eq!((summary.rows, summary.anchors), (3, 1));
    let end: serde_json::Value = serde_json::from_str(first.last().expect("lines")).expect("JSON");
    assert_eq!(end["type"], "end");
    assert_eq!(end["next_from_anchor"], 1);
    assert!(!first.iter().any(|l| l.contains("unanchored")));

    store.append(&event("later", 10)).await.expect("appended");
    store.anchor_audit().await.expect("anchored");
    let second = exported(&store, None, 1).await;
    let joined = checked(&second, Some(summary.clone())).expect("the second joins the first");
    assert_eq!((joined.rows, joined.anchors), (2, 1));
    assert_eq!(
        Some(joined.anchor_head.clone()),
        intact(&store).await.anchor_head,
        "the export ends at the trail's anchor head"
    );
    // The second segment read after anything but the first does not join.
    let mut other = summary;
    other.anchor_head.1 = "0".repeat(64);
    let unjoined = checked(&second, Some(other)).expect_err("not joined");
    assert!(
        matches!(unjoined.problem, ExportProblem::Unjoined(_)),
        "{unjoined}"
    );
    // The whole trail again, in one segment.
    assert_eq!(
        checked(&exported(&store, None, 0).await, None)
            .expect("all")
            .rows,
        5
    );
    // An anchor that does not exist is refused before anything is written.
    let mut lines = 0;
    let request = ExportRequest {
        tenant: None,
        from_anchor: 9,
    };
    let missing = store
        .export_audit(&request, &mut |_| {
            lines += 1;
            Ok(())
        })
        .await
        .expect_err("no anchor 9");
    assert!(missing.to_string().contains("no anchor 9"), "{missing}");
    assert_eq!(lines, 0);
}

/// `lines` with line `i`'s JSON changed by `edit`.
fn edited(lines: &[String], i: usize, edit: impl FnOnce(&mut serde_json::Value)) -> Vec<String> {
    let mut lines = lines.to_vec();
    let mut value: serde_json::Value = serde_json::from_str(&lines[i]).expect("JSON");
    edit(&mut value);
    lines[i] = value.to_string();
    lines
}

async fn an_export_shows_rows_or_anchors_edited_removed_or_reordered(db: &TestDb) {
    let store = db.store().await;
    append_n(&store, 4).await;
    store.anchor_audit().await.expect("anchored");
    let lines = exported(&store, None, 0).await;
    checked(&lines, None).expect("intact");
    let kind =
        |l: &String| serde_json::from_str::<serde_json::Value>(l).expect("JSON")["type"].clone();
    let rows: Vec<usize> = (0..lines.len())
        .filter(|i| kind(&lines[*i]) == "row")
        .collect();
    let anchor = (0..lines.len())
        .find(|i| kind(&lines[*i]) == "anchor")
        .expect("an anchor");
    let writer_rows: Vec<usize> = rows
        .iter()
        .copied()
        .filter(|i| !lines[*i].contains(r#""chain":"""#))
        .collect();
    assert_eq!(writer_rows.len(), 4);

    // A row's value edited in the file.
    let changed = edited(&lines, writer_rows[1], |v| {
        v["row"]["outcome"] = "denied".into()
    });
    assert!(
        matches!(refused(&changed), ExportProblem::Broken(b) if matches!(b.problem, Problem::Edited { .. }))
    );
    // A key added to a row's object: not the object its hash is taken of.
    let added = edited(&lines, writer_rows[1], |v| v["row"]["note"] = "x".into());
    assert!(matches!(refused(&added), ExportProblem::Malformed(_)));
    // A row removed, and two rows swapped.
    let mut removed = lines.clone();
    removed.remove(writer_rows[1]);
    assert!(
        matches!(refused(&removed), ExportProblem::Broken(b) if b.problem == Problem::Gap { place: 2 })
    );
    let mut swapped = lines.clone();
    swapped.swap(writer_rows[1], writer_rows[2]);
    assert!(matches!(refused(&swapped), ExportProblem::Broken(_)));
    // The chain's newest row dropped: its anchor still names it.
    let mut cut = lines.clone();
    cut.remove(writer_rows[3]);
    let cut = edited(&cut, cut.len() - 1, |v| v["rows"] = 3.into());
    assert!(
        matches!(refused(&cut), ExportProblem::Broken(b) if matches!(b.problem, Problem::Truncated { .. }))
    );
    // An anchor edited.
    let moved = edited(&lines, anchor, |v| v["anchor"]["place"] = 3.into());
    assert!(
        matches!(refused(&moved), ExportProblem::Broken(b) if b.problem == Problem::AnchorEdited { anchor: 1 })
    );
    // Not an export line at all.
    let mut junk = lines.clone();
    junk[1] = "{".into();
    let broken = checked(&junk, None).expect_err("junk");
    assert_eq!(broken.line, 2);

    // A row edited in the store: its export does not check.
    db.raw("UPDATE audit SET tool = 'other' WHERE call_id = 'call-2'".to_owned())
        .await
        .expect("editing a row behind the store's back");
    let after_edit = exported(&store, None, 0).await;
    assert!(matches!(refused(&after_edit), ExportProblem::Broken(b) if b.call_id == "call-2"));
}

async fn a_tenants_export_holds_its_rows_and_only_the_hashes_of_others(db: &TestDb) {
    let store = db.store().await;
    for (call, tenant) in [
        ("a0", "acme"),
        ("g0", "globex"),
        ("a1", "acme"),
        ("g1", "globex"),
    ] {
        let e = AuditEvent {
            tenant: tenant.into(),
            principal: format!("{tenant}-person"),
            ..event(call, 1_000)
        };
        store.append(&e).await.expect("appending");
    }
    store.anchor_audit().await.expect("anchored");
    let acme = exported(&store, Some("acme"), 0).await;
    let summary = checked(&acme, None).expect("acme's export checks");
    assert_eq!((summary.rows, summary.anchors), (2, 0));
    let text = acme.join("\n");
    assert!(!text.contains("globex"), "{text}");
    assert!(!text.contains(r#""type":"anchor""#));

    // acme's row edited in the file, or a neighbour's hash changed.
    let row = acme
        .iter()
        .position(|l| l.contains(r#""call_id":"a1""#))
        .expect("a1");
    let changed = edited(&acme, row, |v| v["row"]["outcome"] = "denied".into());
    assert!(matches!(refused(&changed), ExportProblem::Broken(_)));
    let relinked = edited(&acme, row, |v| {
        v["neighbours"]["before_hash"] = "0".repeat(64).into()
    });
    assert!(
        matches!(refused(&relinked), ExportProblem::Broken(b) if matches!(b.problem, Problem::Unlinked { .. }))
    );
}

/// Two replicas' stores on one PostgreSQL append side by side: while the
/// first holds its audit transaction open (its row inserted, its effect
/// waiting on a row another session locked), the second's batch commits.
/// Before writer chains both took one advisory lock, held to the commit,
/// and the second waited for the first.
#[tokio::test]
async fn a_second_writer_commits_while_the_first_holds_its_transaction_open() {
    use sqlx::Connection;
    use toolhost_audit::{Effect, KeyRef};
    let db = TestDb::postgres().await;
    let first = common::store_with_tenants(&db, &["acme"], 0).await;
    let second = db.store().await;
    db.raw(
        "INSERT INTO idempotency_keys (tenant, principal, tool, key, request_digest, state, \
         created_at) VALUES ('acme', 'alice', 'greet', 'k1', 'd', 'running', 0)"
            .to_owned(),
    )
    .await
    .expect("a running key");
    let mut holder = sqlx::PgConnection::connect(db.url())
        .await
        .expect("connects");
    sqlx::raw_sql(sqlx::AssertSqlSafe(
        "BEGIN; SELECT 1 FROM idempotency_keys WHERE key = 'k1' FOR UPDATE".to_owned(),
    ))
    .execute(&mut holder)
    .await
    .expect("the key's row locked");

    let release = Effect::ReleaseKey {
        key: KeyRef {
            tenant: "acme".into(),
            principal: "alice".into(),
            tool: "greet".into(),
            key: "k1".into(),
        },
    };
    let held = tokio::spawn(async move {
        first
            .record_with(&event("held", 1), &[release])
            .await
            .map_err(|e| e.to_string())
    });
    // The first writer's transaction is open: its row is inserted, and its
    // effect waits for the lock.
    let waiting = async {
        loop {
            let n: i64 = db
                .scalar(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' \
                     AND query LIKE 'DELETE FROM idempotency_keys%'"
                        .to_owned(),
                )
                .await;
            if n > 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .expect("the first writer waits inside its transaction");

    tokio::time::timeout(Duration::from_secs(10), second.record(&event("beside", 2)))
        .await
        .expect("the second writer was not kept waiting by the first")
        .expect("recorded");
    assert!(
        !held.is_finished(),
        "the first writer still holds its transaction"
    );

    sqlx::raw_sql(sqlx::AssertSqlSafe("ROLLBACK".to_owned()))
        .execute(&mut holder)
        .await
        .expect("released");
    held.await.expect("task").expect("the first writer commits");
    let summary = intact(&second).await;
    assert_eq!((summary.verified, summary.chains), (2, 2));
}
