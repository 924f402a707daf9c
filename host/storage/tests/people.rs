//! An admin's change to their tenant's people ([`PeopleEffect`]) is
//! written in the transaction of the audit row that records it: a change
//! that lost (what it changes went missing) leaves neither itself nor its
//! row, and a written one applies to the next read on this host. One set
//! of test bodies on SQLite and PostgreSQL (`common/mod.rs`).

#[macro_use]
mod common;

use common::TestDb;
use toolhost_audit::{AuditError, AuditSink, Effect, PeopleEffect, ToolsetEffect};
use toolhost_auth::{AuthStore, Client, ClientKind, ClientOrigin, User};
use toolhost_policy::PolicyStore;
use toolhost_storage::{AuditQuery, Store};
use toolhost_types::Permission;

on_both_engines!(
    a_user_disabled_with_the_row_is_disabled_and_enabled_again_with_another,
    a_role_change_with_the_row_applies_to_the_next_read_of_grants,
    a_change_that_lost_writes_neither_itself_nor_its_row,
    a_user_added_with_the_row_exists_and_a_taken_username_loses,
    a_password_set_with_the_row_replaces_the_hash_only_in_the_tenant,
    a_toolset_change_is_written_with_its_row_and_loses_at_the_bound_or_when_gone,
);

const NOW_S: i64 = 1_764_000_000;

async fn seeded(db: &TestDb) -> Store {
    let store = db.store().await;
    store.ensure_tenant("acme", NOW_S).await.expect("tenant");
    let ann = User {
        id: "u-ann".into(),
        tenant: "acme".into(),
        username: "ann".into(),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        disabled: false,
        created_at: NOW_S,
    };
    store.insert_user(&ann).await.expect("user");
    store.create_role("acme", "ops", false).await.expect("role");
    store
}

/// Records `change` with the row of call `call_id`.
async fn changed(store: &Store, call_id: &str, change: PeopleEffect) -> Result<(), AuditError> {
    let event = common::event(call_id, NOW_S as u64 * 1000);
    store.record_with(&event, &[Effect::People(change)]).await
}

/// Whether the row of call `call_id` was written.
async fn row_of(store: &Store, call_id: &str) -> bool {
    let query = AuditQuery {
        call_id: Some(call_id.into()),
        ..AuditQuery::default()
    };
    !store.search(&query).await.expect("search").is_empty()
}

fn disabled(disabled: bool) -> PeopleEffect {
    PeopleEffect::SetDisabled {
        tenant: "acme".into(),
        user: "u-ann".into(),
        disabled,
        at_s: NOW_S,
    }
}

async fn a_user_disabled_with_the_row_is_disabled_and_enabled_again_with_another(db: &TestDb) {
    let store = seeded(db).await;
    changed(&store, "call-1", disabled(true))
        .await
        .expect("disabled");
    let ann = store.user_by_id("u-ann").await.expect("read").expect("ann");
    assert!(ann.disabled);
    assert!(row_of(&store, "call-1").await);
    changed(&store, "call-2", disabled(false))
        .await
        .expect("enabled");
    let ann = store.user_by_id("u-ann").await.expect("read").expect("ann");
    assert!(!ann.disabled);
    assert!(row_of(&store, "call-2").await);
}

async fn a_role_change_with_the_row_applies_to_the_next_read_of_grants(db: &TestDb) {
    let store = seeded(db).await;
    let read: Permission = "hello:read".parse().expect("a permission");
    // Read once, so the live view remembers "no grants".
    let before = store.grants("acme", "u-ann").await.expect("grants");
    assert!(!before.allows(&read));
    let permit = PeopleEffect::Permission {
        tenant: "acme".into(),
        role: "ops".into(),
        permission: read.to_string(),
        permit: true,
    };
    changed(&store, "call-1", permit).await.expect("permitted");
    let grant = PeopleEffect::Membership {
        tenant: "acme".into(),
        role: "ops".into(),
        user: "u-ann".into(),
        member: true,
    };
    changed(&store, "call-2", grant).await.expect("granted");
    let after = store.grants("acme", "u-ann").await.expect("grants");
    assert!(after.allows(&read), "the next read sees the change");
    let roles = store.roles("acme").await.expect("roles");
    assert_eq!(roles[0].members, vec!["u-ann".to_owned()]);
}

async fn a_change_that_lost_writes_neither_itself_nor_its_row(db: &TestDb) {
    let store = seeded(db).await;
    // A role gone (never there): refused by its foreign key, as lost.
    let grant = PeopleEffect::Membership {
        tenant: "acme".into(),
        role: "gone".into(),
        user: "u-ann".into(),
        member: true,
    };
    let lost = changed(&store, "call-1", grant).await;
    assert!(
        matches!(lost, Err(AuditError::Lost { effect: 0 })),
        "{lost:?}"
    );
    assert!(!row_of(&store, "call-1").await, "no row of a lost change");
    // A user of another tenant: nothing to change.
    let foreign = PeopleEffect::SetDisabled {
        tenant: "globex".into(),
        user: "u-ann".into(),
        disabled: true,
        at_s: NOW_S,
    };
    let lost = changed(&store, "call-2", foreign).await;
    assert!(
        matches!(lost, Err(AuditError::Lost { effect: 0 })),
        "{lost:?}"
    );
    assert!(!row_of(&store, "call-2").await);
    let ann = store.user_by_id("u-ann").await.expect("read").expect("ann");
    assert!(!ann.disabled, "nothing changed");
    // A client revoked twice: the second finds no active client.
    let svc = Client {
        client_id: "svc-1".into(),
        secret_hash: Some("ab".repeat(32)),
        kind: ClientKind::Service,
        origin: ClientOrigin::Admin,
        name: "svc".into(),
        redirect_uris: vec![],
        scope: "mcp:tools".into(),
        tenant: Some("acme".into()),
        owner: Some("admin".into()),
        created_at: NOW_S,
        last_used_at: None,
        revoked_at: None,
        refresh_at: None,
    };
    store.insert_client(&svc).await.expect("client");
    let revoke = || PeopleEffect::RevokeClient {
        client_id: "svc-1".into(),
        at_s: NOW_S,
    };
    changed(&store, "call-3", revoke()).await.expect("revoked");
    assert!(row_of(&store, "call-3").await);
    let again = changed(&store, "call-4", revoke()).await;
    assert!(
        matches!(again, Err(AuditError::Lost { effect: 0 })),
        "{again:?}"
    );
    assert!(!row_of(&store, "call-4").await);
    let verified = store.verify_chain().await.expect("walk");
    assert!(verified.is_ok(), "{verified:?}");
}

fn added(username: &str, id: &str) -> PeopleEffect {
    PeopleEffect::AddUser {
        tenant: "acme".into(),
        user: id.into(),
        username: username.into(),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$bmV3".into(),
        at_s: NOW_S,
    }
}

async fn a_user_added_with_the_row_exists_and_a_taken_username_loses(db: &TestDb) {
    let store = seeded(db).await;
    changed(&store, "call-add", added("vic", "u-vic"))
        .await
        .expect("added");
    let vic = store.user_by_name("vic").await.expect("read").expect("vic");
    assert_eq!((vic.id.as_str(), vic.tenant.as_str()), ("u-vic", "acme"));
    assert!(!vic.disabled);
    assert!(row_of(&store, "call-add").await);

    // ann's name, taken: neither the user nor the row.
    let taken = changed(&store, "call-taken", added("ann", "u-other")).await;
    assert!(matches!(taken, Err(AuditError::Lost { .. })), "{taken:?}");
    assert!(store.user_by_id("u-other").await.expect("read").is_none());
    assert!(!row_of(&store, "call-taken").await);
}

async fn a_password_set_with_the_row_replaces_the_hash_only_in_the_tenant(db: &TestDb) {
    let store = seeded(db).await;
    let set = |tenant: &str| PeopleEffect::SetPassword {
        tenant: tenant.into(),
        user: "u-ann".into(),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$bmV3".into(),
    };
    let foreign = changed(&store, "call-foreign", set("globex")).await;
    assert!(
        matches!(foreign, Err(AuditError::Lost { .. })),
        "{foreign:?}"
    );
    assert!(!row_of(&store, "call-foreign").await);
    let ann = store.user_by_id("u-ann").await.expect("read").expect("ann");
    assert!(ann.password_hash.ends_with("aGFzaA"), "unchanged");

    changed(&store, "call-set", set("acme")).await.expect("set");
    let ann = store.user_by_id("u-ann").await.expect("read").expect("ann");
    assert!(ann.password_hash.ends_with("bmV3"), "the new hash");
    assert!(row_of(&store, "call-set").await);
}

/// Records the toolset `change` with the row of call `call_id`.
async fn toolset_changed(
    store: &Store,
    call_id: &str,
    change: ToolsetEffect,
) -> Result<(), AuditError> {
    let event = common::event(call_id, NOW_S as u64 * 1000);
    store.record_with(&event, &[Effect::Toolset(change)]).await
}

fn define(name: &str, bound: i64) -> ToolsetEffect {
    ToolsetEffect::Define {
        tenant: "acme".into(),
        name: name.into(),
        definition: format!(r#"{{"name":"{name}","tools":["greet"]}}"#),
        at_ms: NOW_S * 1000,
        bound,
    }
}

async fn a_toolset_change_is_written_with_its_row_and_loses_at_the_bound_or_when_gone(db: &TestDb) {
    let store = seeded(db).await;
    toolset_changed(&store, "c1", define("crm", 1))
        .await
        .expect("defined");
    let read = store
        .toolsets("acme", &["crm".to_owned()])
        .await
        .expect("read");
    assert_eq!(read.len(), 1);
    assert!(read[0].tools.contains("greet"));
    // At the bound a new one loses, with its row; a replacement writes.
    let over = toolset_changed(&store, "c2", define("finance", 1)).await;
    assert!(
        matches!(over, Err(AuditError::Lost { effect: 0 })),
        "{over:?}"
    );
    assert!(!row_of(&store, "c2").await);
    toolset_changed(&store, "c3", define("crm", 1))
        .await
        .expect("replaced");
    let delete = |call: &'static str| {
        let store = &store;
        async move {
            let gone = ToolsetEffect::Delete {
                tenant: "acme".into(),
                name: "crm".into(),
            };
            toolset_changed(store, call, gone).await
        }
    };
    delete("c4").await.expect("deleted");
    assert!(row_of(&store, "c4").await);
    let again = delete("c5").await;
    assert!(
        matches!(again, Err(AuditError::Lost { effect: 0 })),
        "{again:?}"
    );
    assert!(store.all_toolsets("acme").await.expect("listed").is_empty());
}
