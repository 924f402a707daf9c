//! A real OCI registry on 127.0.0.1: Debian's `docker-registry` (CNCF
//! distribution 2.8, installed by `make e2e-tools`), with its storage in a
//! temp dir the tests may read and tamper with. It has no referrers API,
//! so what a push writes is found through the referrers tag schema.

use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The registry starts in well under a second; this is for a loaded machine.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A running `docker-registry serve`, killed when dropped.
pub struct Registry {
    child: Child,
    host: String,
    dir: TempDir,
}

impl Registry {
    /// Serves an empty registry on a free port of 127.0.0.1; panics,
    /// naming `make e2e-tools`, if `docker-registry` is not installed.
    pub fn start() -> Registry {
        let dir = tempfile::Builder::new()
            .prefix("toolhost-registry-")
            .tempdir()
            .expect("create a temp dir");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let host = format!("127.0.0.1:{port}");
        let root = dir.path().join("data");
        let config = dir.path().join("config.yml");
        fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n  \
                 delete:\n    enabled: true\nhttp:\n  addr: {host}\n",
                root.display()
            ),
        )
        .expect("write the registry config");
        let log = fs::File::create(dir.path().join("registry.log")).expect("create the log");
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("clone the log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("spawn docker-registry: {e}; run `make e2e-tools` (it installs it)")
            });
        let mut registry = Registry { child, host, dir };
        registry.wait_ready();
        registry
    }

    /// `127.0.0.1:PORT`.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The storage root (`docker/registry/v2/…` inside it).
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The file holding blob `hex` (a SHA-256 without its `sha256:`).
    pub fn blob_path(&self, hex: &str) -> PathBuf {
        self.root()
            .join("docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }

    /// What the registry logged.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }

    /// Polls `GET /v2/` until it answers 200.
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + START_TIMEOUT;
        while get_status(&self.host, "/v2/") != Some(200) {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("docker-registry exited ({status}):\n{}", self.log());
            }
            assert!(
                Instant::now() < deadline,
                "docker-registry did not answer within {START_TIMEOUT:?}:\n{}",
                self.log()
            );
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The status of a plain `GET path` to `host`, if it answered.
fn get_status(host: &str, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(host).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}
