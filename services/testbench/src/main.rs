//! `testbench-backend`: the testbench backend as a process, for `make run`
//! and manual demos. Prints `testbench backend: http://ADDR` once listening;
//! logs to stderr (`TESTBENCH_LOG`, default `info`); stops on Ctrl-C or
//! SIGTERM. The token is read from a file and never printed.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Parser;
use testbench::{Advance, Config, Seed};

#[derive(Parser)]
#[command(
    name = "testbench-backend",
    version,
    about = "The testbench test-platform backend"
)]
struct Cli {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8081")]
    listen: SocketAddr,
    /// File holding the bearer token (surrounding whitespace is trimmed).
    #[arg(long)]
    token_file: PathBuf,
    /// `contract`, `empty`, or the path of a seed JSON file.
    #[arg(long, default_value = "contract")]
    seed: String,
    /// Mount the unauthenticated `/_test/*` routes.
    #[arg(long)]
    test_api: bool,
    /// `on-read` (each status read moves an execution one step) or a
    /// duration per step such as `2s`.
    #[arg(long, default_value = "2s", value_parser = parse_advance)]
    advance: Advance,
    /// Require the host's signed identity assertion on every `/api`
    /// request, verified against this issuer's
    /// `/.well-known/backend-assertion-jwks.json`; projects with `people`
    /// are then seen by those people only.
    #[arg(long, value_name = "URL")]
    assertion_issuer: Option<String>,
    /// The audience the assertions must name: this backend's name in the
    /// host's configuration.
    #[arg(long, value_name = "NAME", default_value = "testbench")]
    assertion_audience: String,
}

fn main() -> ExitCode {
    init_logging();
    let cli = Cli::parse();
    let run = tokio::runtime::Runtime::new()
        .context("starting the runtime")
        .and_then(|rt| rt.block_on(run(cli)));
    match run {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("testbench-backend: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let config = Config {
        token: read_token(&cli.token_file)?,
        seed: load_seed(&cli.seed)?,
        test_api: cli.test_api,
        advance: cli.advance,
    };
    let listener = tokio::net::TcpListener::bind(cli.listen)
        .await
        .with_context(|| format!("listening on {}", cli.listen))?;
    let addr = listener.local_addr().context("reading the bound address")?;
    let (app, handle) = testbench::router(config);
    if let Some(issuer) = cli.assertion_issuer {
        tracing::info!(%issuer, audience = %cli.assertion_audience, "requiring identity assertions");
        handle.require_assertions(testbench::AssertionCheck {
            issuer,
            audience: cli.assertion_audience,
        });
    }
    println!("testbench backend: http://{addr}");
    tracing::info!(%addr, test_api = cli.test_api, seed = %cli.seed, "serving");
    axum::serve(listener, app)
        .with_graceful_shutdown(stop_signal())
        .await
        .context("serving")?;
    tracing::info!("stopped");
    Ok(())
}

fn read_token(path: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the token file {}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        bail!("the token file {} is empty", path.display());
    }
    Ok(token.to_owned())
}

fn load_seed(arg: &str) -> anyhow::Result<Seed> {
    if let Some(seed) = Seed::named(arg) {
        return Ok(seed);
    }
    let text =
        std::fs::read_to_string(arg).with_context(|| format!("reading the seed file {arg}"))?;
    let seed: Seed =
        serde_json::from_str(&text).with_context(|| format!("parsing the seed file {arg}"))?;
    seed.check()?;
    Ok(seed)
}

fn parse_advance(arg: &str) -> Result<Advance, String> {
    match arg {
        "on-read" => Ok(Advance::OnRead),
        _ => humantime::parse_duration(arg)
            .map(Advance::Every)
            .map_err(|e| format!("expected `on-read` or a duration such as `2s`: {e}")),
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TESTBENCH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}

async fn stop_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! { _ = ctrl_c => {}, _ = term.recv() => {} }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
    tracing::info!("shutdown requested");
}
