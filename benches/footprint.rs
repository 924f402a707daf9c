//! `make bench`, part 4: the host's footprint, the real `toolhost` binary
//! as shipped (release build).
//!
//! - Twenty plugins are written the way an author writes one: `toolhost
//!   new fleet-NN` (Rust), its tool renamed `greet_NN` (tool names are
//!   unique in a catalog), built for wasm32-wasip2 (one shared target
//!   directory, so the SDK compiles once), pinned with the compile cache
//!   warmed, signed by a local key, trusted, submitted and approved into a
//!   SQLite store, as `make run` publishes the reference plugins.
//! - **Cold start**: `toolhost serve` on that store with the warm cache,
//!   from the spawn to the first `tools/list` answered with all twenty
//!   tools, five times (a token minted by an earlier run is reused: the
//!   signing keys live in the store).
//! - **Resident memory**: the server's `VmRSS` once serving, and after
//!   every 100,000 of 1,000,000 `tools/call`s spread over the twenty
//!   tools by 32 keep-alive clients (rate limits set far above the load).
//!
//! Prints Markdown tables for BENCHMARKS.md.

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use serde_json::{Value, json};
use support::{new_signer, sign, toolhost};

const TOOLHOST: &str = env!("CARGO_BIN_EXE_toolhost");
const PLUGINS: usize = 20;
const CALLS: usize = 1_000_000;
const SAMPLE_EVERY: usize = 100_000;
const CLIENTS: usize = 32;
const COLD_STARTS: usize = 5;
/// Far above what the bench sends in a window: the limiter runs, never refuses.
const NO_LIMIT: &str = "4000000000";

fn main() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let root = dir.path();
    let fleet = Fleet::build(root);
    let db = format!("sqlite://{}?mode=rwc", root.join("host.db").display());
    fleet.publish(&db);

    // A first start provisions the store (keys, the demo user) and mints a
    // service client's token; the measured starts reuse it, on the same
    // port (a token's audience is the server's URL).
    let port = free_port();
    let server = Serve::start(root, &db, port);
    let scope = fleet.scope();
    let (id, secret) = add_service(&db, &scope);
    let token = client_credentials(&server.addr, &id, &secret);
    server.stop();

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let mut starts = Vec::new();
    for _ in 0..COLD_STARTS {
        let started = Instant::now();
        let server = Serve::start(root, &db, port);
        let listed = rt.block_on(first_list(&server.addr, &token));
        let took = started.elapsed();
        assert_eq!(listed, PLUGINS, "every plugin's tool is listed");
        starts.push(took);
        server.stop();
    }
    starts.sort();
    println!("| cold start, warm cache, {PLUGINS} plugins | min ms | median ms | max ms |");
    println!("|---|---|---|---|");
    println!(
        "| spawn to the first `tools/list` | {:.0} | {:.0} | {:.0} |",
        ms(starts[0]),
        ms(starts[COLD_STARTS / 2]),
        ms(starts[COLD_STARTS - 1])
    );
    println!();

    let server = Serve::start(root, &db, port);
    let serving = rss_mib(server.pid());
    let samples = rt.block_on(load(&server, &token, &fleet.tools));
    server.stop();
    println!("| calls served | server RSS MiB |");
    println!("|---|---|");
    println!("| 0 (serving, {PLUGINS} plugins loaded) | {serving:.1} |");
    for (calls, rss) in samples {
        println!("| {calls} | {rss:.1} |");
    }
}

/// The twenty scaffolded plugins.
struct Fleet {
    /// Pinned manifests (and components), signed.
    catalog: PathBuf,
    signer: PathBuf,
    cache: PathBuf,
    names: Vec<String>,
    tools: Vec<String>,
}

impl Fleet {
    fn build(root: &Path) -> Fleet {
        let (src, target) = (root.join("src"), root.join("target"));
        let catalog = root.join("catalog");
        let cache = root.join("cwasm");
        std::fs::create_dir_all(&src).expect("src dir");
        let started = Instant::now();
        let mut fleet = Fleet {
            catalog,
            signer: root.join("signer"),
            cache,
            names: Vec::new(),
            tools: Vec::new(),
        };
        for i in 1..=PLUGINS {
            let (name, tool) = (format!("fleet-{i:02}"), format!("greet_{i:02}"));
            toolhost(&["new", &name, "--dir", &src.to_string_lossy()]);
            let project = src.join(&name);
            rename_tool(&project.join("src/lib.rs"), "Tool::new(\"greet\"", &tool);
            rename_tool(&project.join("toolhost.toml"), "[tools.greet]", &tool);
            let built = Command::new("cargo")
                .args(["build", "--quiet", "--target", "wasm32-wasip2", "--release"])
                .current_dir(&project)
                .env("CARGO_TARGET_DIR", &target)
                .status()
                .expect("cargo runs");
            assert!(built.success(), "{name} builds");
            let component = target.join(format!(
                "wasm32-wasip2/release/{}.wasm",
                name.replace('-', "_")
            ));
            toolhost(&[
                "plugin",
                "pin",
                &project.join("toolhost.toml").to_string_lossy(),
                "--component",
                &component.to_string_lossy(),
                "--out",
                &fleet.catalog.to_string_lossy(),
                "--cache-dir",
                &fleet.cache.to_string_lossy(),
            ]);
            fleet.names.push(name);
            fleet.tools.push(tool);
        }
        eprintln!(
            "{PLUGINS} plugins scaffolded, built and pinned in {:.0} s",
            started.elapsed().as_secs_f64()
        );
        fleet
    }

    /// Signs, trusts, submits and approves every plugin into `db`.
    fn publish(&self, db: &str) {
        let key = new_signer("local", &self.signer);
        for name in &self.names {
            sign(&self.catalog.join(format!("{name}.toml")), &key);
        }
        toolhost(&["user", "seed-demo", "--database-url", db]);
        let public = self.signer.join("local.pub");
        toolhost(&[
            "signer",
            "trust",
            "local",
            "--key",
            &public.to_string_lossy(),
            "--plugins",
            &self.names.join(","),
            "--as",
            "demo",
            "--database-url",
            db,
        ]);
        let catalog = self.catalog.to_string_lossy();
        let submitted = toolhost(&[
            "plugin",
            "submit",
            &catalog,
            "--as",
            "demo",
            "--database-url",
            db,
        ]);
        let pending: Vec<&str> = submitted
            .lines()
            .filter(|l| l.ends_with("(pending_review)"))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert_eq!(
            pending.len(),
            PLUGINS,
            "every plugin submitted: {submitted}"
        );
        for id in pending {
            toolhost(&[
                "plugin",
                "review",
                "approve",
                id,
                "--as",
                "demo",
                "--allow-self-approval",
                "--reason",
                "bench",
                "--database-url",
                db,
            ]);
        }
    }

    /// An OAuth scope allowing every plugin's tool.
    fn scope(&self) -> String {
        let reads = self.names.iter().map(|n| format!("{n}:read"));
        std::iter::once("mcp".to_owned())
            .chain(reads)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn rename_tool(path: &Path, marker: &str, tool: &str) {
    let text = std::fs::read_to_string(path).expect("a scaffolded file");
    assert!(text.contains(marker), "{} holds {marker}", path.display());
    let renamed = marker.replace("greet", tool);
    std::fs::write(path, text.replace(marker, &renamed)).expect("write");
}

fn add_service(db: &str, scope: &str) -> (String, String) {
    let out = toolhost(&[
        "client",
        "add-service",
        "bench",
        "--tenant",
        "demo",
        "--scope",
        scope,
        "--database-url",
        db,
    ]);
    let field = |name: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_owned())
            .unwrap_or_else(|| panic!("no {name} in: {out}"))
    };
    (field("client_id:"), field("client_secret:"))
}

/// A running `toolhost serve` on a free loopback port.
struct Serve {
    child: Child,
    addr: String,
}

impl Serve {
    fn start(root: &Path, db: &str, port: u16) -> Serve {
        let listen = format!("127.0.0.1:{port}");
        let mut child = Command::new(TOOLHOST)
            .args(["serve", "--listen", &listen, "--database-url", db])
            .args(["--cache-dir", &root.join("cwasm").to_string_lossy()])
            .args(["--rate-limit-per-principal", NO_LIMIT])
            .args(["--rate-limit-per-client", NO_LIMIT])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("toolhost serve starts");
        let stdout = child.stdout.take().expect("piped");
        let mut lines = BufReader::new(stdout).lines();
        let endpoint = loop {
            let line = lines
                .next()
                .expect("serve prints its endpoint")
                .expect("a line");
            if let Some(url) = line.strip_prefix("MCP endpoint: ") {
                break url.to_owned();
            }
        };
        // Keep draining, so the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        let addr = endpoint
            .trim_start_matches("http://")
            .split('/')
            .next()
            .expect("an authority")
            .to_owned();
        Serve { child, addr }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

fn client_credentials(addr: &str, id: &str, secret: &str) -> String {
    let form = format!("grant_type=client_credentials&client_id={id}&client_secret={secret}");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let (status, body) = rt.block_on(async {
        let request = hyper::Request::post(format!("http://{addr}/oauth/token"))
            .header("host", addr)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Full::new(Bytes::from(form)))
            .expect("a request");
        let mut send = connect(addr).await.expect("the server listens");
        let response = send.send_request(request).await.expect("a response");
        let status = response.status();
        let body = response.into_body().collect().await.expect("a body");
        (status, body.to_bytes())
    });
    assert!(status.is_success(), "{status}: {body:?}");
    let value: Value = serde_json::from_slice(&body).expect("a token response");
    value["access_token"]
        .as_str()
        .expect("an access token")
        .to_owned()
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// A keep-alive HTTP/1.1 connection to `addr`, with TCP_NODELAY.
async fn connect(addr: &str) -> std::io::Result<Sender> {
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let (send, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
        .await
        .map_err(std::io::Error::other)?;
    tokio::spawn(conn);
    Ok(send)
}

/// A stateless (2026-07-28) MCP request.
fn mcp(
    addr: &str,
    token: &str,
    method: &str,
    name: Option<&str>,
    mut params: Value,
) -> hyper::Request<Full<Bytes>> {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut request = hyper::Request::post(format!("http://{addr}/mcp"))
        .header("host", addr)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("authorization", format!("Bearer {token}"));
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    request
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a request")
}

/// A free loopback port (free when asked).
fn free_port() -> u16 {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    probe.local_addr().expect("an address").port()
}

/// Polls `tools/list` until it answers; how many tools it listed. Any
/// answer but a success fails the bench.
async fn first_list(addr: &str, token: &str) -> usize {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(
            Instant::now() < deadline,
            "no tools/list answer within 60 s"
        );
        if let Ok(mut send) = connect(addr).await
            && let Ok(response) = send
                .send_request(mcp(addr, token, "tools/list", None, json!({})))
                .await
        {
            let status = response.status();
            let body = response.into_body().collect().await.expect("a body");
            let body = body.to_bytes();
            assert!(
                status.is_success(),
                "tools/list: {status}: {}",
                String::from_utf8_lossy(&body)
            );
            let answer: Value = serde_json::from_slice(&body).expect("JSON");
            let tools = answer["result"]["tools"].as_array().expect("tools");
            return tools
                .iter()
                .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with("greet_")))
                .count();
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// [`CALLS`] calls over [`CLIENTS`] connections, round robin over `tools`;
/// the server's RSS after every [`SAMPLE_EVERY`].
async fn load(server: &Serve, token: &str, tools: &[String]) -> Vec<(usize, f64)> {
    let done = Arc::new(AtomicUsize::new(0));
    let tools: Arc<Vec<String>> = Arc::new(tools.to_vec());
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (addr, token) = (server.addr.clone(), token.to_owned());
            let (done, tools) = (done.clone(), tools.clone());
            tokio::spawn(async move {
                let mut send = connect(&addr).await.expect("connect");
                for n in (c..CALLS).step_by(CLIENTS) {
                    let tool = &tools[n % tools.len()];
                    let params = json!({"name": tool, "arguments": {"name": "Ada"}});
                    let request = mcp(&addr, &token, "tools/call", Some(tool), params);
                    let response = send.send_request(request).await.expect("a response");
                    let status = response.status();
                    let body = response
                        .into_body()
                        .collect()
                        .await
                        .expect("a body")
                        .to_bytes();
                    assert!(
                        status.is_success() && body.windows(11).any(|w| w == b"Hello, Ada!"),
                        "{status}: {}",
                        String::from_utf8_lossy(&body)
                    );
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let mut samples = Vec::new();
    let mut next = SAMPLE_EVERY;
    while next <= CALLS {
        if done.load(Ordering::Relaxed) >= next {
            samples.push((next, rss_mib(server.pid())));
            next += SAMPLE_EVERY;
        } else {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    for client in clients {
        client.await.expect("a client");
    }
    samples
}

/// A process's resident set in MiB, from `/proc`.
fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
