//! The catalog store: revisions, component bytes, signers and the catalog's
//! version, with decisions written as audit effects. One set of test
//! bodies, run against SQLite and PostgreSQL; see `common/mod.rs`.

#[macro_use]
mod common;

use common::{TestDb, event};
use toolhost_audit::{AudienceChange, AuditSink, CatalogEffect, Effect, PinChange, RevisionMove};
use toolhost_catalog::{
    Audience, CatalogStore, CatalogStoreError, NewRevision, Revision, RevisionState,
    SignerIdentity, SignerRecord, Submitted, revision_id,
};
use toolhost_storage::Store;
use toolhost_types::Digest;

on_both_engines!(
    a_submission_is_stored_pending_with_its_bytes_and_a_resubmission_changes_nothing,
    two_revisions_of_one_component_store_its_bytes_once,
    an_approval_activates_the_revision_and_moves_the_catalog_with_its_audit_row,
    a_decision_against_a_stale_generation_writes_nothing,
    of_two_decisions_on_one_revision_only_the_first_is_written,
    a_rejection_leaves_the_catalog_where_it_was,
    an_approval_stores_its_audience_and_a_pin_holds_a_tenant_until_removed,
    the_schema_refuses_two_active_revisions_of_one_plugin,
    a_replaced_revision_with_retired_tools_is_still_served,
    signers_are_trusted_once_and_revoked_by_name,
    postgres_pushes_each_decision_and_sqlite_has_nothing_to_push,
);

const NOW: i64 = 1_764_000_000_000;

fn new(plugin: &str, component: &[u8], manifest: &str) -> NewRevision {
    let (c, m) = (Digest::of(component), Digest::of(manifest.as_bytes()));
    let revision = Revision {
        id: revision_id(plugin, &c, &m),
        plugin: plugin.into(),
        version: "0.1.0".into(),
        component_digest: c,
        manifest: manifest.into(),
        manifest_digest: m,
        envelope: Some("{}".into()),
        signer: Some("alice".into()),
        source: "dir:/tmp/x".into(),
        capabilities: "{}".into(),
        state: RevisionState::PendingReview,
        submitted_by: "u-alice".into(),
        submitted_at_ms: NOW,
        reviewed_by: None,
        reviewed_at_ms: None,
        review_reason: None,
        activated_at_ms: None,
        retired: None,
        audience: Audience::Everyone,
    };
    NewRevision::new(revision, component.to_vec())
}

async fn submitted(store: &Store, rev: NewRevision) -> String {
    let id = rev.id.clone();
    assert!(matches!(
        store.submit(rev).await.expect("submit"),
        Submitted::New
    ));
    id
}

fn step(id: &str, from: RevisionState, to: RevisionState) -> RevisionMove {
    RevisionMove {
        revision: id.into(),
        from: from.as_str().into(),
        to: to.as_str().into(),
        review: Some(("u-bob".into(), "fine".into())),
        retired: None,
    }
}

fn effect(generation: i64, version: &str, moves: Vec<RevisionMove>) -> Effect {
    Effect::Catalog(CatalogEffect {
        changes_served: true,
        expected_generation: generation,
        version: version.into(),
        at_ms: NOW + 10,
        moves,
        audience: None,
        pins: Vec::new(),
    })
}

/// `id` approved from pending review, against `generation`, making `version`.
fn approval(generation: i64, version: &str, id: &str) -> Effect {
    let activate = step(id, RevisionState::PendingReview, RevisionState::Active);
    effect(generation, version, vec![activate])
}

/// Two revisions of `hello` submitted, the first approved as 1.1.0 and
/// active, the second pending review: their ids.
async fn one_active_one_pending(store: &Store) -> (String, String) {
    let one = submitted(store, new("hello", b"one", "m")).await;
    let two = submitted(store, new("hello", b"two", "m")).await;
    let fx = approval(0, "1.1.0", &one);
    store
        .record_with(&event("first", 1), &[fx])
        .await
        .expect("first");
    (one, two)
}

async fn state(store: &Store, id: &str) -> RevisionState {
    store
        .revision(id)
        .await
        .expect("read")
        .expect("exists")
        .state
}

async fn a_submission_is_stored_pending_with_its_bytes_and_a_resubmission_changes_nothing(
    db: &TestDb,
) {
    let store = db.store().await;
    let rev = new("hello", b"\0asm component", "[plugin]\nname = \"hello\"\n");
    let id = submitted(&store, rev.clone()).await;
    let stored = store.revision(&id).await.expect("read").expect("stored");
    assert_eq!(stored.state, RevisionState::PendingReview);
    assert_eq!(
        (stored.plugin.as_str(), stored.signer.as_deref()),
        ("hello", Some("alice"))
    );
    let bytes = store.blob(&rev.component_digest).await.expect("read");
    assert_eq!(bytes.as_deref(), Some(&b"\0asm component"[..]));
    match store.submit(rev).await.expect("resubmit") {
        Submitted::Existing(existing) => assert_eq!(existing.id, id),
        Submitted::New => panic!("the same submission stored twice"),
    }
    let pending = store
        .revisions(None, Some(RevisionState::PendingReview))
        .await
        .expect("list");
    assert_eq!(pending.len(), 1);
}

async fn two_revisions_of_one_component_store_its_bytes_once(db: &TestDb) {
    let store = db.store().await;
    submitted(&store, new("hello", b"same bytes", "manifest one")).await;
    submitted(&store, new("hello", b"same bytes", "manifest two")).await;
    assert_eq!(
        store
            .revisions(Some("hello"), None)
            .await
            .expect("list")
            .len(),
        2
    );
    let bytes = store.blob(&Digest::of(b"same bytes")).await.expect("read");
    assert_eq!(bytes.as_deref(), Some(&b"same bytes"[..]));
    assert_eq!(store.blob(&Digest::of(b"other")).await.expect("read"), None);
}

async fn an_approval_activates_the_revision_and_moves_the_catalog_with_its_audit_row(db: &TestDb) {
    let store = db.store().await;
    let id = submitted(&store, new("hello", b"c", "m")).await;
    let before = store.catalog_state().await.expect("state");
    assert_eq!((before.generation, before.version.as_str()), (0, "1.0.0"));
    let fx = approval(0, "1.1.0", &id);
    store
        .record_with(&event("decide-1", 1), &[fx])
        .await
        .expect("decided");
    let after = store.catalog_state().await.expect("state");
    assert_eq!((after.generation, after.version.as_str()), (1, "1.1.0"));
    let rev = store.revision(&id).await.expect("read").expect("exists");
    assert_eq!(rev.state, RevisionState::Active);
    assert_eq!(rev.reviewed_by.as_deref(), Some("u-bob"));
    assert_eq!(rev.activated_at_ms, Some(NOW + 10));
    assert_eq!(store.served().await.expect("served").len(), 1);
    assert_eq!(
        store.recent(10).await.expect("rows")[0].event.call_id,
        "decide-1"
    );
}

async fn an_approval_stores_its_audience_and_a_pin_holds_a_tenant_until_removed(db: &TestDb) {
    let store = db.store().await;
    let (one, two) = one_active_one_pending(&store).await;
    assert_eq!(
        store
            .revision(&one)
            .await
            .expect("read")
            .expect("one")
            .audience,
        Audience::Everyone
    );
    let mut down = step(&one, RevisionState::Active, RevisionState::Approved);
    down.review = None;
    let fx = CatalogEffect {
        changes_served: true,
        expected_generation: 1,
        version: "1.2.0".into(),
        at_ms: NOW + 20,
        moves: vec![
            down,
            step(&two, RevisionState::PendingReview, RevisionState::Active),
        ],
        audience: Some(AudienceChange {
            revision: two.clone(),
            tenants: Audience::of(["acme"]).expect("valid").stored(),
        }),
        pins: vec![PinChange {
            tenant: "demo".into(),
            plugin: "hello".into(),
            revision: Some(one.clone()),
            by: "u-bob".into(),
        }],
    };
    store
        .record_with(&event("narrow", 2), &[Effect::Catalog(fx.clone())])
        .await
        .expect("written");
    let stored = store.revision(&two).await.expect("read").expect("two");
    assert_eq!(stored.audience, Audience::of(["acme"]).expect("valid"));
    let pins = store.pins().await.expect("pins");
    assert_eq!(pins.len(), 1);
    let p = &pins[0];
    let got = (
        p.tenant.as_str(),
        p.plugin.as_str(),
        p.revision.as_str(),
        p.pinned_by.as_str(),
    );
    assert_eq!(got, ("demo", "hello", one.as_str(), "u-bob"));
    assert_eq!(p.pinned_at_ms, NOW + 20);

    // A pin replaced, then removed; removing it again writes nothing.
    let pin = |revision: Option<&str>, generation: i64, version: &str| CatalogEffect {
        expected_generation: generation,
        version: version.into(),
        moves: Vec::new(),
        audience: None,
        pins: vec![PinChange {
            tenant: "demo".into(),
            plugin: "hello".into(),
            revision: revision.map(str::to_owned),
            by: "u-carol".into(),
        }],
        ..fx.clone()
    };
    let written = |fx: CatalogEffect, call: &str, seq| (event(call, seq), [Effect::Catalog(fx)]);
    let (row, fxs) = written(pin(Some(&two), 2, "1.2.1"), "repin", 3);
    store.record_with(&row, &fxs).await.expect("repinned");
    let pins = store.pins().await.expect("pins");
    assert_eq!((pins.len(), pins[0].revision.as_str()), (1, two.as_str()));
    let (row, fxs) = written(pin(None, 3, "1.2.2"), "unpin", 4);
    store.record_with(&row, &fxs).await.expect("unpinned");
    assert!(store.pins().await.expect("pins").is_empty());
    let (row, fxs) = written(pin(None, 4, "1.2.3"), "unpin-again", 5);
    assert!(store.record_with(&row, &fxs).await.is_err());
    assert_eq!(store.catalog_state().await.expect("state").generation, 4);
}

async fn a_decision_against_a_stale_generation_writes_nothing(db: &TestDb) {
    let store = db.store().await;
    let id = submitted(&store, new("hello", b"c", "m")).await;
    let fx = approval(7, "1.1.0", &id);
    assert!(store.record_with(&event("stale", 1), &[fx]).await.is_err());
    assert_eq!(state(&store, &id).await, RevisionState::PendingReview);
    assert_eq!(store.catalog_state().await.expect("state").generation, 0);
    assert!(
        store.recent(10).await.expect("rows").is_empty(),
        "no audit row either"
    );
}

async fn of_two_decisions_on_one_revision_only_the_first_is_written(db: &TestDb) {
    let store = db.store().await;
    let id = submitted(&store, new("hello", b"c", "m")).await;
    let approve = approval(0, "1.1.0", &id);
    let mut reject = step(&id, RevisionState::PendingReview, RevisionState::Rejected);
    reject.review = Some(("u-carol".into(), "no".into()));
    let reject = Effect::Catalog(CatalogEffect {
        changes_served: false,
        expected_generation: 0,
        version: "1.0.0".into(),
        at_ms: NOW,
        moves: vec![reject],
        audience: None,
        pins: Vec::new(),
    });
    let (first, second) = (event("approve", 1), event("reject", 2));
    let (a, b) = tokio::join!(
        store.record_with(&first, std::slice::from_ref(&approve)),
        store.record_with(&second, std::slice::from_ref(&reject)),
    );
    assert!(
        a.is_ok() != b.is_ok(),
        "exactly one decision wins: {a:?} {b:?}"
    );
    let rows = store.recent(10).await.expect("rows");
    assert_eq!(rows.len(), 1, "only the winner has a row");
    let won = if a.is_ok() {
        RevisionState::Active
    } else {
        RevisionState::Rejected
    };
    assert_eq!(state(&store, &id).await, won);
}

async fn a_rejection_leaves_the_catalog_where_it_was(db: &TestDb) {
    let store = db.store().await;
    let id = submitted(&store, new("hello", b"c", "m")).await;
    let reject = Effect::Catalog(CatalogEffect {
        changes_served: false,
        expected_generation: 0,
        version: "1.0.0".into(),
        at_ms: NOW,
        moves: vec![step(
            &id,
            RevisionState::PendingReview,
            RevisionState::Rejected,
        )],
        audience: None,
        pins: Vec::new(),
    });
    store
        .record_with(&event("reject", 1), &[reject])
        .await
        .expect("rejected");
    assert_eq!(state(&store, &id).await, RevisionState::Rejected);
    let after = store.catalog_state().await.expect("state");
    assert_eq!((after.generation, after.version.as_str()), (0, "1.0.0"));
}

async fn the_schema_refuses_two_active_revisions_of_one_plugin(db: &TestDb) {
    let store = db.store().await;
    let (_, two) = one_active_one_pending(&store).await;
    let fx = approval(1, "1.2.0", &two);
    assert!(
        store.record_with(&event("second", 2), &[fx]).await.is_err(),
        "a second active revision without the first stepping down"
    );
    assert_eq!(state(&store, &two).await, RevisionState::PendingReview);
}

async fn a_replaced_revision_with_retired_tools_is_still_served(db: &TestDb) {
    let store = db.store().await;
    let (one, two) = one_active_one_pending(&store).await;
    let mut down = step(&one, RevisionState::Active, RevisionState::Approved);
    down.review = None;
    down.retired = Some((
        r#"[{"tool":"word_stats","replacement":"text_stats"}]"#.into(),
        "2.1.0".into(),
    ));
    let fx = effect(
        1,
        "2.0.0",
        vec![
            down,
            step(&two, RevisionState::PendingReview, RevisionState::Active),
        ],
    );
    store
        .record_with(&event("second", 2), &[fx])
        .await
        .expect("second");
    let served = store.served().await.expect("served");
    let ids: Vec<(&str, RevisionState)> = served.iter().map(|r| (r.id.as_str(), r.state)).collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    let old = served
        .iter()
        .find(|r| r.id == one)
        .expect("the replaced one");
    assert_eq!(old.state, RevisionState::Approved);
    assert_eq!(
        old.retired.as_ref().map(|(_, until)| until.as_str()),
        Some("2.1.0")
    );
}

async fn signers_are_trusted_once_and_revoked_by_name(db: &TestDb) {
    let store = db.store().await;
    let alice = SignerRecord {
        name: "alice".into(),
        key_id: "sha256:aa".into(),
        identity: SignerIdentity::Key {
            public_key: "PEM".into(),
        },
        plugins: vec!["hello".into(), "acme-*".into()],
        trusted_by: "ops".into(),
        trusted_at_ms: NOW,
        revoked: None,
    };
    store.trust_signer(alice.clone()).await.expect("trusted");
    let again = store.trust_signer(alice.clone()).await;
    assert!(
        matches!(again, Err(CatalogStoreError::SignerExists { .. })),
        "{again:?}"
    );
    let same_key = SignerRecord {
        name: "alias".into(),
        ..alice.clone()
    };
    let ci = SignerRecord {
        name: "ci".into(),
        key_id: "keyless:https://issuer#https://repo/wf".into(),
        identity: SignerIdentity::Keyless {
            issuer: "https://issuer".into(),
            subject: "https://repo/wf".into(),
        },
        ..alice.clone()
    };
    assert!(matches!(
        store.trust_signer(same_key).await,
        Err(CatalogStoreError::SignerExists { .. })
    ));
    store
        .trust_signer(ci.clone())
        .await
        .expect("a keyless identity");
    assert_eq!(store.signers().await.expect("list"), [alice, ci]);

    store
        .revoke_signer("alice", "ops", "laptop lost", NOW + 1)
        .await
        .expect("revoked");
    let listed = store.signers().await.expect("list");
    assert_eq!(
        listed[0].revoked,
        Some((NOW + 1, "ops".into(), "laptop lost".into()))
    );
    let unknown = store.revoke_signer("nobody", "ops", "x", NOW).await;
    assert!(
        matches!(unknown, Err(CatalogStoreError::NoSuchSigner(_))),
        "{unknown:?}"
    );
}

async fn postgres_pushes_each_decision_and_sqlite_has_nothing_to_push(db: &TestDb) {
    let store = db.store().await;
    let listener = store.listen_catalog().await.expect("listen");
    let Some(mut listener) = listener else {
        assert!(
            matches!(db, TestDb::Sqlite { .. }),
            "only SQLite cannot push"
        );
        return;
    };
    let id = submitted(&store, new("hello", b"c", "m")).await;
    let fx = approval(0, "1.1.0", &id);
    store
        .record_with(&event("decide", 1), &[fx])
        .await
        .expect("decided");
    let heard = tokio::time::timeout(std::time::Duration::from_secs(5), listener.changed()).await;
    assert!(
        matches!(heard, Ok(Ok(()))),
        "the decision was pushed: {heard:?}"
    );
}
