//! The policy store: one set of test bodies, run against SQLite (a temp
//! file) and PostgreSQL (a schema per test); see `common/mod.rs`.

#[macro_use]
mod common;

use common::TestDb;
use toolhost_auth::{AuthStore, User};
use toolhost_policy::{Grants, MAX_TOOLSETS, PolicyStore, PolicyStoreError, Role, Toolset};
use toolhost_types::Permission;

on_both_engines!(
    grants_are_the_union_of_the_assigned_roles_and_admin_if_any_role_is,
    a_subject_without_roles_has_no_grants,
    revoking_a_role_or_a_permission_changes_the_next_grants,
    a_role_is_never_assigned_across_tenants,
    a_role_is_unique_in_its_tenant_and_needs_the_tenant,
    deleting_a_role_takes_its_permissions_and_assignments,
    roles_are_listed_by_name_with_sorted_permissions_and_members,
    a_stored_permission_this_build_cannot_read_is_a_database_error,
    tenants_are_listed_by_id,
    toolsets_are_defined_replaced_bounded_and_deleted_within_their_tenant,
);

const NOW: i64 = 1_764_000_000;

/// A store with tenants `acme` (users `u-alice`, `u-bob`) and `globex`
/// (user `u-carol`).
async fn seeded(db: &TestDb) -> toolhost_storage::Store {
    let store = common::store_with_tenants(db, &["acme", "globex"], NOW).await;
    for (id, name, tenant) in [
        ("u-alice", "alice", "acme"),
        ("u-bob", "bob", "acme"),
        ("u-carol", "carol", "globex"),
    ] {
        store
            .insert_user(&user(id, name, tenant))
            .await
            .expect("user");
    }
    store
}

fn user(id: &str, username: &str, tenant: &str) -> User {
    User {
        id: id.into(),
        tenant: tenant.into(),
        username: username.into(),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        disabled: false,
        created_at: NOW,
    }
}

fn perm(s: &str) -> Permission {
    s.parse().expect("a permission")
}

/// Creates `name` in `tenant`, not an admin role, with `permissions`.
async fn role(store: &impl PolicyStore, tenant: &str, name: &str, permissions: &[&str]) {
    store
        .create_role(tenant, name, false)
        .await
        .expect("create role");
    for p in permissions {
        assert!(store.permit(tenant, name, &perm(p)).await.expect("permit"));
    }
}

/// Creates `name` in `tenant`, an admin role without permissions.
async fn admin_role(store: &impl PolicyStore, tenant: &str, name: &str) {
    store
        .create_role(tenant, name, true)
        .await
        .expect("create role");
}

/// Assigns `role` to `subject` in `tenant`, asserting they did not hold it.
async fn assign(store: &impl PolicyStore, tenant: &str, role: &str, subject: &str) {
    let newly = store.assign(tenant, role, subject).await.expect("assign");
    assert!(newly, "{subject} held {role} in {tenant} already");
}

fn is_not_found(result: &Result<bool, PolicyStoreError>, mentions: &str) -> bool {
    matches!(result, Err(PolicyStoreError::NotFound { what }) if what.contains(mentions))
}

async fn grants_are_the_union_of_the_assigned_roles_and_admin_if_any_role_is(db: &TestDb) {
    let store = seeded(db).await;
    role(&store, "acme", "analyst", &["report:view", "dataset:*"]).await;
    role(&store, "acme", "editor", &["report:view", "report:edit"]).await;
    admin_role(&store, "acme", "root").await;
    assign(&store, "acme", "analyst", "u-alice").await;
    assign(&store, "acme", "editor", "u-alice").await;
    assert!(
        !store
            .assign("acme", "editor", "u-alice")
            .await
            .expect("held already")
    );

    let alice = store.grants("acme", "u-alice").await.expect("grants");
    let union = ["dataset:*", "report:edit", "report:view"].map(perm);
    assert_eq!(alice, Grants::new(false, union.clone()));
    assert!(
        alice.allows(&perm("dataset:refresh")),
        "dataset:* covers it"
    );
    assert!(!alice.allows(&perm("admin:anything")));

    // An admin role without permissions still makes its holder an admin.
    assign(&store, "acme", "root", "u-alice").await;
    let admin = store.grants("acme", "u-alice").await.expect("grants");
    assert_eq!(admin, Grants::new(true, union));
    assert!(admin.is_admin() && admin.allows(&perm("admin:anything")));
}

async fn a_subject_without_roles_has_no_grants(db: &TestDb) {
    let store = seeded(db).await;
    role(&store, "acme", "analyst", &["report:view"]).await;
    assign(&store, "acme", "analyst", "u-alice").await;
    let none = Grants::none();
    assert_eq!(store.grants("acme", "u-bob").await.expect("bob"), none);
    assert_eq!(store.grants("acme", "nobody").await.expect("unknown"), none);
    // Alice's role is hers in acme only.
    assert_eq!(
        store.grants("globex", "u-alice").await.expect("other"),
        none
    );
}

async fn revoking_a_role_or_a_permission_changes_the_next_grants(db: &TestDb) {
    let store = seeded(db).await;
    role(&store, "acme", "analyst", &["report:view", "report:edit"]).await;
    role(&store, "acme", "viewer", &["report:view"]).await;
    for r in ["analyst", "viewer"] {
        assign(&store, "acme", r, "u-alice").await;
    }

    assert!(
        store
            .forbid("acme", "analyst", &perm("report:edit"))
            .await
            .expect("forbid")
    );
    assert!(
        !store
            .forbid("acme", "analyst", &perm("report:edit"))
            .await
            .expect("twice")
    );
    let after_forbid = store.grants("acme", "u-alice").await.expect("grants");
    assert_eq!(after_forbid, Grants::new(false, [perm("report:view")]));

    assert!(
        store
            .unassign("acme", "analyst", "u-alice")
            .await
            .expect("unassign")
    );
    assert!(
        !store
            .unassign("acme", "analyst", "u-alice")
            .await
            .expect("twice")
    );
    let still_viewer = store.grants("acme", "u-alice").await.expect("grants");
    assert_eq!(still_viewer, Grants::new(false, [perm("report:view")]));

    assert!(
        store
            .unassign("acme", "viewer", "u-alice")
            .await
            .expect("unassign")
    );
    assert_eq!(
        store.grants("acme", "u-alice").await.expect("grants"),
        Grants::none()
    );
}

async fn a_role_is_never_assigned_across_tenants(db: &TestDb) {
    let store = seeded(db).await;
    admin_role(&store, "acme", "root").await;
    role(&store, "globex", "viewer", &["report:view"]).await;

    // Carol is a user of globex: acme's role cannot be given to her.
    let cross = store.assign("acme", "root", "u-carol").await;
    assert!(is_not_found(&cross, "u-carol"), "{cross:?}");
    // Nor can a role be named in a tenant it does not belong to.
    let elsewhere = store.assign("acme", "viewer", "u-alice").await;
    assert!(is_not_found(&elsewhere, "viewer"), "{elsewhere:?}");
    let no_user = store.assign("acme", "root", "u-nobody").await;
    assert!(is_not_found(&no_user, "u-nobody"), "{no_user:?}");

    // Nothing was written.
    for tenant in ["acme", "globex"] {
        let roles = store.roles(tenant).await.expect("roles");
        assert!(roles.iter().all(|r| r.members.is_empty()), "{roles:?}");
    }
    assert_eq!(
        store.grants("acme", "u-carol").await.expect("grants"),
        Grants::none()
    );
    assert_eq!(
        store.grants("acme", "u-alice").await.expect("grants"),
        Grants::none()
    );
}

async fn a_role_is_unique_in_its_tenant_and_needs_the_tenant(db: &TestDb) {
    let store = seeded(db).await;
    store
        .create_role("acme", "viewer", false)
        .await
        .expect("create");
    let again = store.create_role("acme", "viewer", true).await;
    assert!(
        matches!(&again, Err(PolicyStoreError::Conflict { what }) if what.contains("viewer")),
        "{again:?}"
    );
    // The same name in another tenant is another role.
    store
        .create_role("globex", "viewer", false)
        .await
        .expect("other tenant");
    let orphan = store.create_role("initech", "viewer", false).await;
    assert!(
        matches!(&orphan, Err(PolicyStoreError::NotFound { what }) if what.contains("initech")),
        "{orphan:?}"
    );
    let missing = store.permit("acme", "ghost", &perm("report:view")).await;
    assert!(is_not_found(&missing, "ghost"), "{missing:?}");

    let acme = store.roles("acme").await.expect("roles");
    assert_eq!(acme.len(), 1);
    assert!(!acme[0].admin, "the refused duplicate changed nothing");
    assert!(store.roles("initech").await.expect("roles").is_empty());
}

async fn deleting_a_role_takes_its_permissions_and_assignments(db: &TestDb) {
    let store = seeded(db).await;
    role(&store, "acme", "analyst", &["report:view"]).await;
    assign(&store, "acme", "analyst", "u-alice").await;

    assert!(store.delete_role("acme", "analyst").await.expect("delete"));
    assert!(!store.delete_role("acme", "analyst").await.expect("twice"));
    assert_eq!(
        store.grants("acme", "u-alice").await.expect("grants"),
        Grants::none()
    );
    assert!(store.roles("acme").await.expect("roles").is_empty());

    // A role re-created under the same name starts empty.
    store
        .create_role("acme", "analyst", false)
        .await
        .expect("again");
    let fresh = store.roles("acme").await.expect("roles");
    assert!(fresh[0].permissions.is_empty() && fresh[0].members.is_empty());
}

async fn roles_are_listed_by_name_with_sorted_permissions_and_members(db: &TestDb) {
    let store = seeded(db).await;
    role(&store, "acme", "viewer", &["report:view", "dataset:view"]).await;
    admin_role(&store, "acme", "admin").await;
    role(&store, "globex", "viewer", &["other:view"]).await;
    for (r, who) in [
        ("viewer", "u-bob"),
        ("viewer", "u-alice"),
        ("admin", "u-bob"),
    ] {
        assign(&store, "acme", r, who).await;
    }

    let roles = store.roles("acme").await.expect("roles");
    let want = [
        Role {
            tenant: "acme".into(),
            name: "admin".into(),
            admin: true,
            permissions: vec![],
            members: vec!["u-bob".into()],
        },
        Role {
            tenant: "acme".into(),
            name: "viewer".into(),
            admin: false,
            permissions: vec![perm("dataset:view"), perm("report:view")],
            members: vec!["u-alice".into(), "u-bob".into()],
        },
    ];
    assert_eq!(roles, want);
}

async fn a_stored_permission_this_build_cannot_read_is_a_database_error(db: &TestDb) {
    let store = seeded(db).await;
    role(&store, "acme", "analyst", &[]).await;
    assign(&store, "acme", "analyst", "u-alice").await;
    db.raw(
        "INSERT INTO role_permissions (tenant, role, permission) \
            VALUES ('acme', 'analyst', 'Not A Permission')"
            .into(),
    )
    .await
    .expect("a row written by hand");

    let grants = store.grants("acme", "u-alice").await;
    assert!(
        matches!(&grants, Err(PolicyStoreError::Database(m)) if m.contains("Not A Permission")),
        "{grants:?}"
    );
    let roles = store.roles("acme").await;
    assert!(
        matches!(&roles, Err(PolicyStoreError::Database(m)) if m.contains("Not A Permission")),
        "{roles:?}"
    );
}

async fn tenants_are_listed_by_id(db: &TestDb) {
    let store = seeded(db).await;
    store.ensure_tenant("aardvark", NOW).await.expect("tenant");
    assert_eq!(
        store.tenants().await.expect("tenants"),
        ["aardvark", "acme", "globex"]
    );
}

fn toolset(name: &str, tools: &[&str]) -> Toolset {
    Toolset {
        name: name.into(),
        tools: tools.iter().map(|t| t.to_string()).collect(),
        ..Toolset::default()
    }
}

async fn toolsets_are_defined_replaced_bounded_and_deleted_within_their_tenant(db: &TestDb) {
    let store = seeded(db).await;
    let crm = toolset("crm", &["find_account"]);
    assert!(store.define_toolset("acme", &crm).await.expect("defined"));
    let wider = toolset("crm", &["find_account", "open_deal"]);
    assert!(
        !store
            .define_toolset("acme", &wider)
            .await
            .expect("replaced")
    );
    let names = ["crm".to_owned(), "gone".to_owned()];
    assert_eq!(store.toolsets("acme", &names).await.expect("read"), [wider]);
    // Another tenant's toolsets are its own: none of acme's is found there.
    assert!(
        store
            .toolsets("globex", &names)
            .await
            .expect("read")
            .is_empty()
    );
    assert!(
        store
            .all_toolsets("globex")
            .await
            .expect("listed")
            .is_empty()
    );
    let missing = store.define_toolset("nowhere", &crm).await;
    assert!(
        matches!(missing, Err(PolicyStoreError::NotFound { .. })),
        "{missing:?}"
    );
    // A tenant defines at most MAX_TOOLSETS; a replacement at the bound
    // still writes.
    for i in 1..MAX_TOOLSETS {
        let t = toolset(&format!("t{i:03}"), &["x"]);
        store
            .define_toolset("acme", &t)
            .await
            .expect("under the bound");
    }
    let over = store
        .define_toolset("acme", &toolset("one-more", &["x"]))
        .await;
    assert!(
        matches!(over, Err(PolicyStoreError::Conflict { .. })),
        "{over:?}"
    );
    assert!(
        !store
            .define_toolset("acme", &crm)
            .await
            .expect("replaced at the bound")
    );
    let listed = store.all_toolsets("acme").await.expect("listed");
    assert_eq!(listed.len(), MAX_TOOLSETS);
    assert_eq!(listed[0], crm, "by name");
    assert!(store.delete_toolset("acme", "crm").await.expect("deleted"));
    assert!(!store.delete_toolset("acme", "crm").await.expect("gone"));
    assert!(
        !store
            .delete_toolset("globex", "t001")
            .await
            .expect("not globex's")
    );
}
