//! The gate store: one set of test bodies, run against SQLite (a temp
//! file) and PostgreSQL (a schema per test); see `common/mod.rs`.

#[macro_use]
mod common;

use common::TestDb;
use toolhost_gates::{
    ConsumeError, DecideError, Decision, Gate, GateCursor, GateId, GateQuery, GateState, GateStore,
    IDEMPOTENCY_LEASE, IdempotencyClaim, IdempotencyKey, NewGate, Target,
};

use toolhost_audit::{AuditEvent, AuditSink};
use toolhost_storage::{Store, UnauditedGate};
use toolhost_types::Risk;

on_both_engines!(
    an_identical_open_returns_the_pending_gate_unchanged,
    another_digest_version_or_principal_opens_another_gate,
    an_expired_pending_gate_does_not_block_a_new_one,
    concurrent_identical_opens_share_one_gate,
    concurrent_opens_replace_an_expired_gate_once,
    of_two_deciders_one_wins_and_the_other_gets_decided,
    an_expired_gate_cannot_be_decided,
    a_gate_of_another_tenant_is_not_found,
    of_fifty_concurrent_consumes_exactly_one_wins,
    a_refused_consumption_says_why_and_changes_nothing,
    list_filters_by_state_and_tenant_newest_first_up_to_the_limit,
    pages_of_gates_read_on_from_a_cursor_and_a_tools_old_gates_are_found,
    an_idempotency_key_answers_with_its_first_result,
    concurrent_claims_of_one_key_give_one_claim,
    a_claim_older_than_the_lease_is_taken_over_by_the_same_request,
    a_consumed_gate_whose_call_has_no_audit_row_is_listed,
    a_tenant_that_does_not_exist_cannot_get_gates_or_keys,
    a_stored_gate_this_build_cannot_read_is_a_database_error,
);

/// When the tests' gates open, unix milliseconds.
const NOW: i64 = 1_764_000_000_000;
/// How long they stay decidable: 15 minutes.
const TTL: i64 = 15 * 60 * 1000;

/// A store with tenants `acme` and `globex`.
async fn seeded(db: &TestDb) -> Store {
    common::store_with_tenants(db, &["acme", "globex"], NOW / 1000).await
}

/// Gate `n` of alice in acme: deploy v1 with arguments `digest`, opened at
/// `NOW` for `TTL`.
fn gate(n: u8, digest: &str) -> NewGate {
    NewGate {
        id: GateId::mint([n; 16]),
        tenant: "acme".into(),
        principal: "u-alice".into(),
        client_id: "cli-1".into(),
        tool: "deploy".into(),
        tool_version: "sha256:v1".into(),
        argument_digest: digest.into(),
        targets: vec![Target {
            kind: "environment".into(),
            id: "env-7".into(),
            name: "web-prod".into(),
            tags: vec!["prod".into()],
        }],
        risk: Risk::High,
        summary: "Deploy web 1.4 to web-prod".into(),
        reason_required: true,
        created_at: NOW,
        expires_at: NOW + TTL,
    }
}

async fn open(store: &Store, new: NewGate) -> Gate {
    store.open(new).await.expect("open")
}

/// Opens gate `n` and confirms it as bob.
async fn confirmed(store: &Store, n: u8, digest: &str) -> Gate {
    let g = open(store, gate(n, digest)).await;
    let (tenant, id) = (&g.opened.tenant, g.id());
    store
        .decide(tenant, id, Decision::Confirm, "u-bob", "ok", NOW + 1)
        .await
        .expect("confirm")
}

/// Consumes `g` as the call it was opened for, at `now`.
async fn consume_as_opened(store: &Store, g: &Gate, now: i64) -> Result<Gate, ConsumeError> {
    let o = &g.opened;
    let (who, tool, version, args) = (&o.principal, &o.tool, &o.tool_version, &o.argument_digest);
    store
        .consume(&o.tenant, &o.id, who, tool, version, args, "call-1", now)
        .await
}

fn ids(gates: &[Gate]) -> Vec<&GateId> {
    gates.iter().map(Gate::id).collect()
}

async fn an_identical_open_returns_the_pending_gate_unchanged(db: &TestDb) {
    let store = seeded(db).await;
    let first = open(&store, gate(1, "d1")).await;
    assert_eq!(first.opened, gate(1, "d1"), "every field reads back");
    assert_eq!(first.state, GateState::Pending);
    assert_eq!((first.decided_by.as_ref(), first.consumed_at), (None, None));

    // The same call again, later and with a fresh id and summary.
    let again = NewGate {
        summary: "another summary".into(),
        created_at: NOW + 60_000,
        expires_at: NOW + 60_000 + TTL,
        ..gate(2, "d1")
    };
    assert_eq!(open(&store, again).await, first, "returned unchanged");
    let all = store.list("acme", &[], 10).await.expect("list");
    assert_eq!(all, std::slice::from_ref(&first));
    let missing = GateId::mint([2; 16]);
    assert_eq!(store.get("acme", &missing).await.expect("get"), None);
    assert_eq!(
        store.get("acme", first.id()).await.expect("get"),
        Some(first)
    );
}

async fn another_digest_version_or_principal_opens_another_gate(db: &TestDb) {
    let store = seeded(db).await;
    let first = open(&store, gate(1, "d1")).await;
    let others = [
        gate(2, "d2"),
        NewGate {
            tool_version: "sha256:v2".into(),
            ..gate(3, "d1")
        },
        NewGate {
            principal: "u-bob".into(),
            ..gate(4, "d1")
        },
        NewGate {
            tool: "rollback".into(),
            ..gate(5, "d1")
        },
        NewGate {
            tenant: "globex".into(),
            ..gate(6, "d1")
        },
    ];
    for other in others {
        let opened = open(&store, other.clone()).await;
        assert_eq!(opened.opened, other, "a new gate, not {:?}", first.id());
    }
    // A decided gate no longer answers for its call either.
    let decided = store.decide("acme", first.id(), Decision::Deny, "u-bob", "", NOW + 1);
    decided.await.expect("deny");
    assert_eq!(open(&store, gate(7, "d1")).await.opened, gate(7, "d1"));
}

async fn an_expired_pending_gate_does_not_block_a_new_one(db: &TestDb) {
    let store = seeded(db).await;
    let old = open(&store, gate(1, "d1")).await;
    let later = |n| NewGate {
        created_at: NOW + TTL,
        expires_at: NOW + 2 * TTL,
        ..gate(n, "d1")
    };
    // Opened at its expiry exactly: expired then.
    let new = open(&store, later(2)).await;
    assert_eq!(new.opened, later(2));
    // The old gate is kept, undecided, and shown expired.
    let kept = store
        .get("acme", old.id())
        .await
        .expect("get")
        .expect("kept");
    assert_eq!(
        (kept.state, kept.shown_state(NOW + TTL)),
        (GateState::Pending, "expired")
    );
    // Even a decider whose clock is behind cannot revive it.
    let late = store.decide("acme", old.id(), Decision::Confirm, "u-bob", "", NOW + 1);
    assert!(matches!(late.await, Err(DecideError::Expired(_))));
    // The new one now answers for the call.
    assert_eq!(open(&store, later(3)).await, new);
    let pending = store
        .list("acme", &[GateState::Pending], 10)
        .await
        .expect("list");
    assert_eq!(ids(&pending), [new.id(), old.id()]);
}

async fn concurrent_identical_opens_share_one_gate(db: &TestDb) {
    let store = seeded(db).await;
    let opens = (100..120).map(|n| {
        let store = store.clone();
        tokio::spawn(async move { store.open(gate(n, "d1")).await })
    });
    common::opened_alike(opens, |o| format!("{:?}", ids(o))).await;
    assert_eq!(store.list("acme", &[], 100).await.expect("list").len(), 1);
}

async fn concurrent_opens_replace_an_expired_gate_once(db: &TestDb) {
    let store = seeded(db).await;
    let old = open(&store, gate(1, "d1")).await;
    let opens = (100..120).map(|n| {
        let store = store.clone();
        let new = NewGate {
            created_at: NOW + TTL + 1,
            expires_at: NOW + 2 * TTL,
            ..gate(n, "d1")
        };
        tokio::spawn(async move { store.open(new).await })
    });
    let opened = common::opened_alike(opens, |o| format!("{:?}", ids(o))).await;
    let all = store.list("acme", &[], 100).await.expect("list");
    assert_eq!(ids(&all), [opened[0].id(), old.id()]);
}

async fn of_two_deciders_one_wins_and_the_other_gets_decided(db: &TestDb) {
    let store = seeded(db).await;
    let g = open(&store, gate(1, "d1")).await;
    let won = store
        .decide(
            "acme",
            g.id(),
            Decision::Confirm,
            "u-bob",
            "change 42",
            NOW + 5,
        )
        .await
        .expect("first decision");
    assert_eq!(won.state, GateState::Confirmed);
    assert_eq!(won.decided_by.as_deref(), Some("u-bob"));
    assert_eq!(won.reason.as_deref(), Some("change 42"));
    assert_eq!(won.decided_at, Some(NOW + 5));
    assert_eq!(won.opened, g.opened);

    let lost = store.decide("acme", g.id(), Decision::Deny, "u-carol", "no", NOW + 6);
    match lost.await {
        Err(DecideError::Decided { id, state }) => assert_eq!((&id, state), (g.id(), "confirmed")),
        other => panic!("{other:?}"),
    }
    let stored = store.get("acme", g.id()).await.expect("get");
    assert_eq!(stored, Some(won), "the loser changed nothing");

    // No reason given is no reason stored.
    let denied = open(&store, gate(2, "d2")).await;
    let denied = store.decide("acme", denied.id(), Decision::Deny, "u-bob", "", NOW + 5);
    let denied = denied.await.expect("deny");
    assert_eq!((denied.state, denied.reason), (GateState::Denied, None));
}

async fn an_expired_gate_cannot_be_decided(db: &TestDb) {
    let store = seeded(db).await;
    let g = open(&store, gate(1, "d1")).await;
    let at_expiry = store.decide("acme", g.id(), Decision::Confirm, "u-bob", "", NOW + TTL);
    assert!(matches!(at_expiry.await, Err(DecideError::Expired(id)) if &id == g.id()));
    let stored = store.get("acme", g.id()).await.expect("get").expect("kept");
    assert_eq!(stored, g, "still pending, undecided");
}

async fn a_gate_of_another_tenant_is_not_found(db: &TestDb) {
    let store = seeded(db).await;
    let g = confirmed(&store, 1, "d1").await;
    assert_eq!(store.get("globex", g.id()).await.expect("get"), None);
    let decided = store.decide("globex", g.id(), Decision::Deny, "u-carol", "", NOW + 2);
    assert!(matches!(decided.await, Err(DecideError::NotFound(id)) if &id == g.id()));
    let o = &g.opened;
    let (who, version, args) = (&o.principal, &o.tool_version, &o.argument_digest);
    let consumed = store.consume(
        "globex",
        g.id(),
        who,
        "deploy",
        version,
        args,
        "call-2",
        NOW + 2,
    );
    assert!(matches!(consumed.await, Err(ConsumeError::NotFound(id)) if &id == g.id()));
    let missing = GateId::mint([9; 16]);
    let decided = store.decide("acme", &missing, Decision::Deny, "u-bob", "", NOW + 2);
    assert!(matches!(decided.await, Err(DecideError::NotFound(_))));
    assert!(
        store
            .list("globex", &[], 10)
            .await
            .expect("list")
            .is_empty()
    );
    // Acme's gate is untouched and still consumable.
    consume_as_opened(&store, &g, NOW + 3)
        .await
        .expect("consume");
}

async fn of_fifty_concurrent_consumes_exactly_one_wins(db: &TestDb) {
    let store = seeded(db).await;
    let g = confirmed(&store, 1, "d1").await;
    let consumes = (0..50).map(|i| {
        let (store, g) = (store.clone(), g.clone());
        tokio::spawn(async move { consume_as_opened(&store, &g, NOW + 10 + i).await })
    });
    let (mut won, mut replayed) = (Vec::new(), 0);
    for task in consumes {
        match task.await.expect("task") {
            Ok(gate) => won.push(gate),
            Err(ConsumeError::Consumed(_)) => replayed += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!((won.len(), replayed), (1, 49));
    assert_eq!(won[0].state, GateState::Consumed);
    let stored = store.get("acme", g.id()).await.expect("get");
    assert_eq!(stored.as_ref(), Some(&won[0]));
    assert!(won[0].consumed_at.is_some_and(|at| at >= NOW + 10));
}

async fn a_refused_consumption_says_why_and_changes_nothing(db: &TestDb) {
    let store = seeded(db).await;
    let pending = open(&store, gate(1, "d1")).await;
    let refused = |r: Result<Gate, ConsumeError>| r.expect_err("refused");
    let e = refused(consume_as_opened(&store, &pending, NOW + 1).await);
    assert!(matches!(e, ConsumeError::Pending(_)), "{e}");
    let e = refused(consume_as_opened(&store, &pending, NOW + TTL).await);
    assert!(matches!(e, ConsumeError::Expired(_)), "{e}");

    let denied = open(&store, gate(2, "d2")).await;
    let deny = store.decide("acme", denied.id(), Decision::Deny, "u-bob", "no", NOW + 1);
    deny.await.expect("deny");
    let e = refused(consume_as_opened(&store, &denied, NOW + 2).await);
    assert!(matches!(e, ConsumeError::Denied(_)), "{e}");

    let g = confirmed(&store, 3, "d3").await;
    let e = refused(consume_as_opened(&store, &g, NOW + TTL).await);
    assert!(matches!(e, ConsumeError::Expired(_)), "{e}");
    let o = &g.opened;
    let (who, tool, version, args) = ("u-alice", "deploy", "sha256:v1", "d3");
    let calls = [
        ("u-mallory", tool, version, args, "principal"),
        (who, "rollback", version, args, "tool"),
        (who, tool, "sha256:v2", args, "tool version"),
        (who, tool, version, "d4", "arguments"),
        ("u-mallory", tool, version, "d4", "principal"),
    ];
    for (who, tool, version, args, differs) in calls {
        let other = store.consume("acme", &o.id, who, tool, version, args, "call-3", NOW + 2);
        match other.await {
            Err(ConsumeError::Mismatch { id, what }) => assert_eq!((&id, what), (&o.id, differs)),
            other => panic!("{differs}: {other:?}"),
        }
    }
    // None of that spent the gate; the call it was opened for runs once.
    let used = consume_as_opened(&store, &g, NOW + 3)
        .await
        .expect("consume");
    assert_eq!(
        (used.state, used.consumed_at),
        (GateState::Consumed, Some(NOW + 3))
    );
    let e = refused(consume_as_opened(&store, &g, NOW + 4).await);
    assert!(matches!(e, ConsumeError::Consumed(_)), "{e}");
}

async fn list_filters_by_state_and_tenant_newest_first_up_to_the_limit(db: &TestDb) {
    let store = seeded(db).await;
    let at = |n: u8, digest: &str, tenant: &str| NewGate {
        tenant: tenant.into(),
        created_at: NOW + i64::from(n),
        expires_at: NOW + i64::from(n) + TTL,
        ..gate(n, digest)
    };
    let p1 = open(&store, at(1, "d1", "acme")).await;
    let c2 = open(&store, at(2, "d2", "acme")).await;
    let d3 = open(&store, at(3, "d3", "acme")).await;
    let p4 = open(&store, at(4, "d4", "acme")).await;
    let g5 = open(&store, at(5, "d5", "globex")).await;
    let decide = |id, d| store.decide("acme", id, d, "u-bob", "", NOW + 10);
    decide(c2.id(), Decision::Confirm).await.expect("confirm");
    decide(d3.id(), Decision::Deny).await.expect("deny");

    let list = |states: &'static [GateState], limit| store.list("acme", states, limit);
    let all = list(&[], 10).await.expect("list");
    assert_eq!(ids(&all), [p4.id(), d3.id(), c2.id(), p1.id()]);
    let pending = list(&[GateState::Pending], 10).await.expect("list");
    assert_eq!(ids(&pending), [p4.id(), p1.id()]);
    let decided = list(&[GateState::Denied, GateState::Confirmed], 10).await;
    assert_eq!(ids(&decided.expect("list")), [d3.id(), c2.id()]);
    assert!(
        list(&[GateState::Consumed], 10)
            .await
            .expect("list")
            .is_empty()
    );
    let newest = list(&[], 2).await.expect("list");
    assert_eq!(ids(&newest), [p4.id(), d3.id()]);
    let globex = store.list("globex", &[], 10).await.expect("list");
    assert_eq!(ids(&globex), [g5.id()]);
}

fn key(principal: &str, key: &str) -> IdempotencyKey {
    IdempotencyKey {
        tenant: "acme".into(),
        principal: principal.into(),
        tool: "deploy".into(),
        key: key.into(),
    }
}

async fn an_idempotency_key_answers_with_its_first_result(db: &TestDb) {
    let store = seeded(db).await;
    let k = key("u-alice", "retry-1");
    let claim = |k, digest| store.claim_key(k, digest, NOW);
    assert_eq!(
        claim(&k, "r1").await.expect("claim"),
        IdempotencyClaim::Claimed
    );
    assert_eq!(
        claim(&k, "r1").await.expect("claim"),
        IdempotencyClaim::InProgress
    );
    assert_eq!(
        claim(&k, "r2").await.expect("claim"),
        IdempotencyClaim::Reused
    );

    store
        .finish_key(&k, r#"{"ok":true}"#)
        .await
        .expect("finish");
    let done = IdempotencyClaim::Done(r#"{"ok":true}"#.into());
    assert_eq!(claim(&k, "r1").await.expect("claim"), done);
    assert_eq!(
        claim(&k, "r2").await.expect("claim"),
        IdempotencyClaim::Reused
    );
    // A finished key keeps its result; finishing it again is a host bug.
    store.release_key(&k).await.expect("release is a no-op");
    assert_eq!(claim(&k, "r1").await.expect("claim"), done);
    assert!(store.finish_key(&k, "{}").await.is_err());

    // A released claim can be claimed again, by any request.
    let failed = key("u-alice", "retry-2");
    assert_eq!(
        claim(&failed, "r1").await.expect("claim"),
        IdempotencyClaim::Claimed
    );
    store.release_key(&failed).await.expect("release");
    assert_eq!(
        claim(&failed, "r2").await.expect("claim"),
        IdempotencyClaim::Claimed
    );

    // Keys are per principal (and tenant and tool).
    let bobs = key("u-bob", "retry-1");
    assert_eq!(
        claim(&bobs, "r1").await.expect("claim"),
        IdempotencyClaim::Claimed
    );
}

async fn a_claim_older_than_the_lease_is_taken_over_by_the_same_request(db: &TestDb) {
    let store = seeded(db).await;
    let k = key("u-alice", "crashed");
    let lease = i64::try_from(IDEMPOTENCY_LEASE.as_millis()).expect("ms");
    let claim = |digest, now| store.claim_key(&k, digest, now);
    assert_eq!(
        claim("r1", NOW).await.expect("claim"),
        IdempotencyClaim::Claimed
    );
    // Its holder died without settling it. Within the lease it still holds.
    let within = NOW + lease;
    assert_eq!(
        claim("r1", within).await.expect("claim"),
        IdempotencyClaim::InProgress
    );
    // After it, the same request takes the key over, and holds it anew.
    let after = NOW + lease + 1;
    assert_eq!(
        claim("r2", after).await.expect("claim"),
        IdempotencyClaim::Reused
    );
    assert_eq!(
        claim("r1", after).await.expect("claim"),
        IdempotencyClaim::Claimed
    );
    assert_eq!(
        claim("r1", after + 1).await.expect("claim"),
        IdempotencyClaim::InProgress
    );
    store
        .finish_key(&k, "{}")
        .await
        .expect("the new holder finishes");
    let done = claim("r1", after + 2 * lease).await.expect("claim");
    assert_eq!(
        done,
        IdempotencyClaim::Done("{}".into()),
        "a finished key never expires"
    );
}

async fn a_consumed_gate_whose_call_has_no_audit_row_is_listed(db: &TestDb) {
    let store = seeded(db).await;
    let g = confirmed(&store, 1, "d1").await;
    consume_as_opened(&store, &g, NOW + 2)
        .await
        .expect("consumed by call-1");
    // Consumed at NOW + 2: not yet before NOW + 2 (its call may still run).
    assert_eq!(store.unaudited_gates(NOW + 2, 10).await.expect("list"), []);
    let listed = store.unaudited_gates(NOW + 3, 10).await.expect("list");
    let expected = UnauditedGate {
        gate_id: g.id().to_string(),
        tenant: "acme".into(),
        call_id: "call-1".into(),
        consumed_at: NOW + 2,
    };
    assert_eq!(listed, [expected]);
    // The call's row is written: nothing is missing any more.
    let row = AuditEvent {
        gate_id: Some(g.id().to_string()),
        ..common::event("call-1", NOW as u64)
    };
    store.record(&row).await.expect("recorded");
    assert_eq!(store.unaudited_gates(NOW + 3, 10).await.expect("list"), []);
}

async fn concurrent_claims_of_one_key_give_one_claim(db: &TestDb) {
    let store = seeded(db).await;
    let claims = (0..20).map(|_| {
        let store = store.clone();
        tokio::spawn(async move { store.claim_key(&key("u-alice", "k"), "r1", NOW).await })
    });
    let mut answers = Vec::new();
    for task in claims {
        answers.push(task.await.expect("task").expect("claim"));
    }
    let claimed = answers.iter().filter(|&a| *a == IdempotencyClaim::Claimed);
    assert_eq!(claimed.count(), 1, "{answers:?}");
    let waiting = answers
        .iter()
        .filter(|&a| *a == IdempotencyClaim::InProgress);
    assert_eq!(waiting.count(), 19, "{answers:?}");
}

async fn a_tenant_that_does_not_exist_cannot_get_gates_or_keys(db: &TestDb) {
    let store = seeded(db).await;
    let orphan = NewGate {
        tenant: "initech".into(),
        ..gate(1, "d1")
    };
    let refused = store.open(orphan).await.expect_err("no such tenant");
    assert!(refused.to_string().contains("\"initech\""), "{refused}");
    assert!(
        store
            .list("initech", &[], 10)
            .await
            .expect("list")
            .is_empty()
    );
    let k = IdempotencyKey {
        tenant: "initech".into(),
        ..key("u-alice", "k")
    };
    let refused = store
        .claim_key(&k, "r1", NOW)
        .await
        .expect_err("no such tenant");
    assert!(refused.to_string().contains("\"initech\""), "{refused}");
}

async fn a_stored_gate_this_build_cannot_read_is_a_database_error(db: &TestDb) {
    let store = seeded(db).await;
    let g = open(&store, gate(1, "d1")).await;
    let id = g.id();
    db.raw(format!(
        "UPDATE gates SET targets = 'not json' WHERE id = '{id}'"
    ))
    .await
    .expect("a row changed by hand");
    let read = store.get("acme", id).await.expect_err("unreadable");
    assert!(read.to_string().contains("targets"), "{read}");
    assert!(store.list("acme", &[], 10).await.is_err());
}

async fn pages_of_gates_read_on_from_a_cursor_and_a_tools_old_gates_are_found(db: &TestDb) {
    let store = seeded(db).await;
    // 250 gates of acme, one a millisecond, every tenth of `rollback`; and
    // one of globex.
    let mut opened = Vec::new();
    for n in 0..250u16 {
        let mut id = [0u8; 16];
        id[..2].copy_from_slice(&n.to_be_bytes());
        let tool = if n % 10 == 0 { "rollback" } else { "deploy" };
        let new = NewGate {
            id: GateId::mint(id),
            tool: tool.into(),
            argument_digest: format!("d{n}"),
            created_at: NOW + i64::from(n),
            expires_at: NOW + i64::from(n) + TTL,
            ..gate(0, "")
        };
        opened.push(open(&store, new).await.id().clone());
    }
    let other = NewGate {
        tenant: "globex".into(),
        tool: "rollback".into(),
        ..gate(255, "g")
    };
    open(&store, other).await;
    opened.reverse();

    let read = |tool: Option<&'static str>, limit: u32| {
        let store = &store;
        async move {
            let mut pages: Vec<Vec<GateId>> = Vec::new();
            let mut cursor: Option<GateCursor> = None;
            loop {
                let query = GateQuery {
                    states: &[],
                    tool,
                    before: cursor.as_ref(),
                    limit,
                };
                let page = store.page("acme", query).await.expect("a page");
                let Some(last) = page.last() else { break };
                cursor = Some(GateCursor::of(last));
                pages.push(page.iter().map(|g| g.id().clone()).collect());
            }
            pages
        }
    };
    let pages = read(None, 100).await;
    assert_eq!(
        pages.iter().map(Vec::len).collect::<Vec<_>>(),
        [100, 100, 50]
    );
    assert_eq!(
        pages.concat(),
        opened,
        "every gate once, newest first, acme's only"
    );
    let rollbacks = read(Some("rollback"), 10).await;
    assert_eq!(
        rollbacks.iter().map(Vec::len).collect::<Vec<_>>(),
        [10, 10, 5]
    );
    let expected: Vec<GateId> = opened
        .iter()
        .enumerate()
        .filter(|(i, _)| (249 - i) % 10 == 0)
        .map(|(_, id)| id.clone())
        .collect();
    assert_eq!(
        rollbacks.concat(),
        expected,
        "the tool's gates, the oldest too"
    );
    let pending = GateQuery {
        states: &[GateState::Denied],
        tool: None,
        before: None,
        limit: 10,
    };
    assert!(store.page("acme", pending).await.expect("none").is_empty());
}
