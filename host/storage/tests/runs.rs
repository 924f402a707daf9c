//! The exploration runs' queue: runs queued and settled with their audit
//! rows, claimed under fenced leases, cancelled, taken over and given up
//! on; and the receipts and artifacts that link them to the audit trail.
//! One set of test bodies on SQLite and PostgreSQL (`common/mod.rs`).

#[macro_use]
mod common;

use std::collections::HashSet;

use common::TestDb;
use serde_json::json;
use toolhost_artifacts::{Artifact, ArtifactId, ArtifactStore, NewArtifact};
use toolhost_audit::{AuditEvent, AuditSink, Effect};
use toolhost_limits::RunBudget;
use toolhost_runs::{
    Beat, FinishRun, NewRun, Outcome, Progress, QueueLimits, RunEffect, RunId, RunSpec, RunState,
    RunStore,
};
use toolhost_storage::Store;
use toolhost_types::Digest;

on_both_engines!(
    a_queued_run_is_stored_with_its_row_and_read_only_by_its_tenant,
    a_full_queue_refuses_the_run_and_its_row,
    queues_racing_on_two_hosts_never_pass_the_tenants_limit,
    the_oldest_queued_run_is_claimed_first,
    a_tenant_holding_workers_waits_while_another_tenants_run_starts,
    eight_concurrent_claimers_take_twenty_runs_once_each,
    an_expired_lease_is_taken_over_and_the_old_token_writes_nothing,
    a_queued_run_is_settled_without_a_lease_only_while_queued,
    a_cancel_request_reaches_the_running_worker_and_is_noted_on_a_queued_run,
    a_run_out_of_attempts_is_listed_as_exhausted_and_settled_by_its_last_lease,
    an_artifact_kept_by_a_run_names_it,
    receipt_rows_chain_with_plain_rows_and_an_edited_receipt_breaks_the_chain,
    queued_runs_and_stored_cancels_are_pushed_to_listeners_on_postgres_only,
    a_handed_over_run_is_queued_again_spending_no_attempt_and_wakes_listeners,
    a_run_waits_for_input_is_answered_by_compare_and_swap_and_queued_again,
    a_run_unanswered_past_the_wait_is_claimed_and_one_waiting_is_cancelled_without_a_lease,
);

const NOW: i64 = 1_764_000_000_000;

/// A lease of one second.
const LEASE: i64 = 1_000;

/// The audit row written with a run change: its own call id each time.
fn event(call_id: &str) -> AuditEvent {
    common::event(call_id, NOW as u64)
}

fn spec() -> RunSpec {
    common::run_spec("explore", "testbench", json!({"project": "p-1"}))
}

/// A run of `principal` in acme, queued at `NOW + at`, with the default
/// limits and attempts.
fn new_run(principal: &str, at: i64) -> NewRun {
    NewRun {
        id: RunId::new(),
        tenant: "acme".into(),
        principal: principal.into(),
        principal_kind: "user".into(),
        client_id: "client-1".into(),
        spec: spec(),
        created_at_ms: NOW + at,
        max_attempts: toolhost_runs::MAX_ATTEMPTS,
        limits: QueueLimits::DEFAULT,
        input: None,
    }
}

/// Queues `run` with the audit row `call_id`.
async fn queue(store: &Store, call_id: &str, run: &NewRun) -> Result<(), String> {
    let effect = Effect::Run(RunEffect::Queue(Box::new(run.clone())));
    store
        .record_with(&event(call_id), &[effect])
        .await
        .map_err(|e| e.to_string())
}

/// Queues a fresh run of alice at `NOW + at`; its id.
async fn queued(store: &Store, call_id: &str, at: i64) -> RunId {
    let run = new_run("alice", at);
    queue(store, call_id, &run).await.expect("queued");
    run.id
}

/// The change that settles `id` as `state` under `lease` (none: queued).
fn finish(id: &RunId, lease: Option<&str>, attempt: u32, state: RunState) -> Effect {
    let receipt = format!(r#"{{"run_id":"{id}","state":"{state}"}}"#);
    Effect::Run(RunEffect::Finish(Box::new(FinishRun {
        id: id.clone(),
        lease_token: lease.map(str::to_owned),
        attempt,
        state,
        finished_at_ms: NOW + 50_000,
        outcome: Outcome::Error {
            code: "CANCELLED".into(),
            message: "stopped".into(),
            rpc_code: None,
        },
        receipt_sha256: Digest::of(receipt.as_bytes()).to_string(),
        receipt,
    })))
}

async fn settle(store: &Store, call_id: &str, effect: Effect) -> Result<(), String> {
    store
        .record_with(&event(call_id), &[effect])
        .await
        .map_err(|e| e.to_string())
}

async fn run_of(store: &Store, id: &RunId) -> toolhost_runs::Run {
    store.run("acme", id).await.expect("read").expect("found")
}

async fn a_queued_run_is_stored_with_its_row_and_read_only_by_its_tenant(db: &TestDb) {
    let store = db.store().await;
    let new = new_run("alice", 0);
    queue(&store, "call-q", &new).await.expect("queued");
    assert_eq!(store.count().await.expect("count"), 1, "with its row");

    let run = run_of(&store, &new.id).await;
    assert_eq!(
        (run.state, run.attempt, run.audited_attempts),
        (RunState::Queued, 0, 0)
    );
    assert_eq!(run.spec, new.spec, "the spec reads back whole");
    assert_eq!(
        (
            run.tenant.as_str(),
            run.principal.as_str(),
            run.client_id.as_str()
        ),
        ("acme", "alice", "client-1")
    );
    assert_eq!((run.max_attempts, run.created_at_ms), (3, NOW));
    assert_eq!(
        (run.started_at_ms, run.deadline_at_ms, run.lease_owner),
        (None, None, None)
    );
    assert_eq!((run.progress, run.outcome, run.receipt), (None, None, None));

    assert_eq!(store.run("globex", &new.id).await.expect("read"), None);
    assert_eq!(store.run("acme", &RunId::new()).await.expect("read"), None);
    assert_eq!(
        store.run_any(&new.id).await.expect("read").map(|r| r.id),
        Some(new.id.clone())
    );

    let bobs = queued_of(&store, "bob", 5).await;
    let ids = |runs: Vec<toolhost_runs::Run>| runs.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let all = store.runs("acme", None, 10).await.expect("list");
    assert_eq!(ids(all), [bobs.clone(), new.id.clone()], "newest first");
    assert_eq!(
        ids(store.runs("acme", None, 1).await.expect("list")),
        std::slice::from_ref(&bobs)
    );
    let alices = store.runs("acme", Some("alice"), 10).await.expect("list");
    assert_eq!(ids(alices), std::slice::from_ref(&new.id));
    assert!(
        store
            .runs("globex", None, 10)
            .await
            .expect("list")
            .is_empty()
    );
    assert_eq!(store.active("acme", "alice").await.expect("active"), (2, 1));
    assert_eq!(
        store.active("globex", "alice").await.expect("active"),
        (0, 0)
    );
}

/// Queues a run of `principal` at `NOW + at`; its id.
async fn queued_of(store: &Store, principal: &str, at: i64) -> RunId {
    let run = new_run(principal, at);
    queue(store, &format!("call-{}", run.id), &run)
        .await
        .expect("queued");
    run.id
}

/// Twelve queues at once from two hosts' stores (each with its own audit
/// writers, on PostgreSQL in transactions side by side): the tenant's
/// limit holds exactly.
async fn queues_racing_on_two_hosts_never_pass_the_tenants_limit(db: &TestDb) {
    let (a, b) = (db.store().await, db.store().await);
    let limits = QueueLimits {
        per_tenant: 3,
        per_principal: 100,
    };
    let mut racing = tokio::task::JoinSet::new();
    for i in 0..12i64 {
        let store = if i % 2 == 0 { a.clone() } else { b.clone() };
        let run = NewRun {
            limits,
            ..new_run(&format!("p{i}"), i)
        };
        racing.spawn(async move { queue(&store, &format!("race-{i}"), &run).await.is_ok() });
    }
    let mut queued = 0;
    while let Some(done) = racing.join_next().await {
        queued += usize::from(done.expect("a task"));
    }
    assert_eq!(queued, 3, "exactly the tenant's limit queued");
    let verified = a.verify_chain().await.expect("walk");
    assert!(verified.is_ok(), "{verified:?}");
}

async fn a_full_queue_refuses_the_run_and_its_row(db: &TestDb) {
    let store = db.store().await;
    let limits = QueueLimits {
        per_tenant: 3,
        per_principal: 2,
    };
    let bounded = |principal: &str, at| NewRun {
        limits,
        ..new_run(principal, at)
    };
    let first = bounded("alice", 0);
    queue(&store, "a-1", &first).await.expect("room for one");
    queue(&store, "a-2", &bounded("alice", 1))
        .await
        .expect("and two");
    let third = bounded("alice", 2);
    let refused = queue(&store, "a-3", &third).await;
    assert!(refused.is_err(), "a principal's third run is refused");
    assert_eq!(
        store.run("acme", &third.id).await.expect("read"),
        None,
        "no run"
    );
    assert_eq!(store.count().await.expect("count"), 2, "and no row");

    queue(&store, "b-1", &bounded("bob", 3))
        .await
        .expect("bob has room");
    let over = bounded("bob", 4);
    assert!(
        queue(&store, "b-2", &over).await.is_err(),
        "the tenant is full"
    );
    assert_eq!(store.active("acme", "bob").await.expect("active"), (3, 1));

    // A settled run makes room again.
    settle(
        &store,
        "a-1-cancel",
        finish(&first.id, None, 0, RunState::Cancelled),
    )
    .await
    .expect("cancelled while queued");
    queue(&store, "a-3-again", &third)
        .await
        .expect("room again");
    let verified = store.verify_chain().await.expect("walk");
    assert!(verified.is_ok(), "{verified:?}");
}

async fn the_oldest_queued_run_is_claimed_first(db: &TestDb) {
    let store = db.store().await;
    let newer = queued(&store, "call-newer", 10).await;
    let older = queued(&store, "call-older", 0).await;
    let first = store.claim("w1", LEASE, NOW + 20).await.expect("claim");
    let first = first.expect("a run to claim");
    assert_eq!(first.run.id, older);
    assert_eq!(first.run.state, RunState::Running);
    assert_eq!(first.run.attempt, 1);
    assert_eq!(first.run.lease_owner.as_deref(), Some("w1"));
    assert_eq!(first.run.lease_until_ms, Some(NOW + 20 + LEASE));
    assert_eq!(first.run.started_at_ms, Some(NOW + 20));
    let timeout = RunBudget::DEFAULT.call.timeout.as_millis() as i64;
    assert_eq!(first.run.deadline_at_ms, Some(NOW + 20 + timeout));
    let second = store.claim("w1", LEASE, NOW + 20).await.expect("claim");
    assert_eq!(second.map(|c| c.run.id), Some(newer));
    assert_eq!(
        store.claim("w1", LEASE, NOW + 20).await.expect("claim"),
        None
    );
}

/// The queue is fair across tenants: while acme's long runs hold a worker,
/// demo's run, queued after all of acme's, is the next to start.
async fn a_tenant_holding_workers_waits_while_another_tenants_run_starts(db: &TestDb) {
    let store = db.store().await;
    let acme: Vec<RunId> = queued_in_acme(&store, 0..3).await;
    let demo = NewRun {
        tenant: "demo".into(),
        ..new_run("bob", 10)
    };
    queue(&store, "call-demo", &demo).await.expect("queued");
    let claim = |worker: &'static str| {
        let store = &store;
        async move {
            store
                .claim(worker, LEASE, NOW + 20)
                .await
                .expect("claim")
                .map(|c| c.run.id)
        }
    };
    assert_eq!(claim("w1").await, Some(acme[0].clone()), "the oldest first");
    assert_eq!(
        claim("w2").await,
        Some(demo.id),
        "then the tenant holding no worker"
    );
    assert_eq!(
        claim("w3").await,
        Some(acme[1].clone()),
        "then oldest first again"
    );
}

/// Queues runs of alice in acme at `NOW + at` for each `at`: their ids.
async fn queued_in_acme(store: &Store, ats: std::ops::Range<i64>) -> Vec<RunId> {
    let mut ids = Vec::new();
    for at in ats {
        ids.push(queued(store, &format!("call-acme-{at}"), at).await);
    }
    ids
}

async fn eight_concurrent_claimers_take_twenty_runs_once_each(db: &TestDb) {
    let store = db.store().await;
    let mut queued_ids = HashSet::new();
    for i in 0..20 {
        let run = NewRun {
            limits: QueueLimits {
                per_tenant: 20,
                per_principal: 20,
            },
            ..new_run("alice", i)
        };
        queue(&store, &format!("call-{i}"), &run)
            .await
            .expect("queued");
        queued_ids.insert(run.id);
    }
    let mut claimers = tokio::task::JoinSet::new();
    for w in 0..8 {
        // A store each: eight replicas, each with its own pool.
        let store = db.store().await;
        claimers.spawn(async move {
            let mut mine = Vec::new();
            while let Some(c) = store
                .claim(&format!("w{w}"), 60_000, NOW + 100)
                .await
                .expect("claim")
            {
                mine.push((c.run.id, c.lease_token));
            }
            mine
        });
    }
    let mut claimed = Vec::new();
    while let Some(mine) = claimers.join_next().await {
        claimed.extend(mine.expect("a claimer"));
    }
    assert_eq!(claimed.len(), 20, "every run claimed once");
    let ids: HashSet<RunId> = claimed.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(ids, queued_ids, "each by one claimer");
    let tokens: HashSet<&String> = claimed.iter().map(|(_, t)| t).collect();
    assert_eq!(tokens.len(), 20, "each lease its own token");
    for (id, token) in &claimed {
        let run = run_of(&store, id).await;
        assert_eq!((run.state, run.attempt), (RunState::Running, 1));
        let beat = store.heartbeat(id, token, NOW + 200, None).await;
        assert_eq!(
            beat.expect("beat"),
            Some(Beat {
                cancel_requested_at_ms: None
            })
        );
    }
}

async fn an_expired_lease_is_taken_over_and_the_old_token_writes_nothing(db: &TestDb) {
    let store = db.store().await;
    let id = queued(&store, "call-q", 0).await;
    let old = store
        .claim("w1", LEASE, NOW)
        .await
        .expect("claim")
        .expect("claimed");
    let progress = Progress {
        progress: 3.0,
        total: Some(10.0),
        message: Some("reading projects".into()),
    };
    let beat = store
        .heartbeat(&id, &old.lease_token, NOW + 1_500, Some(&progress))
        .await
        .expect("beat");
    assert_eq!(
        beat,
        Some(Beat {
            cancel_requested_at_ms: None
        })
    );
    let nan = Progress {
        progress: f64::NAN,
        ..progress.clone()
    };
    assert!(
        store
            .heartbeat(&id, &old.lease_token, NOW, Some(&nan))
            .await
            .is_err()
    );
    // Renewed: not expired at the first lease's end.
    assert_eq!(
        store.claim("w2", LEASE, NOW + 1_200).await.expect("claim"),
        None
    );

    let new = store.claim("w2", LEASE, NOW + 1_600).await.expect("claim");
    let new = new.expect("the expired lease is taken over");
    assert_eq!(new.run.id, id);
    assert_eq!((new.run.attempt, new.run.state), (2, RunState::Running));
    assert_ne!(new.lease_token, old.lease_token);
    assert_eq!(new.run.lease_owner.as_deref(), Some("w2"));
    assert_eq!(new.run.started_at_ms, old.run.started_at_ms, "started once");
    assert_eq!(
        new.run.deadline_at_ms, old.run.deadline_at_ms,
        "the budget's end is inherited"
    );
    assert_eq!(new.run.progress, Some(progress), "the last report is kept");

    let stale = store
        .heartbeat(&id, &old.lease_token, NOW + 5_000, None)
        .await;
    assert_eq!(stale.expect("beat"), None, "the old lease is lost");
    let lost = |token: &str, attempt| {
        Effect::Run(RunEffect::AttemptLost {
            id: id.clone(),
            lease_token: token.to_owned(),
            attempt,
        })
    };
    settle(&store, "call-lost", lost(&new.lease_token, 1))
        .await
        .expect("the lost attempt's row");
    assert!(
        settle(&store, "call-lost-again", lost(&new.lease_token, 1))
            .await
            .is_err()
    );
    assert_eq!(run_of(&store, &id).await.audited_attempts, 1);

    let by_old = settle(
        &store,
        "call-old",
        finish(&id, Some(&old.lease_token), 1, RunState::Failed),
    );
    assert!(by_old.await.is_err(), "the old worker cannot settle it");
    assert_eq!(store.count().await.expect("count"), 2, "nor write its row");
    let by_new = finish(&id, Some(&new.lease_token), 2, RunState::Succeeded);
    settle(&store, "call-new", by_new).await.expect("settled");

    let run = run_of(&store, &id).await;
    assert_eq!((run.state, run.audited_attempts), (RunState::Succeeded, 2));
    assert_eq!(
        (run.lease_owner, run.lease_until_ms),
        (None, None),
        "the lease is released"
    );
    assert_eq!(run.finished_at_ms, Some(NOW + 50_000));
    let (receipt, sha) = (
        run.receipt.expect("a receipt"),
        run.receipt_sha256.expect("its digest"),
    );
    assert_eq!(Digest::of(receipt.as_bytes()).to_string(), sha);
    assert!(matches!(run.outcome, Some(Outcome::Error { .. })));
    let after = store
        .heartbeat(&id, &new.lease_token, NOW + 5_000, None)
        .await;
    assert_eq!(after.expect("beat"), None, "a settled run has no lease");
    assert_eq!(
        store
            .claim("w3", LEASE, NOW + 100_000)
            .await
            .expect("claim"),
        None
    );
}

async fn a_queued_run_is_settled_without_a_lease_only_while_queued(db: &TestDb) {
    let store = db.store().await;
    let waiting = queued(&store, "call-w", 0).await;
    settle(
        &store,
        "cancel-w",
        finish(&waiting, None, 0, RunState::Cancelled),
    )
    .await
    .expect("cancelled before it started");
    let run = run_of(&store, &waiting).await;
    assert_eq!(
        (run.state, run.attempt, run.started_at_ms),
        (RunState::Cancelled, 0, None)
    );
    assert!(run.receipt.is_some());
    let twice = settle(
        &store,
        "cancel-w-again",
        finish(&waiting, None, 0, RunState::Cancelled),
    );
    assert!(twice.await.is_err(), "settled once");
    assert_eq!(
        store.claim("w1", LEASE, NOW).await.expect("claim"),
        None,
        "never claimed"
    );

    let started = queued(&store, "call-s", 1).await;
    let claim = store
        .claim("w1", LEASE, NOW)
        .await
        .expect("claim")
        .expect("claimed");
    assert_eq!(claim.run.id, started);
    let unleased = settle(
        &store,
        "cancel-s",
        finish(&started, None, 0, RunState::Cancelled),
    );
    assert!(unleased.await.is_err(), "a running run needs its lease");
    let not_terminal = finish(&started, Some(&claim.lease_token), 1, RunState::Running);
    assert!(
        settle(&store, "cancel-r", not_terminal).await.is_err(),
        "settled means terminal"
    );
    assert_eq!(run_of(&store, &started).await.state, RunState::Running);
    assert_eq!(
        store.count().await.expect("count"),
        3,
        "only the rows that changed something"
    );
}

async fn a_cancel_request_reaches_the_running_worker_and_is_noted_on_a_queued_run(db: &TestDb) {
    let store = db.store().await;
    let running = queued(&store, "call-r", 0).await;
    let waiting = queued(&store, "call-w", 1).await;
    let claim = store
        .claim("w1", LEASE, NOW)
        .await
        .expect("claim")
        .expect("claimed");
    assert_eq!(claim.run.id, running);

    // A queued run stays queued, the request noted for its worker.
    let noted = store
        .request_cancel("acme", &waiting, NOW + 10)
        .await
        .expect("cancel");
    let noted = noted.expect("found");
    assert_eq!(
        (noted.state, noted.cancel_requested_at_ms),
        (RunState::Queued, Some(NOW + 10))
    );
    assert_eq!(
        store
            .request_cancel("globex", &running, NOW)
            .await
            .expect("cancel"),
        None
    );

    let asked = store
        .request_cancel("acme", &running, NOW + 10)
        .await
        .expect("cancel");
    let asked = asked.expect("found");
    assert_eq!(
        (asked.state, asked.cancel_requested_at_ms),
        (RunState::Cancelling, Some(NOW + 10))
    );
    let again = store
        .request_cancel("acme", &running, NOW + 20)
        .await
        .expect("cancel");
    assert_eq!(
        again.expect("found").cancel_requested_at_ms,
        Some(NOW + 10),
        "the first ask counts"
    );
    let beat = store
        .heartbeat(&running, &claim.lease_token, NOW + 30, None)
        .await;
    assert_eq!(
        beat.expect("beat"),
        Some(Beat {
            cancel_requested_at_ms: Some(NOW + 10)
        }),
        "the beat names the first request's time"
    );

    // A worker that dies while cancelling leaves it cancelling to the next.
    let next = store.claim("w2", LEASE, NOW + 5_000).await.expect("claim");
    let next = next.expect("taken over");
    assert_eq!(
        (next.run.id.clone(), next.run.state),
        (running.clone(), RunState::Cancelling)
    );
    let done = finish(&running, Some(&next.lease_token), 2, RunState::Cancelled);
    settle(&store, "call-c", done).await.expect("settled");
    let settled = store
        .request_cancel("acme", &running, NOW + 60_000)
        .await
        .expect("cancel");
    assert_eq!(
        settled.expect("found").state,
        RunState::Cancelled,
        "terminal stays terminal"
    );
}

async fn a_run_out_of_attempts_is_listed_as_exhausted_and_settled_by_its_last_lease(db: &TestDb) {
    let store = db.store().await;
    let run = NewRun {
        max_attempts: 2,
        ..new_run("alice", 0)
    };
    queue(&store, "call-q", &run).await.expect("queued");
    let first = store
        .claim("w1", LEASE, NOW)
        .await
        .expect("claim")
        .expect("claimed");
    let exhausted = store.exhausted(NOW + 2 * LEASE).await.expect("list");
    assert!(exhausted.is_empty(), "one attempt left");
    let second = store
        .claim("w2", LEASE, NOW + 2 * LEASE)
        .await
        .expect("claim");
    let second = second.expect("the second attempt");
    assert_eq!(second.run.attempt, 2);
    assert_ne!(second.lease_token, first.lease_token);

    let later = NOW + 4 * LEASE;
    assert_eq!(
        store.claim("w3", LEASE, later).await.expect("claim"),
        None,
        "no attempts left"
    );
    let exhausted = store.exhausted(NOW + 2 * LEASE).await.expect("list");
    assert!(exhausted.is_empty(), "not yet expired");
    let exhausted = store.exhausted(later).await.expect("list");
    assert_eq!(exhausted.len(), 1);
    assert_eq!(exhausted[0].run.id, run.id);
    assert_eq!(
        exhausted[0].lease_token, second.lease_token,
        "with its last lease"
    );

    let reaped = finish(
        &run.id,
        Some(&exhausted[0].lease_token),
        2,
        RunState::Failed,
    );
    settle(&store, "call-reaped", reaped)
        .await
        .expect("settled");
    assert!(store.exhausted(later).await.expect("list").is_empty());
    assert_eq!(run_of(&store, &run.id).await.state, RunState::Failed);
}

async fn an_artifact_kept_by_a_run_names_it(db: &TestDb) {
    let store = db.store().await;
    let run = queued(&store, "call-q", 0).await;
    let kept = |run_id: Option<String>| {
        NewArtifact::new(
            Artifact {
                id: ArtifactId::new(),
                tenant: "acme".into(),
                principal: "alice".into(),
                client_id: Some("client-1".into()),
                tool: "explore".into(),
                call_id: "call-a".into(),
                run_id,
                mime_type: "application/json".into(),
                size: 0,
                sha256: Digest::of(b""),
                created_at_ms: NOW,
                expires_at_ms: NOW + 60_000,
            },
            br#"{"trace":[]}"#.to_vec(),
        )
    };
    let (by_run, by_call) = (kept(Some(run.to_string())), kept(None));
    let effects = [
        Effect::StoreArtifact(by_run.clone()),
        Effect::StoreArtifact(by_call.clone()),
    ];
    store
        .record_with(&event("call-a"), &effects)
        .await
        .expect("kept");
    for new in [by_run, by_call] {
        let (read, _) = store
            .read("acme", &new.artifact.id, NOW)
            .await
            .expect("read")
            .expect("found");
        assert_eq!(read, new.artifact);
    }
}

async fn receipt_rows_chain_with_plain_rows_and_an_edited_receipt_breaks_the_chain(db: &TestDb) {
    let store = db.store().await;
    let receipt = Digest::of(br#"{"receipt_version":1}"#).to_string();
    let with_receipt = |call_id: &str| AuditEvent {
        receipt_sha256: Some(receipt.clone()),
        ..event(call_id)
    };
    let ids = [
        store.append(&event("plain-1")).await.expect("appended"),
        store
            .append(&with_receipt("receipt-1"))
            .await
            .expect("appended"),
    ];
    store.record(&event("plain-2")).await.expect("recorded");
    store
        .record(&with_receipt("receipt-2"))
        .await
        .expect("recorded");

    let rows = store.recent(10).await.expect("read");
    let read: Vec<(&str, Option<&str>)> = rows
        .iter()
        .rev()
        .map(|r| (r.event.call_id.as_str(), r.event.receipt_sha256.as_deref()))
        .collect();
    let r = Some(receipt.as_str());
    assert_eq!(
        read,
        [
            ("plain-1", None),
            ("receipt-1", r),
            ("plain-2", None),
            ("receipt-2", r)
        ]
    );
    assert_eq!(rows[0].event, with_receipt("receipt-2"), "field for field");
    let summary = store
        .verify_chain()
        .await
        .expect("walk")
        .expect("an intact chain");
    assert_eq!((summary.verified, summary.unchained), (4, 0));

    let other = Digest::of(b"another receipt").to_string();
    db.raw(format!(
        "UPDATE audit SET receipt_sha256 = '{other}' WHERE id = {}",
        ids[1]
    ))
    .await
    .expect("editing a receipt's digest");
    let broken = store
        .verify_chain()
        .await
        .expect("walk")
        .expect_err("a broken chain");
    assert_eq!(broken.id, ids[1], "{broken}");
    let refused = db.raw(format!(
        "UPDATE audit SET receipt_sha256 = 'xyz' WHERE id = {}",
        ids[0]
    ));
    assert!(refused.await.is_err(), "a digest is 64 hex characters");
}

async fn queued_runs_and_stored_cancels_are_pushed_to_listeners_on_postgres_only(db: &TestDb) {
    use toolhost_storage::RunNotice;
    let store = db.store().await;
    let listener = store.listen_runs().await.expect("listen");
    let Some(mut listener) = listener else {
        assert_eq!(store.engine(), toolhost_storage::Engine::Sqlite);
        return;
    };
    let id = queued(&store, "call-q", 0).await;
    hears(
        &mut listener,
        RunNotice::Queued(id.clone()),
        "notified in time",
    )
    .await;

    let claim = store.claim("w1", LEASE, NOW).await.expect("claim");
    assert_eq!(claim.expect("claimed").run.id, id);
    store
        .request_cancel("acme", &id, NOW + 10)
        .await
        .expect("cancel");
    hears(
        &mut listener,
        RunNotice::CancelRequested(id),
        "told in time",
    )
    .await;
}

/// Waits (10 s at most, else fails with `expected`) until `listener`
/// hears `wanted`. The channels are the database's: runs other tests
/// queue or cancel (in their own schemas) are heard too, and skipped.
async fn hears(
    listener: &mut toolhost_storage::RunListener,
    wanted: toolhost_storage::RunNotice,
    expected: &str,
) {
    let within = std::time::Duration::from_secs(10);
    let heard = tokio::time::timeout(within, async {
        while listener.next().await.expect("a notification") != wanted {}
    });
    heard.await.expect(expected);
}

fn hand_over(id: &RunId, lease: &str, attempt: u32) -> Effect {
    Effect::Run(RunEffect::HandOver {
        id: id.clone(),
        lease_token: lease.to_owned(),
        attempt,
    })
}

async fn a_handed_over_run_is_queued_again_spending_no_attempt_and_wakes_listeners(db: &TestDb) {
    let store = db.store().await;
    let mut listener = store.listen_runs().await.expect("listen");
    let id = queued(&store, "call-q", 0).await;
    let first = store.claim("w1", LEASE, NOW).await.expect("claim");
    let first = first.expect("claimed");
    // Another lease's token, or the wrong attempt, hands nothing over.
    let wrong = settle(&store, "call-x", hand_over(&id, "not-the-lease", 1)).await;
    assert!(wrong.is_err(), "a stranger's token");
    let wrong = settle(&store, "call-y", hand_over(&id, &first.lease_token, 2)).await;
    assert!(wrong.is_err(), "not the attempt that runs");
    assert_eq!(store.count().await.expect("count"), 1, "no row for either");

    settle(&store, "call-h", hand_over(&id, &first.lease_token, 1))
        .await
        .expect("handed over");
    let run = run_of(&store, &id).await;
    assert_eq!(run.state, RunState::Queued);
    assert_eq!(
        (run.attempt, run.audited_attempts),
        (1, 1),
        "its row is written"
    );
    assert_eq!(
        run.max_attempts,
        toolhost_runs::MAX_ATTEMPTS + 1,
        "none spent"
    );
    assert!(run.was_handed_over(1) && !run.was_handed_over(2));
    assert_eq!((run.lease_owner, run.lease_until_ms), (None, None));
    if let Some(listener) = listener.as_mut() {
        let wanted = toolhost_storage::RunNotice::Queued(id.clone());
        hears(listener, wanted, "queued again: the workers are told").await;
    }
    // The old lease writes nothing more; the next claim is attempt 2, at
    // once (it is queued: no lease to wait out).
    assert!(
        store
            .heartbeat(&id, &first.lease_token, NOW + 10, None)
            .await
            .expect("beat")
            .is_none()
    );
    let second = store.claim("w2", LEASE, NOW + 10).await.expect("claim");
    let second = second.expect("claimed again");
    assert_eq!(
        (second.run.attempt, second.run.state),
        (2, RunState::Running)
    );
    assert_eq!(
        second.run.started_at_ms, first.run.started_at_ms,
        "started once"
    );
    assert_eq!(
        second.run.deadline_at_ms, first.run.deadline_at_ms,
        "same budget"
    );

    // A run being cancelled is settled, never handed over.
    store
        .request_cancel("acme", &id, NOW + 20)
        .await
        .expect("cancel");
    let cancelling = settle(&store, "call-c", hand_over(&id, &second.lease_token, 2)).await;
    assert!(cancelling.is_err(), "cancelling: not handed over");
    assert_eq!(run_of(&store, &id).await.state, RunState::Cancelling);
}

/// The change that parks `id` at `attempt` under `lease`, waiting on the
/// requests `keys` since `at`.
fn await_input(id: &RunId, lease: &str, attempt: u32, keys: &[&str], at: i64) -> Effect {
    let mut input = toolhost_runs::RunInput::default();
    let requests = keys
        .iter()
        .map(|k| {
            (
                (*k).to_owned(),
                json!({"method": "elicitation/create", "params": {}}),
            )
        })
        .collect();
    input.ask(requests, attempt);
    Effect::Run(RunEffect::AwaitInput {
        id: id.clone(),
        lease_token: lease.to_owned(),
        attempt,
        input: Box::new(input),
        parked_at_ms: at,
    })
}

fn answers(keys: &[&str]) -> std::collections::BTreeMap<String, serde_json::Value> {
    keys.iter()
        .map(|k| {
            (
                (*k).to_owned(),
                json!({"action": "accept", "content": {"confirm": true}}),
            )
        })
        .collect()
}

async fn a_run_waits_for_input_is_answered_by_compare_and_swap_and_queued_again(db: &TestDb) {
    let store = db.store().await;
    let mut listener = store.listen_runs().await.expect("listen");
    let id = queued(&store, "call-q", 0).await;
    let first = store.claim("w1", LEASE, NOW).await.expect("claim");
    let first = first.expect("claimed");
    let deadline = run_of(&store, &id).await.deadline_at_ms.expect("set");
    // A stranger's lease parks nothing.
    let wrong = settle(&store, "call-x", await_input(&id, "nope", 1, &["a"], NOW)).await;
    assert!(wrong.is_err(), "a stranger's token");
    let parked = await_input(&id, &first.lease_token, 1, &["a", "b"], NOW + 100);
    settle(&store, "call-p", parked).await.expect("parked");
    let run = run_of(&store, &id).await;
    assert_eq!(run.state, RunState::InputRequired);
    assert_eq!(
        (run.lease_owner.as_deref(), run.parked_at_ms),
        (None, Some(NOW + 100))
    );
    assert_eq!(
        run.max_attempts,
        toolhost_runs::MAX_ATTEMPTS + 1,
        "none spent"
    );
    assert!(run.asked_in(1));
    assert_eq!(
        store.active("acme", "alice").await.expect("count"),
        (1, 1),
        "a waiting run counts against the queue's bounds"
    );
    assert!(
        store
            .claim("w2", LEASE, NOW + 200)
            .await
            .expect("claim")
            .is_none(),
        "nobody claims a run that waits"
    );

    // Partly answered: still waiting.
    let asked = run.input.clone().expect("input");
    let mut partly = asked.clone();
    assert_eq!(partly.answer(&answers(&["a"])), Ok(1));
    let stored = store
        .answer_input("acme", &id, &asked, &partly, NOW + 300)
        .await;
    assert!(stored.expect("answer"), "stored");
    // Another tenant, or a stale view of the input, changes nothing.
    let mut all = asked.clone();
    all.answer(&answers(&["a", "b"])).expect("fits");
    let stale = store
        .answer_input("acme", &id, &asked, &all, NOW + 300)
        .await;
    assert!(!stale.expect("answer"), "compared with what is stored");
    let stranger = store
        .answer_input("other", &id, &partly, &all, NOW + 300)
        .await;
    assert!(
        !stranger.expect("answer"),
        "another tenant's run is not found"
    );
    let run = run_of(&store, &id).await;
    assert_eq!(run.state, RunState::InputRequired);
    assert_eq!(run.input.as_ref().map(|i| i.pending.len()), Some(1));

    // Fully answered: queued again, its deadline moved by the wait.
    let mut done = partly.clone();
    done.answer(&answers(&["b"])).expect("fits");
    let stored = store
        .answer_input("acme", &id, &partly, &done, NOW + 5_100)
        .await;
    assert!(stored.expect("answer"));
    let run = run_of(&store, &id).await;
    assert_eq!(run.state, RunState::Queued);
    assert_eq!(run.parked_at_ms, None);
    assert_eq!(
        run.deadline_at_ms,
        Some(deadline + 5_000),
        "the wait is not the run's"
    );
    if let Some(listener) = listener.as_mut() {
        let wanted = toolhost_storage::RunNotice::Queued(id.clone());
        hears(listener, wanted, "queued again: the workers are told").await;
    }
    let second = store.claim("w2", LEASE, NOW + 5_200).await.expect("claim");
    let second = second.expect("claimed at once");
    assert_eq!(second.run.attempt, 2);
    assert_eq!(
        second.run.input.expect("kept").answers.len(),
        2,
        "with its answers"
    );
}

async fn a_run_unanswered_past_the_wait_is_claimed_and_one_waiting_is_cancelled_without_a_lease(
    db: &TestDb,
) {
    let store = db.store().await;
    let wait = i64::try_from(toolhost_runs::INPUT_WAIT.as_millis()).expect("small");
    let id = queued(&store, "call-q", 0).await;
    let first = store
        .claim("w1", LEASE, NOW)
        .await
        .expect("claim")
        .expect("claimed");
    let parked = await_input(&id, &first.lease_token, 1, &["a"], NOW);
    settle(&store, "call-p", parked).await.expect("parked");
    assert!(
        store
            .claim("w2", LEASE, NOW + wait - 1)
            .await
            .expect("claim")
            .is_none(),
        "within the wait"
    );
    let late = store
        .claim("w2", LEASE, NOW + wait + 1)
        .await
        .expect("claim");
    let late = late.expect("past the wait: claimed to be settled");
    assert_eq!(late.run.state, RunState::Running);
    assert!(
        !late.run.input.expect("kept").is_answered(),
        "it still waits: time out"
    );

    // Another run waiting is cancelled with no worker: settled at once.
    let other = queued(&store, "call-q2", 1).await;
    let claim = store
        .claim("w3", LEASE, NOW + wait + 2)
        .await
        .expect("claim");
    let claim = claim.expect("claimed");
    assert_eq!(claim.run.id, other);
    let parked = await_input(&other, &claim.lease_token, 1, &["a"], NOW + wait + 3);
    settle(&store, "call-p2", parked).await.expect("parked");
    let run = store
        .request_cancel("acme", &other, NOW + wait + 4)
        .await
        .expect("cancel")
        .expect("found");
    assert_eq!(run.state, RunState::InputRequired, "no worker to tell");
    assert_eq!(run.cancel_requested_at_ms, Some(NOW + wait + 4));
    settle(
        &store,
        "call-c",
        finish(&other, None, 1, RunState::Cancelled),
    )
    .await
    .expect("settled without a lease");
    assert_eq!(run_of(&store, &other).await.state, RunState::Cancelled);
}
