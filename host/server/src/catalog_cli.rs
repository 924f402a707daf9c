//! `toolhost plugin sign|submit|sync|review|rollback`: the live catalog
//! from the command line, against the server's store (signers are
//! `signer_cli`'s). A
//! decision here is the same decision the MCP host tools make: worked out
//! by `toolhost_catalog::decide`, written with its audit row in one
//! transaction, served by every replica at its next poll.
//!
//! A command that acts as a person (`--as NAME`: submitting, deciding a
//! review, rolling back) holds them to the rule the host holds its
//! principals to: the person must be of the operator tenant
//! (`--operator-tenant`, `TOOLHOST_OPERATOR_TENANT`, as `serve` takes it)
//! and hold the permission there.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Subcommand;
use toolhost_audit::AuditSink;
use toolhost_auth::AuthStore;
use toolhost_catalog::decide::{self, Decider, Verdict};
use toolhost_catalog::intake::{self, IntakeOptions};
use toolhost_catalog::{Audience, CatalogStore, Manifest, RevisionState};
use toolhost_policy::{Operators, PolicyStore};
use toolhost_runtime::{Runtime, RuntimeConfig};
use toolhost_signing::{Envelope, Release, SigningKey};
use toolhost_storage::Store;
use toolhost_types::{Digest, Permission};

use crate::admin::{ShowArgs, StoreArg, open};
use crate::catalog_sync::{
    SUBMIT_PERMISSION, now_ms, person_event, signature_path, submissions, sync, write_decision,
};

/// The permission a person needs to decide reviews: host-level, held in
/// the operator tenant (through a role, or its admin role).
pub const REVIEW_PERMISSION: (&str, &str) = ("catalog", "review");

/// The operator tenant, for a command that acts as a person.
#[derive(Debug, clap::Args)]
pub struct OperatorArg {
    /// The operator tenant (as `serve --operator-tenant`): the person
    /// named by `--as` must be of it.
    #[arg(long, env = "TOOLHOST_OPERATOR_TENANT")]
    operator_tenant: Option<String>,
}

impl OperatorArg {
    fn operators(&self) -> anyhow::Result<Operators> {
        crate::config::operators(self.operator_tenant.clone())
    }
}

/// `toolhost plugin review …`
#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// Revisions waiting for review (`--state` for others).
    List {
        /// `pending_review` (default), `approved`, `active`, `rejected`, `withdrawn`.
        #[arg(long, default_value = "pending_review")]
        state: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// One revision and its capability diff against the active one, as JSON.
    Show(ShowArgs),
    /// Approve and activate a pending revision.
    Approve(DecideArgs),
    /// Reject a pending revision.
    Reject(DecideArgs),
}

/// A review decision's arguments.
#[derive(Debug, clap::Args)]
pub struct DecideArgs {
    /// The revision's id.
    pub id: String,
    /// The reviewer: a user of the operator tenant holding
    /// `catalog:review` (or its admin role).
    #[arg(long = "as")]
    pub reviewer: String,
    /// Why (required; recorded and audited).
    #[arg(long)]
    pub reason: String,
    /// Let the submitter approve their own revision.
    #[arg(long)]
    pub allow_self_approval: bool,
    /// Approve the transfers of names the diff shows (`transfer` changes:
    /// the plugin they come from stops serving them). Without it, approving
    /// a revision that takes names is refused.
    #[arg(long)]
    pub transfer: bool,
    /// Approve for this tenant only (repeat for more): the other tenants
    /// are not served the revision and never see it. Default: every tenant.
    #[arg(long = "tenant")]
    pub tenants: Vec<String>,
    #[command(flatten)]
    pub operators: OperatorArg,
    #[command(flatten)]
    pub store: StoreArg,
}

/// `toolhost plugin submit|sync` arguments.
#[derive(Debug, clap::Args)]
pub struct SubmitArgs {
    /// A release directory (`<name>.toml`, its component, `<name>.sig.json`),
    /// or `oci://REGISTRY/REPO@sha256:…` / `:TAG`.
    pub source: String,
    /// The submitter (`submit`: a user of the operator tenant holding
    /// `catalog:submit` or its admin role; `sync`: the operator's name for
    /// the audit trail).
    #[arg(long = "as")]
    pub submitter: String,
    #[command(flatten)]
    pub store: StoreArg,
}

/// `toolhost plugin sign MANIFEST --key KEY`: writes `<stem>.sig.json`
/// beside the manifest, binding it to the component it names.
pub fn sign(manifest_path: &Path, key_path: &Path) -> anyhow::Result<PathBuf> {
    let text = std::fs::read_to_string(manifest_path)
        .with_context(|| format!("reading {}", manifest_path.display()))?;
    let manifest = Manifest::parse(&text, manifest_path)?;
    let component_path = manifest_path.with_file_name(&manifest.plugin.component);
    let component = std::fs::read(&component_path)
        .with_context(|| format!("reading {}", component_path.display()))?;
    let pem = std::fs::read_to_string(key_path)
        .with_context(|| format!("reading {}", key_path.display()))?;
    let key = SigningKey::from_pem(&pem).with_context(|| format!("{}", key_path.display()))?;
    let release = Release {
        plugin: manifest.plugin.name.to_string(),
        version: manifest.plugin.version.clone(),
        component: Digest::of(&component),
        manifest: Digest::of(text.as_bytes()),
    };
    let out = signature_path(manifest_path);
    std::fs::write(&out, Envelope::sign(&release, &key).to_json())
        .with_context(|| format!("writing {}", out.display()))?;
    Ok(out)
}

/// `toolhost plugin submit DIR`: each revision stored pending review.
pub async fn submit(args: SubmitArgs, operators: &OperatorArg) -> anyhow::Result<ExitCode> {
    let operators = operators.operators()?;
    let store = open(&args.store).await?;
    let who = person(&store, &operators, &args.submitter, SUBMIT_PERMISSION).await?;
    let runtime = Runtime::new(RuntimeConfig::default())?;
    let mut failed = false;
    let subs = if crate::registry_cli::is_oci(&args.source) {
        crate::registry_cli::fetch(&args.source, &who.principal).await?
    } else {
        submissions(Path::new(&args.source), &who.principal)?
    };
    if subs.is_empty() {
        bail!("{} holds no *.toml manifest", args.source);
    }
    for sub in subs {
        match intake::submit(&store, &runtime, sub, &IntakeOptions::default(), now_ms()).await {
            Ok(done) => {
                let rev = &done.revision;
                let event = person_event(&who, "submit_plugin", rev);
                store.record(&event).await?;
                let what = if done.new {
                    "submitted"
                } else {
                    "already submitted"
                };
                println!(
                    "{} {} {} {} ({})",
                    rev.id, rev.plugin, rev.version, what, rev.state
                );
            }
            Err(e) => {
                eprintln!("refused [{}]: {e}", e.code());
                failed = true;
            }
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Runs a `plugin review` command.
pub async fn review(command: ReviewCommand) -> anyhow::Result<ExitCode> {
    match command {
        ReviewCommand::List { state, store } => {
            let state: RevisionState = state
                .parse()
                .map_err(|e: String| anyhow::anyhow!("--state: {e}"))?;
            let store = open(&store).await?;
            for rev in store.revisions(None, Some(state)).await? {
                let d = decide::review_diff(&store, &rev).await?;
                let widens = if d.widens() { "widens" } else { "-" };
                println!(
                    "{} {:<16} {:<10} {:<8} {:<6} {} changes, submitted by {}",
                    rev.id,
                    rev.plugin,
                    rev.version,
                    format!("{:?}", d.bump).to_lowercase(),
                    widens,
                    d.changes.len(),
                    rev.submitted_by
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        ReviewCommand::Show(ShowArgs { id, store }) => {
            let store = open(&store).await?;
            let rev = store
                .revision(&id)
                .await?
                .with_context(|| format!("no revision {id}"))?;
            let d = decide::review_diff(&store, &rev).await?;
            let shown = serde_json::json!({
                "revision": rev.id, "plugin": rev.plugin, "version": rev.version,
                "state": rev.state.as_str(), "source": rev.source,
                "component_sha256": rev.component_digest.to_string(),
                "manifest_sha256": rev.manifest_digest.to_string(),
                "signer": rev.signer, "submitted_by": rev.submitted_by,
                "reviewed_by": rev.reviewed_by, "review_reason": rev.review_reason,
                "diff": d,
            });
            println!("{}", serde_json::to_string_pretty(&shown)?);
            Ok(ExitCode::SUCCESS)
        }
        ReviewCommand::Approve(args) => {
            let verdict = if args.transfer {
                Verdict::ApproveTransfers
            } else {
                Verdict::Approve
            };
            decide_review(args, verdict).await
        }
        ReviewCommand::Reject(args) => decide_review(args, Verdict::Reject).await,
    }
}

async fn decide_review(args: DecideArgs, verdict: Verdict) -> anyhow::Result<ExitCode> {
    let operators = args.operators.operators()?;
    let store = open(&args.store).await?;
    let mut who = person(&store, &operators, &args.reviewer, REVIEW_PERMISSION).await?;
    who.may_approve_own = args.allow_self_approval;
    let audience = match Audience::of(args.tenants.iter().cloned()) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("refused [INVALID_ARGUMENTS]: {e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let named = audience.tenants().into_iter().flatten();
    if let Some(code) = unknown_tenant(&store, named.map(String::as_str)).await? {
        return Ok(code);
    }
    let d = match decide::review(&store, &args.id, verdict, &audience, &who, &args.reason).await {
        Ok(d) => d,
        Err(e) => {
            eprintln!("refused [{}]: {e}", e.code());
            return Ok(ExitCode::FAILURE);
        }
    };
    write_decision(&store, &d).await?;
    let word = if verdict.approves() {
        format!("approved and active for {audience}")
    } else {
        "rejected".to_owned()
    };
    println!("{} {word}; catalog {}", args.id, d.effect.version);
    Ok(ExitCode::SUCCESS)
}

/// `toolhost plugin rollback NAME`.
pub async fn rollback(
    plugin: &str,
    args: &StoreArg,
    operators: &OperatorArg,
    by: &str,
    reason: &str,
) -> anyhow::Result<ExitCode> {
    let operators = operators.operators()?;
    let store = open(args).await?;
    let who = person(&store, &operators, by, REVIEW_PERMISSION).await?;
    let d = match decide::rollback(&store, plugin, &who, reason).await {
        Ok(d) => d,
        Err(e) => {
            eprintln!("refused [{}]: {e}", e.code());
            return Ok(ExitCode::FAILURE);
        }
    };
    write_decision(&store, &d).await?;
    println!(
        "{plugin} rolled back to revision {}; catalog {}",
        d.effect
            .moves
            .iter()
            .find(|m| m.to == "active")
            .map(|m| m.revision.as_str())
            .unwrap_or("?"),
        d.effect.version
    );
    Ok(ExitCode::SUCCESS)
}

/// `toolhost plugin pin-tenant` arguments.
#[derive(Debug, clap::Args)]
pub struct PinTenantArgs {
    /// The plugin's name.
    pub plugin: String,
    /// The tenant held to the revision (or let go).
    #[arg(long)]
    pub tenant: String,
    /// The revision the tenant is served: one that was served (active now,
    /// or replaced) and whose audience includes the tenant.
    #[arg(long, required_unless_present = "follow", conflicts_with = "follow")]
    pub revision: Option<String>,
    /// Remove the tenant's pin: it follows the catalog again.
    #[arg(long)]
    pub follow: bool,
    /// A user of the operator tenant holding `catalog:review`.
    #[arg(long = "as")]
    pub by: String,
    /// Why (required; audited).
    #[arg(long)]
    pub reason: String,
    #[command(flatten)]
    pub operators: OperatorArg,
    #[command(flatten)]
    pub store: StoreArg,
}

/// `toolhost plugin pin-tenant NAME --tenant T (--revision ID | --follow)`.
pub async fn pin_tenant(args: PinTenantArgs) -> anyhow::Result<ExitCode> {
    let operators = args.operators.operators()?;
    let store = open(&args.store).await?;
    let who = person(&store, &operators, &args.by, REVIEW_PERMISSION).await?;
    let revision = args.revision.as_deref();
    if let Some(code) = unknown_tenant(&store, [args.tenant.as_str()]).await? {
        return Ok(code);
    }
    let d = match decide::pin(
        &store,
        &args.tenant,
        &args.plugin,
        revision,
        &who,
        &args.reason,
    )
    .await
    {
        Ok(d) => d,
        Err(e) => {
            eprintln!("refused [{}]: {e}", e.code());
            return Ok(ExitCode::FAILURE);
        }
    };
    write_decision(&store, &d).await?;
    match revision {
        Some(r) => println!(
            "tenant {} pinned to revision {r} of {}; catalog {}",
            args.tenant, args.plugin, d.effect.version
        ),
        None => println!(
            "tenant {} follows the catalog for {} again; catalog {}",
            args.tenant, args.plugin, d.effect.version
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// A failure, once it said which, if any of `named` is not a tenant of
/// the store.
async fn unknown_tenant<'a>(
    store: &Store,
    named: impl IntoIterator<Item = &'a str>,
) -> anyhow::Result<Option<ExitCode>> {
    let tenants = store.tenants().await?;
    for t in named {
        if !tenants.iter().any(|k| k == t) {
            eprintln!("refused [INVALID_ARGUMENTS]: no tenant named {t:?}");
            return Ok(Some(ExitCode::FAILURE));
        }
    }
    Ok(None)
}

/// `toolhost plugin pins`: every tenant held to a revision.
pub async fn pins(store: &StoreArg) -> anyhow::Result<ExitCode> {
    let store = open(store).await?;
    for p in store.pins().await? {
        println!(
            "{:<20} {:<20} {} pinned by {}",
            p.tenant, p.plugin, p.revision, p.pinned_by
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `--as NAME` as a person of the store holding `permission` in the
/// operator tenant (the permissions these commands need are host-level:
/// another tenant's admin role never holds them).
async fn person(
    store: &Store,
    operators: &Operators,
    name: &str,
    permission: (&str, &str),
) -> anyhow::Result<Decider> {
    let user = AuthStore::user_by_name(store, name)
        .await?
        .with_context(|| format!("no user {name:?}"))?;
    if user.disabled {
        bail!("user {name:?} is disabled");
    }
    let Some(operator_tenant) = operators.name() else {
        bail!(
            "acting as {name:?} needs the operator tenant: pass --operator-tenant (or set \
             TOOLHOST_OPERATOR_TENANT) as the server has it"
        );
    };
    if !operators.include(&user.tenant) {
        bail!(
            "user {name:?} is of tenant {:?}, not the operator tenant {operator_tenant:?}: \
             the catalog is decided by the host's operators",
            user.tenant
        );
    }
    let grants = PolicyStore::grants(store, &user.tenant, &user.id).await?;
    let grants = operators.standing(&user.tenant, grants);
    let needed = Permission::new(permission.0, permission.1).expect("a valid permission");
    if !grants.allows(&needed) {
        bail!(
            "user {name:?} does not hold {needed} (nor an admin role) in the operator tenant {:?}",
            user.tenant
        );
    }
    Ok(Decider {
        principal: user.id,
        tenant: user.tenant,
        client_id: None,
        may_approve_own: false,
    })
}

/// `toolhost plugin sync DIR`.
pub async fn sync_command(
    args: SubmitArgs,
    activate: bool,
    allow_unsigned: bool,
) -> anyhow::Result<ExitCode> {
    if crate::registry_cli::is_oci(&args.source) {
        bail!(
            "plugin sync reads a directory; submit {} with `plugin submit` instead",
            args.source
        );
    }
    let store = open(&args.store).await?;
    let runtime = Runtime::new(RuntimeConfig::default())?;
    let opts = IntakeOptions {
        allow_unsigned,
        ..IntakeOptions::default()
    };
    let report = sync(
        &store,
        &runtime,
        Path::new(&args.source),
        &opts,
        activate,
        &args.submitter,
    )
    .await?;
    for (plugin, rev, what) in &report.done {
        println!("{rev} {plugin} {what}");
    }
    for why in &report.refused {
        eprintln!("refused: {why}");
    }
    Ok(if report.refused.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
