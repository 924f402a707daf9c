//! Releases through a real OCI registry (Debian's distribution 2.8, which
//! has no referrers API): an author pushes a signed release, the host pulls
//! it by digest into the same intake and review as a directory; a tampered
//! blob, an unsigned release and a reference to nothing are refused, and
//! nothing is stored.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::bench::request_at;
use support::registry::Registry;
use support::{Server, new_signer, pin_into, python3, sign, toolhost, trust};
use toolhost_fixtures::HELLO_NEXT;

/// `toolhost ARGS… --database-url URL`, which must succeed: its stdout.
fn admin(url: &str, args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["--database-url", url]);
    toolhost(&all)
}

/// `toolhost plugin submit SOURCE --as alice`, which must fail: its stderr.
fn refused(url: &str, source: &str) -> String {
    let out = support::cli_command()
        .args([
            "plugin",
            "submit",
            source,
            "--as",
            "alice",
            "--database-url",
            url,
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run toolhost");
    assert!(
        !out.status.success(),
        "submitting {source} should have been refused; it printed {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `alice` may submit (tenant `demo`); `bob` may review.
fn people(url: &str) {
    for (role, permission) in [("author", "catalog:submit"), ("reviewer", "catalog:review")] {
        admin(url, &["role", "add", role, "--tenant", "demo"]);
        admin(
            url,
            &["role", "permit", role, permission, "--tenant", "demo"],
        );
    }
    for (user, role) in [("alice", "author"), ("bob", "reviewer")] {
        admin(url, &["user", "add", user, "--tenant", "demo"]);
        admin(url, &["grant", role, user, "--tenant", "demo"]);
    }
}

/// `hello` 0.2.0 pinned into `dir`, signed with `key` if one is given.
fn release(dir: &Path, key: Option<&Path>) {
    let manifest = pin_into(&HELLO_NEXT, dir);
    if let Some(key) = key {
        sign(&manifest, key);
    }
}

/// A registry; a host whose store knows the reviewers, and its database
/// URL; the author's scratch directory (`keys/` and the release), and in it
/// alice's signed release of `hello` 0.2.0.
fn signed_release() -> (Registry, Server, String, PathBuf, PathBuf) {
    let registry = Registry::start();
    let server = Server::start(&[]);
    let url = server.database_url().to_owned();
    people(&url);
    let work = server.scratch("author");
    let key = new_signer("alice", &work.join("keys"));
    let dir = work.join("hello-0.2.0");
    release(&dir, Some(&key));
    (registry, server, url, work, dir)
}

/// `toolhost plugin push DIR REFERENCE`: the pinned reference it prints.
fn push(dir: &Path, reference: &str) -> String {
    toolhost(&["plugin", "push", &dir.to_string_lossy(), reference])
        .trim()
        .to_owned()
}

/// Submits `source` as `alice`: the revision's id and what intake said.
fn submit(url: &str, source: &str) -> (String, String) {
    let out = admin(url, &["plugin", "submit", source, "--as", "alice"]);
    let id = out.split_whitespace().next().expect("a revision id");
    let what = if out.contains("already submitted") {
        "already submitted"
    } else {
        "submitted"
    };
    (id.to_owned(), what.to_owned())
}

fn show(url: &str, id: &str) -> Value {
    serde_json::from_str(&admin(url, &["plugin", "review", "show", id])).expect("JSON")
}

fn pending(url: &str) -> String {
    admin(url, &["plugin", "review", "list"])
}

/// The SHA-256 of the file at `path`, by Python's hashlib (not the host's code).
fn sha256_hex(path: &Path) -> String {
    python3(
        "import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())",
        &[&path.to_string_lossy()],
    )
}

#[test]
fn a_signed_release_pushed_to_a_registry_is_submitted_by_digest_or_tag_as_one_pending_revision() {
    let (registry, server, url, work, dir) = signed_release();

    let tag = format!("oci://{}/authors/hello:0.2.0", registry.host());
    let pinned = push(&dir, &tag);
    let prefix = format!("oci://{}/authors/hello@sha256:", registry.host());
    assert!(
        pinned.starts_with(&prefix) && pinned.len() == prefix.len() + 64,
        "{pinned}"
    );
    trust("alice", &work.join("keys/alice.pub"), "hello", &url);

    let (id, what) = submit(&url, &pinned);
    assert_eq!(what, "submitted");
    let shown = show(&url, &id);
    assert_eq!(shown["state"], "pending_review");
    assert_eq!(
        shown["source"],
        pinned.as_str(),
        "reviewers see the pinned reference"
    );
    assert_eq!(shown["signer"], "alice");
    let component = dir.join("hello_next.wasm");
    assert_eq!(shown["component_sha256"], sha256_hex(&component).as_str());
    let tools: Vec<&str> = shown["diff"]["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .filter_map(|c| c["tool"].as_str())
        .collect();
    assert!(tools.contains(&"shout"), "{shown:#}");

    // The directory holds the same release: intake sees the same revision
    // (plugin, component, manifest), so the same diff.
    let (from_dir, what) = submit(&url, &dir.to_string_lossy());
    assert_eq!(
        (from_dir.as_str(), what.as_str()),
        (id.as_str(), "already submitted")
    );
    assert_eq!(show(&url, &id)["diff"], shown["diff"]);
    // The tag resolves to the same digest: the same revision again.
    let (by_tag, what) = submit(&url, &tag);
    assert_eq!(
        (by_tag.as_str(), what.as_str()),
        (id.as_str(), "already submitted")
    );
    assert_eq!(show(&url, &id)["source"], pinned.as_str());

    let out = admin(
        &url,
        &[
            "plugin",
            "review",
            "approve",
            &id,
            "--as",
            "bob",
            "--reason",
            "read the diff",
        ],
    );
    assert!(out.contains("approved and active"), "{out}");
    let started = Instant::now();
    while !listed(&server).iter().any(|t| t == "shout") {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "shout is not served"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_blob_whose_bytes_no_longer_match_its_digest_is_refused_and_nothing_is_stored() {
    // The host serves until the end of the test; only its database is used.
    let (registry, _server, url, work, dir) = signed_release();
    let pinned = push(
        &dir,
        &format!("oci://{}/authors/hello:0.2.0", registry.host()),
    );
    trust("alice", &work.join("keys/alice.pub"), "hello", &url);

    // The registry's disk now holds other bytes, of the same length, under
    // the component's digest.
    let component = fs::read(dir.join("hello_next.wasm")).expect("the component");
    let expected = sha256_hex(&dir.join("hello_next.wasm"));
    let blob = registry.blob_path(&expected);
    assert_eq!(fs::read(&blob).expect("the stored blob"), component);
    let tampered: Vec<u8> = component.iter().map(|b| b ^ 0xff).collect();
    fs::write(&blob, &tampered).expect("tamper with the blob");
    let actual = sha256_hex(&blob);

    let err = refused(&url, &pinned);
    assert!(err.contains("DIGEST_MISMATCH"), "{err}");
    assert!(err.contains("component layer (application/wasm)"), "{err}");
    assert!(err.contains(&format!("sha256:{expected}")), "{err}");
    assert!(err.contains(&format!("sha256:{actual}")), "{err}");
    assert_eq!(pending(&url), "", "nothing stored");
}

#[test]
fn an_unsigned_release_is_refused_unsigned_and_a_reference_to_nothing_not_found() {
    let registry = Registry::start();
    let server = Server::start(&[]);
    let url = server.database_url().to_owned();
    people(&url);
    let dir = server.scratch("author").join("hello-0.2.0");
    release(&dir, None);
    let pinned = push(
        &dir,
        &format!("oci://{}/authors/hello:0.2.0", registry.host()),
    );

    let err = refused(&url, &pinned);
    assert!(err.contains("UNSIGNED"), "{err}");
    let digest = pinned.rsplit('@').next().expect("a digest");
    let host = registry.host();
    for nothing in [
        format!("oci://{host}/nobody/here@{digest}"),
        format!("oci://{host}/authors/hello@sha256:{}", "0".repeat(64)),
        format!("oci://{host}/authors/hello:9.9.9"),
    ] {
        let err = refused(&url, &nothing);
        assert!(err.contains("NOT_FOUND"), "{nothing}: {err}");
    }
    assert_eq!(pending(&url), "", "nothing stored");
}

/// The tool names a stateless `tools/list` shows.
fn listed(server: &Server) -> Vec<String> {
    let answer = request_at(
        &server.url,
        server.token(),
        "tools/list",
        "",
        serde_json::json!({}),
    );
    answer["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}
