//! The authoring workspace's rows: a session opened and moved on only by
//! compare-and-set with its audit row; a race of many mutations against
//! one version writes exactly one of them and nothing of the others; a key
//! taken once is not taken again; a promotion's revision is submitted in
//! the same step; uploads are the caller's tenant's, arrive in parts, are
//! read whole once finished, leave no row when they fail, count against
//! their principal's quota, and expire unless a proposal keeps them. One
//! set of bodies on SQLite and PostgreSQL.

#[macro_use]
mod common;

use common::TestDb;
use serde_json::json;
use toolhost_audit::{AuditSink, Effect};
use toolhost_catalog::{CatalogStore, NewRevision, Revision, RevisionState};
use toolhost_storage::Store;
use toolhost_types::Digest;
use toolhost_workspace::{
    ArrivingUpload, Binding, BoundObject, ChunkKept, HeldUploads, Mutation, PartKept, Promotion,
    PromotionId, PromotionState, Proposal, ProposalId, Session, SessionChange, SessionId,
    SessionKey, SessionState, SessionsFrom, Upload, UploadChunk, UploadHandle, UploadKind,
    UploadPart, UploadQuota, WorkspaceEffect, WorkspaceStore,
};

on_both_engines!(
    a_session_opens_at_version_one_and_only_its_tenant_reads_it,
    twenty_concurrent_proposals_against_one_version_write_exactly_one,
    a_key_another_mutation_took_fails_the_whole_step,
    a_promotion_submits_its_revision_in_its_step_and_moves_on_under_its_id,
    uploads_are_their_tenants_and_expire_unless_a_proposal_keeps_them,
    an_upload_arrives_in_parts_and_reads_back_whole_in_order_once_finished,
    a_failed_upload_leaves_no_row_and_an_abandoned_one_is_purged,
    a_principals_quota_counts_its_unnamed_live_uploads_and_refuses_past_it,
    chunks_arrive_at_their_offset_from_their_owner_only,
    sessions_page_by_keyset_forward_and_back_with_ties_in_one_millisecond,
    a_session_rebound_or_ended_moves_with_its_step_and_an_ended_one_takes_no_more,
    an_ended_session_drops_the_uploads_it_keeps_and_no_others,
);

const NOW: i64 = 1_764_000_000_000;

fn session() -> Session {
    Session {
        id: SessionId::new(),
        tenant: "acme".into(),
        owner: "alice".into(),
        subject: "testbench/test_plan:payments".parse().expect("a subject"),
        bound_to: Some(toolhost_workspace::BoundObject {
            id: "1".into(),
            name: "payments".into(),
        }),
        subject_version: "7".into(),
        version: 1,
        state: SessionState::Open,
        created_at_ms: NOW,
        updated_at_ms: NOW,
    }
}

fn mutation(session: &SessionId, key: &str) -> Mutation {
    Mutation {
        tenant: "acme".into(),
        principal: "alice".into(),
        key: key.into(),
        tool: "propose_revision".into(),
        request_digest: Digest::of(key.as_bytes()).to_string(),
        session: session.clone(),
        result: json!({"structured": {"key": key}, "text": null}).to_string(),
        at_ms: NOW,
    }
}

fn proposal(session: &SessionId, number: i64) -> Proposal {
    Proposal {
        id: ProposalId::new(),
        session: session.clone(),
        number,
        author: "alice".into(),
        body: json!({"object": {"tests": [{"name": "Login"}]}}),
        digest: Digest::of(b"normalized").to_string(),
        validation: json!({"valid": true}),
        diff: json!({"changes": [{"op": "added", "item": "Login"}]}),
        subject_version: "v1".into(),
        created_at_ms: NOW,
    }
}

/// One step of `session` from `expected`, under `key`.
fn step(session: &SessionId, expected: i64, key: &str) -> SessionChange {
    SessionChange {
        tenant: "acme".into(),
        session: session.clone(),
        expected_version: expected,
        at_ms: NOW + 1,
        mutation: mutation(session, key),
        // What the step adds: nothing until a test says.
        keep_uploads: Vec::new(),
        state: None,
        rebound: None,
        cancel_runs: false,
        proposal: None,
        link: None,
        promotion: None,
        submit: None,
    }
}

async fn write(store: &Store, call_id: &str, effect: WorkspaceEffect) -> Result<(), String> {
    store
        .record_with(
            &common::event(call_id, NOW as u64),
            &[Effect::Workspace(effect)],
        )
        .await
        .map_err(|e| e.to_string())
}

/// Opens a session and records its first step, whose proposal keeps
/// `upload`.
/// `change` written as the step of call `call_id`.
async fn stepped(store: &Store, call_id: &str, change: SessionChange) -> Result<(), String> {
    write(store, call_id, WorkspaceEffect::Change(Box::new(change))).await
}

async fn keep(store: &Store, upload: &UploadHandle) {
    let s = opened(store).await;
    let change = SessionChange {
        keep_uploads: vec![upload.clone()],
        ..step(&s.id, 1, "k")
    };
    let effect = WorkspaceEffect::Change(Box::new(change));
    write(store, "call-keep", effect).await.expect("kept");
}

async fn opened(store: &Store) -> Session {
    let s = session();
    let open = WorkspaceEffect::Open {
        session: Box::new(s.clone()),
        mutation: None,
    };
    write(store, "call-open", open).await.expect("opened");
    s
}

async fn a_session_opens_at_version_one_and_only_its_tenant_reads_it(db: &TestDb) {
    let store = db.store().await;
    let s = opened(&store).await;
    assert_eq!(
        store.session("acme", &s.id).await.expect("read"),
        Some(s.clone())
    );
    assert_eq!(store.session("globex", &s.id).await.expect("read"), None);
    assert!(store.view("globex", &s.id).await.expect("read").is_none());
    let listed = store
        .sessions("acme", Some("alice"), &SessionsFrom::Newest, 10)
        .await
        .expect("list");
    assert_eq!(listed, vec![s.clone()]);
    assert!(
        store
            .sessions("acme", Some("bob"), &SessionsFrom::Newest, 10)
            .await
            .expect("list")
            .is_empty()
    );
    assert!(
        store
            .sessions("globex", None, &SessionsFrom::Newest, 10)
            .await
            .expect("list")
            .is_empty()
    );
    assert_eq!(db.count("audit").await, 1, "one row for the opening call");
}

async fn twenty_concurrent_proposals_against_one_version_write_exactly_one(db: &TestDb) {
    let store = db.store().await;
    let s = opened(&store).await;
    let mut tasks = Vec::new();
    for i in 0..20 {
        let store = store.clone();
        let id = s.id.clone();
        tasks.push(tokio::spawn(async move {
            let mut change = step(&id, 1, &format!("key-{i}"));
            change.proposal = Some(proposal(&id, 1));
            write(
                &store,
                &format!("call-{i}"),
                WorkspaceEffect::Change(Box::new(change)),
            )
            .await
        }));
    }
    let mut won = 0;
    for t in tasks {
        won += usize::from(t.await.expect("joined").is_ok());
    }
    assert_eq!(
        won, 1,
        "exactly one of twenty mutations against version 1 is written"
    );
    let view = store
        .view("acme", &s.id)
        .await
        .expect("read")
        .expect("there");
    assert_eq!(view.session.version, 2);
    assert_eq!(view.proposals.len(), 1);
    assert_eq!(db.count("workspace_proposals").await, 1);
    assert_eq!(db.count("workspace_mutations").await, 1);
    assert_eq!(
        db.count("audit").await,
        2,
        "the losers' rows went with their steps"
    );
}

async fn a_key_another_mutation_took_fails_the_whole_step(db: &TestDb) {
    let store = db.store().await;
    let s = opened(&store).await;
    let first = step(&s.id, 1, "the-key");
    write(&store, "call-1", WorkspaceEffect::Change(Box::new(first)))
        .await
        .expect("first");
    let mut again = step(&s.id, 2, "the-key");
    again.proposal = Some(proposal(&s.id, 1));
    let refused = write(&store, "call-2", WorkspaceEffect::Change(Box::new(again))).await;
    assert!(refused.is_err(), "a key is taken once");
    let stored = store
        .mutation("acme", "alice", "the-key")
        .await
        .expect("read")
        .expect("kept");
    assert_eq!(stored.request_digest, Digest::of(b"the-key").to_string());
    assert_eq!(
        store
            .session("acme", &s.id)
            .await
            .expect("read")
            .expect("there")
            .version,
        2
    );
    assert_eq!(db.count("workspace_proposals").await, 0);
    assert_eq!(
        store
            .mutation("globex", "alice", "the-key")
            .await
            .expect("read"),
        None
    );
}

fn revision(submitted_by: &str) -> NewRevision {
    let manifest = "[plugin]\nname = \"hello\"\nversion = \"0.2.0\"\n".to_owned();
    let component = b"\0asm component".to_vec();
    let (c, m) = (Digest::of(&component), Digest::of(manifest.as_bytes()));
    let revision = Revision {
        id: toolhost_catalog::revision_id("hello", &c, &m),
        plugin: "hello".into(),
        version: "0.2.0".into(),
        component_digest: c,
        manifest,
        manifest_digest: m,
        envelope: Some("{}".into()),
        signer: Some("alice-key".into()),
        source: "workspace:ws_x/prop_y".into(),
        capabilities: "{}".into(),
        state: RevisionState::PendingReview,
        submitted_by: submitted_by.into(),
        submitted_at_ms: NOW,
        reviewed_by: None,
        reviewed_at_ms: None,
        review_reason: None,
        activated_at_ms: None,
        retired: None,
        audience: toolhost_catalog::Audience::Everyone,
    };
    NewRevision::new(revision, component)
}

async fn a_promotion_submits_its_revision_in_its_step_and_moves_on_under_its_id(db: &TestDb) {
    let store = db.store().await;
    let s = opened(&store).await;
    let mut add = step(&s.id, 1, "k1");
    let p = proposal(&s.id, 1);
    add.proposal = Some(p.clone());
    write(&store, "call-1", WorkspaceEffect::Change(Box::new(add)))
        .await
        .expect("proposed");
    let rev = revision("alice");
    let promotion = Promotion {
        id: PromotionId::of(&p.id),
        session: s.id.clone(),
        proposal: p.id.clone(),
        promoted_by: "alice".into(),
        state: PromotionState::AwaitingApproval,
        revision_id: None,
        gate_id: Some("gate_1".into()),
        result: None,
        created_at_ms: NOW,
        updated_at_ms: NOW,
    };
    // A stale step submits nothing.
    let mut stale = step(&s.id, 1, "k-stale");
    stale.submit = Some(Box::new(rev.clone()));
    stale.promotion = Some(promotion.clone());
    assert!(
        write(
            &store,
            "call-stale",
            WorkspaceEffect::Change(Box::new(stale))
        )
        .await
        .is_err()
    );
    assert_eq!(store.revision(&rev.id).await.expect("read"), None);
    assert_eq!(db.count("workspace_promotions").await, 0);
    let mut waits = step(&s.id, 2, "k2");
    waits.promotion = Some(promotion.clone());
    write(&store, "call-2", WorkspaceEffect::Change(Box::new(waits)))
        .await
        .expect("waits");
    let mut done = step(&s.id, 3, "k3");
    done.state = Some(SessionState::Promoted);
    done.submit = Some(Box::new(rev.clone()));
    done.promotion = Some(Promotion {
        state: PromotionState::PendingReview,
        revision_id: Some(rev.id.clone()),
        updated_at_ms: NOW + 5,
        ..promotion.clone()
    });
    write(&store, "call-3", WorkspaceEffect::Change(Box::new(done)))
        .await
        .expect("promoted");
    let view = store
        .view("acme", &s.id)
        .await
        .expect("read")
        .expect("there");
    assert_eq!(
        (view.session.version, view.session.state),
        (4, SessionState::Promoted)
    );
    assert_eq!(
        view.promotions.len(),
        1,
        "one promotion, moved on under its id"
    );
    assert_eq!(view.promotions[0].state, PromotionState::PendingReview);
    assert_eq!(view.promotions[0].gate_id.as_deref(), Some("gate_1"));
    let stored = store
        .revision(&rev.id)
        .await
        .expect("read")
        .expect("submitted");
    assert_eq!(stored.state, RevisionState::PendingReview);
    assert_eq!(stored.submitted_by, "alice");
    // A promoted session takes no more steps.
    let after = step(&s.id, 4, "k4");
    assert!(
        write(&store, "call-4", WorkspaceEffect::Change(Box::new(after)))
            .await
            .is_err()
    );
}

/// Room enough for every upload these tests keep.
const ROOMY: UploadQuota = UploadQuota {
    uploads: 100,
    bytes: 1 << 20,
};

fn arriving(tenant: &str, owner: &str, at: i64) -> ArrivingUpload {
    ArrivingUpload {
        handle: UploadHandle::new(),
        tenant: tenant.into(),
        owner: owner.into(),
        kind: UploadKind::Component,
        created_at_ms: at,
    }
}

/// Part `seq` of `handle`, stored at `at` within `max_bytes`.
fn part<'a>(handle: &'a UploadHandle, seq: u32, bytes: &'a [u8], at: i64) -> UploadPart<'a> {
    UploadPart {
        handle,
        seq,
        bytes,
        max_bytes: ROOMY.bytes,
        now_ms: at,
        arriving_until_ms: at + 10,
    }
}

/// `a` begun (declaring `declared` bytes, arriving until `until`) within
/// a roomy quota, which the store must admit.
async fn begun(store: &Store, a: &ArrivingUpload, declared: u64, until: i64) {
    let admitted = store.begin_upload(a, declared, ROOMY, until).await;
    assert!(admitted.expect("begin"), "a roomy quota admits the upload");
}

/// `a` finished with `parts`, expiring at `expires`.
async fn finished(store: &Store, a: &ArrivingUpload, parts: &[&[u8]], expires: i64) -> Upload {
    begun(store, a, 0, a.created_at_ms + 10).await;
    for (seq, bytes) in parts.iter().enumerate() {
        let p = part(&a.handle, seq as u32, bytes, a.created_at_ms);
        assert_eq!(
            store.put_upload_part(p).await.expect("a part"),
            PartKept::Kept
        );
    }
    let whole = parts.concat();
    let upload = Upload {
        handle: a.handle.clone(),
        tenant: a.tenant.clone(),
        owner: a.owner.clone(),
        kind: a.kind,
        size: whole.len() as u64,
        sha256: Digest::of(&whole).to_string(),
        created_at_ms: a.created_at_ms,
        expires_at_ms: expires,
    };
    assert!(store.finish_upload(&upload).await.expect("finish"));
    upload
}

async fn uploads_are_their_tenants_and_expire_unless_a_proposal_keeps_them(db: &TestDb) {
    let store = db.store().await;
    let kept = finished(
        &store,
        &arriving("acme", "alice", NOW),
        &[b"hello"],
        NOW + 10,
    )
    .await;
    let dropped = finished(
        &store,
        &arriving("acme", "alice", NOW),
        &[b"hello"],
        NOW + 10,
    )
    .await;
    let (h, d) = (&kept.handle, &dropped.handle);
    let (got, bytes) = store
        .upload("acme", h, NOW)
        .await
        .expect("read")
        .expect("there");
    assert_eq!((got, bytes), (kept.clone(), b"hello".to_vec()));
    assert!(
        store
            .upload("globex", h, NOW)
            .await
            .expect("read")
            .is_none()
    );
    keep(&store, h).await;
    assert!(
        store
            .upload("acme", d, NOW + 10)
            .await
            .expect("read")
            .is_none(),
        "expired"
    );
    finished(
        &store,
        &arriving("acme", "alice", NOW + 50),
        &[b"later"],
        NOW + 100,
    )
    .await;
    assert!(
        store
            .upload("acme", h, NOW + 50)
            .await
            .expect("read")
            .is_some(),
        "kept by a proposal"
    );
    assert_eq!(
        db.count("workspace_uploads").await,
        2,
        "the expired one went"
    );
    assert_eq!(db.count("workspace_upload_parts").await, 2, "with its part");
}

async fn an_upload_arrives_in_parts_and_reads_back_whole_in_order_once_finished(db: &TestDb) {
    let store = db.store().await;
    let a = arriving("acme", "alice", NOW);
    begun(&store, &a, 9, NOW + 10).await;
    for (seq, bytes) in [(0, &b"one"[..]), (1, b"two"), (2, b"six")] {
        let kept = store
            .put_upload_part(part(&a.handle, seq, bytes, NOW))
            .await;
        assert_eq!(kept.expect("a part"), PartKept::Kept);
    }
    assert!(
        store
            .upload("acme", &a.handle, NOW)
            .await
            .expect("read")
            .is_none(),
        "an arriving upload is not read"
    );
    let mut upload = Upload {
        handle: a.handle.clone(),
        tenant: "acme".into(),
        owner: "alice".into(),
        kind: a.kind,
        size: 8,
        sha256: Digest::of(b"onetwosix").to_string(),
        created_at_ms: NOW,
        expires_at_ms: NOW + 1000,
    };
    assert!(
        !store.finish_upload(&upload).await.expect("finish"),
        "parts that do not add up to its size do not finish it"
    );
    upload.size = 9;
    assert!(store.finish_upload(&upload).await.expect("finish"));
    let (got, bytes) = store
        .upload("acme", &a.handle, NOW)
        .await
        .expect("read")
        .expect("finished");
    assert_eq!((got, bytes), (upload, b"onetwosix".to_vec()));
    assert_eq!(db.count("workspace_upload_parts").await, 3);
    let late = store
        .put_upload_part(part(&a.handle, 3, b"more", NOW))
        .await;
    assert_eq!(
        late.expect("answered"),
        PartKept::Gone,
        "a finished upload takes no part"
    );
}

async fn a_failed_upload_leaves_no_row_and_an_abandoned_one_is_purged(db: &TestDb) {
    let store = db.store().await;
    let failed = arriving("acme", "alice", NOW);
    begun(&store, &failed, 0, NOW + 10).await;
    for seq in 0..2 {
        let kept = store
            .put_upload_part(part(&failed.handle, seq, b"bytes", NOW))
            .await;
        assert_eq!(kept.expect("a part"), PartKept::Kept);
    }
    store
        .drop_upload("acme", &failed.handle)
        .await
        .expect("dropped");
    assert_eq!(db.count("workspace_uploads").await, 0);
    assert_eq!(db.count("workspace_upload_parts").await, 0);
    let kept = store
        .put_upload_part(part(&failed.handle, 2, b"late", NOW))
        .await;
    assert_eq!(kept.expect("answered"), PartKept::Gone);
    assert_eq!(db.count("workspace_upload_parts").await, 0, "nothing after");

    // The host died mid-body: the upload's short expiry purges it.
    let abandoned = arriving("acme", "alice", NOW);
    begun(&store, &abandoned, 0, NOW + 10).await;
    let kept = store
        .put_upload_part(part(&abandoned.handle, 0, b"half", NOW))
        .await;
    assert_eq!(kept.expect("a part"), PartKept::Kept);
    let next = arriving("acme", "bob", NOW + 10);
    begun(&store, &next, 0, NOW + 20).await;
    assert_eq!(db.count("workspace_uploads").await, 1, "only the next one");
    assert_eq!(db.count("workspace_upload_parts").await, 0);
}

async fn a_principals_quota_counts_its_unnamed_live_uploads_and_refuses_past_it(db: &TestDb) {
    let store = db.store().await;
    let held = |owner: &'static str, at: i64| {
        let store = &store;
        async move { store.held_uploads("acme", owner, at).await.expect("held") }
    };
    assert_eq!(held("alice", NOW).await, HeldUploads::default());
    let named = finished(
        &store,
        &arriving("acme", "alice", NOW),
        &[b"hello"],
        NOW + 100,
    )
    .await;
    finished(
        &store,
        &arriving("acme", "alice", NOW),
        &[b"abc"],
        NOW + 100,
    )
    .await;
    let busy = arriving("acme", "alice", NOW);
    begun(&store, &busy, 0, NOW + 10).await;
    let kept = store
        .put_upload_part(part(&busy.handle, 0, b"xy", NOW))
        .await;
    assert_eq!(kept.expect("a part"), PartKept::Kept);
    finished(&store, &arriving("acme", "bob", NOW), &[b"bobs"], NOW + 100).await;
    let three = HeldUploads {
        uploads: 3,
        bytes: 10,
    };
    assert_eq!(
        held("alice", NOW).await,
        three,
        "arriving ones count, bytes so far"
    );
    assert_eq!(
        held("bob", NOW).await,
        HeldUploads {
            uploads: 1,
            bytes: 4
        }
    );
    assert_eq!(
        held("alice", NOW + 10).await,
        HeldUploads {
            uploads: 2,
            bytes: 8
        },
        "the arriving one past its short expiry counts no more"
    );

    // Past the count, or the bytes with those declared: nothing stored.
    let rows = db.count("workspace_uploads").await;
    let quota = |uploads, bytes| UploadQuota { uploads, bytes };
    let over = arriving("acme", "alice", NOW);
    assert!(
        !store
            .begin_upload(&over, 0, quota(3, 100), NOW + 10)
            .await
            .expect("answered")
    );
    assert!(
        !store
            .begin_upload(&over, 91, quota(4, 100), NOW + 10)
            .await
            .expect("answered")
    );
    assert_eq!(db.count("workspace_uploads").await, rows);
    assert!(
        store
            .begin_upload(&over, 90, quota(4, 100), NOW + 10)
            .await
            .expect("begin")
    );

    // Past the bytes as a part arrives: the part is not stored.
    let mut big = part(&over.handle, 0, b"0123456789", NOW);
    big.max_bytes = 17;
    let refused = store.put_upload_part(big).await.expect("answered");
    assert_eq!(refused, PartKept::OverQuota);
    assert_eq!(db.count("workspace_upload_parts").await, 4, "no part of it");
    big.max_bytes = 20;
    assert_eq!(
        store.put_upload_part(big).await.expect("a part"),
        PartKept::Kept
    );

    // An upload a proposal names counts no more.
    keep(&store, &named.handle).await;
    assert_eq!(
        held("alice", NOW).await,
        HeldUploads {
            uploads: 3,
            bytes: 15
        }
    );
}

/// `c` appended: what became of it.
async fn put(store: &Store, c: UploadChunk<'_>) -> ChunkKept {
    store.append_upload_chunk(c).await.expect("answered")
}

/// A chunk of `a` at `offset` by `owner` of `tenant`, at `at`, within
/// `max_bytes`.
fn chunk<'a>(
    a: &'a ArrivingUpload,
    (tenant, owner): (&'a str, &'a str),
    offset: u64,
    bytes: &'a [u8],
    max_bytes: u64,
) -> UploadChunk<'a> {
    UploadChunk {
        tenant,
        owner,
        handle: &a.handle,
        offset,
        bytes,
        max_bytes,
        now_ms: NOW,
        arriving_until_ms: NOW + 10,
    }
}

async fn chunks_arrive_at_their_offset_from_their_owner_only(db: &TestDb) {
    let store = db.store().await;
    let a = arriving("acme", "alice", NOW);
    begun(&store, &a, 5, NOW + 10).await;
    let alice = ("acme", "alice");
    let a = &a;
    let put = |c| put(&store, c);
    assert_eq!(put(chunk(a, alice, 0, b"abc", 100)).await, ChunkKept::Kept);
    assert_eq!(
        put(chunk(a, alice, 0, b"abc", 100)).await,
        ChunkKept::Moved { received: 3 },
        "a chunk sent again is not stored twice"
    );
    assert_eq!(
        put(chunk(a, alice, 7, b"zz", 100)).await,
        ChunkKept::Moved { received: 3 },
        "nor one that skips bytes"
    );
    for other in [("acme", "bob"), ("globex", "alice")] {
        assert_eq!(
            put(chunk(a, other, 3, b"de", 100)).await,
            ChunkKept::Gone,
            "{other:?} may not add to alice's upload"
        );
    }
    assert_eq!(
        put(chunk(a, alice, 3, b"de", 4)).await,
        ChunkKept::OverQuota
    );
    assert_eq!(put(chunk(a, alice, 3, b"de", 100)).await, ChunkKept::Kept);
    let state = store
        .arriving_upload("acme", "alice", &a.handle, NOW)
        .await
        .expect("read")
        .expect("arriving");
    assert_eq!((state.size, state.parts), (5, 2));
    assert!(
        store
            .arriving_upload("acme", "bob", &a.handle, NOW)
            .await
            .expect("read")
            .is_none()
    );
    assert!(
        store
            .arriving_upload("acme", "alice", &a.handle, NOW + 10)
            .await
            .expect("read")
            .is_none(),
        "past its short expiry it is no longer arriving"
    );
    let parts = [
        store.upload_part("acme", &a.handle, 0).await.expect("read"),
        store.upload_part("acme", &a.handle, 1).await.expect("read"),
        store
            .upload_part("globex", &a.handle, 0)
            .await
            .expect("read"),
    ];
    assert_eq!(parts, [Some(b"abc".to_vec()), Some(b"de".to_vec()), None]);
    let upload = Upload {
        handle: a.handle.clone(),
        tenant: "acme".into(),
        owner: "alice".into(),
        kind: a.kind,
        size: 5,
        sha256: Digest::of(b"abcde").to_string(),
        created_at_ms: NOW,
        expires_at_ms: NOW + 1000,
    };
    assert!(store.finish_upload(&upload).await.expect("finish"));
    let (_, bytes) = store
        .upload("acme", &a.handle, NOW)
        .await
        .expect("read")
        .expect("finished");
    assert_eq!(bytes, b"abcde");
    assert_eq!(
        put(chunk(a, alice, 5, b"f", 100)).await,
        ChunkKept::Gone,
        "a finished upload takes no chunk"
    );
}

async fn a_session_rebound_or_ended_moves_with_its_step_and_an_ended_one_takes_no_more(
    db: &TestDb,
) {
    let store = db.store().await;
    let s = opened(&store).await;
    let bound = Binding {
        bound_to: Some(BoundObject {
            id: "42".into(),
            name: "payments".into(),
        }),
        subject_version: "v2".into(),
    };
    let rebind = SessionChange {
        rebound: Some(bound.clone()),
        ..step(&s.id, 1, "rebind")
    };
    stepped(&store, "call-rebind", rebind)
        .await
        .expect("rebound");
    let now = store
        .session("acme", &s.id)
        .await
        .expect("read")
        .expect("there");
    assert_eq!(
        (now.version, now.bound_to, now.subject_version),
        (2, bound.bound_to, bound.subject_version)
    );
    let proposed = SessionChange {
        proposal: Some(Proposal {
            subject_version: "v2".into(),
            ..proposal(&s.id, 1)
        }),
        ..step(&s.id, 2, "propose")
    };
    stepped(&store, "call-propose", proposed)
        .await
        .expect("proposed");
    let close = SessionChange {
        state: Some(SessionState::Abandoned),
        cancel_runs: true,
        ..step(&s.id, 3, "abandon")
    };
    stepped(&store, "call-abandon", close)
        .await
        .expect("abandoned");
    let view = store
        .view("acme", &s.id)
        .await
        .expect("read")
        .expect("there");
    assert_eq!(
        (view.session.state, view.session.version),
        (SessionState::Abandoned, 4)
    );
    assert_eq!(view.proposals[0].subject_version, "v2");
    let late = SessionChange {
        proposal: Some(proposal(&s.id, 2)),
        ..step(&s.id, 4, "late")
    };
    let refused = stepped(&store, "call-late", late).await;
    assert!(refused.is_err(), "an ended session takes no more steps");
    let view = store
        .view("acme", &s.id)
        .await
        .expect("read")
        .expect("there");
    assert_eq!((view.session.version, view.proposals.len()), (4, 1));
}

async fn sessions_page_by_keyset_forward_and_back_with_ties_in_one_millisecond(db: &TestDb) {
    let store = db.store().await;
    // Seven sessions, three of them opened in one millisecond, one by bob.
    let mut opened = Vec::new();
    for (n, at) in [0, 1, 2, 2, 2, 3, 4].into_iter().enumerate() {
        let s = Session {
            id: SessionId::new(),
            owner: if n == 3 { "bob".into() } else { "alice".into() },
            created_at_ms: NOW + at,
            ..session()
        };
        let open = WorkspaceEffect::Open {
            session: Box::new(s.clone()),
            mutation: None,
        };
        write(&store, &format!("call-open-{n}"), open)
            .await
            .expect("opened");
        opened.push(s);
    }
    let key = |s: &Session| SessionKey {
        created_at_ms: s.created_at_ms,
        id: s.id.clone(),
    };
    let ids = |page: &[Session]| page.iter().map(|s| s.id.clone()).collect::<Vec<_>>();
    let page = |from: SessionsFrom, owner: Option<&'static str>| {
        let store = &store;
        async move {
            store
                .sessions("acme", owner, &from, 3)
                .await
                .expect("a page")
        }
    };
    // Newest first: by time, then by id within a millisecond.
    let mut all = opened.clone();
    all.sort_by(|a, b| (b.created_at_ms, &b.id).cmp(&(a.created_at_ms, &a.id)));
    let first = page(SessionsFrom::Newest, None).await;
    assert_eq!(ids(&first), ids(&all[..3]));
    let second = page(SessionsFrom::OlderThan(key(&first[2])), None).await;
    assert_eq!(ids(&second), ids(&all[3..6]));
    let third = page(SessionsFrom::OlderThan(key(&second[2])), None).await;
    assert_eq!(ids(&third), ids(&all[6..]));
    let back = page(SessionsFrom::NewerThan(key(&third[0])), None).await;
    assert_eq!(
        ids(&back),
        ids(&second),
        "back is the page before, newest first"
    );
    let top = page(SessionsFrom::NewerThan(key(&second[0])), None).await;
    assert_eq!(ids(&top), ids(&first));
    let alices: Vec<Session> = all.iter().filter(|s| s.owner == "alice").cloned().collect();
    let mine = page(SessionsFrom::OlderThan(key(&alices[2])), Some("alice")).await;
    assert_eq!(ids(&mine), ids(&alices[3..6]));
    assert!(
        store
            .sessions("globex", None, &SessionsFrom::Newest, 3)
            .await
            .expect("a page")
            .is_empty()
    );
}

async fn an_ended_session_drops_the_uploads_it_keeps_and_no_others(db: &TestDb) {
    let store = db.store().await;
    let upload = |bytes: &'static [u8]| {
        let store = &store;
        async move {
            let a = arriving("acme", "alice", NOW);
            finished(store, &a, &[bytes], NOW + 10).await.handle
        }
    };
    let (closed_draft, shared, abandoned_draft, other, promoted_draft) = (
        upload(b"closed").await,
        upload(b"shared").await,
        upload(b"abandoned").await,
        upload(b"other").await,
        upload(b"promoted").await,
    );
    // Three sessions keep uploads; `shared` is named by the first, then
    // the third, which keeps it since.
    let mut sessions = Vec::new();
    for i in 0..4 {
        let s = session();
        let open = WorkspaceEffect::Open {
            session: Box::new(s.clone()),
            mutation: None,
        };
        write(&store, &format!("call-open-{i}"), open)
            .await
            .expect("opened");
        sessions.push(s);
    }
    let [first, second, third, fourth] = &sessions[..] else {
        unreachable!("four sessions")
    };

    for (s, kept, key) in [
        (first, vec![closed_draft.clone(), shared.clone()], "k1"),
        (second, vec![abandoned_draft.clone()], "k2"),
        (third, vec![shared.clone(), other.clone()], "k3"),
        (fourth, vec![promoted_draft.clone()], "k4"),
    ] {
        let change = SessionChange {
            keep_uploads: kept,
            ..step(&s.id, 1, key)
        };
        stepped(&store, &format!("call-{key}"), change)
            .await
            .expect("kept");
    }
    let held = |handle: &UploadHandle| {
        let (store, handle) = (&store, handle.clone());
        async move {
            store
                .upload("acme", &handle, NOW + 50)
                .await
                .expect("read")
                .is_some()
        }
    };
    for (s, state, key) in [
        (first, SessionState::Closed, "close"),
        (second, SessionState::Abandoned, "abandon"),
        (fourth, SessionState::Promoted, "promote"),
    ] {
        let end = SessionChange {
            state: Some(state),
            ..step(&s.id, 2, key)
        };
        stepped(&store, &format!("call-{key}"), end)
            .await
            .expect("ended");
    }
    assert!(!held(&closed_draft).await, "a closed session's draft went");
    assert!(
        !held(&abandoned_draft).await,
        "an abandoned session's draft went"
    );
    assert!(
        !held(&promoted_draft).await,
        "a promoted session's draft went (its revision holds the bytes)"
    );
    assert!(
        held(&shared).await,
        "kept by the open session that named it last"
    );
    assert!(held(&other).await, "the open session's own");
    assert_eq!(db.count("workspace_uploads").await, 2);
    assert_eq!(
        db.count("workspace_upload_parts").await,
        2,
        "the parts went too"
    );
    // An ended session's record stays whole.
    let view = store
        .view("acme", &first.id)
        .await
        .expect("read")
        .expect("there");
    assert_eq!(view.session.state, SessionState::Closed);
}
