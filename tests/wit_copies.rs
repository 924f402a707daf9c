//! The WIT contract has one source, the repository's `wit/`; a package that
//! must build on its own carries a copy (the Rust SDK's `plugins/sdk/wit/`,
//! which `wit_bindgen::generate!` reads, so `cargo package` holds it). Every
//! `wit/` directory under `plugins/` is such a copy and must be the
//! contract byte for byte: the same files, the same bytes. After a change
//! to `wit/`, copy it: `cp wit/*.wit plugins/sdk/wit/`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The repository root.
fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Directories never searched for copies: installed or built things.
const SKIPPED: &[&str] = &["node_modules", "target", ".venv", "dist", "__pycache__"];

/// Every `wit` directory under `dir`, depth first.
fn wit_dirs(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !path.is_dir() || path.is_symlink() || SKIPPED.contains(&name) {
            continue;
        }
        if name == "wit" {
            found.push(path);
        } else {
            wit_dirs(&path, found);
        }
    }
}

/// The files of a WIT directory, by name, with their bytes.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().expect("a file name").to_string_lossy();
            let bytes = fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
            (name.into_owned(), bytes)
        })
        .collect()
}

/// What differs between the contract and a copy, a line per file.
fn differences(
    contract: &BTreeMap<String, Vec<u8>>,
    copy: &BTreeMap<String, Vec<u8>>,
) -> Vec<String> {
    let names = contract
        .keys()
        .chain(copy.keys())
        .collect::<std::collections::BTreeSet<_>>();
    names
        .into_iter()
        .filter_map(|name| match (contract.get(name), copy.get(name)) {
            (Some(a), Some(b)) if a == b => None,
            (Some(_), Some(_)) => Some(format!("{name}: differs")),
            (Some(_), None) => Some(format!("{name}: missing from the copy")),
            (None, _) => Some(format!("{name}: not in the contract")),
        })
        .collect()
}

#[test]
fn every_wit_copy_under_plugins_is_the_contract_byte_for_byte() {
    let contract = contents(&repo().join("wit"));
    assert!(
        contract.contains_key("world.wit"),
        "wit/ holds the contract"
    );
    let mut copies = Vec::new();
    wit_dirs(&repo().join("plugins"), &mut copies);
    let rust_sdk = repo().join("plugins/sdk/wit");
    assert!(
        copies.contains(&rust_sdk),
        "the Rust SDK carries its copy in {} (found: {copies:?})",
        rust_sdk.display()
    );
    let stale: Vec<String> = copies
        .iter()
        .flat_map(|copy| {
            let at = copy.strip_prefix(repo()).expect("under the repository");
            let diffs = differences(&contract, &contents(copy));
            diffs
                .into_iter()
                .map(move |d| format!("  {}/{d}", at.display()))
        })
        .collect();
    assert!(
        stale.is_empty(),
        "WIT copies differ from the contract in wit/ (copy it: cp wit/*.wit <copy>/):\n{}",
        stale.join("\n")
    );
}

#[test]
fn a_changed_copy_is_told_apart_from_the_contract() {
    let contract = BTreeMap::from([
        ("world.wit".to_owned(), b"package a;".to_vec()),
        ("log.wit".to_owned(), b"interface log {}".to_vec()),
    ]);
    let mut copy = contract.clone();
    assert!(differences(&contract, &copy).is_empty());
    copy.insert("log.wit".into(), b"interface log { }".to_vec());
    copy.remove("world.wit");
    copy.insert("extra.wit".into(), Vec::new());
    assert_eq!(
        differences(&contract, &copy),
        [
            "extra.wit: not in the contract",
            "log.wit: differs",
            "world.wit: missing from the copy"
        ]
    );
}
