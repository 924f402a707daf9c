//! The tool author's commands that need no server, driving the real
//! binary: `toolhost call` runs a resolving tool over an entities fixture
//! (and asks, exit 2, when a name is ambiguous there) or over the plugin's
//! own entities against its backend; `toolhost plugin inspect` shows what a
//! component imports and exports and the tools and kinds it declares;
//! `toolhost new` writes each language's project (and refuses an existing
//! one or a bad name); `toolhost dev` serves a Rust and a TypeScript project
//! and reloads a changed tool into an open session. That a new project
//! builds, passes its test and is served is `e2e_first_tool`, which follows
//! the README.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use support::bench::{BACKEND_TOKEN, Backend};
use support::{DEMO_PASSWORD, Tools, pin_into};
use toolhost_fixtures::{HELLO, TESTBENCH};

/// `toolhost ARGS…`: its exit code and stdout, and its stderr.
fn toolhost(args: &[&str]) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    cmd.args(args).stdin(Stdio::null());
    let run = support::run(&mut cmd, Duration::from_secs(120));
    (run.status.and_then(|s| s.code()), run.stdout, run.stderr)
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The testbench plugin pinned into a fresh directory: (tempdir, dir).
fn testbench_dir() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let dir = tmp.path().join("plugins");
    pin_into(&TESTBENCH, &dir);
    (tmp, dir)
}

fn write(path: &Path, v: &Value) {
    std::fs::write(path, v.to_string()).expect("write the fixture");
}

#[test]
fn call_resolves_names_over_a_fixture_and_asks_when_a_name_is_ambiguous() {
    let (tmp, dir) = testbench_dir();
    let fixture = tmp.path().join("entities.json");
    // Two projects named payments (another tenant's row is dropped), and a
    // third one elsewhere: the name alone cannot say which.
    write(
        &fixture,
        &json!({"project": [
            {"id": 1, "name": "payments", "detail": "the shop"},
            {"id": 2, "name": "payments", "detail": "the bank"},
            {"id": 3, "name": "auth"},
            {"id": 9, "name": "payments", "tenant": "acme"}
        ]}),
    );
    let dir_s = dir.to_string_lossy();
    let fixture_s = fixture.to_string_lossy();
    let (code, out, err) = toolhost(&[
        "call",
        "--plugins",
        &dir_s,
        "--entities",
        &fixture_s,
        "--tenant",
        "demo",
        "find_scenarios",
        r#"{"project": "payments"}"#,
    ]);
    assert_eq!(code, Some(2), "a question exits 2: {out}\n{err}");
    let q = json_of(&out)["needs_clarification"].clone();
    assert_eq!(q["reason"], json!("ambiguous"), "{q}");
    assert_eq!(q["field"], json!("project"), "{q}");
    let ids: Vec<i64> = q["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .map(|c| c["id"].as_i64().expect("an id"))
        .collect();
    assert_eq!(
        ids,
        [1, 2],
        "the other tenant's namesake is not a candidate: {q}"
    );
    assert!(err.contains("NEEDS_CLARIFICATION"), "{err}");

    // A fixture that does not list a kind the tool resolves is refused.
    write(&fixture, &json!({"environment": []}));
    let (code, _, err) = toolhost(&[
        "call",
        "--plugins",
        &dir_s,
        "--entities",
        &fixture_s,
        "find_scenarios",
        r#"{"project": "payments"}"#,
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("resolves \"project\""), "{err}");
}

#[test]
fn call_lists_entities_with_the_plugin_against_its_backend_and_answers() {
    let backend = Backend::start();
    let (tmp, dir) = testbench_dir();
    let token = tmp.path().join("tb.token");
    std::fs::write(&token, BACKEND_TOKEN).expect("write the token");
    let url = format!("testbench={}", backend.running.url());
    let token_arg = format!("testbench={}", token.display());
    let dir_s = dir.to_string_lossy();
    let (code, out, err) = toolhost(&[
        "call",
        "--plugins",
        &dir_s,
        "--backend",
        &url,
        "--backend-token-file",
        &token_arg,
        "--tenant",
        "demo",
        "find_scenarios",
        r#"{"project": "payments", "tag": "smoke"}"#,
    ]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let answer = json_of(&out);
    let names: Vec<&str> = answer["scenarios"]
        .as_array()
        .unwrap_or_else(|| panic!("scenarios: {answer}"))
        .iter()
        .map(|s| s["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(names, ["Login flow", "Cart"], "{answer}");
    assert_eq!(
        backend.requests("GET /api/projects"),
        1,
        "one listing of the projects"
    );
    assert!(!out.contains(BACKEND_TOKEN) && !err.contains(BACKEND_TOKEN));
}

#[test]
fn inspect_shows_what_a_component_imports_exports_and_declares() {
    let (code, out, err) = toolhost(&["plugin", "inspect", TESTBENCH.component]);
    assert_eq!(code, Some(0), "{err}");
    let shown = json_of(&out);
    let has = |list: &str, item: &str| {
        shown[list]
            .as_array()
            .unwrap_or_else(|| panic!("{list}: {shown}"))
            .iter()
            .any(|v| v.as_str().is_some_and(|s| s.starts_with(item)))
    };
    assert!(has("exports", "toolhost:plugin/tool@"), "{shown}");
    assert!(has("exports", "toolhost:plugin/entities@"), "{shown}");
    assert!(has("exports", "toolhost:plugin/authoring@"), "{shown}");
    assert!(has("imports", "toolhost:plugin/backend@"), "{shown}");
    assert_eq!(shown["sha256"].as_str().map(str::len), Some(64));
    assert!(has("entity_kinds", "project"), "{shown}");
    assert_eq!(
        shown["authoring_kinds"][0]["name"],
        json!("test_plan"),
        "{shown}"
    );
    let apply = shown["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == json!("apply_test_plan"))
        .unwrap_or_else(|| panic!("apply_test_plan: {shown}"))
        .clone();
    assert_eq!(apply["permission"], json!("testbench:run"), "{apply}");
    assert_eq!(apply["mutating"], json!(true));
    assert_eq!(apply["input_schema"]["type"], json!("object"), "{apply}");

    let (code, out, _) = toolhost(&["plugin", "inspect", HELLO.component]);
    assert_eq!(code, Some(0));
    let hello = json_of(&out);
    assert_eq!(hello["authoring_kinds"], json!([]), "{hello}");
    assert!(
        !hello["imports"]
            .to_string()
            .contains("toolhost:plugin/backend"),
        "hello reaches no backend: {hello}"
    );

    let (code, _, err) = toolhost(&["plugin", "inspect", "/nonexistent.wasm"]);
    assert_eq!(code, Some(1), "{err}");
}

#[test]
fn pin_with_a_cache_dir_compiles_the_component_once_before_any_host_loads_it() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let (out, cache) = (tmp.path().join("catalog"), tmp.path().join("cache"));
    let pin = |what: &str| {
        let (code, _, err) = toolhost(&[
            "plugin",
            "pin",
            HELLO.manifest,
            "--component",
            HELLO.component,
            "--out",
            &out.to_string_lossy(),
            "--cache-dir",
            &cache.to_string_lossy(),
        ]);
        assert_eq!(code, Some(0), "{what}: {err}");
        err
    };
    assert!(
        pin("first").contains("hello: Compiled"),
        "the first pin compiles"
    );
    let cached = std::fs::read_dir(&cache).expect("the cache").count();
    assert_eq!(cached, 1, "one precompiled file");
    assert!(pin("again").contains("hello: Hit"), "the next load maps it");
}

#[test]
fn toolhost_new_writes_each_language_and_refuses_an_existing_project_or_a_bad_name() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let parent = tmp.path().to_string_lossy().into_owned();
    let expected: [(&str, &[&str]); 3] = [
        ("rust", &["Cargo.toml", "Cargo.lock", "src/lib.rs"]),
        ("python", &["app.py", "test_app.py", "requirements.txt"]),
        (
            "ts",
            &["app.ts", "app.test.ts", "package.json", "bundle.config.js"],
        ),
    ];
    for (lang, own) in expected {
        let name = format!("greeter-{lang}");
        let (code, out, err) = toolhost(&["new", &name, "--lang", lang, "--dir", &parent]);
        assert_eq!(code, Some(0), "{out}\n{err}");
        let project = tmp.path().join(&name);
        assert!(
            out.contains("./build.sh"),
            "{lang}: says how to build: {out}"
        );
        for file in own
            .iter()
            .chain(&["toolhost.toml", "build.sh", "README.md", "wit/world.wit"])
        {
            assert!(project.join(file).exists(), "{lang}: {file} is written");
        }
        let (code, _, err) = toolhost(&["new", &name, "--lang", lang, "--dir", &parent]);
        assert_eq!(code, Some(1), "{lang}: an existing project is kept: {err}");
    }
    // The Rust project is formatted as cargo fmt would write it.
    let mut fmt = Command::new(env!("CARGO"));
    fmt.args(["fmt", "--check"])
        .current_dir(tmp.path().join("greeter-rust"))
        .stdin(Stdio::null());
    let run = support::run(&mut fmt, Duration::from_secs(120));
    assert!(
        run.ok(),
        "cargo fmt --check: {}\n{}",
        run.stdout,
        run.stderr
    );
    // An SDK path without the package is refused before anything is written.
    let (code, _, err) = toolhost(&[
        "new",
        "no-sdk",
        "--lang",
        "python",
        "--dir",
        &parent,
        "--sdk-path",
        &parent,
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no toolhost-sdk wheel there"), "{err}");
    assert!(!tmp.path().join("no-sdk").exists(), "nothing is written");
    for bad in ["Bad Name", "9lives", ""] {
        let (code, _, err) = toolhost(&["new", bad, "--dir", &parent]);
        assert_eq!(code, Some(1), "{bad:?}: {err}");
        assert!(
            !tmp.path().join(bad).exists() || bad.is_empty(),
            "{bad:?} wrote nothing"
        );
    }
}

/// A free loopback port (bound, then let go).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    l.local_addr().expect("an address").port()
}

/// Kills the dev server when the test ends, however it ends.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn toolhost_dev_serves_a_project_and_reloads_a_changed_tool_into_an_open_session() {
    dev_reloads("rust", "devtool", |project| {
        let lib = project.join("src/lib.rs");
        let text = std::fs::read_to_string(&lib).expect("read");
        let wave = "/// Waves at someone.\npub fn wave(_ctx: &Ctx, args: GreetArgs) -> Result<Greeting, ToolError> {\n    Ok(Greeting { message: format!(\"*waves at {}*\", args.name) })\n}\n\nfn tools() -> Vec<Tool> {\n    vec![\n        Tool::new(\"wave\", \"Waves at someone.\", wave).permission(\"devtool\", \"read\").read_only(),";
        std::fs::write(
            &lib,
            text.replacen("fn tools() -> Vec<Tool> {\n    vec![", wave, 1),
        )
        .expect("write");
    });
}

#[test]
fn toolhost_dev_serves_a_typescript_project_and_reloads_a_changed_tool_into_an_open_session() {
    dev_reloads("ts", "devtool-ts", |project| {
        let app = project.join("app.ts");
        let text = std::fs::read_to_string(&app).expect("read");
        let wave = "const wave = defineTool({\n  name: \"wave\",\n  description: \"Waves at someone.\",\n  permission: \"devtool-ts:read\",\n  readOnly: true,\n  input: s.object({ name: s.string() }),\n  output: s.object({ message: s.string() }),\n  run: ({ name }) => ({ message: `*waves at ${name}*` }),\n});\n\nconst plugin = definePlugin({ tools: [greet, wave] });";
        let changed = text.replacen("const plugin = definePlugin({ tools: [greet] });", wave, 1);
        assert_ne!(
            changed, text,
            "the scaffold's app.ts has the line this test edits"
        );
        std::fs::write(&app, changed).expect("write");
    });
}

/// `toolhost dev` on a new `lang` project `name`: a session opened on it
/// (both eras, tests/e2e/python_list_changed.py) is told `tools/list_changed`
/// after `edit` adds a tool `wave` to the source and the test declares it in
/// the manifest, and lists it beside `greet`, without a restart.
fn dev_reloads(lang: &str, name: &str, edit: impl FnOnce(&Path)) {
    let tools = Tools::require();
    let tmp = tempfile::tempdir().expect("a temp dir");
    let (code, _, err) = toolhost(&[
        "new",
        name,
        "--lang",
        lang,
        "--dir",
        &tmp.path().to_string_lossy(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let project = tmp.path().join(name);
    let listen = format!("127.0.0.1:{}", free_port());
    let log = std::fs::File::create(tmp.path().join("dev.log")).expect("a log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["dev", &project.to_string_lossy(), "--listen", &listen])
        .env("CARGO_TARGET_DIR", support::repo().join("target/plugins"))
        .env("PATH", tools.path())
        .env("TOOLHOST_DEMO_PASSWORD", DEMO_PASSWORD)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .expect("toolhost dev starts");
    let stdout = child.stdout.take().expect("piped");
    let dev = Child(child);
    // stdout is drained to its end on a thread: a closed pipe would fail
    // the server's next line (and with it the server).
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("MCP endpoint: ") {
                let _ = tx.send(url.to_owned());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(300))
        .unwrap_or_else(|_| {
            let log = std::fs::read_to_string(tmp.path().join("dev.log")).unwrap_or_default();
            panic!("toolhost dev printed no endpoint:\n{log}")
        });

    // A service client of the dev store, and a session open before the change.
    let db = format!(
        "sqlite://{}?mode=rwc",
        project.join(".toolhost/dev.db").display()
    );
    let (code, out, err) = toolhost(&[
        "client",
        "add-service",
        "dev-e2e",
        "--tenant",
        "demo",
        "--scope",
        &format!("mcp {name}:read"),
        "--database-url",
        &db,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let token = support::service_client_token(&url, &out);
    let ready = tmp.path().join("ready");
    let session = tools
        .python("python_list_changed.py", &[&url, &ready.to_string_lossy()])
        .env(support::TOKEN_ENV, &token)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the Python session starts");
    let started = std::time::Instant::now();
    while !ready.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the session never opened"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // A second tool, written while the host serves: rebuilt and reloaded.
    edit(&project);
    let manifest = project.join("toolhost.toml");
    let mut m = std::fs::read_to_string(&manifest).expect("read");
    m.push_str(&format!("\n[tools.wave]\npermission = \"{name}:read\"\n"));
    std::fs::write(&manifest, m).expect("write");

    let out = session.wait_with_output().expect("the session ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let log = std::fs::read_to_string(tmp.path().join("dev.log")).unwrap_or_default();
    assert!(
        out.status.success(),
        "{stdout}\n{}\n{log}",
        String::from_utf8_lossy(&out.stderr)
    );
    for era in ["legacy after:", "stateless after:"] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(era))
            .unwrap_or_else(|| panic!("{era}: {stdout}"));
        assert!(line.contains("wave") && line.contains("greet"), "{line}");
    }
    assert!(log.contains("reloaded"), "{log}");
    drop(dev);
}
