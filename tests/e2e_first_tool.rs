//! The book's "Your first tool" (`docs/authors/first-tool.md`), followed as
//! written: for each language, its `first-tool` block runs in an empty
//! directory with the built `toolhost` first on `PATH` (as the page asks),
//! and the call at its end answers the page's `first-tool: answer` block.
//! The project it leaves is then served like any plugin and called from the
//! Python MCP SDK in both eras (`tests/e2e/python_client.py`).
//!
//! Nothing of the blocks is rewritten: a step of the page that stops working
//! fails here. The one thing the test adds is the environment a reader of
//! this repository has: `make test` built the binary and the SDK packages
//! (`target/sdk`, beside `target/debug`: the SDK `toolhost new` takes),
//! Node 22 is first on `PATH`, and the Rust build shares the plugin
//! workspace's target directory (`CARGO_TARGET_DIR`, which the Rust
//! project's `build.sh` honours), so only the new crate is compiled. The
//! same path from a release, with the checkout hidden, is `e2e_release`.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use support::oauth::user_token;
use support::{DEMO_PASSWORD, Server, Tools};
use toolhost_fixtures::Fixture;

/// The page of the book whose blocks this test follows.
const PAGE: &str = "docs/authors/first-tool.md";

/// The fenced block right after `<!-- first-tool: NAME -->` on the page.
fn page_block(name: &str) -> String {
    let page = std::fs::read_to_string(support::repo().join(PAGE)).expect(PAGE);
    let marker = format!("<!-- first-tool: {name} -->\n");
    let at = page
        .find(&marker)
        .unwrap_or_else(|| panic!("{PAGE} has no {marker:?}"));
    let rest = &page[at + marker.len()..];
    let body = rest
        .strip_prefix("```sh\n")
        .or_else(|| rest.strip_prefix("```json\n"))
        .unwrap_or_else(|| panic!("{marker:?} is not followed by a fenced sh or json block"));
    let end = body.find("\n```").expect("the block ends");
    body[..=end].to_owned()
}

/// Runs `lang`'s block in a fresh directory; checks it ends with the
/// page's answer; returns the directory and the project it wrote.
fn follow(lang: &str) -> (tempfile::TempDir, PathBuf) {
    let script = page_block(lang);
    let answer = page_block("answer");
    let tmp = tempfile::tempdir().expect("a temp dir");
    let bin = Path::new(env!("CARGO_BIN_EXE_toolhost"))
        .parent()
        .expect("the binary's directory")
        .to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&Tools::require().path())),
    )
    .expect("a PATH");
    let mut cmd = Command::new("sh");
    cmd.args(["-eu", "-c", &script])
        .current_dir(tmp.path())
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", support::repo().join("target/plugins"))
        .stdin(Stdio::null());
    let run = support::run(&mut cmd, Duration::from_secs(600));
    assert!(
        run.ok(),
        "{PAGE}'s {lang} block: {}\n{script}\n{}\n{}",
        run.verdict(),
        run.stdout,
        run.stderr
    );
    assert!(
        run.stdout.trim_end().ends_with(answer.trim_end()),
        "{PAGE}'s {lang} block answers what the page shows:\n{}\n{}",
        run.stdout,
        run.stderr
    );
    let project = tmp.path().join("my-tool");
    (tmp, project)
}

/// The project the page's block built, served and called from the
/// Python SDK (which calls `greet` with Ada and checks the structured
/// answer, in both eras).
fn served(project: &Path) {
    let tools = Tools::require();
    let leak =
        |p: &Path| -> &'static str { Box::leak(p.to_string_lossy().into_owned().into_boxed_str()) };
    let fixture = Fixture {
        name: "my-tool",
        component: leak(&project.join("my_tool.wasm")),
        manifest: leak(&project.join("toolhost.toml")),
    };
    // The block's own compile cache, where it has one: compiled once.
    let cache = project.join("cache");
    let flags: Vec<String> = if cache.is_dir() {
        vec!["--cache-dir".into(), cache.to_string_lossy().into_owned()]
    } else {
        Vec::new()
    };
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let server = Server::start_with(&[fixture], &flags);
    let token = user_token(&server, "demo", DEMO_PASSWORD);
    let cmd = tools.python("python_client.py", &[&server.url]);
    server.run_client_as("python client", cmd, Duration::from_secs(180), &token);
}

#[test]
fn the_books_first_tool_in_rust_builds_answers_and_is_served() {
    let (_tmp, project) = follow("rust");
    served(&project);
}

#[test]
fn the_books_first_tool_in_python_builds_answers_and_is_served() {
    let (_tmp, project) = follow("python");
    served(&project);
}

#[test]
fn the_books_first_tool_in_typescript_builds_answers_and_is_served() {
    let (_tmp, project) = follow("ts");
    served(&project);
}
