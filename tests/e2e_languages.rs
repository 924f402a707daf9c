//! Tools written in other languages than Rust, served like any plugin: each
//! language's reference plugin (built by `make python-plugins` and `make
//! ts-plugins` into `target/plugins/{python,ts}/`) is pinned, signed and
//! served; the Python MCP SDK lists and calls its `greet_<lang>` in both eras and
//! gets structured output; its resolving tool asks its question as a
//! clarification; and 64 concurrent calls of the Python tool all succeed.
//! The host's compile cache is shared by these tests, so a component is
//! compiled once per machine, not once per server.

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};
use support::bench::{Backend, call_at};
use support::oauth::user_token;
use support::{DEMO_PASSWORD, Server, Tools};
use toolhost_fixtures::Fixture;

/// A language's reference plugin `plugins/LANG/DIR`, built as
/// `target/plugins/LANG/STEM.wasm`.
fn reference(lang: &str, dir: &str, stem: &str) -> Fixture {
    let leak = |p: PathBuf| -> &'static str {
        Box::leak(p.to_string_lossy().into_owned().into_boxed_str())
    };
    let repo = support::repo();
    let component = repo.join(format!("target/plugins/{lang}/{stem}.wasm"));
    assert!(
        component.exists(),
        "{} is not built: run `make {lang}-plugins` (make test does)",
        component.display()
    );
    Fixture {
        name: leak(PathBuf::from(stem)),
        component: leak(component),
        manifest: leak(repo.join(format!("plugins/{lang}/{dir}/toolhost.toml"))),
    }
}

/// A server with `fixture` reaching the testbench backend, sharing the
/// tests' compile cache; and the demo admin's token.
fn serve(backend: &Backend, fixture: Fixture) -> (Server, String) {
    let cache = support::repo().join("target/cwasm-e2e");
    let cache = cache.to_string_lossy().into_owned();
    let flags = backend.flags();
    let mut flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    flags.extend(["--cache-dir", &cache]);
    let server = Server::start_with(&[fixture], &flags);
    let token = user_token(&server, "demo", DEMO_PASSWORD);
    (server, token)
}

fn structured(a: &Value) -> Value {
    assert_eq!(a["result"]["isError"], json!(false), "{a}");
    a["result"]["structuredContent"].clone()
}

/// The Python SDK lists and calls `greet_<lang>` (tests/e2e/python_client.py, both
/// eras); the resolving tool asks for the project it was not given.
fn served_and_called(lang: &str, stem: &str) -> (Backend, Server, String) {
    let tools = Tools::require();
    let backend = Backend::start();
    let (server, token) = serve(&backend, reference(lang, "hello", stem));
    // Tool names are unique in a catalog: each language's are suffixed.
    let suffix = stem.trim_start_matches("hello_");
    let (greet, describe) = (
        format!("greet_{suffix}"),
        format!("describe_project_{suffix}"),
    );
    let cmd = tools.python("python_client.py", &[&server.url, &greet]);
    server.run_client_as(
        &format!("{lang} via the python client"),
        cmd,
        std::time::Duration::from_secs(180),
        &token,
    );
    let asked = structured(&call_at(&server.url, &token, &describe, json!({})));
    assert_eq!(
        asked["reason"],
        json!("missing_required"),
        "{lang}: {asked}"
    );
    assert_eq!(asked["field"], json!("project"), "{lang}: {asked}");
    let answered = structured(&call_at(
        &server.url,
        &token,
        &describe,
        json!({"project": "payments"}),
    ));
    assert_eq!(answered["name"], json!("payments"), "{lang}: {answered}");
    (backend, server, token)
}

#[test]
fn a_python_tool_is_served_called_from_the_python_sdk_and_asks_its_question() {
    let (_backend, server, token) = served_and_called("python", "hello_py");
    // 64 at once: the sandbox pool holds them all (a Python component
    // creates 14 core instances).
    let url = server.url.clone();
    let threads: Vec<_> = (0..64)
        .map(|i| {
            let (url, token) = (url.clone(), token.clone());
            std::thread::spawn(move || {
                call_at(&url, &token, "greet_py", json!({"name": format!("n{i}")}))
            })
        })
        .collect();
    for (i, t) in threads.into_iter().enumerate() {
        let a = t.join().expect("joined");
        assert_eq!(
            structured(&a),
            json!({"message": format!("Hello, n{i}!")}),
            "{a}"
        );
    }
}

#[test]
fn a_typescript_tool_is_served_called_from_the_python_sdk_and_asks_its_question() {
    served_and_called("ts", "hello_ts");
}
