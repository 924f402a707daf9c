//! Definition digests of real plugins: a later revision that keeps a
//! tool's definition keeps its digest whatever its component's bytes, and
//! a revision that changes what a tool is served as, or a reviewed fact
//! behind it, changes that tool's digest and no other.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toolhost_catalog::{Catalog, LoadOptions, pin};
use toolhost_fixtures::{Fixture, HELLO, HELLO_NEXT};
use toolhost_runtime::{Runtime, RuntimeConfig};
use toolhost_types::Digest;

/// Each tool's definition digest, by name, with the plugin's component
/// digest, once `f` is pinned into a fresh directory and `edit`ed there.
async fn digests(f: &Fixture, edit: impl FnOnce(&Path)) -> (BTreeMap<String, Digest>, Digest) {
    let dir = tempfile::tempdir().expect("temp");
    let manifest: PathBuf =
        pin(Path::new(f.manifest), Path::new(f.component), dir.path()).expect("pins");
    edit(&manifest);
    let runtime = Runtime::new(RuntimeConfig::default()).expect("runtime builds");
    let loaded = Catalog::load_dir(dir.path(), &runtime, &LoadOptions::default()).await;
    assert!(loaded.errors.is_empty(), "loads: {:?}", loaded.errors);
    let tools = (loaded.catalog.tools())
        .map(|t| (t.spec().name.to_string(), *t.definition_digest()))
        .collect();
    let plugin = loaded.catalog.plugins().next().expect("one plugin");
    (tools, *plugin.plugin.digest())
}

/// Appends `text` to the manifest at `path`.
fn append(path: &Path, text: &str) {
    let old = std::fs::read_to_string(path).expect("read");
    std::fs::write(path, format!("{old}\n{text}")).expect("write");
}

/// Replaces `from` with `to` in the manifest at `path`.
fn replace(path: &Path, from: &str, to: &str) {
    let old = std::fs::read_to_string(path).expect("read");
    assert!(old.contains(from), "{from:?} in {old}");
    std::fs::write(path, old.replacen(from, to, 1)).expect("write");
}

#[tokio::test]
async fn a_revision_that_changes_only_the_components_bytes_keeps_every_digest() {
    let (first, first_component) = digests(&HELLO, |_| ()).await;
    let (next, next_component) = digests(&HELLO_NEXT, |_| ()).await;
    assert_ne!(first_component, next_component, "other bytes");
    for (name, digest) in &first {
        assert_eq!(next.get(name), Some(digest), "{name} kept its digest");
    }
    assert!(next.contains_key("shout") && !first.contains_key("shout"));
    // And the same definition has the same digest on every load.
    assert_eq!(digests(&HELLO, |_| ()).await.0, first);
}

#[tokio::test]
async fn a_reviewed_fact_behind_a_tool_changes_its_digest_and_no_other() {
    let (first, _) = digests(&HELLO, |_| ()).await;
    // The reviewer's risk floor on greet: its calls are gated now.
    let (floored, _) = digests(&HELLO, |m| {
        replace(m, "[tools.greet]\n", "[tools.greet]\nrisk = \"high\"\n")
    })
    .await;
    assert_ne!(floored["greet"], first["greet"]);
    assert_eq!(
        (&floored["add"], &floored["word_stats"]),
        (&first["add"], &first["word_stats"])
    );
    // A budget is the plugin's, not a tool's definition.
    let (limited, _) = digests(&HELLO, |m| append(m, "[limits]\ntimeout = \"3s\"\n")).await;
    assert_eq!(limited, first);
}
