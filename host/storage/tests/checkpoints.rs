//! The checkpoint store: one set of test bodies, run against SQLite (a temp
//! file) and PostgreSQL (a schema per test); see `common/mod.rs`.

#[macro_use]
mod common;

use common::TestDb;
use toolhost_gates::{Checkpoint, CheckpointError, CheckpointStore, Disposition, NewCheckpoint};
use toolhost_storage::Store;

on_both_engines!(
    an_open_of_a_held_subject_returns_its_checkpoint_unchanged,
    another_subject_plugin_or_tenant_opens_another_checkpoint,
    concurrent_opens_of_one_subject_make_one_checkpoint,
    a_decision_at_the_current_version_records_the_disposition,
    a_stale_version_is_a_conflict_and_changes_nothing,
    a_decided_checkpoint_cannot_be_decided_again,
    of_twenty_concurrent_deciders_exactly_one_wins,
    a_checkpoint_of_another_tenant_is_not_found,
    list_filters_waiting_by_tenant_newest_first_up_to_the_limit,
    a_tenant_that_does_not_exist_cannot_open_checkpoints,
    the_schema_refuses_a_half_recorded_decision,
);

/// When the tests' checkpoints open, unix milliseconds.
const NOW: i64 = 1_764_000_000_000;

/// A store with tenants `acme` and `globex`.
async fn seeded(db: &TestDb) -> Store {
    common::store_with_tenants(db, &["acme", "globex"], NOW / 1000).await
}

/// Checkpoint `n` of the testbench plugin in acme, for `subject`, opened by
/// alice at `NOW + n`.
fn new(n: u8, subject: &str) -> NewCheckpoint {
    NewCheckpoint {
        id: format!("chk_{n:032x}"),
        tenant: "acme".into(),
        plugin: "testbench".into(),
        subject: subject.into(),
        title: format!("Is finding {n} real?"),
        evidence: "p99 latency up 40% after the deploy".into(),
        opened_by: "u-alice".into(),
        created_at: NOW + i64::from(n),
    }
}

async fn open(store: &Store, c: NewCheckpoint) -> Checkpoint {
    store.open_checkpoint(c).await.expect("open")
}

/// Decides `c` at its current version as bob, at `NOW + 100`.
async fn decide(
    store: &Store,
    c: &Checkpoint,
    disposition: Disposition,
) -> Result<Checkpoint, CheckpointError> {
    let o = &c.opened;
    store
        .decide_checkpoint(
            &o.tenant,
            &o.id,
            c.version,
            disposition,
            "u-bob",
            "",
            NOW + 100,
        )
        .await
}

fn ids(checkpoints: &[Checkpoint]) -> Vec<&str> {
    checkpoints.iter().map(|c| c.opened.id.as_str()).collect()
}

async fn an_open_of_a_held_subject_returns_its_checkpoint_unchanged(db: &TestDb) {
    let store = seeded(db).await;
    let first = open(&store, new(1, "execution:ex-3")).await;
    assert_eq!(
        first.opened,
        new(1, "execution:ex-3"),
        "every field reads back"
    );
    assert_eq!((first.version, first.state()), (1, "waiting"));
    assert_eq!((first.disposition, first.decided_by.as_ref()), (None, None));
    assert_eq!((first.reason.as_ref(), first.decided_at), (None, None));

    // The same subject again, later, with a fresh id, title and evidence.
    assert_eq!(open(&store, new(2, "execution:ex-3")).await, first);
    let all = store.list_checkpoints("acme", false, 10).await;
    assert_eq!(all.expect("list"), std::slice::from_ref(&first));

    // Once decided, opening it again is how the plugin reads the decision.
    let decided = decide(&store, &first, Disposition::Confirm).await;
    let decided = decided.expect("decide");
    assert_eq!(open(&store, new(3, "execution:ex-3")).await, decided);
}

async fn another_subject_plugin_or_tenant_opens_another_checkpoint(db: &TestDb) {
    let store = seeded(db).await;
    let first = open(&store, new(1, "execution:ex-3")).await;
    let others = [
        new(2, "execution:ex-4"),
        NewCheckpoint {
            plugin: "other-plugin".into(),
            ..new(3, "execution:ex-3")
        },
        NewCheckpoint {
            tenant: "globex".into(),
            ..new(4, "execution:ex-3")
        },
    ];
    for other in others {
        let opened = open(&store, other.clone()).await;
        assert_eq!(
            opened.opened, other,
            "a new checkpoint, not {}",
            first.opened.id
        );
        assert_eq!(opened.version, 1);
    }
    let acme = store.list_checkpoints("acme", false, 10).await;
    assert_eq!(acme.expect("list").len(), 3);
}

async fn concurrent_opens_of_one_subject_make_one_checkpoint(db: &TestDb) {
    let store = seeded(db).await;
    let opens = (100..120).map(|n| {
        let store = store.clone();
        tokio::spawn(async move { store.open_checkpoint(new(n, "execution:ex-3")).await })
    });
    let opened = common::opened_alike(opens, |o| format!("{:?}", ids(o))).await;
    let all = store.list_checkpoints("acme", false, 100).await;
    assert_eq!(all.expect("list"), opened[..1]);
}

async fn a_decision_at_the_current_version_records_the_disposition(db: &TestDb) {
    let store = seeded(db).await;
    let dispositions = [
        (Disposition::Confirm, "passed"),
        (Disposition::FalsePositive, "inconclusive"),
        (Disposition::Inconclusive, "inconclusive"),
    ];
    for (n, (disposition, outcome)) in (1..).zip(dispositions) {
        let c = open(&store, new(n, &format!("execution:ex-{n}"))).await;
        let decided = store
            .decide_checkpoint(
                "acme",
                &c.opened.id,
                1,
                disposition,
                "u-bob",
                "seen it",
                NOW + 9,
            )
            .await
            .expect("decide");
        assert_eq!(decided.opened, c.opened);
        assert_eq!((decided.version, decided.state()), (2, "decided"));
        assert_eq!(decided.disposition, Some(disposition));
        assert_eq!(decided.disposition.map(Disposition::outcome), Some(outcome));
        assert_eq!(decided.decided_by.as_deref(), Some("u-bob"));
        assert_eq!(decided.reason.as_deref(), Some("seen it"));
        assert_eq!(decided.decided_at, Some(NOW + 9));
    }
    // No reason given is no reason stored.
    let c = open(&store, new(9, "execution:ex-9")).await;
    let decided = decide(&store, &c, Disposition::Confirm).await;
    assert_eq!(decided.expect("decide").reason, None);
}

async fn a_stale_version_is_a_conflict_and_changes_nothing(db: &TestDb) {
    let store = seeded(db).await;
    let c = open(&store, new(1, "execution:ex-3")).await;
    for stale in [0, 2, 7] {
        let refused = store
            .decide_checkpoint(
                "acme",
                &c.opened.id,
                stale,
                Disposition::Confirm,
                "u-bob",
                "",
                NOW,
            )
            .await;
        match refused {
            Err(CheckpointError::VersionConflict {
                id,
                expected,
                current,
            }) => assert_eq!(
                (id.as_str(), expected, current),
                (c.opened.id.as_str(), stale, 1)
            ),
            other => panic!("version {stale}: {other:?}"),
        }
    }
    let stored = store.list_checkpoints("acme", false, 10).await;
    assert_eq!(
        stored.expect("list"),
        std::slice::from_ref(&c),
        "still waiting at 1"
    );
    decide(&store, &c, Disposition::Confirm)
        .await
        .expect("decide at 1");
}

async fn a_decided_checkpoint_cannot_be_decided_again(db: &TestDb) {
    let store = seeded(db).await;
    let c = open(&store, new(1, "execution:ex-3")).await;
    let won = decide(&store, &c, Disposition::Confirm)
        .await
        .expect("decide");
    // Neither at the version the winner saw nor at the current one.
    for version in [1, 2] {
        let again = store
            .decide_checkpoint(
                "acme",
                &c.opened.id,
                version,
                Disposition::Inconclusive,
                "u-carol",
                "no",
                NOW,
            )
            .await;
        assert!(
            matches!(&again, Err(CheckpointError::Decided(id)) if *id == c.opened.id),
            "version {version}: {again:?}"
        );
    }
    let stored = store.list_checkpoints("acme", false, 10).await;
    assert_eq!(stored.expect("list"), [won], "the losers changed nothing");
}

async fn of_twenty_concurrent_deciders_exactly_one_wins(db: &TestDb) {
    let store = seeded(db).await;
    let c = open(&store, new(1, "execution:ex-3")).await;
    let deciders = (0..20).map(|i| {
        let (store, id) = (store.clone(), c.opened.id.clone());
        tokio::spawn(async move {
            let by = format!("u-{i}");
            let d = Disposition::FalsePositive;
            store
                .decide_checkpoint("acme", &id, 1, d, &by, "", NOW + i)
                .await
        })
    });
    let (mut won, mut lost) = (Vec::new(), 0);
    for task in deciders {
        match task.await.expect("task") {
            Ok(decided) => won.push(decided),
            Err(CheckpointError::Decided(_)) => lost += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!((won.len(), lost), (1, 19));
    assert_eq!(won[0].version, 2);
    let stored = store.list_checkpoints("acme", false, 10).await;
    assert_eq!(stored.expect("list"), won);
}

async fn a_checkpoint_of_another_tenant_is_not_found(db: &TestDb) {
    let store = seeded(db).await;
    let c = open(&store, new(1, "execution:ex-3")).await;
    let id = c.opened.id.as_str();
    let decide_in = |tenant, id| {
        store.decide_checkpoint(tenant, id, 1, Disposition::Confirm, "u-carol", "", NOW)
    };
    let refused = decide_in("globex", id).await;
    assert!(
        matches!(&refused, Err(CheckpointError::NotFound(i)) if i == id),
        "{refused:?}"
    );
    let missing = decide_in("acme", "chk_missing").await;
    assert!(
        matches!(missing, Err(CheckpointError::NotFound(_))),
        "{missing:?}"
    );
    let globex = store.list_checkpoints("globex", false, 10).await;
    assert!(globex.expect("list").is_empty());
    // Acme's checkpoint is untouched and still decidable.
    decide(&store, &c, Disposition::Confirm)
        .await
        .expect("decide");
}

async fn list_filters_waiting_by_tenant_newest_first_up_to_the_limit(db: &TestDb) {
    let store = seeded(db).await;
    let mut opened = Vec::new();
    for n in 1..=4 {
        opened.push(open(&store, new(n, &format!("execution:ex-{n}"))).await);
    }
    let g5 = NewCheckpoint {
        tenant: "globex".into(),
        ..new(5, "execution:ex-5")
    };
    let g5 = open(&store, g5).await;
    decide(&store, &opened[1], Disposition::Confirm)
        .await
        .expect("decide");
    decide(&store, &opened[2], Disposition::Inconclusive)
        .await
        .expect("decide");
    let [c1, c2, c3, c4] = [0, 1, 2, 3].map(|i| opened[i].opened.id.as_str());

    let list = |waiting_only, limit| store.list_checkpoints("acme", waiting_only, limit);
    assert_eq!(ids(&list(false, 10).await.expect("list")), [c4, c3, c2, c1]);
    assert_eq!(ids(&list(true, 10).await.expect("list")), [c4, c1]);
    assert_eq!(ids(&list(false, 2).await.expect("list")), [c4, c3]);
    assert_eq!(ids(&list(true, 1).await.expect("list")), [c4]);
    let globex = store.list_checkpoints("globex", true, 10).await;
    assert_eq!(globex.expect("list"), [g5]);
}

async fn a_tenant_that_does_not_exist_cannot_open_checkpoints(db: &TestDb) {
    let store = seeded(db).await;
    let orphan = NewCheckpoint {
        tenant: "initech".into(),
        ..new(1, "execution:ex-3")
    };
    let refused = store
        .open_checkpoint(orphan)
        .await
        .expect_err("no such tenant");
    assert!(refused.to_string().contains("\"initech\""), "{refused}");
    let listed = store.list_checkpoints("initech", false, 10).await;
    assert!(listed.expect("list").is_empty());
}

async fn the_schema_refuses_a_half_recorded_decision(db: &TestDb) {
    let store = seeded(db).await;
    let c = open(&store, new(1, "execution:ex-3")).await;
    let id = &c.opened.id;
    let sets = [
        "disposition = 'confirm'",
        "disposition = 'confirm', decided_by = 'u-bob'",
        "disposition = 'confirm', decided_at = 1",
        "decided_by = 'u-bob', decided_at = 1",
        "disposition = 'maybe', decided_by = 'u-bob', decided_at = 1",
        "version = 0",
    ];
    for set in sets {
        let changed = db.raw(format!("UPDATE checkpoints SET {set} WHERE id = '{id}'"));
        assert!(changed.await.is_err(), "{set} was accepted");
    }
    let stored = store.list_checkpoints("acme", false, 10).await;
    assert_eq!(stored.expect("list"), [c]);
}
