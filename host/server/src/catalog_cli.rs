//! `toolhost plugin sign|submit|sync|review|rollback`: the live catalog
//! from the command line, against the server's store (signers are
//! `signer_cli`'s). A
//! decision here is the same decision the MCP host tools make: worked out
//! by `toolhost_catalog::decide`, written with its audit row in one
//! transaction, served by every replica at its next poll.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Subcommand;
use toolhost_audit::{AuditSink, Effect};
use toolhost_auth::AuthStore;
use toolhost_catalog::decide::{self, Decider, Verdict};
use toolhost_catalog::intake::{self, IntakeOptions, Submission};
use toolhost_catalog::{CatalogStore, Manifest, RevisionState};
use toolhost_policy::PolicyStore;
use toolhost_runtime::{Runtime, RuntimeConfig};
use toolhost_signing::{Envelope, Release, SigningKey, TrustRoot};
use toolhost_storage::Store;
use toolhost_types::{Digest, Permission};

use crate::admin::{StoreArg, open};

/// The permission a person needs to decide reviews (or an admin role).
pub const REVIEW_PERMISSION: (&str, &str) = ("catalog", "review");
/// The permission a person needs to submit revisions.
pub const SUBMIT_PERMISSION: (&str, &str) = ("catalog", "submit");

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
    Show {
        /// The revision's id.
        id: String,
        #[command(flatten)]
        store: StoreArg,
    },
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
    /// The reviewer: a user holding `catalog:review` (or an admin role).
    #[arg(long = "as")]
    pub reviewer: String,
    /// Why (required; recorded and audited).
    #[arg(long)]
    pub reason: String,
    /// Let the submitter approve their own revision.
    #[arg(long)]
    pub allow_self_approval: bool,
    #[command(flatten)]
    pub store: StoreArg,
}

/// `toolhost plugin submit|sync` arguments.
#[derive(Debug, clap::Args)]
pub struct SubmitArgs {
    /// A release directory (`<name>.toml`, its component, `<name>.sig.json`),
    /// or `oci://REGISTRY/REPO@sha256:…` / `:TAG`.
    pub source: String,
    /// The submitter: a user holding `catalog:submit` (or an admin role).
    #[arg(long = "as")]
    pub submitter: String,
    #[command(flatten)]
    pub store: StoreArg,
}

/// Intake's options: dev mode, and the Sigstore trust root from `root`
/// (a `trusted_root.json`) or the built-in public-good one.
pub(crate) fn intake_options(
    allow_unsigned: bool,
    root: Option<&Path>,
) -> anyhow::Result<IntakeOptions> {
    let trust_root = match root {
        Some(path) => {
            let bytes =
                std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
            let root =
                TrustRoot::from_json(&bytes).with_context(|| format!("{}", path.display()))?;
            Arc::new(root)
        }
        None => IntakeOptions::default().trust_root,
    };
    Ok(IntakeOptions {
        allow_unsigned,
        trust_root,
        ..IntakeOptions::default()
    })
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

/// The signature file of a manifest: `<stem>.sig.json` beside it.
fn signature_path(manifest: &Path) -> PathBuf {
    let stem = manifest
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    manifest.with_file_name(format!("{stem}.sig.json"))
}

/// The signature beside a manifest: `<stem>.sig.json` (a DSSE envelope,
/// from `plugin sign`) or `<stem>.sigstore.json` (a Sigstore bundle, from
/// the author's CI); none if neither exists; both is refused as ambiguous.
fn signature_beside(manifest: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    let dsse = signature_path(manifest);
    let bundle = dsse.with_file_name(
        dsse.to_string_lossy()
            .replace(".sig.json", ".sigstore.json"),
    );
    let read = |p: &Path| match std::fs::read(p) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", p.display())),
    };
    match (read(&dsse)?, read(&bundle)?) {
        (Some(_), Some(_)) => bail!(
            "both {} and {} are beside the manifest: keep the one signature to submit",
            dsse.display(),
            bundle.display()
        ),
        (one, None) | (None, one) => Ok(one),
    }
}

/// The submissions a release directory holds: one per `*.toml` (none for
/// an empty directory).
pub fn submissions(dir: &Path, submitted_by: &str) -> anyhow::Result<Vec<Submission>> {
    let mut manifests: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml") && p.is_file())
        .collect();
    manifests.sort();
    let mut out = Vec::new();
    for path in manifests {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let manifest = Manifest::parse(&text, &path)?;
        let component_path = path.with_file_name(&manifest.plugin.component);
        let component = std::fs::read(&component_path)
            .with_context(|| format!("reading {}", component_path.display()))?;
        let envelope = signature_beside(&path)?;
        let source = std::fs::canonicalize(&path).unwrap_or(path);
        out.push(Submission {
            manifest: text,
            component,
            envelope,
            source: format!("dir:{}", source.display()),
            submitted_by: submitted_by.to_owned(),
        });
    }
    Ok(out)
}

/// `toolhost plugin submit DIR`: each revision stored pending review.
pub async fn submit(args: SubmitArgs) -> anyhow::Result<ExitCode> {
    let store = open(&args.store).await?;
    let who = person(&store, &args.submitter, SUBMIT_PERMISSION).await?;
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
        ReviewCommand::Show { id, store } => {
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
        ReviewCommand::Approve(args) => decide_review(args, Verdict::Approve).await,
        ReviewCommand::Reject(args) => decide_review(args, Verdict::Reject).await,
    }
}

async fn decide_review(args: DecideArgs, verdict: Verdict) -> anyhow::Result<ExitCode> {
    let store = open(&args.store).await?;
    let mut who = person(&store, &args.reviewer, REVIEW_PERMISSION).await?;
    who.may_approve_own = args.allow_self_approval;
    let d = match decide::review(&store, &args.id, verdict, &who, &args.reason).await {
        Ok(d) => d,
        Err(e) => {
            eprintln!("refused [{}]: {e}", e.code());
            return Ok(ExitCode::FAILURE);
        }
    };
    write_decision(&store, &d).await?;
    let word = if verdict == Verdict::Approve {
        "approved and active"
    } else {
        "rejected"
    };
    println!("{} {word}; catalog {}", args.id, d.effect.version);
    Ok(ExitCode::SUCCESS)
}

/// `toolhost plugin rollback NAME`.
pub async fn rollback(
    plugin: &str,
    args: &StoreArg,
    by: &str,
    reason: &str,
) -> anyhow::Result<ExitCode> {
    let store = open(args).await?;
    let who = person(&store, by, REVIEW_PERMISSION).await?;
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

/// Writes a decision with its audit row; a concurrent decision that won
/// makes this one fail with nothing written.
pub(crate) async fn write_decision(store: &Store, d: &decide::Decision) -> anyhow::Result<()> {
    store
        .record_with(&d.event, &[Effect::Catalog(d.effect.clone())])
        .await
        .context("another decision changed the catalog first; nothing was written: decide again")
}

/// `--as NAME` as a person of the store holding `permission`.
async fn person(store: &Store, name: &str, permission: (&str, &str)) -> anyhow::Result<Decider> {
    let user = AuthStore::user_by_name(store, name)
        .await?
        .with_context(|| format!("no user {name:?}"))?;
    if user.disabled {
        bail!("user {name:?} is disabled");
    }
    let grants = PolicyStore::grants(store, &user.tenant, &user.id).await?;
    let needed = Permission::new(permission.0, permission.1).expect("a valid permission");
    if !grants.allows(&needed) {
        bail!(
            "user {name:?} does not hold {needed} (nor an admin role) in tenant {:?}",
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

pub(crate) fn operator(by: &str) -> Decider {
    Decider {
        principal: by.to_owned(),
        tenant: "(operator)".into(),
        client_id: None,
        may_approve_own: false,
    }
}

pub(crate) fn operator_event(
    by: &str,
    operation: &str,
    args: &serde_json::Value,
) -> toolhost_audit::AuditEvent {
    event(&operator(by), operation, None, None, args)
}

pub(crate) fn person_event(
    who: &Decider,
    operation: &str,
    rev: &toolhost_catalog::Revision,
) -> toolhost_audit::AuditEvent {
    let args = serde_json::json!({"revision": rev.id, "source": rev.source});
    event(
        who,
        operation,
        Some(rev.plugin.clone()),
        Some(rev.component_digest),
        &args,
    )
}

fn event(
    who: &Decider,
    operation: &str,
    plugin: Option<String>,
    digest: Option<Digest>,
    args: &serde_json::Value,
) -> toolhost_audit::AuditEvent {
    let arguments = toolhost_audit::argument_digest(args);
    toolhost_audit::AuditEvent {
        client_id: who.client_id.clone(),
        plugin,
        plugin_digest: digest,
        ..toolhost_audit::AuditEvent::new(&who.tenant, &who.principal, operation, arguments)
    }
}

pub(crate) fn now_ms() -> i64 {
    toolhost_invoke::millis(std::time::SystemTime::now())
}

/// What a sync did, plugin by plugin.
#[derive(Debug, Default)]
pub(crate) struct Synced {
    /// `(plugin, revision, what happened)`.
    pub done: Vec<(String, String, &'static str)>,
    /// Why each refused manifest was refused.
    pub refused: Vec<String>,
}

/// The bootstrap and GitOps path: every manifest of `dir` through intake
/// (the same checks as any submission) and, with `activate`, approved as
/// the operator `by` (the directory's own review is the approval; recorded
/// as such, with its audit row). A revision already active is left alone.
pub(crate) async fn sync(
    store: &Store,
    runtime: &Runtime,
    dir: &Path,
    opts: &IntakeOptions,
    activate: bool,
    by: &str,
) -> anyhow::Result<Synced> {
    let mut report = Synced::default();
    let who = Decider {
        may_approve_own: true,
        ..operator(&format!("sync:{by}"))
    };
    for sub in submissions(dir, &who.principal)? {
        let source = sub.source.clone();
        let done = match intake::submit(store, runtime, sub, opts, now_ms()).await {
            Ok(done) => done,
            Err(e) => {
                report.refused.push(format!("{source}: [{}] {e}", e.code()));
                continue;
            }
        };
        let rev = done.revision;
        if done.new {
            store
                .record(&person_event(&who, "submit_plugin", &rev))
                .await?;
        }
        let what = match rev.state {
            RevisionState::PendingReview if activate => {
                let reason = format!("synced from {}", dir.display());
                let d = decide::review(store, &rev.id, Verdict::Approve, &who, &reason).await?;
                write_decision(store, &d).await?;
                "activated"
            }
            RevisionState::PendingReview => "pending review",
            RevisionState::Active => "already active",
            RevisionState::Approved if activate => {
                report.refused.push(format!(
                    "{source}: revision {} was replaced by a newer one; `plugin rollback {}` makes it active again",
                    rev.id, rev.plugin
                ));
                continue;
            }
            RevisionState::Approved => "approved earlier",
            RevisionState::Rejected | RevisionState::Withdrawn => {
                report
                    .refused
                    .push(format!("{source}: revision {} is {}", rev.id, rev.state));
                continue;
            }
        };
        report.done.push((rev.plugin.clone(), rev.id.clone(), what));
    }
    Ok(report)
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
