//! The console's long lists, a page at a time (issue 45): audit rows and
//! runs paged by keyset cursors both ways, their filters applied in the
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
use toolhost_runs::{
    NewRun, QueueLimits, Run, RunCursor, RunEffect, RunId, RunQuery, RunSpec, RunState, RunStore,
};
use toolhost_storage::{AuditQuery, Engine, Store};

on_both_engines!(
    audit_rows_page_older_and_newer_by_cursor_with_the_filters_applied_in_the_store,
    runs_page_older_and_newer_by_cursor_and_a_filter_finds_a_run_past_the_first_page,
    the_audit_search_and_the_runs_listing_are_served_by_an_index,
    tenants_page_by_id_each_with_its_people_counted,
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

async fn tenants_page_by_id_each_with_its_people_counted(db: &TestDb) {
    use toolhost_auth::{AuthStore, User};
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
    let mut after = String::new();
    loop {
        let page = store.tenants_counted(&after, 100).await.expect("a page");
        let Some(last) = page.last() else { break };
        after = last.id.clone();
        seen.extend(page);
    }
    let ids: Vec<&str> = seen.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, names.iter().map(String::as_str).collect::<Vec<_>>());
    let t007 = &seen[7];
    assert_eq!((t007.users, t007.disabled, t007.services), (2, 1, 0));
    assert_eq!((seen[8].users, seen[8].disabled), (0, 0));
}
