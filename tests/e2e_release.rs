//! The release as someone with nothing of this repository has it (issue
//! 41): the archive `make dist` builds is unpacked into a temporary
//! directory, and every step runs its `bin/toolhost` in a mount namespace
//! where the checkout is an empty directory (`unshare -m`, a tmpfs mounted
//! over it; each step first checks it sees the checkout empty), with no
//! path of the checkout on `PATH` and no variable of cargo's. The author's
//! machine has Rust with wasm32-wasip2, Python and Node 22 (the checkout's
//! `.tools/node`, copied out before the checkout is hidden) and the
//! package registries; everything else comes from the archive.
//!
//! - For each of Rust, Python and TypeScript: `toolhost new` (the SDK from
//!   the release's `sdk/`), the project's `./build.sh` (its own test, then
//!   the component), `toolhost dev`, and the Python MCP SDK lists and calls
//!   the tool in both eras.
//! - The README's quick starts as written; a Python plugin signed with a fresh key of the author's, pushed to an
//!   OCI registry, submitted to the release's `toolhost serve` on
//!   PostgreSQL, approved by a second person, and called by a client.
//! - The archive's checksums hold, its binary names no path of the build
//!   machine, and its Kubernetes manifests and systemd unit validate.
//!
//! The MCP client and the OCI registry run outside the namespace: they are
//! the author's and the operator's peers, not part of the release.

mod support;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::registry::Registry;
use support::{DEMO_PASSWORD, PgSchema, Tools};

/// How long an approved plugin may take to be served: its component is
/// compiled first, seconds for a Python one on an idle machine, minutes on
/// CI's two cores while the other authors' builds run beside it.
const SERVED_WITHIN: Duration = Duration::from_secs(300);

/// The archive `make dist` wrote (the newest, should there be several).
fn archive() -> PathBuf {
    let dist = support::repo().join("target/dist");
    let mut archives: Vec<PathBuf> = std::fs::read_dir(&dist)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with("-x86_64-linux.tar.gz"))
        .collect();
    archives.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
    archives.pop().unwrap_or_else(|| {
        panic!(
            "no release archive in {}: run `make dist` (`make test` runs it first)",
            dist.display()
        )
    })
}

/// An unpacked release and the author's machine beside it.
struct Release {
    tmp: tempfile::TempDir,
    /// `toolhost-VERSION/`.
    root: PathBuf,
    /// Where the author works.
    work: PathBuf,
    /// The author's Node 22 (`bin/node`).
    node: PathBuf,
}

impl Release {
    fn unpack() -> Release {
        let tmp = tempfile::Builder::new()
            .prefix("toolhost-release-")
            .tempdir()
            .expect("a temp dir");
        let mut tar = Command::new("tar");
        tar.arg("-xzf").arg(archive()).arg("-C").arg(tmp.path());
        let run = support::run(&mut tar, Duration::from_secs(120));
        assert!(run.ok(), "tar: {}", run.stderr);
        let root = std::fs::read_dir(tmp.path())
            .expect("unpacked")
            .flatten()
            .map(|e| e.path())
            .find(|p| p.join("bin/toolhost").exists())
            .expect("the archive holds toolhost-VERSION/bin/toolhost");
        let work = tmp.path().join("work");
        std::fs::create_dir_all(&work).expect("mkdir");
        let node = tmp.path().join("node");
        std::fs::create_dir_all(node.join("bin")).expect("mkdir");
        let tools = Tools::require();
        std::fs::copy(&tools.node, node.join("bin/node")).expect("copy Node 22");
        Release {
            tmp,
            root,
            work,
            node,
        }
    }

    fn bin(&self) -> PathBuf {
        self.root.join("bin/toolhost")
    }

    /// `sh -eu -c SCRIPT` in the author's directory, in a mount namespace
    /// where the checkout is empty, with the machine's environment (its
    /// certificates, its registries' settings) less what cargo sets for a
    /// test and anything naming the checkout: the release's `bin/` and the
    /// author's Node first on `PATH`.
    fn hidden(&self, script: &str) -> Command {
        const HIDE: &str = r#"mount -t tmpfs -o size=64k,mode=0555 toolhost-hidden "$1"
if [ -n "$(ls -A "$1")" ]; then echo "the checkout $1 is not hidden" >&2; exit 97; fi
script=$2; shift 2; exec sh -eu -c "$script""#;
        let repo = support::repo().canonicalize().expect("the checkout's path");
        let ambient = std::env::var_os("PATH").unwrap_or_default();
        let path = std::env::join_paths(
            [self.root.join("bin"), self.node.join("bin")]
                .into_iter()
                .chain(std::env::split_paths(&ambient).filter(|p| !p.starts_with(&repo))),
        )
        .expect("a PATH");
        let mut cmd = Command::new("unshare");
        cmd.args(["-m", "sh", "-eu", "-c", HIDE, "hide"])
            .arg(&repo)
            .arg(script)
            .env_clear();
        let checkout = repo.to_string_lossy().into_owned();
        for (key, value) in std::env::vars_os() {
            let name = key.to_string_lossy();
            let cargos = (name.starts_with("CARGO") && name != "CARGO_HOME")
                || name.starts_with("RUSTUP_TOOLCHAIN")
                || name == "RUST_TEST_THREADS"
                || name == "OUT_DIR";
            if !cargos && !value.to_string_lossy().contains(&checkout) {
                cmd.env(key, value);
            }
        }
        cmd.env("PATH", path)
            .env("TOOLHOST_DEMO_PASSWORD", DEMO_PASSWORD)
            .current_dir(&self.work)
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `script` hidden; panics with its output unless it succeeds.
    fn run(&self, what: &str, script: &str, timeout: Duration) -> String {
        let run = support::run(&mut self.hidden(script), timeout);
        assert!(
            run.ok(),
            "{what}: {}\n{script}\nstdout:\n{}\nstderr:\n{}",
            run.verdict(),
            run.stdout,
            run.stderr
        );
        run.stdout
    }
}

/// A server started hidden, killed when dropped; its log is kept.
struct Served {
    child: Child,
    log: PathBuf,
}

impl Served {
    /// Starts `script` (which execs a server printing `MCP endpoint: URL`)
    /// and waits for the endpoint.
    fn start(release: &Release, script: &str, log: &str) -> (Served, String) {
        let log = release.tmp.path().join(log);
        let mut cmd = release.hidden(script);
        // A group of its own: a script that runs the server as a child
        // (the README's block does not exec it) is stopped with it.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        cmd.stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("a log"));
        let mut child = cmd.spawn().expect("the server starts");
        let stdout = child.stdout.take().expect("piped");
        let served = Served { child, log };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let lines = std::io::BufRead::lines(std::io::BufReader::new(stdout));
            for line in lines.map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("MCP endpoint: ") {
                    let _ = tx.send(url.trim().to_owned());
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(600))
            .unwrap_or_else(|_| panic!("no endpoint:\n{}", served.log()));
        (served, url)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Served {
    /// Kills the script's whole process group, the server included.
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free loopback port (bound, then let go).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    l.local_addr().expect("an address").port()
}

/// A service client of tenant `demo` with `scope` in the store at
/// `database_url`, made with the release's binary: its bearer token from
/// the host at `url`.
fn service_token(release: &Release, url: &str, database_url: &str, scope: &str) -> String {
    let out = release.run(
        "client add-service",
        &format!(
            "toolhost client add-service release-e2e --tenant demo --scope '{scope}' --database-url '{database_url}'"
        ),
        Duration::from_secs(60),
    );
    support::service_client_token(url, &out)
}

/// The Python MCP SDK lists the tools at `url` and calls `greet` with Ada
/// (tests/e2e/python_client.py, both eras).
fn client_calls_greet(url: &str, token: &str, log: impl Fn() -> String) {
    let tools = Tools::require();
    let mut cmd = tools.python("python_client.py", &[url]);
    cmd.env(support::TOKEN_ENV, token);
    let run = support::run(&mut cmd, Duration::from_secs(180));
    assert!(
        run.ok(),
        "the Python client: {}\n{}\n{}\nserver log:\n{}",
        run.verdict(),
        run.stdout,
        run.stderr,
        log()
    );
}

/// The SDK line `toolhost new` printed names the release's `sdk/`.
fn sdk_from_the_release(release: &Release, out: &str) {
    let sdk = release.root.join("sdk").canonicalize().expect("sdk/");
    assert!(
        out.contains(&format!("sdk: 0.2.0 from {}", sdk.display())),
        "the SDK comes from the release: {out}"
    );
}

/// `toolhost dev` on the project `name` in the author's directory, and the
/// Python MCP SDK lists and calls its `greet`.
fn served_by_dev(release: &Release, name: &str) {
    let listen = format!("127.0.0.1:{}", free_port());
    let (dev, url) = Served::start(
        release,
        &format!("exec toolhost dev {name} --listen {listen}"),
        &format!("dev-{name}.log"),
    );
    let database = format!(
        "sqlite://{}?mode=rwc",
        release.work.join(name).join(".toolhost/dev.db").display()
    );
    let token = service_token(release, &url, &database, &format!("mcp {name}:read"));
    client_calls_greet(&url, &token, || dev.log());
}

/// new → the project's own test and build → `toolhost dev` → a client.
fn author_in(lang: &str) {
    let release = Release::unpack();
    let name = format!("demo-{lang}");
    let component = format!("demo_{lang}.wasm");
    let out = release.run(
        &format!("toolhost new --lang {lang}, then ./build.sh"),
        &format!("toolhost new {name} --lang {lang}\ncd {name}\n./build.sh"),
        Duration::from_secs(900),
    );
    sdk_from_the_release(&release, &out);
    assert!(out.contains(&format!("built {component}")), "{out}");
    let project = release.work.join(&name);
    for file in ["wit/world.wit", "toolhost.toml", "README.md", &component] {
        assert!(project.join(file).exists(), "{lang}: {file}");
    }
    served_by_dev(&release, &name);
}

#[test]
fn a_rust_author_works_from_the_release_alone() {
    author_in("rust");
}

#[test]
fn a_typescript_author_works_from_the_release_alone() {
    author_in("ts");
}

/// The Python author's whole path: the README's author quick start as
/// written (new, the project's own test and build, a call in the sandbox),
/// `toolhost dev` and a client; then a key of the author's signs it, it is
/// pushed to an OCI registry, submitted to the release's `toolhost serve`
/// on PostgreSQL, approved by a second person, and a client calls it.
#[test]
fn a_python_author_follows_the_readme_then_ships_through_a_registry_and_a_review_to_a_host_on_postgresql()
 {
    let release = Release::unpack();
    let out = release.run(
        "the README's author quick start",
        &quickstart(&release, "author"),
        Duration::from_secs(900),
    );
    sdk_from_the_release(&release, &out);
    assert!(
        out.contains(r#""Hello, Ada!""#),
        "the call answers as the README says: {out}"
    );
    served_by_dev(&release, "my-tool");

    let registry = Registry::start();
    let pg = PgSchema::create("release");
    let db = &pg.url;
    let reference = format!("oci://{}/authors/my-tool:0.1.0", registry.host());
    let pushed = release.run(
        "the author's release",
        &format!(
            "cd my-tool
toolhost signer new author --dir ../keys >/dev/null
toolhost plugin pin toolhost.toml --component my_tool.wasm --out ../release >/dev/null
toolhost plugin sign ../release/my-tool.toml --key ../keys/author.key >/dev/null
toolhost plugin push ../release '{reference}'"
        ),
        Duration::from_secs(300),
    );
    let pinned = pushed.lines().last().expect("a pinned reference").trim();
    assert!(pinned.contains("@sha256:"), "{pushed}");

    // The operator's host: the release's binary on PostgreSQL, tenant demo
    // the operators'; alice submits, bob reviews.
    let admin = |what: &str, args: &str| {
        release.run(
            what,
            &format!("TOOLHOST_OPERATOR_TENANT=demo toolhost {args} --database-url '{db}'"),
            Duration::from_secs(120),
        )
    };
    let (host, url) = Served::start(
        &release,
        &format!(
            "TOOLHOST_LOG=toolhost_server=info exec toolhost serve --listen 127.0.0.1:0 --database-url '{db}' --seed-demo --operator-tenant demo --cache-dir ../cache"
        ),
        "serve.log",
    );
    for (role, permission) in [("author", "catalog:submit"), ("reviewer", "catalog:review")] {
        admin("a role", &format!("role add {role} --tenant demo"));
        admin(
            "a permission",
            &format!("role permit {role} {permission} --tenant demo"),
        );
    }
    for (user, role) in [("alice", "author"), ("bob", "reviewer")] {
        admin("a user", &format!("user add {user} --tenant demo"));
        admin("a grant", &format!("grant {role} {user} --tenant demo"));
    }
    admin(
        "trust the author's key",
        "signer trust author --key keys/author.pub --plugins my-tool",
    );
    let submitted = admin("submit", &format!("plugin submit '{pinned}' --as alice"));
    let id = submitted
        .split_whitespace()
        .next()
        .expect("a revision id")
        .to_owned();
    assert!(submitted.contains("pending_review"), "{submitted}");
    let approved = admin(
        "approve",
        &format!("plugin review approve {id} --as bob --reason 'read the diff'"),
    );
    assert!(approved.contains("approved and active"), "{approved}");

    let token = service_token(&release, &url, db, "mcp my-tool:read");
    let started = Instant::now();
    loop {
        let tools = Tools::require();
        let mut cmd = tools.python("python_client.py", &[&url]);
        cmd.env(support::TOKEN_ENV, &token);
        let run = support::run(&mut cmd, Duration::from_secs(180));
        if run.ok() {
            break;
        }
        assert!(
            started.elapsed() < SERVED_WITHIN,
            "the approved plugin is not served: {}\n{}\nserver log:\n{}",
            run.stdout,
            run.stderr,
            host.log()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn the_archive_checks_out_names_no_build_path_and_its_deployment_files_validate() {
    let release = Release::unpack();
    release.run(
        "the checksums",
        &format!(
            "cd '{}' && sha256sum --check --quiet SHA256SUMS",
            release.root.display()
        ),
        Duration::from_secs(60),
    );
    let listed = std::fs::read_to_string(release.root.join("SHA256SUMS")).expect("SHA256SUMS");
    for file in [
        "bin/toolhost",
        "wit/world.wit",
        "sdk/python/toolhost_sdk-0.2.0-py3-none-any.whl",
        "sdk/ts/toolhost-sdk-0.2.0.tgz",
        "sdk/rust/toolhost-sdk-0.2.0.crate",
        "sdk/rust/toolhost-sdk-0.2.0/Cargo.toml",
        "deploy/haproxy.cfg",
        "deploy/systemd/toolhost.service",
        "deploy/container/Containerfile",
        "deploy/kubernetes/deployment.yaml",
        "README.md",
    ] {
        assert!(
            listed.lines().any(|l| l.ends_with(&format!("  {file}"))),
            "SHA256SUMS lists {file}:\n{listed}"
        );
    }

    // No path of the build machine: the checkout (and its target
    // directory), cargo's home (the crates' sources), rustup's (the
    // toolchain). The home alone is no evidence: `/root/` is one of the
    // paths the description highlighter flags.
    let binary = std::fs::read(release.bin()).expect("the binary");
    let repo = support::repo().canonicalize().expect("the checkout");
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{home}/.cargo"));
    let rustup_home = std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{home}/.rustup"));
    for path in [repo.to_string_lossy().into_owned(), cargo_home, rustup_home] {
        let found = binary
            .windows(path.len())
            .position(|w| w == path.as_bytes());
        assert!(
            found.is_none(),
            "the release binary holds {path:?} at byte {found:?}"
        );
    }

    // The manifests against Kubernetes's schemas, offline and strict; the
    // unit with systemd's own checker (the binary where the unit expects it).
    let kubeval = support::repo().join(".tools/kubernetes-validate/bin/kubernetes-validate");
    assert!(kubeval.exists(), "run `make deploy-tools`");
    let manifests: Vec<PathBuf> = std::fs::read_dir(release.root.join("deploy/kubernetes"))
        .expect("deploy/kubernetes")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .filter(|p| !p.ends_with("kustomization.yaml"))
        .collect();
    assert!(manifests.len() >= 4, "{manifests:?}");
    let mut check = Command::new(&kubeval);
    check.arg("--strict").args(&manifests);
    let run = support::run(&mut check, Duration::from_secs(120));
    assert!(
        run.ok(),
        "kubernetes-validate: {}\n{}",
        run.stdout,
        run.stderr
    );
    let kustomization =
        std::fs::read_to_string(release.root.join("deploy/kubernetes/kustomization.yaml"))
            .expect("kustomization.yaml");
    for manifest in &manifests {
        let name = manifest.file_name().expect("a name").to_string_lossy();
        assert!(
            kustomization.contains(&format!("  - {name}\n")),
            "kustomization.yaml lists {name}"
        );
    }
    let unit = release.tmp.path().join("toolhost.service");
    let text = std::fs::read_to_string(release.root.join("deploy/systemd/toolhost.service"))
        .expect("the unit");
    std::fs::write(
        &unit,
        text.replace(
            "/opt/toolhost/bin/toolhost",
            &release.bin().to_string_lossy(),
        ),
    )
    .expect("write");
    let mut verify = Command::new("systemd-analyze");
    verify.arg("verify").arg(&unit);
    let run = support::run(&mut verify, Duration::from_secs(60));
    assert!(
        run.ok(),
        "systemd-analyze verify: {}\n{}",
        run.stdout,
        run.stderr
    );
}

/// The hiding holds: the checkout's files are there outside the namespace
/// and not inside it, where the release's binary runs and names its version.
#[test]
fn the_release_binary_runs_where_the_checkout_cannot_be_read() {
    let release = Release::unpack();
    let manifest = support::repo().join("Cargo.toml");
    assert!(manifest.exists());
    let out = release.run(
        "the hidden checkout",
        &format!(
            "if [ -e '{}' ]; then echo visible; else echo hidden; fi\ntoolhost --version",
            manifest.display()
        ),
        Duration::from_secs(30),
    );
    assert!(out.starts_with("hidden\ntoolhost "), "{out}");
}

/// The fenced `sh` block right after `<!-- quickstart: NAME -->` in the
/// release's README.
fn quickstart(release: &Release, name: &str) -> String {
    let readme = std::fs::read_to_string(release.root.join("README.md")).expect("README.md");
    let marker = format!("<!-- quickstart: {name} -->\n```sh\n");
    let at = readme
        .find(&marker)
        .unwrap_or_else(|| panic!("the README has no {marker:?}"));
    let body = &readme[at + marker.len()..];
    body[..body.find("\n```").expect("the block ends") + 1].to_owned()
}

/// The README's operator quick start, as written, from the release: it
/// unpacks the archive, checks it and serves (the author's quick start is
/// the Python author's test).
#[test]
fn the_readmes_operator_quick_start_runs_as_written_from_the_release() {
    let release = Release::unpack();
    let operator = release.work.join("operator");
    std::fs::create_dir_all(&operator).expect("mkdir");
    let archive = archive();
    std::fs::copy(
        &archive,
        operator.join(archive.file_name().expect("a name")),
    )
    .expect("copy");
    let block = quickstart(&release, "release");
    let port = free_port();
    let (host, url) = Served::start(
        &release,
        &format!("cd operator\nexport TOOLHOST_LISTEN=127.0.0.1:{port}\n{block}"),
        "quickstart.log",
    );
    assert_eq!(
        url,
        format!("http://127.0.0.1:{port}/mcp"),
        "{}",
        host.log()
    );
    let (status, _) = support::exchange(&url, "GET", "/readyz", &[], "");
    assert_eq!(status, 200, "{}", host.log());
}
