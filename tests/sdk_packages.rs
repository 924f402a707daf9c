//! The SDK packages as a tool author gets them. `make sdk` (which `make
//! test` runs first) builds them into `target/sdk/`, laid out as the
//! release archive's `sdk/` directory; each installs here into a fresh
//! environment from its file alone, with no registry reachable in
//! principle (pip `--no-index`, npm and cargo `--offline`) and nothing of
//! this checkout on the path, then runs a tool:
//!
//! - Python: a new venv, the wheel installed, a tool declared and called
//!   through `Plugin.call` under `toolhost_sdk.testing.FakeHost`;
//! - TypeScript: a new npm project, the tarball installed (the package
//!   has no dependency to fetch), a tool called under Node 22 with the
//!   host's imports faked (`--import @toolhost/sdk/register`), and the
//!   project type-checked against the package's own types (the `.d.ts`
//!   of the SDK and of the `toolhost:plugin/*` modules);
//! - Rust: a new crate with a path dependency on the unpacked crate, whose
//!   unit test runs a tool (`cargo package`'s verify build of the crate
//!   itself ran in `make sdk`).

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The packages' version: the WIT contract's (`toolhost:plugin@0.2.0`).
const VERSION: &str = "0.2.0";
/// An install and a first run; the Rust one compiles the SDK's
/// dependencies when the shared target directory lacks them.
const PATIENCE: Duration = Duration::from_secs(600);

/// A file or directory of `target/sdk/`; fails naming `make sdk` when absent.
fn built(path: &str) -> PathBuf {
    let full = support::repo().join("target/sdk").join(path);
    assert!(
        full.exists(),
        "{} is missing: run `make sdk` (`make test` runs it first) in {}",
        full.display(),
        support::repo().display()
    );
    full
}

/// Runs `cmd` in `dir`, failing the test with its output unless it succeeds; its stdout.
fn succeed(what: &str, cmd: &mut Command, dir: &Path) -> String {
    let run = support::run(cmd.current_dir(dir), PATIENCE);
    assert!(
        run.ok(),
        "{what}: {}\n--- stdout\n{}\n--- stderr\n{}",
        run.verdict(),
        run.stdout,
        run.stderr
    );
    run.stdout
}

/// A temporary directory outside the checkout.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("create a temp dir");
    assert!(!dir.path().starts_with(support::repo()));
    dir
}

/// A tool declared with the installed package and called through its
/// testing API; prints what it saw as one JSON line.
const PYTHON_CHECK: &str = r#"
import importlib.metadata
import json
from dataclasses import dataclass

import toolhost_sdk
from toolhost_sdk import Ctx, InvalidArguments, Plugin, log
from toolhost_sdk.exports import Authoring, Entities, Prompts, Resources, Tool  # noqa: F401 (the world's exports)
from toolhost_sdk.testing import FakeHost

plugin = Plugin()


@dataclass
class Greeting:
    message: str


@plugin.tool(permission="hello:read", read_only=True)
def greet(ctx: Ctx, name: str) -> Greeting:
    """Greets someone by name.

    Args:
        name: Who to greet.
    """
    log.info("greeting %s", name)
    return Greeting(f"Hello, {name}!")


with FakeHost() as host:
    answer = plugin.call("greet", {"name": "Ada"})
try:
    plugin.call("greet", {"name": 3})
    refused = None
except InvalidArguments as e:
    refused = str(e)
print(json.dumps({
    "version": importlib.metadata.version("toolhost-sdk"),
    "module": toolhost_sdk.__file__,
    "answer": answer.value,
    "logs": host.logs,
    "refused": refused,
}))
"#;

#[test]
fn the_python_wheel_installs_into_a_fresh_venv_and_runs_a_tool() {
    let wheel = built(&format!("python/toolhost_sdk-{VERSION}-py3-none-any.whl"));
    let dir = scratch();
    let venv = dir.path().join("venv");
    succeed(
        "python3 -m venv",
        Command::new("python3").arg("-m").arg("venv").arg(&venv),
        dir.path(),
    );
    succeed(
        "pip install the wheel, no index",
        Command::new(venv.join("bin/pip"))
            .args([
                "install",
                "--no-index",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg(&wheel),
        dir.path(),
    );
    // -I: isolated, so neither PYTHONPATH nor the working directory adds a path.
    let out = succeed(
        "the check script",
        Command::new(venv.join("bin/python")).args(["-I", "-c", PYTHON_CHECK]),
        dir.path(),
    );
    let seen: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(seen["version"], VERSION);
    let module = seen["module"].as_str().expect("the module's file");
    assert!(
        module.starts_with(venv.to_str().expect("a UTF-8 path")),
        "toolhost_sdk came from {module}, not the venv"
    );
    assert_eq!(
        seen["answer"],
        serde_json::json!({"message": "Hello, Ada!"})
    );
    assert_eq!(seen["logs"], serde_json::json!([["info", "greeting Ada"]]));
    assert_eq!(
        seen["refused"],
        "invalid arguments: name: expected a string, got 3"
    );
}

/// The plugin of the npm project: one tool, and the world's five exports.
const TS_APP: &str = r#"import { definePlugin, defineTool, log, s, type Level } from "@toolhost/sdk";
// A WIT module's types, which the package carries with its own.
import type { Query } from "toolhost:plugin/resolver@0.2.0";

export const level: Level = "info";
export const query: Query | undefined = undefined;

const greet = defineTool({
  name: "greet",
  description: "Greets someone by name.",
  permission: "hello:read",
  readOnly: true,
  input: s.object({ name: s.string({ description: "Who to greet." }) }),
  output: s.object({ message: s.string() }),
  run: ({ name }) => {
    log.info(`greeting ${name}`);
    return { message: `Hello, ${name}!` };
  },
});

const plugin = definePlugin({ tools: [greet] });
export const tool = plugin.tool;
export const entities = plugin.entities;
export const prompts = plugin.prompts;
export const resources = plugin.resources;
export const authoring = plugin.authoring;
"#;

const TS_TEST: &str = r#"import assert from "node:assert/strict";
import { test } from "node:test";

import { callTool, fakeHost } from "@toolhost/sdk/testing";

import * as app from "./app.ts";

test("greet answers and logs through the faked host", () => {
  fakeHost.reset();
  assert.deepEqual(callTool(app, "greet", { name: "Ada" }).ok, { message: "Hello, Ada!" });
  assert.deepEqual(fakeHost.logs, [["info", "greeting Ada"]]);
  assert.equal(callTool(app, "greet", { name: 3 }).err?.tag, "invalid-arguments");
});
"#;

/// A consumer's strict type check of the plugin; `skipLibCheck` off, so
/// the package's `.d.ts` files are checked too.
const TS_CONFIG: &str = r#"{
  "compilerOptions": {
    "target": "es2022", "module": "nodenext", "moduleResolution": "nodenext", "lib": ["es2022"],
    "types": [], "strict": true, "noEmit": true, "allowImportingTsExtensions": true, "skipLibCheck": false
  },
  "include": ["app.ts"]
}
"#;

#[test]
fn the_npm_tarball_installs_offline_into_a_fresh_project_and_runs_a_tool_under_node() {
    let tarball = built(&format!("ts/toolhost-sdk-{VERSION}.tgz"));
    let node_bin = support::repo().join(".tools/node/bin");
    let tsc = support::repo().join("plugins/ts/node_modules/.bin/tsc");
    for (tool, by) in [
        (node_bin.join("node"), "make e2e-node"),
        (tsc.clone(), "make ts-plugins"),
    ] {
        assert!(
            tool.exists(),
            "{} is missing: `{by}` installs it",
            tool.display()
        );
    }
    let path = std::env::join_paths(std::iter::once(node_bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("a PATH");
    let dir = scratch();
    let project = dir.path();
    let files = [
        (
            "package.json",
            r#"{"name": "fresh-plugin", "private": true, "type": "module"}"#,
        ),
        ("app.ts", TS_APP),
        ("app.test.ts", TS_TEST),
        ("tsconfig.json", TS_CONFIG),
    ];
    for (name, text) in files {
        fs::write(project.join(name), text).expect("write the project");
    }
    succeed(
        "npm install the tarball, offline",
        Command::new("npm")
            .env("PATH", &path)
            .args([
                "install",
                "--offline",
                "--ignore-scripts",
                "--no-audit",
                "--no-fund",
            ])
            .arg(&tarball),
        project,
    );
    let installed = project.join("node_modules/@toolhost/sdk");
    assert!(
        installed.is_dir() && !installed.is_symlink(),
        "{} is not an installed copy",
        installed.display()
    );
    succeed(
        "the plugin's test under Node",
        Command::new("node").env("PATH", &path).args([
            "--import",
            "@toolhost/sdk/register",
            "--test",
            "app.test.ts",
        ]),
        project,
    );
    succeed(
        "the plugin's type check",
        Command::new(&tsc)
            .env("PATH", &path)
            .args(["-p", "tsconfig.json"]),
        project,
    );
}

/// The plugin crate of the fresh Rust project.
const RUST_LIB: &str = r#"use toolhost_sdk::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

#[derive(Serialize, JsonSchema, Debug, PartialEq)]
struct Greeting {
    message: String,
}

fn greet(_ctx: &Ctx, args: GreetArgs) -> Result<Greeting, ToolError> {
    if args.name.trim().is_empty() {
        return Err(ToolError::InvalidArguments("name must not be blank".into()));
    }
    log::info!("greeting {}", args.name);
    Ok(Greeting { message: format!("Hello, {}!", args.name) })
}

fn tools() -> Vec<Tool> {
    vec![Tool::new("greet", "Greets someone by name.", greet).permission("hello", "read").read_only()]
}

toolhost_sdk::export_plugin!(tools);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greet_greets_and_refuses_a_blank_name() {
        let ctx = Ctx::new("call-1", "tenant-a", "alice");
        let ada = GreetArgs { name: "Ada".into() };
        assert_eq!(greet(&ctx, ada), Ok(Greeting { message: "Hello, Ada!".into() }));
        let blank = GreetArgs { name: " ".into() };
        assert!(matches!(greet(&ctx, blank), Err(ToolError::InvalidArguments(_))));
        assert_eq!(tools().len(), 1);
    }
}
"#;

#[test]
fn the_unpacked_crate_is_a_path_dependency_a_fresh_plugin_builds_and_tests_with() {
    let crate_dir = built(&format!("rust/toolhost-sdk-{VERSION}"));
    built(&format!("rust/toolhost-sdk-{VERSION}.crate"));
    let manifest = fs::read_to_string(crate_dir.join("Cargo.toml")).expect("the crate's manifest");
    assert!(
        manifest.contains(&format!("\nversion = \"{VERSION}\"\n")),
        "the packaged manifest is version {VERSION}:\n{manifest}"
    );
    let path_dependencies: Vec<&str> = manifest
        .split("\n[")
        .filter(|table| table.contains("dependencies") && table.contains("\npath = "))
        .collect();
    assert!(
        path_dependencies.is_empty(),
        "the packaged manifest has path dependencies: {path_dependencies:?}"
    );
    let dir = scratch();
    let project = dir.path();
    let cargo_toml = format!(
        "[package]\nname = \"fresh-plugin\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [lib]\ncrate-type = [\"cdylib\"]\n\n\
         [dependencies]\ntoolhost-sdk = {{ path = {:?} }}\nschemars = \"1\"\n\
         serde = {{ version = \"1\", features = [\"derive\"] }}\n\n[workspace]\n",
        crate_dir.to_str().expect("a UTF-8 path")
    );
    fs::create_dir(project.join("src")).expect("create src/");
    fs::write(project.join("Cargo.toml"), cargo_toml).expect("write Cargo.toml");
    fs::write(project.join("src/lib.rs"), RUST_LIB).expect("write src/lib.rs");
    // The crate's own lock: the versions its verify build compiled, which
    // the shared target directory then holds.
    fs::copy(crate_dir.join("Cargo.lock"), project.join("Cargo.lock")).expect("copy the lock");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    succeed(
        "cargo test of the fresh plugin, offline",
        Command::new(cargo)
            .args(["test", "--offline", "--quiet"])
            .env("CARGO_TARGET_DIR", support::repo().join("target/plugins"))
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS"),
        project,
    );
}
