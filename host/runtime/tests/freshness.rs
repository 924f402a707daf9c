//! Nothing a call leaves in its instance's memory reaches the next call, in
//! any authoring language. One caller's `remember` leaves a secret in a
//! global, a module-level cache or a leaked allocation, and in heap blocks
//! spread over megabytes. Another caller's `recall` then runs in the same
//! pool slot (the pool has one) and must find nothing: no global, no cache
//! and, in Rust, whose guest can read its whole linear memory, not one copy
//! of the secret anywhere.
//!
//! The fixtures: `plugins/t-leak-heap` (Rust),
//! `plugins/python/leak-heap` and `plugins/ts/leak-heap`, built by `make
//! plugins python-plugins ts-plugins` (make test does).
//!
//! Each language is proved twice:
//! - with the slot's pages resident;
//! - with the pages forced out to swap while `remember`'s instance is still
//!   alive, so the pool resets a slot whose dirty pages are swapped out.
//!   Wasmtime 48's dirty-page scan missed those pages, and the next instance
//!   read them back (vendor/README.md). Forcing them out needs root: the
//!   test turns on a swap file of its own and, for each call, moves this
//!   process into a memory cgroup of its own, then reclaims that cgroup
//!   while `remember` holds its instance. Both are undone when it ends.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolhost_fixtures::T_LEAK_HEAP;
use toolhost_limits::{ByteSize, CallBudget};
use toolhost_runtime::{CallContext, Plugin, Reply, Runtime, RuntimeConfig};

/// One language's fixture.
struct Subject {
    language: &'static str,
    name: &'static str,
    component: PathBuf,
    remember: &'static str,
    recall: &'static str,
    memory: ByteSize,
}

impl Subject {
    fn rust() -> Self {
        Self {
            language: "Rust",
            name: "t-leak-heap",
            component: PathBuf::from(T_LEAK_HEAP.component),
            remember: "remember",
            recall: "recall",
            memory: ByteSize::mib(64),
        }
    }

    fn python() -> Self {
        Self {
            language: "Python",
            name: "t-leak-heap-py",
            component: built("target/plugins/python/t_leak_heap_py.wasm"),
            remember: "remember_py",
            recall: "recall_py",
            // plugins/python/leak-heap/toolhost.toml
            memory: ByteSize::mib(32),
        }
    }

    fn typescript() -> Self {
        Self {
            language: "TypeScript",
            name: "t-leak-heap-ts",
            component: built("target/plugins/ts/t_leak_heap_ts.wasm"),
            remember: "remember_ts",
            recall: "recall_ts",
            memory: ByteSize::mib(64),
        }
    }

    fn budget(&self) -> CallBudget {
        CallBudget {
            memory: self.memory,
            timeout: Duration::from_secs(30),
            ..CallBudget::DEFAULT
        }
    }

    /// `recall`'s arguments: Rust's takes the secret reversed, so that its
    /// own input does not hold a copy.
    fn recall_args(&self, secret: &str) -> Value {
        match self.language {
            "Rust" => json!({ "reversed": secret.chars().rev().collect::<String>() }),
            _ => json!({}),
        }
    }

    /// What `recall` answers when it found nothing of the secret.
    fn nothing(&self) -> Value {
        match self.language {
            "Rust" => json!({ "kept": [], "copies": 0 }),
            "Python" => json!({ "kept": [], "cached": [] }),
            _ => json!({ "kept": [], "leftBehind": 0 }),
        }
    }
}

fn built(rel: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    assert!(
        path.is_file(),
        "{} is not built: run `make python-plugins ts-plugins` (make test does)",
        path.display()
    );
    path
}

/// A runtime whose pool has one slot: every call takes the slot the last
/// one left.
fn one_slot() -> Arc<Runtime> {
    Arc::new(
        Runtime::new(RuntimeConfig {
            slots: 1,
            ..RuntimeConfig::default()
        })
        .expect("runtime builds"),
    )
}

async fn load(rt: &Runtime, s: &Subject) -> Plugin {
    let bytes = std::fs::read(&s.component).expect("the fixture's component");
    let (plugin, _) = rt
        .load_within(
            s.name.parse().expect("a plugin name"),
            &bytes,
            &s.budget(),
            &toolhost_runtime::Payer::Host,
        )
        .await
        .unwrap_or_else(|e| panic!("{} loads: {e}", s.language));
    plugin
}

async fn call(
    rt: &Runtime,
    plugin: &Plugin,
    s: &Subject,
    who: &str,
    tool: &str,
    args: Value,
) -> Value {
    let ctx = CallContext::new(&format!("tenant-{who}"), who);
    let reply = rt
        .call(plugin, &ctx, tool, &args.to_string(), &s.budget())
        .await
        .unwrap_or_else(|e| panic!("{} {tool}: {e}", s.language));
    match reply {
        Reply::Output(out) => out.structured,
        other => panic!("{} {tool}: not an answer: {other:?}", s.language),
    }
}

fn secret(s: &Subject, case: &str) -> String {
    format!("fresh-{}-{case}-{:016x}", s.language, rand_u64())
}

/// A value no earlier run of the test left anywhere.
fn rand_u64() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}

/// Held by each test for its whole run: forcing one test's pages out moves
/// this whole process into a cgroup, so no other test may run meanwhile.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// `remember` as alice, then `recall` as bob in the same slot. With a swap
/// file, `remember` holds its instance alive while the pages it charged are
/// forced out to swap; the answer also says how many bytes of this process
/// were in swap then.
async fn remember_then_recall(
    s: &Subject,
    case: &str,
    swap: Option<&SwapFile>,
) -> (Value, Value, u64) {
    let rt = one_slot();
    let plugin = load(&rt, s).await;
    let secret = secret(s, case);
    // Only what the call charges from here on is forced out: the loaded
    // plugin stays resident.
    let cgroup = swap.map(|_| Arc::new(Cgroup::enter()));
    let hold_ms = if cgroup.is_some() { 3_000 } else { 0 };
    let remembered = call(
        &rt,
        &plugin,
        s,
        "alice",
        s.remember,
        json!({ "secret": secret, "hold_ms": hold_ms }),
    );
    let forced = cgroup.clone();
    let meanwhile = async move {
        let Some(cgroup) = forced else { return 0 };
        // `remember` leaves its secret within milliseconds of starting,
        // then holds its instance for three seconds.
        tokio::time::sleep(Duration::from_secs(1)).await;
        tokio::task::spawn_blocking(move || cgroup.force_out())
            .await
            .expect("the cgroup is reclaimed")
    };
    let (remembered, swapped) = tokio::join!(remembered, meanwhile);
    if let Some(cgroup) = cgroup {
        cgroup.leave();
    }
    assert_eq!(
        remembered["kept"],
        json!([secret]),
        "{}: {remembered}",
        s.language
    );
    let recalled = call(&rt, &plugin, s, "bob", s.recall, s.recall_args(&secret)).await;
    (remembered, recalled, swapped)
}

async fn resident(s: Subject) {
    let _alone = ONE_AT_A_TIME.lock().await;
    let (remembered, recalled, _) = remember_then_recall(&s, "resident", None).await;
    if s.language == "Rust" {
        assert!(remembered["copies"].as_u64() > Some(64), "{remembered}");
    }
    assert_eq!(
        recalled,
        s.nothing(),
        "{}: the next caller found it",
        s.language
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rust_secret_is_gone_for_the_next_caller_in_the_slot() {
    resident(Subject::rust()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_secret_is_gone_for_the_next_caller_in_the_slot() {
    resident(Subject::python()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typescript_secret_is_gone_for_the_next_caller_in_the_slot() {
    resident(Subject::typescript()).await;
}

/// The three languages in turn, with `remember`'s pages forced out to swap
/// while its instance is alive. One test, not three: the swap file and the
/// cgroup are this process's, and the cases must not share them at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_forced_out_to_swap_is_gone_for_the_next_caller_in_the_slot() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let swap = SwapFile::on();
    for s in [Subject::rust(), Subject::python(), Subject::typescript()] {
        let (_, recalled, swapped) = remember_then_recall(&s, "swapped", Some(&swap)).await;
        eprintln!("{}: {} KiB forced out to swap", s.language, swapped >> 10);
        // The heap blocks `remember` leaves are 2 MiB or more in every
        // language: most of them must have gone.
        assert!(
            swapped >= 1 << 20,
            "{}: only {swapped} bytes were forced out to swap",
            s.language
        );
        assert_eq!(
            recalled,
            s.nothing(),
            "{}: the next caller found what was swapped out",
            s.language
        );
    }
}

/// A swap file turned on for this test; turned off and removed on drop.
struct SwapFile {
    file: tempfile::TempPath,
}

impl SwapFile {
    fn on() -> Self {
        let uid = run("id", &["-u"]);
        assert_eq!(
            uid.trim(),
            "0",
            "forcing a slot's pages out needs root (swapon, a memory cgroup); make test runs as root"
        );
        // Swap files must be on a real filesystem (not tmpfs): the target dir.
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target");
        let file = tempfile::Builder::new()
            .prefix("freshness-swap-")
            .tempfile_in(&dir)
            .expect("a swap file")
            .into_temp_path();
        run("fallocate", &["-l", "512M", path_str(&file)]);
        run("chmod", &["600", path_str(&file)]);
        run("mkswap", &[path_str(&file)]);
        run("swapon", &[path_str(&file)]);
        Self { file }
    }
}

impl Drop for SwapFile {
    fn drop(&mut self) {
        // Swapped pages are read back in before the file is let go.
        let _ = Command::new("swapoff").arg(&*self.file).status();
    }
}

/// Bytes of this process in swap.
fn in_swap() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmSwap:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

fn run(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd} runs: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A memory cgroup (v1) of this process's own, below the one it ran in, so
/// that reclaiming it forces out only what this process charged since.
struct Cgroup {
    parent: PathBuf,
    own: PathBuf,
}

impl Cgroup {
    fn enter() -> Self {
        let lines = std::fs::read_to_string("/proc/self/cgroup").expect("/proc/self/cgroup");
        let path = lines
            .lines()
            .find_map(|l| l.split_once(":memory:").map(|(_, p)| p.to_owned()))
            .expect("a cgroup v1 memory controller (this test forces pages out through it)");
        let parent = Path::new("/sys/fs/cgroup/memory").join(path.trim_start_matches('/'));
        let own = parent.join(format!("toolhost-freshness-{}", std::process::id()));
        std::fs::create_dir_all(&own).expect("a memory cgroup of our own");
        std::fs::write(own.join("cgroup.procs"), std::process::id().to_string())
            .expect("this process moves into it");
        Self { parent, own }
    }

    /// Reclaims every page charged to this cgroup, which with swap on sends
    /// its anonymous pages there; answers how many bytes of this process
    /// went to swap.
    fn force_out(&self) -> u64 {
        let before = in_swap();
        std::fs::write(self.own.join("memory.force_empty"), "0").expect("the cgroup is reclaimed");
        in_swap().saturating_sub(before)
    }

    fn leave(&self) {
        let _ = std::fs::write(
            self.parent.join("cgroup.procs"),
            std::process::id().to_string(),
        );
        let _ = std::fs::remove_dir(&self.own);
    }
}
