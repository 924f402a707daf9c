//! A call's effects (idempotency keys settled, artifacts kept) are written
//! in the transaction that appends its audit row: together or not at all.
//! One set of test bodies on SQLite and PostgreSQL (`common/mod.rs`).

#[macro_use]
mod common;

use common::TestDb;
use toolhost_artifacts::{Artifact, ArtifactId, ArtifactStore, NewArtifact};
use toolhost_audit::{AuditError, AuditEvent, AuditSink, Effect, KeyRef};
use toolhost_auth::AuthStore;
use toolhost_gates::{GateStore, IdempotencyClaim, IdempotencyKey};
use toolhost_storage::Store;
use toolhost_types::Digest;

on_both_engines!(
    an_artifact_is_kept_with_its_row_and_read_only_by_its_tenant,
    a_finished_key_is_stored_with_its_row,
    a_failing_effect_rolls_back_the_row_and_the_other_effects,
    entity_generations_move_with_their_row_and_every_replica_reads_them,
);

const NOW: i64 = 1_764_000_000_000;

async fn seeded(db: &TestDb) -> Store {
    let store = db.store().await;
    store
        .ensure_tenant("acme", NOW / 1000)
        .await
        .expect("tenant");
    store
}

fn event(call_id: &str) -> AuditEvent {
    common::event(call_id, NOW as u64)
}

fn artifact(call_id: &str, body: &[u8]) -> NewArtifact {
    let described = Artifact {
        id: ArtifactId::new(),
        tenant: "acme".into(),
        principal: "alice".into(),
        client_id: Some("client-1".into()),
        tool: "export".into(),
        call_id: call_id.into(),
        run_id: None,
        mime_type: "application/json".into(),
        size: 0,
        sha256: Digest::of(b""),
        created_at_ms: NOW,
        expires_at_ms: NOW + 60_000,
    };
    NewArtifact::new(described, body.to_vec())
}

fn key(name: &str) -> (IdempotencyKey, KeyRef) {
    let key = IdempotencyKey {
        tenant: "acme".into(),
        principal: "alice".into(),
        tool: "export".into(),
        key: name.into(),
    };
    let by_ref = KeyRef {
        tenant: key.tenant.clone(),
        principal: key.principal.clone(),
        tool: key.tool.clone(),
        key: key.key.clone(),
    };
    (key, by_ref)
}

async fn an_artifact_is_kept_with_its_row_and_read_only_by_its_tenant(db: &TestDb) {
    let store = seeded(db).await;
    // Every byte value, so a text-only column would show.
    let body: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    let new = artifact("call-a", &body);
    let id = new.artifact.id.clone();
    store
        .record_with(&event("call-a"), &[Effect::StoreArtifact(new.clone())])
        .await
        .expect("recorded");
    assert_eq!(store.count().await.expect("count"), 1);

    let (read, bytes) = store
        .read("acme", &id, NOW)
        .await
        .expect("read")
        .expect("found");
    assert_eq!(read, new.artifact);
    assert_eq!(bytes, body);
    assert_eq!(read.sha256, Digest::of(&body));
    assert_eq!(store.read("globex", &id, NOW).await.expect("read"), None);
    let expired = NOW + 60_000;
    assert_eq!(store.read("acme", &id, expired).await.expect("read"), None);
    assert_eq!(store.purge(NOW).await.expect("purge"), 0);
    assert_eq!(store.purge(expired).await.expect("purge"), 1);
    assert_eq!(store.read("acme", &id, NOW).await.expect("read"), None);
}

async fn a_finished_key_is_stored_with_its_row(db: &TestDb) {
    let store = seeded(db).await;
    let (k, by_ref) = key("k-1");
    let claim = store.claim_key(&k, "digest-1", NOW).await.expect("claim");
    assert_eq!(claim, IdempotencyClaim::Claimed);
    let finish = Effect::FinishKey {
        key: by_ref,
        result: r#"{"ok":true}"#.into(),
    };
    store
        .record_with(&event("call-k"), &[finish])
        .await
        .expect("recorded");
    let again = store.claim_key(&k, "digest-1", NOW).await.expect("claim");
    assert_eq!(again, IdempotencyClaim::Done(r#"{"ok":true}"#.into()));

    // A released key is free again; released with its row too.
    let (k2, ref2) = key("k-2");
    store.claim_key(&k2, "digest-2", NOW).await.expect("claim");
    store
        .record_with(&event("call-k2"), &[Effect::ReleaseKey { key: ref2 }])
        .await
        .expect("recorded");
    let fresh = store.claim_key(&k2, "digest-2", NOW).await.expect("claim");
    assert_eq!(fresh, IdempotencyClaim::Claimed);
    assert_eq!(store.count().await.expect("count"), 2);
}

async fn a_failing_effect_rolls_back_the_row_and_the_other_effects(db: &TestDb) {
    let store = seeded(db).await;
    let new = artifact("call-f", b"{}");
    let id = new.artifact.id.clone();
    // Nobody claimed this key: finishing it fails the whole transaction.
    let (_, unclaimed) = key("never-claimed");
    let effects = [
        Effect::StoreArtifact(new),
        Effect::FinishKey {
            key: unclaimed,
            result: "{}".into(),
        },
    ];
    let refused = store.record_with(&event("call-f"), &effects).await;
    // The store names the effect that found nothing to change: the second.
    assert!(
        matches!(refused, Err(AuditError::Lost { effect: 1 })),
        "finishing an unclaimed key must fail as effect 1 lost: {refused:?}"
    );
    assert_eq!(store.count().await.expect("count"), 0, "no row");
    assert_eq!(
        store.read("acme", &id, NOW).await.expect("read"),
        None,
        "no artifact"
    );
    // The chain is intact and the next call records normally.
    store.record(&event("call-g")).await.expect("recorded");
    let verified = store.verify_chain().await.expect("walk");
    assert!(verified.is_ok(), "{verified:?}");
}

async fn entity_generations_move_with_their_row_and_every_replica_reads_them(db: &TestDb) {
    let (a, b) = (seeded(db).await, db.store().await);
    let generation = |s: &Store, kind: &'static str| {
        let s = s.clone();
        async move {
            s.entity_generation("acme", "testbench", kind)
                .await
                .expect("read")
        }
    };
    assert_eq!(generation(&b, "project").await, 0, "never changed");
    let moved = |call: &str| {
        (
            event(call),
            [Effect::Entities {
                tenant: "acme".into(),
                plugin: "testbench".into(),
                kinds: vec!["project".into(), "environment".into()],
            }],
        )
    };
    for call in ["call-e1", "call-e2"] {
        let (row, effects) = moved(call);
        a.record_with(&row, &effects).await.expect("recorded");
    }
    // Replica b reads what replica a's calls moved; other kinds stand.
    assert_eq!(generation(&b, "project").await, 2);
    assert_eq!(generation(&b, "environment").await, 2);
    assert_eq!(generation(&b, "user").await, 0);
    // A row refused (its call id taken) moves nothing.
    let (row, effects) = moved("call-e2");
    assert!(a.record_with(&row, &effects).await.is_err());
    assert_eq!(generation(&b, "project").await, 2);
}
