//! Replicas of `toolhost serve` on one PostgreSQL schema behind a real
//! HAProxy running the shipped `deploy/haproxy.cfg`, as `make cluster` runs
//! them. Every replica gets the balancer's URL as `--public-url` (one OAuth
//! issuer for all), trusts it as a proxy, and listens on a port chosen
//! here, so the balancer's configuration names them before they start.

use std::fs;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{PgSchema, Server, exchange_full, repo};
use toolhost_fixtures::Fixture;

/// How long the balancer may take to see every replica ready.
const READY: Duration = Duration::from_secs(30);

/// The balancer and its replicas. Dropped: all stopped, the schema kept
/// until the cluster's own drop (the caller owns it).
pub struct Cluster {
    /// `http://127.0.0.1:PORT/mcp`: the balancer's endpoint.
    pub url: String,
    /// The replicas, in the balancer's order (`r1`, `r2`, …).
    pub replicas: Vec<Server>,
    haproxy: Child,
    dir: tempfile::TempDir,
}

/// A free port on 127.0.0.1 (bound, then released for the taker).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

impl Cluster {
    /// `n` replicas serving `plugins` (and `flags`) on `schema`, behind HAProxy.
    pub fn start(n: usize, plugins: &[Fixture], flags: &[&str], schema: &PgSchema) -> Cluster {
        let dir = tempfile::Builder::new()
            .prefix("toolhost-cluster-")
            .tempdir()
            .expect("a temp dir");
        let lb = free_port();
        let ports: Vec<u16> = (0..n).map(|_| free_port()).collect();
        let mut config =
            fs::read_to_string(repo().join("deploy/haproxy.cfg")).expect("deploy/haproxy.cfg");
        for (i, port) in ports.iter().enumerate() {
            config.push_str(&format!("    server r{} 127.0.0.1:{port}\n", i + 1));
        }
        let cfg = dir.path().join("haproxy.cfg");
        fs::write(&cfg, config).expect("write haproxy.cfg");
        let log = fs::File::create(dir.path().join("haproxy.log")).expect("log");
        let haproxy = Command::new("haproxy")
            .arg("-db")
            .arg("-f")
            .arg(&cfg)
            .env("TOOLHOST_LB_BIND", format!("127.0.0.1:{lb}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("haproxy runs (make e2e-tools installs it)");
        let public = format!("http://127.0.0.1:{lb}");
        // The first replica migrates the schema and syncs the plugins; the
        // others start together once it has.
        let start = |port: u16| {
            let listen = format!("127.0.0.1:{port}");
            let mut all: Vec<&str> = vec![
                "--listen",
                &listen,
                "--public-url",
                &public,
                "--trusted-proxy",
                "127.0.0.1",
                "--drain-delay",
                "1500ms",
            ];
            all.extend_from_slice(flags);
            Server::start_on(plugins, &all, Some(&schema.url))
        };
        let mut replicas = vec![start(ports[0])];
        let rest: Vec<Server> = std::thread::scope(|s| {
            let handles: Vec<_> = ports[1..]
                .iter()
                .map(|p| s.spawn(move || start(*p)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a replica"))
                .collect()
        });
        replicas.extend(rest);
        let cluster = Cluster {
            url: format!("{public}/mcp"),
            replicas,
            haproxy,
            dir,
        };
        cluster.wait_all_up();
        cluster
    }

    /// Until the balancer's health checks have seen every replica ready:
    /// as many answers in a row as replicas, each from another one.
    fn wait_all_up(&self) {
        let deadline = Instant::now() + READY;
        loop {
            let seen: std::collections::BTreeSet<String> = (0..self.replicas.len() * 2)
                .filter_map(|_| {
                    let a = exchange_full(&self.url, "GET", "/readyz", &[], "");
                    (a.status == 200).then(|| {
                        a.header("x-toolhost-replica")
                            .unwrap_or_default()
                            .to_owned()
                    })
                })
                .collect();
            if seen.len() >= self.replicas.len() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the balancer saw {} of {} replicas ready:\n{}",
                seen.len(),
                self.replicas.len(),
                fs::read_to_string(self.dir.path().join("haproxy.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The balancer's log.
    pub fn balancer_log(&self) -> String {
        fs::read_to_string(self.dir.path().join("haproxy.log")).unwrap_or_default()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.haproxy.kill();
        let _ = self.haproxy.wait();
    }
}
