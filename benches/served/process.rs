//! The servers under load, each in a process of its own, and the CPU time
//! the kernel charged each.
//!
//! The host is the real `toolhost serve` (this build's, or a baseline
//! build's) on the reference `hello` plugin, started by the end-to-end
//! harness ([`Server`]). The ceiling is this bench's own executable run
//! again with [`CEILING_ROLE`] set: it then serves the bare rmcp server of
//! `host/server/benches/ceiling` and nothing else.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use crate::ceiling::{CEILING_TOOL, start_ceiling};
use crate::support::Server;
use toolhost_fixtures::HELLO;

/// Set (to anything) in the environment of this bench's executable, it
/// serves the ceiling instead of benchmarking.
pub const CEILING_ROLE: &str = "TOOLHOST_SERVED_CEILING";

/// Rate limits far above any load here: the limiter counts every request,
/// as shipped, and never refuses one (`0` would turn it off).
pub const NEVER_REFUSING: [&str; 6] = [
    "--rate-limit-per-principal",
    "4000000000",
    "--rate-limit-per-client",
    "4000000000",
    "--rate-limit-writes",
    "4000000000",
];

/// A server under load: where it listens, its process, the bearer token
/// and the tool the load calls.
pub struct Target {
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// The server's process id, whose CPU time is read.
    pub pid: u32,
    /// The bearer token every request carries (the ceiling ignores it).
    pub token: String,
    /// The `greet` it serves: the host's sandboxed one, or the ceiling's.
    pub tool: &'static str,
}

impl Target {
    /// The host `server`'s `greet`, called as the bearer of `token`.
    pub fn host(server: &Server, token: &str) -> Target {
        Target {
            url: server.url.clone(),
            pid: server.pid(),
            token: token.to_owned(),
            tool: "greet",
        }
    }
}

/// `toolhost serve` by the executable at `exe`, serving `hello`
/// (unsigned: a baseline build cannot use this build's signing CLI, and
/// both are served alike) on the store at `database_url` (default: a
/// SQLite file in its temp dir), with rate limits that never refuse.
pub fn host(exe: &Path, database_url: Option<&str>) -> Server {
    let mut flags = vec!["--dev-allow-unsigned"];
    flags.extend(NEVER_REFUSING);
    Server::start_exe(exe, &[HELLO], &flags, database_url, &[])
}

/// The ceiling, in a process of its own; killed when dropped.
pub struct Ceiling {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl Ceiling {
    /// This executable again, as the ceiling; once it printed its endpoint.
    pub fn start() -> Ceiling {
        let exe = std::env::current_exe().expect("this bench's executable");
        let mut child = Command::new(exe)
            .env(CEILING_ROLE, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the ceiling starts");
        let stdout = child.stdout.take().expect("piped");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the ceiling's endpoint");
        let url = line
            .strip_prefix("MCP endpoint: ")
            .unwrap_or_else(|| panic!("the ceiling printed {line:?}"))
            .trim()
            .to_owned();
        Ceiling { child, url }
    }

    /// The ceiling as a target of the load.
    pub fn target(&self) -> Target {
        Target {
            url: self.url.clone(),
            pid: self.child.id(),
            token: "none".into(),
            tool: CEILING_TOOL,
        }
    }
}

impl Drop for Ceiling {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The ceiling's role: serve it on a multi-threaded runtime (as `toolhost
/// serve` serves the host), print its endpoint, and exit when stdin
/// closes (the bench ended, however it ended).
pub fn serve_ceiling() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let addr = rt.block_on(start_ceiling());
    let mut stdout = std::io::stdout();
    writeln!(stdout, "MCP endpoint: http://{addr}/mcp").expect("stdout");
    stdout.flush().expect("stdout");
    std::io::copy(&mut std::io::stdin(), &mut std::io::sink()).expect("stdin");
}

/// The CPU time (user and system, every thread, living or exited) the
/// kernel has charged process `pid`, from `/proc/PID/stat`.
pub fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap_or_else(|e| panic!("/proc/{pid}/stat: {e}"));
    // The command name may hold spaces and parentheses: fields are counted
    // after its closing one, from the third (state); utime and stime are
    // the 14th and 15th.
    let after_name = stat.rsplit_once(") ").expect("a stat line").1;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| -> u64 { fields[i - 3].parse().expect("a tick count") };
    let ticks = ticks(14) + ticks(15);
    Duration::from_secs_f64(ticks as f64 / clock_ticks_per_second())
}

/// The kernel's clock ticks per second (`sysconf(_SC_CLK_TCK)`), asked of
/// `getconf`: calling `sysconf` needs `unsafe` (forbidden here), and the
/// `rustix` already built lacks its `param` feature.
fn clock_ticks_per_second() -> f64 {
    static TICKS: OnceLock<f64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        let out = Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .expect("getconf runs");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("getconf CLK_TCK prints a number")
    })
}
