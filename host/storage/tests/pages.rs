//! The console's long lists, a page at a time (issue 45): audit rows,
//! runs, users (by name) and service clients paged by keyset cursors both
//! ways, their filters applied in the
//! store, and each listing's query served by an index, as each engine's
//! plan says (SQLite's `EXPLAIN QUERY PLAN`, PostgreSQL's `EXPLAIN` after
//! `ANALYZE`). One set of test bodies on SQLite and PostgreSQL
//! (`common/mod.rs`).

#[macro_use]
mod common;

use std::collections::HashSet;

use common::TestDb;
use serde_json::json;
use tokio::task::JoinSet;
use toolhost_audit::{AuditEvent, AuditSink, Effect};
use toolhost_auth::{AuthStore, Client, ClientKind, ClientOrigin, User};
use toolhost_runs::{
    NewRun, QueueLimits, Run, RunCursor, RunEffect, RunId, RunQuery, RunSpec, RunState, RunStore,
};
use toolhost_storage::{
    AuditQuery, ClientKey, Engine, PageFrom, ServiceClientsQuery, Store, UsersQuery,
};

on_both_engines!(
    audit_rows_page_older_and_newer_by_cursor_with_the_filters_applied_in_the_store,
    runs_page_older_and_newer_by_cursor_and_a_filter_finds_a_run_past_the_first_page,
    the_audit_search_and_the_runs_listing_are_served_by_an_index,
    tenants_page_by_id_both_ways_each_with_its_people_counted,
    users_page_by_name_both_ways_and_are_found_by_the_start_of_a_name,
    service_clients_page_newest_first_both_ways_within_their_tenant,
    the_users_and_the_service_clients_pages_are_served_by_an_index,
);

const NOW: i64 = 1_764_000_000_000;

/// Records `n` calls in `tenant`, every fifth of tool `other` (the rest
/// `greet`), concurrently so they share commits; their row ids.
async fn calls(store: &Store, tenant: &str, n: usize) -> Vec<i64> {
    let events: Vec<AuditEvent> = (0..n)
        .map(|i| {
            let tool = if i % 5 == 0 { "other" } else { "greet" };
            AuditEvent {
                tenant: tenant.into(),
                tool: tool.into(),
                ..common::event(&format!("{tenant}-{i}"), NOW as u64 + i as u64)
            }
        })
        .collect();
    for batch in events.chunks(50) {
        let mut recorded = JoinSet::new();
        for event in batch {
            let (store, event) = (store.clone(), event.clone());
            recorded.spawn(async move { store.record(&event).await });
        }
        for r in recorded.join_all().await {
            r.expect("recorded");
        }
    }
    let all = AuditQuery {
        tenant: Some(tenant.into()),
        limit: u32::try_from(n).expect("few"),
        ..AuditQuery::default()
    };
    store
        .search(&all)
        .await
        .expect("read")
        .iter()
        .map(|r| r.id)
        .collect()
}

/// The ids of the rows `query` finds.
async fn ids(store: &Store, query: &AuditQuery) -> Vec<i64> {
    let found = store.search(query).await.expect("searched");
    found.iter().map(|r| r.id).collect()
}

async fn audit_rows_page_older_and_newer_by_cursor_with_the_filters_applied_in_the_store(
    db: &TestDb,
) {
    let store = db.store().await;
    let acme = calls(&store, "acme", 250).await;
    calls(&store, "globex", 30).await;
    assert_eq!(acme.len(), 250);
    assert!(acme.windows(2).all(|w| w[0] > w[1]), "newest first");

    // Older, a page of 100 at a time, from the newest to the end.
    let page = |before, after| AuditQuery {
        tenant: Some("acme".into()),
        before,
        after,
        limit: 100,
        ..AuditQuery::default()
    };
    let mut seen: Vec<i64> = Vec::new();
    let mut pages = Vec::new();
    let mut cursor = None;
    loop {
        let rows = ids(&store, &page(cursor, None)).await;
        if rows.is_empty() {
            break;
        }
        cursor = rows.last().copied();
        seen.extend(&rows);
        pages.push(rows);
    }
    assert_eq!(seen, acme, "every row once, in order, and only acme's");
    assert_eq!(
        pages.iter().map(Vec::len).collect::<Vec<_>>(),
        [100, 100, 50]
    );
    // Newer, from the last page back to the first: the same pages.
    let mut back = vec![pages[2].clone()];
    let mut first = pages[2][0];
    loop {
        let rows = ids(&store, &page(None, Some(first))).await;
        if rows.is_empty() {
            break;
        }
        assert!(rows.windows(2).all(|w| w[0] > w[1]), "still newest first");
        first = rows[0];
        back.insert(0, rows);
    }
    assert_eq!(back, pages, "the same pages, read back toward the newest");

    // A filter goes to the store: 50 of acme's rows are `other`, and the
    // pages find them all, however far back.
    let other = |before| AuditQuery {
        tool: Some("other".into()),
        ..page(before, None)
    };
    let mut found = HashSet::new();
    let mut cursor = None;
    for _ in 0..3 {
        let rows = ids(
            &store,
            &AuditQuery {
                limit: 20,
                ..other(cursor)
            },
        )
        .await;
        cursor = rows.last().copied();
        found.extend(rows);
    }
    assert_eq!(found.len(), 50, "the tool's rows, every one");
    assert!(
        found.contains(acme.last().expect("rows")),
        "the oldest one too"
    );
}

fn spec(tool: &str, plugin: &str) -> RunSpec {
    common::run_spec(tool, plugin, json!({"n": 1}))
}

/// Queues `n` runs in acme, the first (the oldest) of tool `Needle_Finder`
/// in plugin `haystack`, the rest `explore` in `testbench`; every third
/// of bob, the rest alice's; two in each millisecond after the first, so
/// the cursor's id breaks ties. Their ids, newest first.
async fn runs(store: &Store, n: usize) -> Vec<RunId> {
    let queued: Vec<NewRun> = (0..n)
        .map(|i| {
            let (tool, plugin) = if i == 0 {
                ("Needle_Finder", "haystack")
            } else {
                ("explore", "testbench")
            };
            NewRun {
                id: RunId::new(),
                tenant: "acme".into(),
                principal: if i % 3 == 0 { "bob" } else { "alice" }.into(),
                principal_kind: "user".into(),
                client_id: "client-1".into(),
                spec: spec(tool, plugin),
                // The needle alone in its millisecond; two in each after.
                created_at_ms: NOW + (i as i64 + 1) / 2,
                max_attempts: toolhost_runs::MAX_ATTEMPTS,
                limits: QueueLimits {
                    per_tenant: 100_000,
                    per_principal: 100_000,
                },
                input: None,
            }
        })
        .collect();
    for (b, batch) in queued.chunks(100).enumerate() {
        let mut queueing = JoinSet::new();
        for (i, run) in batch.iter().cloned().enumerate() {
            let store = store.clone();
            queueing.spawn(async move {
                let effect = Effect::Run(RunEffect::Queue(Box::new(run)));
                let row = common::event(&format!("queue-{b}-{i}"), NOW as u64);
                store.record_with(&row, &[effect]).await
            });
        }
        for queued in queueing.join_all().await {
            queued.expect("queued");
        }
    }
    let listed = store
        .page(&RunQuery::newest("acme", None, 100_000))
        .await
        .expect("listed");
    let listed: Vec<RunId> = listed.into_iter().map(|r| r.id).collect();
    assert_eq!(listed.len(), n);
    listed
}

fn run_ids(runs: &[Run]) -> Vec<RunId> {
    runs.iter().map(|r| r.id.clone()).collect()
}

async fn runs_page_older_and_newer_by_cursor_and_a_filter_finds_a_run_past_the_first_page(
    db: &TestDb,
) {
    let store = db.store().await;
    let all = runs(&store, 150).await;
    let page = |before: Option<RunCursor>, after: Option<RunCursor>| RunQuery {
        before,
        after,
        ..RunQuery::newest("acme", None, 50)
    };
    let mut pages: Vec<Vec<Run>> = Vec::new();
    let mut cursor = None;
    loop {
        let got = store.page(&page(cursor, None)).await.expect("a page");
        let Some(last) = got.last() else { break };
        cursor = Some(RunCursor::of(last));
        pages.push(got);
    }
    let seen: Vec<RunId> = pages.iter().flat_map(|p| run_ids(p)).collect();
    assert_eq!(seen, all, "every run once, newest first, ties broken by id");
    assert_eq!(pages.len(), 3);
    let newer = store
        .page(&page(None, Some(RunCursor::of(&pages[2][0]))))
        .await
        .expect("the page before");
    assert_eq!(run_ids(&newer), run_ids(&pages[1]), "back by one page");

    // The filters are the store's: the oldest run, 149 runs back.
    let needle = RunQuery {
        tool: Some("needle".into()),
        ..page(None, None)
    };
    let found = store.page(&needle).await.expect("filtered");
    assert_eq!(
        run_ids(&found),
        [all[149].clone()],
        "found past the first page"
    );
    let by_plugin = RunQuery {
        plugin: Some("HAY".into()),
        ..page(None, None)
    };
    assert_eq!(
        run_ids(&store.page(&by_plugin).await.expect("filtered")).len(),
        1
    );
    let literal = RunQuery {
        tool: Some("needle%".into()),
        ..page(None, None)
    };
    assert!(
        store.page(&literal).await.expect("filtered").is_empty(),
        "% is a character, not a wildcard"
    );
    let bobs = RunQuery {
        principal: Some("bob".into()),
        state: Some(RunState::Queued),
        ..RunQuery::newest("acme", None, 1_000)
    };
    let bobs = store.page(&bobs).await.expect("bob's");
    assert_eq!(bobs.len(), 50);
    assert!(bobs.iter().all(|r| r.principal == "bob"));
    let done = RunQuery {
        state: Some(RunState::Succeeded),
        ..page(None, None)
    };
    assert!(store.page(&done).await.expect("none").is_empty());
    let globex = RunQuery::newest("globex", None, 50);
    assert!(store.page(&globex).await.expect("none").is_empty());
}

/// Refreshes the planner's statistics (PostgreSQL's `ANALYZE`, SQLite's
/// `ANALYZE` too, as an operator's database would have them).
async fn analyze(db: &TestDb) {
    db.raw("ANALYZE".into()).await.expect("analyzed");
}

/// Panics unless `plan` reads `table` through an index on `engine`: no
/// full scan of it (SQLite `SCAN <table>`, PostgreSQL `Seq Scan`), and an
/// index search or scan.
fn assert_indexed(engine: Engine, table: &str, plan: &[String], what: &str) {
    let text = plan.join("\n");
    match engine {
        Engine::Sqlite => {
            assert!(
                !plan.iter().any(|l| l.trim() == format!("SCAN {table}")
                    || l.starts_with(&format!("SCAN {table} "))),
                "{what}: a full scan of {table}:\n{text}"
            );
            assert!(
                text.contains(&format!("SEARCH {table} USING")),
                "{what}: no index search of {table}:\n{text}"
            );
        }
        Engine::Postgres => {
            assert!(
                !text.contains("Seq Scan"),
                "{what}: a sequential scan:\n{text}"
            );
            assert!(
                text.contains("Index Scan") || text.contains("Index Only Scan"),
                "{what}: no index scan:\n{text}"
            );
        }
    }
}

async fn the_audit_search_and_the_runs_listing_are_served_by_an_index(db: &TestDb) {
    let store = db.store().await;
    let engine = store.engine();
    // Enough rows, in several tenants, that a planner weighs them.
    for tenant in ["acme", "globex", "initech", "umbrella"] {
        calls(&store, tenant, 500).await;
    }
    let all = runs(&store, 3_000).await;
    analyze(db).await;

    let searches = [
        ("the newest page", AuditQuery::default()),
        (
            "an older page",
            AuditQuery {
                before: Some(1_000),
                ..AuditQuery::default()
            },
        ),
        (
            "a newer page",
            AuditQuery {
                after: Some(1_000),
                ..AuditQuery::default()
            },
        ),
        (
            "a tool's older page",
            AuditQuery {
                tool: Some("other".into()),
                before: Some(1_500),
                ..AuditQuery::default()
            },
        ),
        (
            "a person's and an outcome's page",
            AuditQuery {
                principal: Some("alice".into()),
                outcome: Some(toolhost_audit::Outcome::Executed),
                ..AuditQuery::default()
            },
        ),
    ];
    for (what, search) in searches {
        let search = AuditQuery {
            tenant: Some("acme".into()),
            limit: 101,
            ..search
        };
        let plan = store.explain_search(&search).await.expect("a plan");
        assert_indexed(engine, "audit", &plan, what);
    }

    let middle = store
        .run("acme", &all[200])
        .await
        .expect("read")
        .expect("found");
    let cursor = RunCursor::of(&middle);
    let listings = [
        ("the newest runs", RunQuery::newest("acme", None, 51)),
        (
            "one person's runs",
            RunQuery::newest("acme", Some("bob"), 51),
        ),
        (
            "an older page",
            RunQuery {
                before: Some(cursor.clone()),
                ..RunQuery::newest("acme", None, 51)
            },
        ),
        (
            "a newer page of one person's",
            RunQuery {
                after: Some(cursor.clone()),
                ..RunQuery::newest("acme", Some("alice"), 51)
            },
        ),
        (
            "an older page of a state's runs",
            RunQuery {
                state: Some(RunState::Queued),
                before: Some(cursor),
                ..RunQuery::newest("acme", None, 51)
            },
        ),
    ];
    // Not held to an index: a tool's or a plugin's name containing a
    // text. No B-tree serves `%text%`; a planner that expects few matches
    // rightly reads the table once rather than the index and every row
    // it points to (the page is still read in the store, never in memory).
    for (what, listing) in listings {
        let plan = store.explain_runs(&listing).await.expect("a plan");
        assert_indexed(engine, "runs", &plan, what);
    }
}

async fn tenants_page_by_id_both_ways_each_with_its_people_counted(db: &TestDb) {
    let store = db.store().await;
    let names: Vec<String> = (0..150).map(|i| format!("t{i:03}")).collect();
    for name in &names {
        store.ensure_tenant(name, 1).await.expect("tenant");
    }
    for (id, disabled) in [("u-1", false), ("u-2", true)] {
        let user = User {
            id: id.into(),
            tenant: "t007".into(),
            username: id.into(),
            password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
            disabled,
            created_at: 1,
        };
        store.insert_user(&user).await.expect("user");
    }
    let mut seen = Vec::new();
    let mut from = PageFrom::Start;
    loop {
        let page = store.tenants_counted(&from, 100).await.expect("a page");
        let Some(last) = page.last() else { break };
        from = PageFrom::After(last.id.clone());
        seen.extend(page);
    }
    let ids: Vec<&str> = seen.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, names.iter().map(String::as_str).collect::<Vec<_>>());
    // Back from the last: the 100 before it, in order.
    let back = store
        .tenants_counted(&PageFrom::Before("t100".into()), 100)
        .await
        .expect("a page");
    let back: Vec<&str> = back.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(back, ids[..100]);
    let t007 = &seen[7];
    assert_eq!((t007.users, t007.disabled, t007.services), (2, 1, 0));
    assert_eq!((seen[8].users, seen[8].disabled), (0, 0));
}

/// A user `username` of `tenant`, created at `created_at`.
fn user(tenant: &str, username: &str, created_at: i64) -> User {
    User {
        id: format!("u-{username}"),
        tenant: tenant.into(),
        username: username.into(),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        disabled: false,
        created_at,
    }
}

/// A service client `id` of `tenant`, created at `created_at`.
fn service(tenant: &str, id: &str, created_at: i64) -> Client {
    Client {
        client_id: id.into(),
        secret_hash: Some("ab".repeat(32)),
        kind: ClientKind::Service,
        origin: ClientOrigin::Admin,
        name: format!("Service {id}"),
        redirect_uris: vec![],
        scope: "mcp".into(),
        tenant: Some(tenant.into()),
        owner: Some("admin".into()),
        created_at,
        last_used_at: None,
        revoked_at: None,
        refresh_at: None,
    }
}

/// Adds `n` users to acme (`ann-000`, …, every third `bob-…`, and one
/// each of a capital, a digit and a non-ASCII name) and a few to globex:
/// acme's usernames, in byte order.
async fn people(store: &Store, n: usize) -> Vec<String> {
    for tenant in ["acme", "globex"] {
        store.ensure_tenant(tenant, 1).await.expect("tenant");
    }
    let mut names: Vec<String> = (0..n)
        .map(|i| {
            let first = if i % 3 == 0 { "bob" } else { "ann" };
            format!("{first}-{i:03}")
        })
        .chain(["Zed".into(), "0day".into(), "anné".into()])
        .collect();
    for name in &names {
        store
            .insert_user(&user("acme", name, 1))
            .await
            .expect("user");
    }
    for i in 0..5 {
        let name = format!("ann-g{i}");
        store
            .insert_user(&user("globex", &name, 1))
            .await
            .expect("user");
    }
    names.sort();
    names
}

/// Pages of `query`'s users from the start to the end, then back: the
/// usernames of each page.
async fn users_both_ways(store: &Store, query: &UsersQuery) -> Vec<Vec<String>> {
    let names = |users: Vec<User>| users.into_iter().map(|u| u.username).collect::<Vec<_>>();
    let mut pages: Vec<Vec<String>> = Vec::new();
    let mut from = PageFrom::Start;
    loop {
        let page = names(
            store
                .users_page(&UsersQuery {
                    from,
                    ..query.clone()
                })
                .await
                .expect("a page"),
        );
        let Some(last) = page.last().cloned() else {
            break;
        };
        from = PageFrom::After(last);
        pages.push(page);
    }
    let mut back: Vec<Vec<String>> = Vec::new();
    let mut first = pages.last().map(|p| p[0].clone());
    while let Some(key) = first {
        let page = names(
            store
                .users_page(&UsersQuery {
                    from: PageFrom::Before(key),
                    ..query.clone()
                })
                .await
                .expect("a page"),
        );
        first = page.first().cloned();
        if !page.is_empty() {
            back.insert(0, page);
        }
    }
    if let Some(last) = pages.last() {
        back.push(last.clone());
    }
    assert_eq!(back, pages, "the same pages, read back to the start");
    pages
}

async fn users_page_by_name_both_ways_and_are_found_by_the_start_of_a_name(db: &TestDb) {
    let store = db.store().await;
    let acme = people(&store, 120).await;
    let query = UsersQuery {
        tenant: "acme".into(),
        starting: String::new(),
        from: PageFrom::Start,
        limit: 50,
    };
    let pages = users_both_ways(&store, &query).await;
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [50, 50, 23]);
    assert_eq!(
        pages.concat(),
        acme,
        "every user once, in byte order, only acme's"
    );
    assert_eq!(pages[0][0], "0day");

    let bobs = UsersQuery {
        starting: "bob-".into(),
        ..query.clone()
    };
    let found = users_both_ways(&store, &bobs).await.concat();
    let expected: Vec<&String> = acme.iter().filter(|n| n.starts_with("bob-")).collect();
    assert_eq!(found.iter().collect::<Vec<_>>(), expected);
    assert_eq!(found.len(), 40);
    let ann = UsersQuery {
        starting: "ann".into(),
        limit: 200,
        ..query.clone()
    };
    let found = store.users_page(&ann).await.expect("found");
    assert_eq!(found.len(), 81, "ann-… and anné, none of globex's");
    assert_eq!(found.last().map(|u| u.username.as_str()), Some("anné"));
    let none = UsersQuery {
        starting: "%".into(),
        ..query
    };
    assert!(
        store.users_page(&none).await.expect("none").is_empty(),
        "a prefix is literal"
    );

    let names = store
        .usernames("acme", &["u-ann-001", "u-ann-g1", "u-nobody"])
        .await
        .expect("named");
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        [("u-ann-001".to_owned(), "ann-001".to_owned())],
        "only acme's users are named"
    );
}

async fn service_clients_page_newest_first_both_ways_within_their_tenant(db: &TestDb) {
    let store = db.store().await;
    for tenant in ["acme", "globex"] {
        store.ensure_tenant(tenant, 1).await.expect("tenant");
    }
    // 120 of acme's, three to a second (ties broken by id), and globex's
    // and a public client besides.
    let mut acme = Vec::new();
    for i in 0..120i64 {
        let id = format!("svc-{i:03}");
        store
            .insert_client(&service("acme", &id, 1_000 + i / 3))
            .await
            .expect("client");
        acme.push(id);
    }
    store
        .insert_client(&service("globex", "svc-g", 2_000))
        .await
        .expect("client");
    let public = Client {
        kind: ClientKind::Public,
        origin: ClientOrigin::Dynamic,
        tenant: None,
        ..service("acme", "app", 2_000)
    };
    store.insert_client(&public).await.expect("client");
    acme.reverse();

    let query = |from| ServiceClientsQuery {
        tenant: "acme".into(),
        from,
        limit: 50,
    };
    let ids = |clients: Vec<Client>| clients.into_iter().map(|c| c.client_id).collect::<Vec<_>>();
    let mut pages = Vec::new();
    let mut from = PageFrom::Start;
    loop {
        let page = store
            .service_clients_page(&query(from))
            .await
            .expect("a page");
        let Some(last) = page.last().map(ClientKey::of) else {
            break;
        };
        from = PageFrom::After(last);
        pages.push(ids(page));
    }
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [50, 50, 20]);
    assert_eq!(
        pages.concat(),
        acme,
        "every service client of acme's once, newest first"
    );
    // Back from the last page: the same pages.
    let newer = ServiceClientsQuery {
        limit: 18,
        ..query(PageFrom::Before(ClientKey {
            created_at: 1_000,
            client_id: "svc-001".into(),
        }))
    };
    let newer = store.service_clients_page(&newer).await.expect("a page");
    assert_eq!(
        ids(newer),
        pages[2][..18].to_vec(),
        "the 18 newer than the second oldest"
    );
    let key = |id: &str| {
        let i: i64 = id["svc-".len()..].parse().expect("a number");
        ClientKey {
            created_at: 1_000 + i / 3,
            client_id: id.into(),
        }
    };
    let middle = store
        .service_clients_page(&query(PageFrom::Before(key(&pages[2][0]))))
        .await
        .expect("a page");
    assert_eq!(ids(middle), pages[1], "the page before the last, read back");
}

async fn the_users_and_the_service_clients_pages_are_served_by_an_index(db: &TestDb) {
    let store = db.store().await;
    let engine = store.engine();
    people(&store, 1_000).await;
    for tenant in ["initech", "umbrella"] {
        store.ensure_tenant(tenant, 1).await.expect("tenant");
        for i in 0..500 {
            let name = format!("{tenant}-{i:04}");
            store
                .insert_user(&user(tenant, &name, 1))
                .await
                .expect("user");
            let id = format!("svc-{tenant}-{i:04}");
            store
                .insert_client(&service(tenant, &id, 1_000 + i))
                .await
                .expect("client");
        }
    }
    for i in 0..500 {
        let id = format!("svc-acme-{i:04}");
        store
            .insert_client(&service("acme", &id, 1_000 + i))
            .await
            .expect("client");
    }
    analyze(db).await;

    let users = UsersQuery {
        tenant: "acme".into(),
        starting: String::new(),
        from: PageFrom::Start,
        limit: 51,
    };
    let listings = [
        ("the first users", users.clone()),
        (
            "the users after a name",
            UsersQuery {
                from: PageFrom::After("ann-500".into()),
                ..users.clone()
            },
        ),
        (
            "the users before a name",
            UsersQuery {
                from: PageFrom::Before("bob-900".into()),
                ..users.clone()
            },
        ),
        (
            "the users whose names start with a text",
            UsersQuery {
                starting: "bob-1".into(),
                ..users.clone()
            },
        ),
    ];
    for (what, listing) in listings {
        let plan = store.explain_users(&listing).await.expect("a plan");
        assert_indexed(engine, "users", &plan, what);
        assert!(
            plan.join("\n").contains("users_tenant_name"),
            "{what}: a walk of the names' index, no sort: {plan:#?}"
        );
    }
    let key = ClientKey {
        created_at: 1_250,
        client_id: "svc-acme-0250".into(),
    };
    let clients = |from| ServiceClientsQuery {
        tenant: "acme".into(),
        from,
        limit: 51,
    };
    let listings = [
        ("the newest service clients", clients(PageFrom::Start)),
        (
            "older service clients",
            clients(PageFrom::After(key.clone())),
        ),
        ("newer service clients", clients(PageFrom::Before(key))),
    ];
    for (what, listing) in listings {
        let plan = store
            .explain_service_clients(&listing)
            .await
            .expect("a plan");
        assert_indexed(engine, "oauth_clients", &plan, what);
        assert!(
            plan.join("\n").contains("oauth_clients_tenant_created"),
            "{what}: a walk of the clients' index: {plan:#?}"
        );
    }
}
