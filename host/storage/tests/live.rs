//! The live views (`src/live.rs`): the grant and role reads of every
//! request come from memory, and a change to anything they depend on
//! applies to the next read when this store made it, and within
//! `LIVE_VIEWS_POLL` (plus a read) when another store (another replica, or
//! a `toolhost` CLI process: a second connection to the same database) or
//! plain SQL made it. Run against SQLite and PostgreSQL; see
//! `common/mod.rs`.

#[macro_use]
mod common;

use std::time::{Duration, Instant};

use common::TestDb;
use toolhost_auth::{AuthStore, Client, ClientKind, ClientOrigin, Family, LiveGrant, User};
use toolhost_policy::{Grants, PolicyStore};
use toolhost_storage::{LIVE_VIEWS_POLL, Store};
use toolhost_types::{Permission, PrincipalKind};

on_both_engines!(
    the_views_answer_from_memory_until_the_generation_moves,
    a_change_made_through_this_store_applies_to_the_next_read,
    a_change_made_by_another_store_applies_within_the_poll,
);

const NOW: i64 = 1_764_000_000;
/// How long a test waits for a change made elsewhere before failing: far
/// above the bound (`LIVE_VIEWS_POLL` plus a read), so a loaded CI machine
/// does not fail it, and far below forever, which is what a view that
/// never learns would take. Each test prints what it measured.
const PATIENCE: Duration = Duration::from_secs(5);

fn perm(s: &str) -> Permission {
    s.parse().expect("a permission")
}

/// Tenant `acme`; user `alice` (`u-alice`) holding role `analyst`
/// (`hello:read`); client `c-app`; alice's grant `fam-a` through it.
async fn seeded(db: &TestDb) -> Store {
    let store = db.store().await;
    store.ensure_tenant("acme", NOW).await.expect("tenant");
    store
        .insert_user(&User {
            id: "u-alice".into(),
            tenant: "acme".into(),
            username: "alice".into(),
            password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
            disabled: false,
            created_at: NOW,
        })
        .await
        .expect("alice");
    store
        .insert_client(&Client {
            client_id: "c-app".into(),
            secret_hash: None,
            kind: ClientKind::Public,
            origin: ClientOrigin::Dynamic,
            name: "App".into(),
            redirect_uris: vec!["http://127.0.0.1:33418/callback".into()],
            scope: "mcp hello:read".into(),
            tenant: None,
            owner: None,
            created_at: NOW,
            last_used_at: None,
            revoked_at: None,
            refresh_at: None,
        })
        .await
        .expect("client");
    store
        .insert_family(&Family {
            id: "fam-a".into(),
            client_id: "c-app".into(),
            subject: "u-alice".into(),
            subject_kind: PrincipalKind::User,
            scope: "mcp hello:read".into(),
            created_at: NOW,
            revoked_at: None,
        })
        .await
        .expect("family");
    store
        .create_role("acme", "analyst", false)
        .await
        .expect("role");
    store
        .permit("acme", "analyst", &perm("hello:read"))
        .await
        .expect("permit");
    store
        .assign("acme", "analyst", "u-alice")
        .await
        .expect("assign");
    store
}

async fn grant(store: &Store) -> LiveGrant {
    store
        .live_grant("fam-a")
        .await
        .expect("read")
        .expect("a grant")
}

async fn roles(store: &Store) -> Grants {
    store.grants("acme", "u-alice").await.expect("read")
}

/// Reads with `read` until `done` holds of the answer: how long it took,
/// or a failure naming `what` after [`PATIENCE`].
async fn within<T, F, Fut>(what: &str, mut read: F, done: impl Fn(&T) -> bool) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let started = Instant::now();
    loop {
        if done(&read().await) {
            let took = started.elapsed();
            println!("{what}: applied after {took:?} (poll {LIVE_VIEWS_POLL:?})");
            return took;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "{what}: not applied after {PATIENCE:?}"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// The trigger `live_users…` SQL, per engine: dropped to make a change
/// the views cannot see, which proves they answer from memory.
fn drop_user_triggers(db: &TestDb) -> &'static str {
    match db {
        TestDb::Sqlite { .. } => "DROP TRIGGER live_users_update; DROP TRIGGER live_users_delete;",
        TestDb::Postgres { .. } => "DROP TRIGGER live_users ON users;",
    }
}

async fn the_views_answer_from_memory_until_the_generation_moves(db: &TestDb) {
    let store = seeded(db).await;
    assert_eq!(grant(&store).await.name, "alice");
    // A rename the generation does not see: the views keep answering
    // what they remember…
    db.raw(drop_user_triggers(db).into()).await.expect("drop");
    db.raw("UPDATE users SET username = 'alicia' WHERE id = 'u-alice'".into())
        .await
        .expect("rename");
    tokio::time::sleep(LIVE_VIEWS_POLL * 4).await;
    assert_eq!(grant(&store).await.name, "alice", "served from memory");
    // …until it moves, by whatever wrote it.
    db.raw("UPDATE live_generation SET value = value + 1 WHERE id = 1".into())
        .await
        .expect("bump");
    within(
        "a moved generation",
        || grant(&store),
        |g| g.name == "alicia",
    )
    .await;

    // A grant that does not exist is never remembered: written next, it is
    // found by the next read.
    assert_eq!(store.live_grant("fam-b").await.expect("read"), None);
    let mut later = grant(&store).await.family;
    later.id = "fam-b".into();
    store.insert_family(&later).await.expect("family");
    assert!(store.live_grant("fam-b").await.expect("read").is_some());
}

async fn a_change_made_through_this_store_applies_to_the_next_read(db: &TestDb) {
    let store = seeded(db).await;
    assert!(!grant(&store).await.disabled);
    assert!(roles(&store).await.allows(&perm("hello:read")));

    // Each change, then at once the next read: no wait anywhere.
    assert!(
        store
            .forbid("acme", "analyst", &perm("hello:read"))
            .await
            .expect("forbid")
    );
    assert!(
        !roles(&store).await.allows(&perm("hello:read")),
        "forbidden"
    );
    store
        .permit("acme", "analyst", &perm("hello:read"))
        .await
        .expect("permit");
    assert!(roles(&store).await.allows(&perm("hello:read")), "permitted");
    store
        .unassign("acme", "analyst", "u-alice")
        .await
        .expect("unassign");
    assert_eq!(roles(&store).await, Grants::none(), "role taken away");
    store
        .assign("acme", "analyst", "u-alice")
        .await
        .expect("assign");
    assert!(
        roles(&store).await.allows(&perm("hello:read")),
        "role given back"
    );

    store
        .set_client_scope("c-app", "mcp")
        .await
        .expect("narrow");
    assert_eq!(grant(&store).await.client_scope, "mcp", "client narrowed");
    store.set_disabled("alice", true).await.expect("disable");
    assert!(grant(&store).await.disabled, "user disabled");
    store.revoke_client("c-app", NOW + 1).await.expect("revoke");
    assert_eq!(
        grant(&store).await.client_revoked_at,
        Some(NOW + 1),
        "client revoked"
    );
    store.revoke_family("fam-a", NOW + 2).await.expect("revoke");
    assert_eq!(
        grant(&store).await.family.revoked_at,
        Some(NOW + 2),
        "grant revoked"
    );
}

async fn a_change_made_by_another_store_applies_within_the_poll(db: &TestDb) {
    let here = seeded(db).await;
    let elsewhere = db.store().await;
    // Both views warm: what `here` answers next comes from memory unless
    // it learns of the change.
    assert!(roles(&here).await.allows(&perm("hello:read")));
    assert!(!grant(&here).await.disabled);

    let mut took = Vec::new();
    elsewhere
        .forbid("acme", "analyst", &perm("hello:read"))
        .await
        .expect("forbid");
    took.push(
        within(
            "a role forbidden elsewhere",
            || roles(&here),
            |g| !g.allows(&perm("hello:read")),
        )
        .await,
    );
    elsewhere
        .set_disabled("alice", true)
        .await
        .expect("disable");
    took.push(within("a user disabled elsewhere", || grant(&here), |g| g.disabled).await);
    elsewhere
        .revoke_client("c-app", NOW + 1)
        .await
        .expect("revoke");
    took.push(
        within(
            "a client revoked elsewhere",
            || grant(&here),
            |g| g.client_revoked_at.is_some(),
        )
        .await,
    );
    // By plain SQL, as an operator's script or an older CLI would.
    db.raw("UPDATE token_families SET revoked_at = 1 WHERE id = 'fam-a'".into())
        .await
        .expect("revoke");
    took.push(
        within(
            "a grant revoked by SQL",
            || grant(&here),
            |g| g.family.revoked_at.is_some(),
        )
        .await,
    );
    println!("applied after {took:?}");
}
