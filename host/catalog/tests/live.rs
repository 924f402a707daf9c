//! The live catalog's names, built from a store: an incumbent keeps its
//! names against a newcomer whatever their order (the newcomer is refused,
//! loudly), and an approved transfer moves exactly the names taken.
//! Intake and the decisions refuse such a newcomer first; these revisions
//! are put in the store as if they got there anyway.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use toolhost_catalog::intake::{IntakeOptions, Submission, check};
use toolhost_catalog::{
    CatalogFuture, CatalogState, CatalogStore, LiveCatalog, NewRevision, Revision, RevisionState,
    SignerRecord, Submitted,
};
use toolhost_fixtures::{CONFORMANCE_TASKS, Fixture, HELLO};
use toolhost_runtime::{Runtime, RuntimeConfig};
use toolhost_types::Digest;

/// A store in memory: revisions and component bytes, no signers.
#[derive(Default)]
struct Memory {
    revisions: Mutex<Vec<Revision>>,
    blobs: Mutex<HashMap<Digest, Vec<u8>>>,
}

fn ready<'a, T: Send + 'a>(value: T) -> CatalogFuture<'a, T> {
    Box::pin(async move { Ok(value) })
}

impl CatalogStore for Memory {
    fn catalog_state(&self) -> CatalogFuture<'_, CatalogState> {
        ready(CatalogState {
            generation: 1,
            version: "1.1.0".into(),
        })
    }
    fn submit(&self, _: NewRevision) -> CatalogFuture<'_, Submitted> {
        unreachable!("the tests put revisions in place")
    }
    fn revision<'a>(&'a self, id: &'a str) -> CatalogFuture<'a, Option<Revision>> {
        let all = self.revisions.lock().expect("lock");
        ready(all.iter().find(|r| r.id == id).cloned())
    }
    fn revisions<'a>(
        &'a self,
        plugin: Option<&'a str>,
        state: Option<RevisionState>,
    ) -> CatalogFuture<'a, Vec<Revision>> {
        let all = self.revisions.lock().expect("lock");
        let picked = (all.iter())
            .filter(|r| plugin.is_none_or(|p| r.plugin == p) && state.is_none_or(|s| r.state == s))
            .cloned()
            .collect();
        ready(picked)
    }
    fn served(&self) -> CatalogFuture<'_, Vec<Revision>> {
        self.revisions(None, Some(RevisionState::Active))
    }
    fn blob<'a>(&'a self, digest: &'a Digest) -> CatalogFuture<'a, Option<Vec<u8>>> {
        ready(self.blobs.lock().expect("lock").get(digest).cloned())
    }
    fn trust_signer(&self, _: SignerRecord) -> CatalogFuture<'_, ()> {
        ready(())
    }
    fn revoke_signer<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: &'a str,
        _: i64,
    ) -> CatalogFuture<'a, ()> {
        ready(())
    }
    fn signers(&self) -> CatalogFuture<'_, Vec<SignerRecord>> {
        ready(Vec::new())
    }
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
    store: &Memory,
    against: &Memory,
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
    let digest = rev.component_digest;
    store
        .blobs
        .lock()
        .expect("lock")
        .insert(digest, checked.revision.component().to_vec());
    let id = rev.id.clone();
    store.revisions.lock().expect("lock").push(rev);
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
        let store = Arc::new(Memory::default());
        let (hello_at, acme_at) = if hello_first { (1, 2) } else { (2, 1) };
        let empty = Memory::default();
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
            served_by(&built.catalog),
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
    let store = Arc::new(Memory::default());
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
        ("failing_job", "acme-greeter"),
        ("greet", "acme-greeter"),
        ("protocol_error_job", "acme-greeter"),
        ("slow_compute", "acme-greeter"),
        ("word_stats", "hello"),
    ];
    assert_eq!(served_by(&built.catalog), pairs(&want));
}
