//! The `toolhost` binary's room: the command line, configuration and wiring.
//!
//! `serve` runs the host; `user` and `client` administer accounts and
//! OAuth clients; `tenant`, `role`, `grant` and `revoke` administer tenants
//! and their roles; `audit` verifies, tails and searches the audit trail;
//! `plugin pin` turns a manifest template and a built component into a
//! loadable, digest-pinned plugin; `catalog check` loads a plugin directory
//! and reports every tool and every refusal; `call` runs one tool in the
//! sandbox, in-process, for tool authors.
//!
//! Rooms: the composition root (`serve`, which composes the host with
//! `compose`'s list of features and stops its `background` tasks in one
//! place); the HTTP edges (`edges`, `http`, `listen`, `connections`, the
//! guards, sessions and rate limits); what replicas share at run time
//! (`catalog_sync`, `catalog_follow`, `replica`, `run_workers`); and the
//! command line (`*_cli`, `admin`, `rbac`, `dev`, `scaffold`), which the
//! running host never imports.

mod admin;
mod audit_cli;
mod background;
mod call_cli;
mod catalog_cli;
mod catalog_follow;
mod catalog_http;
mod catalog_refusals;
mod catalog_sync;
mod compose;
mod config;
mod connections;
mod declared;
mod demo;
mod dev;
pub mod edge;
mod edges;
mod entity_generations;
mod forwarded;
mod guard;
pub mod http;
mod listen;
mod log_redact;
mod mcp_listen;
mod mcp_replay;
mod mcp_sessions;
mod person_connections;
mod prometheus;
mod rate_lease;
mod rate_limit;
mod scaffold;
mod workspace_http;
pub use rate_limit::{RateLimiter, RateLimits};
mod rbac;
#[cfg(test)]
mod reference;
mod registry_cli;
mod replica;
mod request_states;
mod resource_relay;
mod run_workers;
mod runs_cli;
mod serve;
mod signer_cli;
mod sso_config;
mod telemetry;
mod toolset_cli;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use toolhost_catalog::{Catalog, LoadOptions};
use toolhost_runtime::{Runtime, RuntimeConfig};

#[derive(Parser)]
#[command(
    name = "toolhost",
    version,
    about = "An MCP tool host whose tools are sandboxed WebAssembly components"
)]
struct Cli {
    /// Log as JSON lines instead of text.
    #[arg(long, global = true, env = "TOOLHOST_LOG_JSON")]
    log_json: bool,
    /// Export traces over OTLP (HTTP, JSON) to this collector
    /// (`http://collector:4318`): every HTTP request (MCP, OAuth, console),
    /// its MCP method, within a tool call auth, policy, plan, sandbox and
    /// audit, and each attempt of an exploration run.
    #[arg(
        long,
        global = true,
        env = "TOOLHOST_OTLP_ENDPOINT",
        value_name = "URL"
    )]
    otlp_endpoint: Option<String>,
    /// The share of traces exported, from 0 to 1 (default 1: all): a trace
    /// whose client sent a `traceparent` follows the client's own choice;
    /// any other is kept by its trace id with this probability.
    #[arg(
        long,
        global = true,
        env = "TOOLHOST_OTLP_SAMPLE_RATIO",
        value_name = "RATIO",
        default_value_t = 1.0,
        value_parser = telemetry::sample_ratio
    )]
    otlp_sample_ratio: f64,
    /// What to log: a level (`info`) or directives (`toolhost=debug,warn`);
    /// default `$TOOLHOST_LOG`, else `warn`.
    #[arg(long = "log", global = true, value_name = "FILTER")]
    log: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
// Parsed once per process: the size of `serve`'s many flags costs nothing.
#[allow(clippy::large_enum_variant)]
enum Command {
    /// Serve MCP over Streamable HTTP at /mcp (prints `MCP endpoint: URL` when ready).
    Serve(config::ServeArgs),
    /// Only execute exploration runs from the store (no HTTP): the same
    /// configuration as `serve`; runs as many at once as --run-workers.
    Worker(config::ServeArgs),
    /// Exploration runs: list, show, cancel, print and check a receipt.
    #[command(subcommand)]
    Runs(runs_cli::RunsCommand),
    /// Plugins: pin, sign, submit, sync, review, roll back.
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// Signing keys and the signers the catalog trusts.
    #[command(subcommand)]
    Signer(signer_cli::SignerCommand),
    /// The plugin catalog.
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// Local user accounts (people who log in to authorize MCP clients).
    #[command(subcommand)]
    User(admin::UserCommand),
    /// OAuth clients: list and revoke registered ones, add service clients.
    #[command(subcommand)]
    Client(admin::ClientCommand),
    /// Tenants: add and list them.
    #[command(subcommand)]
    Tenant(rbac::TenantCommand),
    /// A tenant's roles: add, delete, permit and forbid permissions, list.
    #[command(subcommand)]
    Role(rbac::RoleCommand),
    /// A tenant's toolsets: named subsets of its tools clients are bound
    /// to (define, delete, list).
    #[command(subcommand)]
    Toolset(toolset_cli::ToolsetCommand),
    /// Give a role to a user of its tenant (effective on their next request).
    Grant(rbac::GrantArgs),
    /// Take a role from a user (effective on their next request).
    Revoke(rbac::GrantArgs),
    /// The audit trail: verify its hash chain, tail it, search it.
    #[command(subcommand)]
    Audit(audit_cli::AuditCommand),
    /// Run one tool in the sandbox and print its answer (for tool authors):
    /// names resolve over a fixture (--entities) or the plugin's own
    /// entities against --backend; a question exits 2.
    Call(call_cli::CallArgs),
    /// Create a plugin project: a manifest, one tool with its test and a
    /// README, that builds with one command and passes its test.
    New(scaffold::NewArgs),
    /// Serve one plugin project while you work on it: build, pin, serve on
    /// loopback in the dev mode, and rebuild and reload on every change.
    Dev(dev::DevArgs),
}

#[derive(Subcommand)]
enum PluginCommand {
    /// Pin a built component to its manifest: copies the component into
    /// OUT and writes OUT/<plugin>.toml with the component's SHA-256.
    Pin {
        /// The manifest template (without sha256).
        manifest: PathBuf,
        /// The built component (.wasm).
        #[arg(long)]
        component: PathBuf,
        /// The plugin directory to write into.
        #[arg(long)]
        out: PathBuf,
        /// Also compile the component into this cache directory now, so the
        /// first load maps it instead of compiling (a Python or JavaScript
        /// component takes tens of seconds to compile).
        #[arg(long, env = "TOOLHOST_CACHE_DIR")]
        cache_dir: Option<PathBuf>,
    },
    /// What a built component is, as JSON: its digest, the interfaces it
    /// imports and exports, the tools it declares (with their schemas), its
    /// entity kinds and authoring kinds.
    Inspect {
        /// The component (.wasm).
        component: PathBuf,
        /// Where precompiled components are cached.
        #[arg(long, env = "TOOLHOST_CACHE_DIR")]
        cache_dir: Option<PathBuf>,
    },
    /// Sign a pinned manifest and the component it names: writes
    /// `<stem>.sig.json` beside the manifest (a DSSE envelope over an
    /// in-toto statement of both digests).
    Sign {
        /// The manifest (as `plugin pin` wrote it).
        manifest: PathBuf,
        /// The private key (`signer new` wrote it).
        #[arg(long)]
        key: PathBuf,
    },
    /// Submit every revision in a release directory for review.
    Submit {
        #[command(flatten)]
        args: catalog_cli::SubmitArgs,
        #[command(flatten)]
        operators: catalog_cli::OperatorArg,
    },
    /// Push a release directory to an OCI registry; prints the pinned reference.
    Push {
        /// The release directory: `<name>.toml`, its component, `<name>.sig.json`.
        dir: PathBuf,
        /// Where to: `oci://HOST:PORT/REPO:TAG` (plain HTTP only to this machine).
        reference: String,
    },
    /// Bring a directory into the catalog through the same checks as a
    /// submission (the bootstrap and GitOps path); `--activate` approves
    /// what is new as the operator.
    Sync {
        #[command(flatten)]
        args: catalog_cli::SubmitArgs,
        /// Approve and activate new revisions.
        #[arg(long)]
        activate: bool,
        /// Accept unsigned manifests (dev only).
        #[arg(long)]
        dev_allow_unsigned: bool,
    },
    /// Reviews: list, show (with the capability diff), approve, reject.
    #[command(subcommand)]
    Review(catalog_cli::ReviewCommand),
    /// Serve one tenant a chosen revision of a plugin while the others
    /// follow the catalog (`--follow` lets it follow again).
    PinTenant(catalog_cli::PinTenantArgs),
    /// Every tenant held to a revision of a plugin.
    Pins {
        #[command(flatten)]
        store: admin::StoreArg,
    },
    /// Make the previously active revision of a plugin active again.
    Rollback {
        /// The plugin's name.
        name: String,
        /// A user of the operator tenant holding `catalog:review`.
        #[arg(long = "as")]
        by: String,
        /// Why (required; audited).
        #[arg(long)]
        reason: String,
        #[command(flatten)]
        operators: catalog_cli::OperatorArg,
        #[command(flatten)]
        store: admin::StoreArg,
    },
}

#[derive(Subcommand)]
enum CatalogCommand {
    /// Load a plugin directory; list its tools and every refused plugin.
    /// Exits non-zero if any plugin was refused.
    Check {
        /// The plugin directory.
        #[arg(long, env = "TOOLHOST_PLUGINS")]
        plugins: PathBuf,
        /// Where precompiled components are cached.
        #[arg(long, env = "TOOLHOST_CACHE_DIR")]
        cache_dir: Option<PathBuf>,
    },
}

/// Parses the command line and runs it; the binary's whole `main`.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let telemetry = telemetry::init(
        cli.log_json,
        cli.log.as_deref(),
        cli.otlp_endpoint.as_deref(),
        cli.otlp_sample_ratio,
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build();
    let result = rt.context("starting the async runtime").and_then(|rt| {
        rt.block_on(async {
            let ran = run(cli.command).await;
            admin::close_opened().await;
            ran
        })
    });
    let code = match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("toolhost: {e:#}");
            ExitCode::FAILURE
        }
    };
    // Sends the spans still batched.
    drop(telemetry);
    code
}

async fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Serve(args) => serve_until_stopped(config::Config::resolve(args)?).await,
        Command::Worker(args) => {
            let mut config = config::Config::resolve(args)?;
            config.worker_only = true;
            config.run_workers = config.run_workers.max(1);
            serve_until_stopped(config).await
        }
        Command::Runs(command) => runs_cli::runs(command).await,
        Command::User(command) => admin::user(command).await,
        Command::Client(command) => admin::client(command).await,
        Command::Tenant(command) => rbac::tenant(command).await,
        Command::Role(command) => rbac::role(command).await,
        Command::Toolset(command) => toolset_cli::toolset(command).await,
        Command::Grant(args) => rbac::grant(args).await,
        Command::Revoke(args) => rbac::revoke(args).await,
        Command::Audit(command) => audit_cli::audit(command).await,
        Command::Plugin(command) => plugin(command).await,
        Command::Signer(command) => signer_cli::signer(command).await,
        Command::Catalog(CatalogCommand::Check { plugins, cache_dir }) => {
            check_catalog(&plugins, cache_dir).await
        }
        Command::Call(args) => call_cli::call(args).await,
        Command::New(args) => scaffold::new(args),
        Command::Dev(args) => dev::dev(args).await,
    }
}

/// `toolhost serve` and `toolhost worker`: serves `config` until stopped.
async fn serve_until_stopped(config: config::Config) -> anyhow::Result<ExitCode> {
    serve::run(config).await?;
    Ok(ExitCode::SUCCESS)
}

/// Runs a `plugin` command.
async fn plugin(command: PluginCommand) -> anyhow::Result<ExitCode> {
    match command {
        PluginCommand::Pin {
            manifest,
            component,
            out,
            cache_dir,
        } => {
            let written = toolhost_catalog::pin(&manifest, &component, &out)?;
            if let Some(cache_dir) = cache_dir {
                call_cli::prewarm(&written, cache_dir).await?;
            }
            println!("{}", written.display());
            Ok(ExitCode::SUCCESS)
        }
        PluginCommand::Inspect {
            component,
            cache_dir,
        } => call_cli::inspect(&component, cache_dir).await,
        PluginCommand::Sign { manifest, key } => {
            println!("{}", catalog_cli::sign(&manifest, &key)?.display());
            Ok(ExitCode::SUCCESS)
        }
        PluginCommand::Submit { args, operators } => catalog_cli::submit(args, &operators).await,
        PluginCommand::Push { dir, reference } => registry_cli::push(&dir, &reference).await,
        PluginCommand::Sync {
            args,
            activate,
            dev_allow_unsigned,
        } => catalog_cli::sync_command(args, activate, dev_allow_unsigned).await,
        PluginCommand::Review(command) => catalog_cli::review(command).await,
        PluginCommand::PinTenant(args) => catalog_cli::pin_tenant(args).await,
        PluginCommand::Pins { store } => catalog_cli::pins(&store).await,
        PluginCommand::Rollback {
            name,
            by,
            reason,
            operators,
            store,
        } => catalog_cli::rollback(&name, &store, &operators, &by, &reason).await,
    }
}

/// `toolhost catalog check`: loads the plugin directory, lists its tools
/// and what it refused; fails if it refused any.
async fn check_catalog(
    plugins: &std::path::Path,
    cache_dir: Option<std::path::PathBuf>,
) -> anyhow::Result<ExitCode> {
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir,
        ..RuntimeConfig::default()
    })?;
    let loaded = Catalog::load_dir(plugins, &runtime, &LoadOptions::default()).await;
    for tool in loaded.catalog.tools() {
        let spec = tool.spec();
        let plugin = &tool.plugin().manifest.plugin;
        println!(
            "{:<24} {:<20} {:<16} {}",
            spec.name, spec.permission, plugin.name, spec.description
        );
    }
    for e in &loaded.errors {
        eprintln!("refused: {e}");
    }
    Ok(if loaded.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
