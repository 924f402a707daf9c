//! The live catalog's names, built from a store: an incumbent keeps its
//! names against a newcomer whatever their order (the newcomer is refused,
//! loudly), and an approved transfer moves exactly the names taken.
//! Intake and the decisions refuse such a newcomer first; these revisions
//! are put in the store as if they got there anyway. Per tenant: a
//! revision served to chosen tenants is in their catalogs alone, and a
//! pinned tenant keeps its revision while the others move on.

use std::sync::Arc;

use toolhost_catalog::intake::{IntakeOptions, Submission, check};
use toolhost_catalog::{Audience, LiveCatalog, MemoryStore, Pin, Revision, RevisionState};
use toolhost_fixtures::{CONFORMANCE_TASKS, Fixture, HELLO, T_LIMITS_SPIN};
use toolhost_runtime::{Runtime, RuntimeConfig};

/// An empty store at the catalog's version 1.1.0.
fn memory() -> MemoryStore {
    MemoryStore::at(1, "1.1.0")
}

fn options() -> IntakeOptions {
    IntakeOptions {
        allow_unsigned: true,
        ..IntakeOptions::default()
    }
}

/// `fixture`'s component under its manifest edited by `edit`, checked as
/// intake checks it against `against` (the store itself, or an empty one:
/// as if it got in anyway), put in `store` active since `at_ms`: its id.
async fn active(
    store: &MemoryStore,
    against: &MemoryStore,
    runtime: &Runtime,
    fixture: &Fixture,
    edit: &[(&str, &str)],
    at_ms: i64,
) -> String {
    let mut manifest = std::fs::read_to_string(fixture.manifest).expect("a manifest");
    for (from, to) in edit {
        assert!(manifest.contains(from), "{from:?} in {}", fixture.manifest);
        manifest = manifest.replacen(from, to, 1);
    }
    let sub = Submission {
        manifest,
        component: fixture.bytes(),
        envelope: None,
        source: format!("test:{}", fixture.name),
        submitted_by: "u-author".into(),
    };
    let checked = check(against, runtime, sub, &options(), at_ms)
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", fixture.name));
    let rev = Revision {
        state: RevisionState::Active,
        activated_at_ms: Some(at_ms),
        ..(*checked.revision).clone()
    };
    let id = rev.id.clone();
    store.put(rev, Some(checked.revision.component().to_vec()));
    id
}

/// Tool name → the plugin serving it.
fn served_by(catalog: &toolhost_catalog::Catalog) -> Vec<(String, String)> {
    (catalog.tools())
        .map(|t| {
            (
                t.spec().name.to_string(),
                t.plugin().manifest.plugin.name.to_string(),
            )
        })
        .collect()
}

fn pairs(rows: &[(&str, &str)]) -> Vec<(String, String)> {
    rows.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

const RENAMED: (&str, &str) = ("name = \"hello\"", "name = \"acme-greeter\"");

#[tokio::test]
async fn the_plugin_active_first_keeps_its_names_whatever_their_order() {
    let runtime = Arc::new(Runtime::new(RuntimeConfig::default()).expect("runtime"));
    for hello_first in [true, false] {
        let store = Arc::new(memory());
        let (hello_at, acme_at) = if hello_first { (1, 2) } else { (2, 1) };
        let empty = memory();
        let hello = active(&store, &empty, &runtime, &HELLO, &[], hello_at).await;
        let acme = active(&store, &empty, &runtime, &HELLO, &[RENAMED], acme_at).await;
        let live = LiveCatalog::new(store.clone(), runtime.clone(), &options());
        let built = live.build().await.expect("built");
        let (keeper, refused) = if hello_first {
            ("hello", &acme)
        } else {
            ("acme-greeter", &hello)
        };
        let want: Vec<(&str, &str)> = ["add", "greet", "word_stats"].map(|t| (t, keeper)).into();
        assert_eq!(
            served_by(built.catalogs.everyone()),
            pairs(&want),
            "hello first: {hello_first}"
        );
        assert_eq!(built.refused.len(), 1, "{:?}", built.refused);
        let (id, why) = &built.refused[0];
        assert_eq!(id, refused);
        let other = if hello_first {
            "\"hello\""
        } else {
            "\"acme-greeter\""
        };
        assert!(
            why.contains("tool \"greet\"") && why.contains(other),
            "{why}"
        );
    }
}

#[tokio::test]
async fn an_approved_transfer_moves_the_names_taken_and_no_other() {
    let runtime = Arc::new(Runtime::new(RuntimeConfig::default()).expect("runtime"));
    let store = Arc::new(memory());
    active(&store, &store, &runtime, &HELLO, &[], 1).await;
    let taker = [
        ("name = \"conformance-tasks\"", "name = \"acme-greeter\""),
        (
            "[tools.greet]\npermission = \"conformance:run\"",
            "[tools.greet]\npermission = \"conformance:run\"\ntakes_from = \"hello\"",
        ),
    ];
    active(&store, &store, &runtime, &CONFORMANCE_TASKS, &taker, 2).await;
    let live = LiveCatalog::new(store.clone(), runtime.clone(), &options());
    let built = live.build().await.expect("built");
    assert!(built.refused.is_empty(), "{:?}", built.refused);
    let want = [
        ("add", "hello"),
        ("confirm_delete", "acme-greeter"),
        ("failing_job", "acme-greeter"),
        ("greet", "acme-greeter"),
        ("multi_input", "acme-greeter"),
        ("protocol_error_job", "acme-greeter"),
        ("slow_compute", "acme-greeter"),
        ("test_tool_with_task", "acme-greeter"),
        ("word_stats", "hello"),
    ];
    assert_eq!(served_by(built.catalogs.everyone()), pairs(&want));
}

#[tokio::test]
async fn a_revision_served_to_chosen_tenants_is_in_their_catalogs_alone() {
    let runtime = Arc::new(Runtime::new(RuntimeConfig::default()).expect("runtime"));
    let store = Arc::new(memory());
    active(&store, &store, &runtime, &HELLO, &[], 1).await;
    let renamed = [("name = \"t-limits-spin\"", "name = \"acme-tasks\"")];
    let acme = active(&store, &store, &runtime, &T_LIMITS_SPIN, &renamed, 2).await;
    store.change(&acme, |r| {
        r.audience = Audience::of(["acme", "beta"]).expect("valid");
    });
    let live = LiveCatalog::new(store.clone(), runtime.clone(), &options());
    let built = live.build().await.expect("built");
    assert!(built.refused.is_empty(), "{:?}", built.refused);
    let hello = [
        ("add", "hello"),
        ("greet", "hello"),
        ("word_stats", "hello"),
    ];
    let c = &built.catalogs;
    assert_eq!(served_by(c.everyone()), pairs(&hello));
    assert_eq!(served_by(c.for_tenant("demo")), pairs(&hello));
    let with_acme = [
        ("add", "hello"),
        ("greet", "hello"),
        ("ping", "acme-tasks"),
        ("spin", "acme-tasks"),
        ("word_stats", "hello"),
    ];
    assert_eq!(served_by(c.for_tenant("acme")), pairs(&with_acme));
    assert_eq!(served_by(c.for_tenant("beta")), pairs(&with_acme));
    let apart: Vec<&str> = c.tenants().map(|(t, _)| t).collect();
    assert_eq!(apart, ["acme", "beta"]);
    let plugins = |tenant: &str| c.for_tenant(tenant).plugins().count();
    assert_eq!((plugins("demo"), plugins("acme")), (1, 2));
    assert_eq!(c.for_tenant("acme").version(), c.everyone().version());
    // What tells a session its own catalog changed: demo's is everyone's.
    let digest = |tenant: &str| c.for_tenant(tenant).contents_digest();
    assert_eq!(digest("demo"), c.everyone().contents_digest());
    assert_eq!(digest("acme"), digest("beta"));
    assert_ne!(digest("acme"), digest("demo"));
}

#[tokio::test]
async fn a_pinned_tenant_keeps_its_revision_while_the_others_move_on() {
    let runtime = Arc::new(Runtime::new(RuntimeConfig::default()).expect("runtime"));
    let store = Arc::new(memory());
    let old = active(&store, &store, &runtime, &HELLO, &[], 1).await;
    store.change(&old, |r| r.state = RevisionState::Approved);
    let newer = [("version = \"0.1.0\"", "version = \"0.2.0\"")];
    let new = active(&store, &store, &runtime, &HELLO, &newer, 2).await;
    assert_ne!(old, new);
    store.pin(Pin {
        tenant: "demo".into(),
        plugin: "hello".into(),
        revision: old.clone(),
        pinned_by: "u-ops".into(),
        pinned_at_ms: 3,
    });
    let live = LiveCatalog::new(store.clone(), runtime.clone(), &options());
    let built = live.build().await.expect("built");
    assert!(built.refused.is_empty(), "{:?}", built.refused);
    let revision_of = |catalog: &toolhost_catalog::Catalog| {
        let greet = catalog.lookup("greet").expect("greet is served");
        greet.plugin().revision.clone().expect("from the store")
    };
    let c = &built.catalogs;
    assert_eq!(revision_of(c.for_tenant("demo")), old);
    assert_eq!(revision_of(c.for_tenant("acme")), new);
    assert_eq!(revision_of(c.everyone()), new);

    // A pin to a revision pulled since (its signer revoked) serves the
    // tenant nothing of the plugin, loudly.
    store.change(&old, |r| r.state = RevisionState::Withdrawn);
    let built = live.build().await.expect("built");
    assert!(built.catalogs.for_tenant("demo").lookup("greet").is_none());
    assert_eq!(revision_of(built.catalogs.everyone()), new);
    assert_eq!(built.refused.len(), 1, "{:?}", built.refused);
    assert_eq!(built.refused[0].0, old);
}
