//! The auth store: one set of test bodies, run against SQLite (a temp file)
//! and PostgreSQL (a schema per test); see `common/mod.rs`.

#[macro_use]
mod common;

use common::TestDb;
use toolhost_auth::{
    AuthCode, AuthEvent, AuthStore, AuthStoreError, Client, ClientKind, ClientOrigin,
    CodeRedemption, ConnectionAttempt, Family, KeyPurpose, PendingAuthorization, PersonConnection,
    RefreshToken, SigningKey, SsoAttempt, SsoLink, User, WebSession,
};
use toolhost_types::PrincipalKind;

on_both_engines!(
    users_are_unique_by_name_and_can_be_changed,
    clients_are_unique_by_id_listed_oldest_first_and_revoked_once,
    a_document_client_is_replaced_but_never_replaces_another_origin,
    a_code_is_redeemed_once_then_replayed_with_its_family,
    concurrent_redemptions_of_one_code_have_one_winner,
    a_refresh_token_rotates_once,
    concurrent_rotations_of_one_refresh_token_have_one_winner,
    live_grant_names_the_user_and_follows_revocation_and_disabling,
    live_grant_names_a_service_by_its_client,
    signing_keys_are_listed_newest_first_and_retire,
    assertion_keys_and_access_keys_are_kept_apart,
    sessions_are_found_by_digest_and_ended_per_user,
    a_pending_authorization_is_taken_once,
    consent_is_saved_and_replaced,
    events_are_listed_newest_first_up_to_the_limit_and_kept_for_the_retention,
    idle_dynamic_clients_expire_with_their_tokens_but_admin_clients_stay,
    expired_codes_tokens_requests_and_sessions_are_purged,
    an_sso_attempt_is_taken_once_and_purged_when_expired,
    an_sso_link_binds_one_subject_to_one_user_per_provider,
    a_persons_connection_is_theirs_replaced_refreshed_once_and_revoked,
    a_connection_attempt_is_taken_once_and_one_per_person_and_backend,
    a_dpop_proof_is_spent_once_until_it_expires,
    a_refresh_token_keeps_its_dpop_binding,
    a_tenant_requires_dpop_only_when_told,
    a_clients_keys_are_set_replaced_and_go_with_it,
);

const NOW: i64 = 1_764_000_000;

/// A store with tenant `acme`, user `alice` (id `u-alice`) and a public
/// dynamic client `c-app`.
async fn seeded(db: &TestDb) -> toolhost_storage::Store {
    let store = db.store().await;
    store.ensure_tenant("acme", NOW).await.expect("tenant");
    store
        .insert_user(&user("u-alice", "alice"))
        .await
        .expect("alice");
    store
        .insert_client(&client("c-app", ClientOrigin::Dynamic, NOW))
        .await
        .expect("client");
    store
}

fn user(id: &str, username: &str) -> User {
    User {
        id: id.into(),
        tenant: "acme".into(),
        username: username.into(),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        disabled: false,
        created_at: NOW,
    }
}

fn client(id: &str, origin: ClientOrigin, created_at: i64) -> Client {
    Client {
        client_id: id.into(),
        secret_hash: None,
        kind: ClientKind::Public,
        origin,
        name: format!("App {id}"),
        redirect_uris: vec![
            "http://127.0.0.1:33418/callback".into(),
            "https://app.example/cb?x=\"1\"".into(),
        ],
        scope: "mcp:tools".into(),
        tenant: None,
        owner: Some("127.0.0.1".into()),
        created_at,
        last_used_at: None,
        revoked_at: None,
        refresh_at: None,
    }
}

fn service(id: &str) -> Client {
    Client {
        secret_hash: Some("ab".repeat(32)),
        kind: ClientKind::Service,
        origin: ClientOrigin::Admin,
        redirect_uris: vec![],
        tenant: Some("acme".into()),
        owner: Some("admin".into()),
        ..client(id, ClientOrigin::Admin, NOW)
    }
}

fn family(id: &str, client_id: &str, subject: &str, kind: PrincipalKind) -> Family {
    Family {
        id: id.into(),
        client_id: client_id.into(),
        subject: subject.into(),
        subject_kind: kind,
        scope: "mcp:tools".into(),
        created_at: NOW,
        revoked_at: None,
    }
}

fn code(hash: &str, family_id: &str) -> AuthCode {
    AuthCode {
        code_hash: hash.into(),
        family_id: family_id.into(),
        client_id: "c-app".into(),
        user_id: "u-alice".into(),
        redirect_uri: "http://127.0.0.1:33418/callback".into(),
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
        scope: "mcp:tools".into(),
        resource: "https://host.example/mcp".into(),
        expires_at: NOW + 60,
        dpop_jkt: None,
    }
}

fn refresh(hash: &str, family_id: &str) -> RefreshToken {
    RefreshToken {
        token_hash: hash.into(),
        family_id: family_id.into(),
        client_id: "c-app".into(),
        scope: "mcp:tools".into(),
        resource: "https://host.example/mcp".into(),
        expires_at: NOW + 86_400,
        used_at: None,
        dpop_jkt: None,
    }
}

/// The ids of every client, in the order the store lists them.
async fn client_ids(store: &toolhost_storage::Store) -> Vec<String> {
    let clients = store.clients().await.expect("list");
    clients.into_iter().map(|c| c.client_id).collect()
}

fn is_conflict(result: Result<(), AuthStoreError>, mentions: &str) -> bool {
    matches!(result, Err(AuthStoreError::Conflict { what }) if what.contains(mentions))
}

async fn users_are_unique_by_name_and_can_be_changed(db: &TestDb) {
    let store = seeded(db).await;
    store
        .ensure_tenant("acme", NOW + 1)
        .await
        .expect("idempotent");
    let alice = user("u-alice", "alice");
    let by_name = store.user_by_name("alice").await.expect("by name");
    assert_eq!(by_name.as_ref(), Some(&alice));
    assert_eq!(store.user_by_id("u-alice").await.expect("by id"), by_name);
    assert_eq!(store.user_by_name("bob").await.expect("missing"), None);
    let listed = store.users_of("acme").await.expect("users of acme");
    assert_eq!(listed, std::slice::from_ref(&alice), "the tenant's users");
    assert!(store.users_of("globex").await.expect("none").is_empty());

    let taken = store.insert_user(&user("u-other", "alice")).await;
    assert!(is_conflict(taken, "alice"), "a taken username conflicts");

    assert!(store.set_password("alice", "new-hash").await.expect("set"));
    assert!(!store.set_password("bob", "x").await.expect("no bob"));
    assert!(store.set_disabled("alice", true).await.expect("disable"));
    assert!(!store.set_disabled("bob", true).await.expect("no bob"));
    let changed = store.user_by_id("u-alice").await.expect("by id");
    assert_eq!(
        changed,
        Some(User {
            password_hash: "new-hash".into(),
            disabled: true,
            ..alice
        })
    );
}

async fn clients_are_unique_by_id_listed_oldest_first_and_revoked_once(db: &TestDb) {
    let store = seeded(db).await;
    let admin = service("svc-1");
    store.insert_client(&admin).await.expect("service");
    let older = client("c-old", ClientOrigin::Admin, NOW - 10);
    store.insert_client(&older).await.expect("older");

    let again = store
        .insert_client(&client("c-app", ClientOrigin::Admin, NOW))
        .await;
    assert!(is_conflict(again, "c-app"), "a taken client id conflicts");

    let app = client("c-app", ClientOrigin::Dynamic, NOW);
    assert_eq!(store.client("c-app").await.expect("get"), Some(app.clone()));
    assert_eq!(
        store.client("svc-1").await.expect("get"),
        Some(admin.clone())
    );
    assert_eq!(store.client("nope").await.expect("get"), None);
    assert_eq!(client_ids(&store).await, ["c-old", "c-app", "svc-1"]);

    store.touch_client("c-app", NOW + 5).await.expect("touch");
    assert!(store.revoke_client("c-app", NOW + 7).await.expect("revoke"));
    assert!(!store.revoke_client("c-app", NOW + 9).await.expect("twice"));
    assert!(!store.revoke_client("nope", NOW).await.expect("unknown"));
    let revoked = store.client("c-app").await.expect("get");
    assert_eq!(
        revoked,
        Some(Client {
            last_used_at: Some(NOW + 5),
            revoked_at: Some(NOW + 7),
            ..app
        })
    );
}

async fn a_document_client_is_replaced_but_never_replaces_another_origin(db: &TestDb) {
    let store = seeded(db).await;
    let url = "https://app.example/client.json";
    let first = Client {
        refresh_at: Some(NOW + 3600),
        ..client(url, ClientOrigin::MetadataDocument, NOW)
    };
    store.upsert_document_client(&first).await.expect("insert");
    assert_eq!(store.client(url).await.expect("get"), Some(first.clone()));

    store.revoke_client(url, NOW + 1).await.expect("revoke");
    let refetched = Client {
        name: "Renamed".into(),
        redirect_uris: vec!["https://app.example/new".into()],
        created_at: NOW + 100,
        refresh_at: Some(NOW + 7200),
        ..first.clone()
    };
    store
        .upsert_document_client(&refetched)
        .await
        .expect("replace");
    let stored = store.client(url).await.expect("get").expect("the client");
    assert_eq!(stored.name, "Renamed");
    assert_eq!(stored.redirect_uris, ["https://app.example/new"]);
    assert_eq!(stored.refresh_at, Some(NOW + 7200));
    assert_eq!(stored.created_at, NOW, "creation time is kept");
    assert_eq!(
        stored.revoked_at,
        Some(NOW + 1),
        "a revocation survives a refetch"
    );

    let over_dynamic = Client {
        origin: ClientOrigin::MetadataDocument,
        name: "Impostor".into(),
        ..client("c-app", ClientOrigin::Dynamic, NOW)
    };
    let refused = store.upsert_document_client(&over_dynamic).await;
    assert!(
        is_conflict(refused, "c-app"),
        "a dynamic client is never replaced"
    );
    let untouched = store.client("c-app").await.expect("get").expect("c-app");
    assert_eq!(untouched.origin, ClientOrigin::Dynamic);
    assert_eq!(untouched.name, "App c-app");
}

async fn a_code_is_redeemed_once_then_replayed_with_its_family(db: &TestDb) {
    let store = seeded(db).await;
    let issued = code("code-1", "fam-1");
    store.insert_code(&issued).await.expect("insert");
    assert!(is_conflict(store.insert_code(&issued).await, "code"));

    let first = store.redeem_code("code-1", NOW + 1).await.expect("redeem");
    assert_eq!(first, CodeRedemption::Redeemed(issued));
    let second = store.redeem_code("code-1", NOW + 2).await.expect("again");
    assert_eq!(
        second,
        CodeRedemption::Replayed {
            family_id: "fam-1".into()
        }
    );
    let unknown = store.redeem_code("nope", NOW).await.expect("unknown");
    assert_eq!(unknown, CodeRedemption::Unknown);

    // Expiry is the caller's check: an expired code still redeems once.
    // A code bound to a DPoP key comes back with its binding.
    let expired = AuthCode {
        expires_at: NOW - 1,
        dpop_jkt: Some("0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I".into()),
        ..code("code-2", "fam-2")
    };
    store.insert_code(&expired).await.expect("insert");
    let late = store.redeem_code("code-2", NOW).await.expect("redeem");
    assert_eq!(late, CodeRedemption::Redeemed(expired));
}

async fn concurrent_redemptions_of_one_code_have_one_winner(db: &TestDb) {
    let store = seeded(db).await;
    store
        .insert_code(&code("contested", "fam-c"))
        .await
        .expect("insert");
    let mut racers = tokio::task::JoinSet::new();
    for i in 0..8 {
        let store = store.clone();
        racers.spawn(async move { store.redeem_code("contested", NOW + i).await });
    }
    let (mut redeemed, mut replayed) = (0, 0);
    while let Some(joined) = racers.join_next().await {
        match joined.expect("a racer task").expect("a redemption") {
            CodeRedemption::Redeemed(_) => redeemed += 1,
            CodeRedemption::Replayed { family_id } => {
                assert_eq!(family_id, "fam-c");
                replayed += 1;
            }
            CodeRedemption::Unknown => panic!("the code exists"),
        }
    }
    assert_eq!((redeemed, replayed), (1, 7));
}

async fn a_refresh_token_rotates_once(db: &TestDb) {
    let store = seeded(db).await;
    let grant = family("fam-r", "c-app", "u-alice", PrincipalKind::User);
    store.insert_family(&grant).await.expect("family");
    assert!(is_conflict(store.insert_family(&grant).await, "fam-r"));
    let first = refresh("rt-1", "fam-r");
    store.insert_refresh(&first).await.expect("insert");
    assert!(is_conflict(store.insert_refresh(&first).await, "refresh"));
    assert_eq!(
        store.refresh_token("rt-1").await.expect("get"),
        Some(first.clone())
    );

    let won = store
        .rotate_refresh("rt-1", &refresh("rt-2", "fam-r"), NOW + 10)
        .await
        .expect("rotate");
    assert!(won);
    let lost = store
        .rotate_refresh("rt-1", &refresh("rt-3", "fam-r"), NOW + 11)
        .await
        .expect("rotate again");
    assert!(!lost, "a used token does not rotate twice");
    assert_eq!(
        store.refresh_token("rt-3").await.expect("get"),
        None,
        "the loser writes nothing"
    );
    let used = store.refresh_token("rt-1").await.expect("get");
    assert_eq!(used.and_then(|t| t.used_at), Some(NOW + 10));
    let next = store.refresh_token("rt-2").await.expect("get");
    assert_eq!(next, Some(refresh("rt-2", "fam-r")));
}

async fn concurrent_rotations_of_one_refresh_token_have_one_winner(db: &TestDb) {
    let store = seeded(db).await;
    store
        .insert_family(&family("fam-r", "c-app", "u-alice", PrincipalKind::User))
        .await
        .expect("family");
    store
        .insert_refresh(&refresh("rt-0", "fam-r"))
        .await
        .expect("insert");
    let mut racers = tokio::task::JoinSet::new();
    for i in 0..8 {
        let store = store.clone();
        racers.spawn(async move {
            let next = refresh(&format!("rt-next-{i}"), "fam-r");
            store.rotate_refresh("rt-0", &next, NOW + i).await
        });
    }
    let mut winners = 0;
    while let Some(joined) = racers.join_next().await {
        if joined.expect("a racer task").expect("a rotation") {
            winners += 1;
        }
    }
    assert_eq!(winners, 1);
    let mut written = 0;
    for i in 0..8 {
        let hash = format!("rt-next-{i}");
        if store.refresh_token(&hash).await.expect("get").is_some() {
            written += 1;
        }
    }
    assert_eq!(written, 1, "only the winner's next token exists");
}

async fn live_grant_names_the_user_and_follows_revocation_and_disabling(db: &TestDb) {
    let store = seeded(db).await;
    let grant = family("fam-u", "c-app", "u-alice", PrincipalKind::User);
    store.insert_family(&grant).await.expect("family");

    let live = store
        .live_grant("fam-u")
        .await
        .expect("read")
        .expect("live");
    assert_eq!(live.family, grant);
    assert_eq!(
        (live.tenant.as_str(), live.name.as_str()),
        ("acme", "alice")
    );
    assert_eq!((live.client_revoked_at, live.disabled), (None, false));

    store.set_disabled("alice", true).await.expect("disable");
    store.revoke_client("c-app", NOW + 2).await.expect("revoke");
    assert!(store.revoke_family("fam-u", NOW + 3).await.expect("revoke"));
    assert!(!store.revoke_family("fam-u", NOW + 4).await.expect("twice"));
    assert!(!store.revoke_family("nope", NOW).await.expect("unknown"));
    let dead = store.live_grant("fam-u").await.expect("read").expect("row");
    assert_eq!(dead.family.revoked_at, Some(NOW + 3));
    assert_eq!(dead.client_revoked_at, Some(NOW + 2));
    assert!(dead.disabled);

    assert_eq!(store.live_grant("nope").await.expect("read"), None);
    let orphan = family("fam-ghost", "c-app", "u-ghost", PrincipalKind::User);
    store.insert_family(&orphan).await.expect("family");
    assert_eq!(
        store.live_grant("fam-ghost").await.expect("read"),
        None,
        "a grant whose user is gone is not live"
    );

    for id in ["fam-a", "fam-b"] {
        let more = family(id, "c-app", "u-alice", PrincipalKind::User);
        store.insert_family(&more).await.expect("family");
    }
    let revoked = store.revoke_subject_families("u-alice", NOW + 5).await;
    assert_eq!(revoked.expect("revoke all"), 2, "fam-u was revoked already");
}

async fn live_grant_names_a_service_by_its_client(db: &TestDb) {
    let store = seeded(db).await;
    store
        .insert_client(&service("svc-1"))
        .await
        .expect("service");
    // A user whose id equals the service's must not be joined in.
    store
        .insert_user(&User {
            disabled: true,
            ..user("svc-1", "lookalike")
        })
        .await
        .expect("lookalike");
    let grant = family("fam-s", "svc-1", "svc-1", PrincipalKind::Service);
    store.insert_family(&grant).await.expect("family");

    let live = store
        .live_grant("fam-s")
        .await
        .expect("read")
        .expect("live");
    assert_eq!(live.family, grant);
    assert_eq!(live.tenant, "acme");
    assert_eq!(live.name, "App svc-1");
    assert!(!live.disabled);
}

async fn signing_keys_are_listed_newest_first_and_retire(db: &TestDb) {
    let store = db.store().await;
    let key = |kid: &str, created_at| SigningKey {
        kid: kid.into(),
        alg: "EdDSA".into(),
        private_der: vec![0x30, 0x2e, 0x02, 0x01, 0x00, 0xff, 0x00],
        created_at,
        retired_at: None,
    };
    for k in [key("k1", NOW), key("k3", NOW + 20), key("k2", NOW + 20)] {
        store
            .insert_signing_key(KeyPurpose::Access, &k)
            .await
            .expect("insert");
    }
    assert!(is_conflict(
        store
            .insert_signing_key(KeyPurpose::Access, &key("k1", NOW))
            .await,
        "k1"
    ));
    let kids = |keys: Vec<SigningKey>| keys.into_iter().map(|k| k.kid).collect::<Vec<_>>();
    assert_eq!(
        kids(store.signing_keys(KeyPurpose::Access).await.expect("list")),
        ["k2", "k3", "k1"]
    );

    store
        .retire_signing_key(KeyPurpose::Access, "k1", NOW + 30)
        .await
        .expect("retire");
    store
        .retire_signing_key(KeyPurpose::Access, "k1", NOW + 40)
        .await
        .expect("twice");
    let keys = store.signing_keys(KeyPurpose::Access).await.expect("list");
    assert_eq!(
        keys[2],
        SigningKey {
            retired_at: Some(NOW + 30),
            ..key("k1", NOW)
        }
    );
}

async fn assertion_keys_and_access_keys_are_kept_apart(db: &TestDb) {
    let store = db.store().await;
    let key = |kid: &str| SigningKey {
        kid: kid.into(),
        alg: "EdDSA".into(),
        private_der: vec![0x30, 0x00],
        created_at: NOW,
        retired_at: None,
    };
    let (access, assertion) = (KeyPurpose::Access, KeyPurpose::BackendAssertion);
    store
        .insert_signing_key(access, &key("a1"))
        .await
        .expect("access key");
    (store.insert_signing_key(assertion, &key("b1")).await).expect("assertion key");
    let kids = |keys: Vec<SigningKey>| keys.into_iter().map(|k| k.kid).collect::<Vec<_>>();
    assert_eq!(
        kids(store.signing_keys(access).await.expect("list")),
        ["a1"]
    );
    assert_eq!(
        kids(store.signing_keys(assertion).await.expect("list")),
        ["b1"]
    );
    // Retiring by an id of the other purpose changes nothing.
    (store.retire_signing_key(assertion, "a1", NOW + 1).await).expect("retire");
    let access_keys = store.signing_keys(access).await.expect("list");
    assert_eq!(access_keys[0].retired_at, None);
}

async fn sessions_are_found_by_digest_and_ended_per_user(db: &TestDb) {
    let store = seeded(db).await;
    store.insert_user(&user("u-bob", "bob")).await.expect("bob");
    let session = |id: &str, user_id: &str| WebSession {
        id_hash: id.into(),
        user_id: user_id.into(),
        created_at: NOW,
        expires_at: NOW + 3600,
    };
    for (id, who) in [("s1", "u-alice"), ("s2", "u-alice"), ("s3", "u-bob")] {
        store
            .insert_session(&session(id, who))
            .await
            .expect("insert");
    }
    assert_eq!(
        store.session("s1").await.expect("get"),
        Some(session("s1", "u-alice"))
    );
    assert_eq!(store.delete_user_sessions("u-alice").await.expect("end"), 2);
    assert_eq!(store.session("s2").await.expect("get"), None);
    assert!(store.session("s3").await.expect("get").is_some());
}

async fn a_pending_authorization_is_taken_once(db: &TestDb) {
    let store = db.store().await;
    let pending = PendingAuthorization {
        id: "p-1".into(),
        browser_hash: "cd".repeat(32),
        csrf: "csrf-token".into(),
        request: r#"{"client_id":"c-app","scope":"mcp:tools"}"#.into(),
        expires_at: NOW + 600,
    };
    store.insert_pending(&pending).await.expect("insert");
    assert_eq!(store.pending("p-1").await.expect("get"), Some(pending));
    assert!(store.take_pending("p-1").await.expect("take"));
    assert!(!store.take_pending("p-1").await.expect("again"));
    assert_eq!(store.pending("p-1").await.expect("get"), None);
}

async fn consent_is_saved_and_replaced(db: &TestDb) {
    let store = seeded(db).await;
    assert_eq!(store.consent("u-alice", "c-app").await.expect("get"), None);
    store
        .save_consent("u-alice", "c-app", "mcp:tools", NOW)
        .await
        .expect("save");
    store
        .save_consent("u-alice", "c-app", "mcp:tools mcp:admin", NOW + 1)
        .await
        .expect("replace");
    let scope = store.consent("u-alice", "c-app").await.expect("get");
    assert_eq!(scope.as_deref(), Some("mcp:tools mcp:admin"));
}

async fn events_are_listed_newest_first_up_to_the_limit_and_kept_for_the_retention(db: &TestDb) {
    let store = db.store().await;
    let event = |kind: &str| AuthEvent {
        at: NOW,
        kind: kind.into(),
        client_id: Some("c-app".into()),
        subject: None,
        source: Some("127.0.0.1".into()),
        detail: format!("{kind} happened"),
    };
    for kind in ["client.registered", "login.failed", "family.revoked.replay"] {
        store.record_event(&event(kind)).await.expect("record");
    }
    let recent = store.recent_events(2).await.expect("recent");
    assert_eq!(
        recent,
        [event("family.revoked.replay"), event("login.failed")]
    );
    assert_eq!(store.recent_events(10).await.expect("recent").len(), 3);
    // Kept for the retention, then purged with what expired.
    let retained = toolhost_auth::EVENT_RETENTION.as_secs() as i64;
    let older = AuthEvent {
        at: NOW - retained - 1,
        ..event("login.failed")
    };
    store.record_event(&older).await.expect("record");
    assert_eq!(store.purge_expired(NOW).await.expect("purge"), 1);
    assert_eq!(store.recent_events(10).await.expect("recent").len(), 3);
    assert_eq!(
        store
            .purge_expired(NOW + retained + 1)
            .await
            .expect("purge"),
        3
    );
    assert!(store.recent_events(10).await.expect("recent").is_empty());
}

async fn idle_dynamic_clients_expire_with_their_tokens_but_admin_clients_stay(db: &TestDb) {
    let store = seeded(db).await; // c-app: dynamic, created at NOW, never used
    let document = client(
        "https://x.example/c.json",
        ClientOrigin::MetadataDocument,
        NOW,
    );
    store.upsert_document_client(&document).await.expect("cimd");
    store
        .insert_client(&client("c-busy", ClientOrigin::Dynamic, NOW))
        .await
        .expect("busy");
    store
        .touch_client("c-busy", NOW + 500)
        .await
        .expect("touch");
    store
        .insert_client(&client("c-admin", ClientOrigin::Admin, NOW - 1000))
        .await
        .expect("admin");
    store
        .insert_family(&family("fam-1", "c-app", "u-alice", PrincipalKind::User))
        .await
        .expect("family");
    store
        .insert_refresh(&refresh("rt-1", "fam-1"))
        .await
        .expect("refresh");
    store
        .insert_code(&code("code-1", "fam-2"))
        .await
        .expect("code");
    store
        .save_consent("u-alice", "c-app", "mcp:tools", NOW)
        .await
        .expect("consent");

    let gone = store.expire_idle_clients(NOW + 100).await.expect("expire");
    assert_eq!(gone, 2, "c-app and the document client");
    assert_eq!(client_ids(&store).await, ["c-admin", "c-busy"]);
    assert_eq!(store.live_grant("fam-1").await.expect("grant"), None);
    assert_eq!(store.refresh_token("rt-1").await.expect("refresh"), None);
    let code = store.redeem_code("code-1", NOW).await.expect("code");
    assert_eq!(code, CodeRedemption::Unknown);
    assert_eq!(
        store.consent("u-alice", "c-app").await.expect("consent"),
        None
    );
    assert_eq!(
        store.expire_idle_clients(NOW + 100).await.expect("again"),
        0
    );
}

async fn expired_codes_tokens_requests_and_sessions_are_purged(db: &TestDb) {
    let store = seeded(db).await;
    // Codes expire at NOW + 60, refresh tokens at NOW + 86 400.
    store
        .insert_family(&family("f-1", "c-app", "u-alice", PrincipalKind::User))
        .await
        .expect("family");
    store
        .insert_code(&code("old-code", "f-1"))
        .await
        .expect("code");
    store
        .insert_refresh(&refresh("old-rt", "f-1"))
        .await
        .expect("rt");
    let session = WebSession {
        id_hash: "s-old".into(),
        user_id: "u-alice".into(),
        created_at: NOW,
        expires_at: NOW + 3600,
    };
    store.insert_session(&session).await.expect("session");
    let pending = PendingAuthorization {
        id: "p-old".into(),
        browser_hash: "ab".repeat(32),
        csrf: "csrf".into(),
        request: "{}".into(),
        expires_at: NOW + 600,
    };
    store.insert_pending(&pending).await.expect("pending");

    // Nothing has expired yet.
    assert_eq!(store.purge_expired(NOW).await.expect("purge"), 0);
    // After an hour and a bit: the code, the request and the session.
    assert_eq!(store.purge_expired(NOW + 3601).await.expect("purge"), 3);
    assert_eq!(
        store.redeem_code("old-code", NOW).await.expect("redeem"),
        CodeRedemption::Unknown
    );
    assert_eq!(store.pending("p-old").await.expect("get"), None);
    assert_eq!(store.session("s-old").await.expect("get"), None);
    assert!(store.refresh_token("old-rt").await.expect("get").is_some());
    // A day later, the refresh token.
    assert_eq!(store.purge_expired(NOW + 86_401).await.expect("purge"), 1);
    assert_eq!(store.refresh_token("old-rt").await.expect("get"), None);
}

fn attempt(state_hash: &str, expires_at: i64) -> SsoAttempt {
    SsoAttempt {
        state_hash: state_hash.into(),
        provider: "corp".into(),
        pending_id: "p-1".into(),
        browser_hash: "b".repeat(64),
        nonce: "n-1".into(),
        code_verifier: "v".repeat(43),
        expires_at,
    }
}

async fn an_sso_attempt_is_taken_once_and_purged_when_expired(db: &TestDb) {
    let store = seeded(db).await;
    let live = attempt("s-live", NOW + 600);
    store.insert_sso_attempt(&live).await.expect("insert");
    store
        .insert_sso_attempt(&attempt("s-old", NOW - 1))
        .await
        .expect("insert");
    assert!(matches!(
        store.insert_sso_attempt(&live).await,
        Err(AuthStoreError::Conflict { .. })
    ));
    // Concurrent callbacks with one state: exactly one gets the attempt.
    let (a, b) = tokio::join!(
        store.take_sso_attempt("s-live"),
        store.take_sso_attempt("s-live")
    );
    let won: Vec<_> = [a.expect("take"), b.expect("take")]
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(won, vec![live]);
    assert_eq!(
        store.take_sso_attempt("s-unknown").await.expect("take"),
        None
    );
    store.purge_expired(NOW).await.expect("purge");
    assert_eq!(db.count("sso_attempts").await, 0);
}

fn connection(user_id: &str, backend: &str, sealed: &str) -> PersonConnection {
    PersonConnection {
        tenant: "acme".into(),
        user_id: user_id.into(),
        backend: backend.into(),
        key_id: "k1".into(),
        sealed: sealed.into(),
        connected_at: NOW,
        expires_at: Some(NOW + 3600),
    }
}

async fn a_persons_connection_is_theirs_replaced_refreshed_once_and_revoked(db: &TestDb) {
    let store = seeded(db).await;
    store.insert_user(&user("u-bob", "bob")).await.expect("bob");
    let alices = connection("u-alice", "crm", "sealed-a1");
    store.put_person_connection(&alices).await.expect("put");
    store
        .put_person_connection(&connection("u-bob", "crm", "sealed-b1"))
        .await
        .expect("put");
    let read = |u: &'static str| store.person_connection("acme", u, "crm");
    assert_eq!(read("u-alice").await.expect("read"), Some(alices.clone()));
    assert_eq!(
        store
            .person_connection("other", "u-alice", "crm")
            .await
            .expect("read"),
        None,
        "another tenant's name finds nothing"
    );
    // Connecting again replaces the person's connection.
    let again = connection("u-alice", "crm", "sealed-a2");
    store.put_person_connection(&again).await.expect("put");
    assert_eq!(read("u-alice").await.expect("read"), Some(again.clone()));
    // Two refreshes of one reading: one wins, the other writes nothing.
    let (r1, r2) = (
        connection("u-alice", "crm", "sealed-r1"),
        connection("u-alice", "crm", "sealed-r2"),
    );
    let (a, b) = tokio::join!(
        store.refresh_person_connection("sealed-a2", &r1),
        store.refresh_person_connection("sealed-a2", &r2)
    );
    assert_eq!(
        [a.expect("refresh"), b.expect("refresh")]
            .iter()
            .filter(|w| **w)
            .count(),
        1
    );
    let kept = read("u-alice").await.expect("read").expect("kept");
    assert!(["sealed-r1", "sealed-r2"].contains(&kept.sealed.as_str()));
    // A tenant's list, or one person's.
    let all = store
        .person_connections("acme", None, 10)
        .await
        .expect("list");
    let whose: Vec<_> = all.iter().map(|c| c.user_id.as_str()).collect();
    assert_eq!(whose, ["u-alice", "u-bob"]);
    let bobs = store.person_connections("acme", Some("u-bob"), 10).await;
    assert_eq!(bobs.expect("list").len(), 1);
    assert_eq!(
        store
            .person_connections("acme", None, 1)
            .await
            .expect("list")
            .len(),
        1
    );
    // Revoked once; a refresh of what was revoked writes nothing.
    let gone = store.delete_person_connection("acme", "u-alice", "crm");
    assert!(gone.await.expect("delete"));
    let again = store.delete_person_connection("acme", "u-alice", "crm");
    assert!(!again.await.expect("delete"));
    let late = store.refresh_person_connection(&kept.sealed, &r1).await;
    assert!(!late.expect("refresh"));
    assert_eq!(read("u-alice").await.expect("read"), None);
    assert!(read("u-bob").await.expect("read").is_some());
}

async fn a_connection_attempt_is_taken_once_and_one_per_person_and_backend(db: &TestDb) {
    let store = seeded(db).await;
    let attempt = |state: &str, backend: &str, expires_at: i64| ConnectionAttempt {
        state_hash: state.into(),
        tenant: "acme".into(),
        user_id: "u-alice".into(),
        backend: backend.into(),
        code_verifier: "v".repeat(43),
        expires_at,
    };
    for (state, backend) in [("s-1", "crm"), ("s-2", "crm"), ("s-3", "wiki")] {
        let a = attempt(state, backend, NOW + 600);
        store.insert_connection_attempt(&a).await.expect("insert");
    }
    // The second flow to crm ended the first.
    assert_eq!(
        store.take_connection_attempt("s-1").await.expect("take"),
        None
    );
    let (a, b) = tokio::join!(
        store.take_connection_attempt("s-2"),
        store.take_connection_attempt("s-2")
    );
    let won: Vec<_> = [a.expect("take"), b.expect("take")]
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(won, vec![attempt("s-2", "crm", NOW + 600)]);
    let old = attempt("s-4", "crm", NOW - 1);
    store.insert_connection_attempt(&old).await.expect("insert");
    store.purge_expired(NOW).await.expect("purge");
    assert_eq!(db.count("connection_attempts").await, 1, "wiki's live one");
}

async fn an_sso_link_binds_one_subject_to_one_user_per_provider(db: &TestDb) {
    let store = seeded(db).await;
    store.insert_user(&user("u-bob", "bob")).await.expect("bob");
    let link = |provider: &str, subject: &str, user_id: &str| SsoLink {
        provider: provider.into(),
        subject: subject.into(),
        user_id: user_id.into(),
        linked_at: NOW,
    };
    store
        .insert_sso_link(&link("corp", "sub-a", "u-alice"))
        .await
        .expect("link");
    // The subject is taken, and so is alice at this provider.
    for taken in [
        link("corp", "sub-a", "u-bob"),
        link("corp", "sub-x", "u-alice"),
    ] {
        assert!(matches!(
            store.insert_sso_link(&taken).await,
            Err(AuthStoreError::Conflict { .. })
        ));
    }
    // Another provider may link alice to its own subject.
    store
        .insert_sso_link(&link("other", "sub-a", "u-alice"))
        .await
        .expect("another provider");
    assert_eq!(
        store.sso_link("corp", "sub-a").await.expect("read"),
        Some(link("corp", "sub-a", "u-alice"))
    );
    assert_eq!(
        store
            .sso_link_of_user("corp", "u-alice")
            .await
            .expect("read"),
        Some(link("corp", "sub-a", "u-alice"))
    );
    assert_eq!(store.sso_link("corp", "sub-b").await.expect("read"), None);
    // A link to nobody is refused by the database.
    assert!(
        store
            .insert_sso_link(&link("corp", "sub-z", "u-nobody"))
            .await
            .is_err()
    );
    assert_eq!(db.count("sso_links").await, 2);
}

async fn a_dpop_proof_is_spent_once_until_it_expires(db: &TestDb) {
    let store = db.store().await;
    assert!(store.spend_jwt("p-1", NOW + 61, NOW).await.expect("spend"));
    assert!(!store.spend_jwt("p-1", NOW + 61, NOW).await.expect("replay"));
    assert!(
        store
            .spend_jwt("p-2", NOW + 61, NOW)
            .await
            .expect("another")
    );
    // Still remembered at its expiry; after it, the record may be reused
    // (the proof itself is stale by then) and is purged.
    assert!(
        !store
            .spend_jwt("p-1", NOW + 61, NOW + 61)
            .await
            .expect("at expiry")
    );
    assert!(
        store
            .spend_jwt("p-1", NOW + 200, NOW + 62)
            .await
            .expect("expired")
    );
    assert_eq!(
        store.purge_expired(NOW + 100).await.expect("purge"),
        1,
        "p-2"
    );
}

async fn a_refresh_token_keeps_its_dpop_binding(db: &TestDb) {
    let store = seeded(db).await;
    store
        .insert_family(&family("f-1", "c-app", "u-alice", PrincipalKind::User))
        .await
        .expect("family");
    let bound = RefreshToken {
        dpop_jkt: Some("jkt-1".into()),
        ..refresh("rt-1", "f-1")
    };
    store.insert_refresh(&bound).await.expect("insert");
    let read = store.refresh_token("rt-1").await.expect("read");
    assert_eq!(read.and_then(|t| t.dpop_jkt), Some("jkt-1".into()));
    let next = RefreshToken {
        dpop_jkt: Some("jkt-1".into()),
        ..refresh("rt-2", "f-1")
    };
    assert!(
        store
            .rotate_refresh("rt-1", &next, NOW)
            .await
            .expect("rotate")
    );
    let read = store.refresh_token("rt-2").await.expect("read");
    assert_eq!(read.and_then(|t| t.dpop_jkt), Some("jkt-1".into()));
}

async fn a_tenant_requires_dpop_only_when_told(db: &TestDb) {
    let store = seeded(db).await;
    assert!(!store.tenant_requires_dpop("acme").await.expect("read"));
    assert!(store.set_tenant_dpop("acme", true).await.expect("set"));
    assert!(store.tenant_requires_dpop("acme").await.expect("read"));
    assert!(store.set_tenant_dpop("acme", false).await.expect("unset"));
    assert!(!store.tenant_requires_dpop("acme").await.expect("read"));
    assert!(
        !store
            .set_tenant_dpop("nobody", true)
            .await
            .expect("no tenant")
    );
    assert!(
        !store
            .tenant_requires_dpop("nobody")
            .await
            .expect("no tenant")
    );
}

async fn a_clients_keys_are_set_replaced_and_go_with_it(db: &TestDb) {
    let store = seeded(db).await;
    store
        .insert_client(&service("svc-1"))
        .await
        .expect("service");
    assert_eq!(store.client_keys("svc-1").await.expect("read"), None);
    store
        .set_client_keys("svc-1", r#"{"keys":[1]}"#, NOW)
        .await
        .expect("set");
    store
        .set_client_keys("svc-1", r#"{"keys":[2]}"#, NOW + 1)
        .await
        .expect("replaced");
    assert_eq!(
        store.client_keys("svc-1").await.expect("read").as_deref(),
        Some(r#"{"keys":[2]}"#)
    );
    // Keys of no client are refused by the database.
    assert!(store.set_client_keys("nobody", "{}", NOW).await.is_err());
    assert_eq!(db.count("client_keys").await, 1, "one row, replaced");
}
