//! A PostgreSQL server of the test's own, for tests that stop and start
//! it under load (the shared one on 5432 serves every other test). Made
//! with the machine's own PostgreSQL binaries (`/usr/lib/postgresql/N/bin`)
//! in a temporary directory, run as the `postgres` user on a free port,
//! without fsync (its data is thrown away).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::PgSchema;
use super::cluster::free_port;

/// The server; stopped (immediately) and its files removed when dropped.
pub struct PrivatePg {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    _dir: tempfile::TempDir,
}

impl PrivatePg {
    /// A new cluster, initialised and started.
    pub fn start() -> PrivatePg {
        let bin = binaries();
        let dir = tempfile::Builder::new()
            .prefix("toolhost-pg-")
            .tempdir()
            .expect("a temp dir");
        ok(
            "chown the cluster's directory to postgres",
            Command::new("chown")
                .args(["postgres:postgres"])
                .arg(dir.path())
                .output(),
        );
        let data = dir.path().join("data");
        let pg = PrivatePg {
            bin,
            data,
            port: free_port(),
            _dir: dir,
        };
        pg.as_postgres(
            "initdb",
            &[
                "-D",
                &pg.data.display().to_string(),
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        pg.start_again();
        pg
    }

    /// The URL of its `postgres` database.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// A schema of its own on this server.
    pub fn schema(&self, label: &str) -> PgSchema {
        PgSchema::create_on(&self.url(), label)
    }

    /// Stops the server the way an operator restarting it does (`pg_ctl
    /// stop -m fast`: sessions are ended, open transactions rolled back).
    pub fn stop(&self) {
        self.pg_ctl(&["stop", "-m", "fast", "-w"]);
    }

    /// Kills the server mid-work (`pg_ctl stop -m immediate`: every
    /// process quits at once, open transactions are neither committed nor
    /// rolled back, and the next start recovers from the write-ahead log).
    pub fn kill(&self) {
        self.pg_ctl(&["stop", "-m", "immediate", "-w"]);
    }

    /// Starts it (again), waiting until it accepts connections.
    pub fn start_again(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
            self.port,
            self.socket_dir().display()
        );
        let log = self.socket_dir().join("server.log").display().to_string();
        self.pg_ctl(&["start", "-w", "-o", &options, "-l", &log]);
    }

    fn socket_dir(&self) -> &Path {
        self.data.parent().expect("the cluster's directory")
    }

    fn pg_ctl(&self, args: &[&str]) {
        let data = self.data.display().to_string();
        let mut all = vec!["-D", data.as_str()];
        all.extend_from_slice(args);
        self.as_postgres("pg_ctl", &all);
    }

    fn as_postgres(&self, program: &str, args: &[&str]) {
        let program = self.bin.join(program);
        ok(
            &format!("{} {}", program.display(), args.join(" ")),
            Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(&program)
                .args(args)
                .output(),
        );
    }
}

impl Drop for PrivatePg {
    fn drop(&mut self) {
        let data = self.data.display().to_string();
        let _ = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join("pg_ctl"))
            .args(["-D", &data, "stop", "-m", "immediate", "-w"])
            .output();
    }
}

/// The newest installed PostgreSQL's `bin` directory.
fn binaries() -> PathBuf {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL's binaries in /usr/lib/postgresql (the machine's PostgreSQL)")
        .filter_map(|e| {
            let e = e.ok()?;
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    found.sort();
    found
        .pop()
        .map(|(_, bin)| bin)
        .expect("initdb under /usr/lib/postgresql/N/bin")
}

fn ok(what: &str, output: std::io::Result<Output>) {
    let out = output.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
