//! The reference plugins written in other languages than Rust (built by
//! `make python-plugins` and `make ts-plugins` into
//! `target/plugins/{python,ts}/`), as fixtures, and a server reaching the
//! testbench backend that serves one.

use std::path::PathBuf;

use toolhost_fixtures::Fixture;

use super::bench::Backend;
use super::oauth::user_token;
use super::{DEMO_PASSWORD, Server, repo};

/// A language's reference plugin `plugins/LANG/DIR`, built as
/// `target/plugins/LANG/STEM.wasm`.
pub fn reference(lang: &str, dir: &str, stem: &str) -> Fixture {
    let leak = |p: PathBuf| -> &'static str {
        Box::leak(p.to_string_lossy().into_owned().into_boxed_str())
    };
    let component = repo().join(format!("target/plugins/{lang}/{stem}.wasm"));
    assert!(
        component.exists(),
        "{} is not built: run `make {lang}-plugins` (make test does)",
        component.display()
    );
    Fixture {
        name: leak(PathBuf::from(stem)),
        component: leak(component),
        manifest: leak(repo().join(format!("plugins/{lang}/{dir}/toolhost.toml"))),
    }
}

/// A server with `fixture` reaching the testbench backend, sharing the
/// tests' compile cache (a Python component compiles for seconds, so once
/// per machine, not once per server); and the demo admin's token.
pub fn serve(backend: &Backend, fixture: Fixture) -> (Server, String) {
    let cache = repo().join("target/cwasm-e2e");
    let cache = cache.to_string_lossy().into_owned();
    let flags = backend.flags();
    let mut flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    flags.extend(["--cache-dir", &cache]);
    let server = Server::start_with(&[fixture], &flags);
    let token = user_token(&server, "demo", DEMO_PASSWORD);
    (server, token)
}
