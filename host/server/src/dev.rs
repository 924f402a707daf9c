//! `toolhost dev DIR`: the author's loop around one plugin project (Rust,
//! or Python or TypeScript as `toolhost new` writes it). It builds the project, pins it, serves it on loopback in the dev mode
//! (unsigned, an embedded SQLite under `DIR/.toolhost`, the demo login),
//! and prints how to connect. Then it watches the project: a change is
//! rebuilt and synced into the running host's store, which serves it
//! without a restart (connected sessions are told `tools/list_changed`).
//! A build that fails is printed and the last good build keeps serving.
//! A backend the manifest declares and `--backend` does not name is
//! answered by a sample backend from the fixture `backends/NAME.json`
//! ([`sample_backend`]).

mod sample_backend;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, SystemTime};

use anyhow::Context;
use clap::Parser;
use toolhost_runtime::{Runtime, RuntimeConfig};
use toolhost_storage::Store;

use crate::config::{Config, ServeArgs};

/// How often the project is looked at for changes: quick enough to feel
/// live, slow enough to cost nothing while idle.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// What `toolhost dev` serves.
#[derive(clap::Args)]
pub(crate) struct DevArgs {
    /// The plugin project (a `toolhost new` project: `toolhost.toml`, and
    /// `Cargo.toml` for Rust, `app.py` and `build.sh` for Python).
    dir: PathBuf,
    /// Address to listen on (loopback only: the dev mode serves unsigned
    /// builds).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: std::net::SocketAddr,
    /// A backend the plugin may reach, `NAME=URL` (repeatable). A backend
    /// the manifest declares that this does not name is answered from the
    /// fixture file `backends/NAME.json` in the project, when there is one.
    #[arg(long = "backend", value_name = "NAME=URL")]
    backends: Vec<String>,
    /// The file holding a backend's bearer token, `NAME=PATH` (repeatable).
    #[arg(long = "backend-token-file", value_name = "NAME=PATH")]
    backend_token_files: Vec<String>,
}

/// `serve`'s flags, parsed as `toolhost serve` would parse them.
#[derive(Parser)]
struct Serve {
    #[command(flatten)]
    args: ServeArgs,
}

/// How a project is built.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lang {
    /// `cargo build --target wasm32-wasip2 --release`.
    Rust,
    /// `./build.sh` (a `toolhost new --lang python` or `--lang ts` project).
    Script,
}

/// Where a project's dev state lives.
struct Project {
    dir: PathBuf,
    manifest: PathBuf,
    state: PathBuf,
    lang: Lang,
}

impl Project {
    fn new(dir: PathBuf) -> anyhow::Result<Project> {
        let dir = dir
            .canonicalize()
            .with_context(|| format!("the project {}", dir.display()))?;
        let manifest = dir.join("toolhost.toml");
        anyhow::ensure!(manifest.exists(), "{}: no toolhost.toml", dir.display());
        let lang = if dir.join("Cargo.toml").exists() {
            Lang::Rust
        } else if dir.join("build.sh").exists()
            && (dir.join("app.py").exists() || dir.join("app.ts").exists())
        {
            Lang::Script
        } else {
            anyhow::bail!(
                "{}: neither a Rust project (Cargo.toml) nor a Python or TypeScript one (build.sh beside app.py or app.ts)",
                dir.display()
            );
        };
        let state = dir.join(".toolhost");
        Ok(Project {
            dir,
            manifest,
            state,
            lang,
        })
    }

    fn catalog(&self) -> PathBuf {
        self.state.join("catalog")
    }

    fn database_url(&self) -> String {
        format!("sqlite://{}?mode=rwc", self.state.join("dev.db").display())
    }

    /// Builds the component and pins it into the catalog directory.
    fn build(&self) -> anyhow::Result<()> {
        let mut cmd = match self.lang {
            Lang::Rust => {
                let mut c =
                    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
                c.args(["build", "--quiet", "--target", "wasm32-wasip2", "--release"]);
                c
            }
            Lang::Script => {
                let mut c = Command::new("sh");
                c.arg("build.sh");
                c
            }
        };
        let status = cmd
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .status()
            .context("running cargo")?;
        anyhow::ensure!(status.success(), "the build failed ({status})");
        let component = self.component()?;
        toolhost_catalog::pin(&self.manifest, &component, &self.catalog())?;
        Ok(())
    }

    /// The built component: the manifest's `component` in cargo's target
    /// directory for wasm32-wasip2 release builds.
    fn component(&self) -> anyhow::Result<PathBuf> {
        let text = std::fs::read_to_string(&self.manifest)?;
        let name = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("component = \""))
            .and_then(|rest| rest.split('"').next())
            .context("toolhost.toml names no component")?;
        if self.lang == Lang::Script {
            return Ok(self.dir.join(name));
        }
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| self.dir.join("target"));
        Ok(target.join("wasm32-wasip2/release").join(name))
    }

    /// The newest modification time among the sources a build reads.
    fn changed_at(&self) -> SystemTime {
        let mut newest = modified(&self.manifest);
        match self.lang {
            Lang::Rust => {
                newest = newest.max(modified(&self.dir.join("Cargo.toml")));
                walk(&self.dir.join("src"), &mut newest);
            }
            // The project's own modules, not what a build writes beside them.
            Lang::Script => {
                let entries = std::fs::read_dir(&self.dir).into_iter().flatten().flatten();
                let source = |e: &std::fs::DirEntry| {
                    e.path().extension().is_some_and(|x| x == "py" || x == "ts")
                };
                for e in entries.filter(source) {
                    newest = newest.max(modified(&e.path()));
                }
            }
        }
        newest
    }
}

fn modified(path: &Path) -> SystemTime {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

fn walk(dir: &Path, newest: &mut SystemTime) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            walk(&path, newest);
        } else {
            *newest = (*newest).max(modified(&path));
        }
    }
}

/// `toolhost dev`: serves the project and rebuilds it on change until
/// interrupted.
pub(crate) async fn dev(args: DevArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.listen.ip().is_loopback(),
        "toolhost dev serves unsigned builds: it listens on loopback only"
    );
    let project = Project::new(args.dir.clone())?;
    std::fs::create_dir_all(project.catalog())?;
    eprintln!("toolhost dev: building {}", project.dir.display());
    project.build()?;
    let samples = sample_backends(&project, &args).await?;
    let serve = serve_config(&project, &args, &samples)?;
    let server = tokio::spawn(crate::serve::run(serve));
    let mut built = project.changed_at();
    loop {
        tokio::time::sleep(WATCH_EVERY).await;
        if server.is_finished() {
            return match server.await {
                Ok(Ok(())) => Ok(ExitCode::SUCCESS),
                Ok(Err(e)) => Err(e),
                Err(e) => Err(e.into()),
            };
        }
        let now = project.changed_at();
        if now == built {
            continue;
        }
        built = now;
        eprintln!("toolhost dev: a change; rebuilding");
        match reload(&project).await {
            Ok(()) => eprintln!("toolhost dev: reloaded"),
            Err(e) => eprintln!("toolhost dev: {e:#}; still serving the last good build"),
        }
    }
}

/// Rebuilds the project and syncs its pinned catalog into the store the
/// host serves from, activating it (the dev mode's own approval).
async fn reload(project: &Project) -> anyhow::Result<()> {
    project.build()?;
    let store = Store::connect(&project.database_url()).await?;
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(project.state.join("cache")),
        ..RuntimeConfig::default()
    })?;
    let intake = crate::catalog_sync::intake_options(true, None)?;
    let synced =
        crate::catalog_sync::sync(&store, &runtime, &project.catalog(), &intake, true, "dev")
            .await?;
    store.close().await;
    if let Some(why) = synced.refused.first() {
        anyhow::bail!("refused: {why}");
    }
    Ok(())
}

/// A sample backend for each backend the manifest declares and `--backend`
/// does not name, from the project's `backends/NAME.json`: `NAME=URL` for
/// `serve`. A declared backend with neither is said (its calls are refused
/// as not configured).
async fn sample_backends(project: &Project, args: &DevArgs) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(&project.manifest)?;
    let manifest = toolhost_catalog::Manifest::parse(&text, &project.manifest)?;
    let given: Vec<&str> = args
        .backends
        .iter()
        .filter_map(|b| b.split_once('=').map(|(name, _)| name))
        .collect();
    let mut samples = Vec::new();
    for name in manifest.backends.keys() {
        if given.contains(&name.as_str()) {
            continue;
        }
        let fixture = project.dir.join("backends").join(format!("{name}.json"));
        if !fixture.exists() {
            eprintln!(
                "toolhost dev: backend {name}: no --backend {name}=URL and no {}: its calls are refused",
                fixture.display()
            );
            continue;
        }
        sample_backend::check(&fixture)?;
        let url = sample_backend::serve(fixture.clone()).await?;
        eprintln!(
            "toolhost dev: backend {name}: the sample backend at {url} answers from {}",
            fixture.display()
        );
        samples.push(format!("{name}={url}"));
    }
    Ok(samples)
}

/// `serve`'s configuration for the project: loopback, the dev mode, its
/// own SQLite and cache, the demo login (its tenant the operators'), the
/// backends given and the sample ones.
fn serve_config(project: &Project, args: &DevArgs, samples: &[String]) -> anyhow::Result<Config> {
    let mut argv: Vec<String> = vec![
        "serve".into(),
        "--listen".into(),
        args.listen.to_string(),
        "--plugins".into(),
        project.catalog().display().to_string(),
        "--database-url".into(),
        project.database_url(),
        "--cache-dir".into(),
        project.state.join("cache").display().to_string(),
        "--dev-allow-unsigned".into(),
        "--seed-demo".into(),
        "--allow-self-approval".into(),
        // The author's own host: its demo tenant is the operator tenant, so
        // the author reviews in the console as the host's operator.
        "--operator-tenant".into(),
        "demo".into(),
    ];
    for b in args.backends.iter().chain(samples) {
        argv.extend(["--backend".into(), b.clone()]);
    }
    for t in &args.backend_token_files {
        argv.extend(["--backend-token-file".into(), t.clone()]);
    }
    let parsed = Serve::try_parse_from(argv).context("the dev server's flags")?;
    Config::resolve(parsed.args)
}
