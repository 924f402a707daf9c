//! The catalog at run time, from the server's side: intake's options, the
//! submissions a plugin directory holds, the directory's sync (how
//! `toolhost serve`, `toolhost dev` and `toolhost plugin sync` bring it
//! into the store), and the audit rows of catalog changes that the
//! operator or a person makes outside MCP. The commands are `catalog_cli`'s;
//! the HTTP submissions `catalog_http`'s.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use toolhost_audit::{AuditSink, Effect};
use toolhost_catalog::decide::{self, Decider, Verdict};
use toolhost_catalog::intake::{self, IntakeOptions, Submission};
use toolhost_catalog::{Audience, Manifest, RevisionState};
use toolhost_runtime::Runtime;
use toolhost_signing::TrustRoot;
use toolhost_storage::Store;
use toolhost_types::Digest;

/// The permission a person needs to submit revisions.
pub(crate) const SUBMIT_PERMISSION: (&str, &str) = ("catalog", "submit");

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

/// The signature file of a manifest: `<stem>.sig.json` beside it.
pub(crate) fn signature_path(manifest: &Path) -> PathBuf {
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
pub(crate) fn submissions(dir: &Path, submitted_by: &str) -> anyhow::Result<Vec<Submission>> {
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

/// Writes a decision with its audit row; a concurrent decision that won
/// makes this one fail with nothing written.
pub(crate) async fn write_decision(store: &Store, d: &decide::Decision) -> anyhow::Result<()> {
    store
        .record_with(&d.event, &[Effect::Catalog(d.effect.clone())])
        .await
        .context("another decision changed the catalog first; nothing was written: decide again")
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
                let d = decide::review(
                    store,
                    &rev.id,
                    Verdict::Approve,
                    &Audience::Everyone,
                    &who,
                    &reason,
                )
                .await?;
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

/// How often starting replicas try to sync the plugin directory.
const SYNC_TRIES: u32 = 3;

/// `toolhost serve --plugins DIR`: the directory synced and activated, as
/// the operator. Idempotent, so replicas starting together may each run it:
/// the loser of a decision both made tries again and finds it done.
pub(crate) async fn sync_at_start(
    store: &Store,
    runtime: &Runtime,
    dir: &Path,
    opts: &IntakeOptions,
) -> anyhow::Result<()> {
    let mut tries = 0;
    let synced = loop {
        tries += 1;
        match sync(store, runtime, dir, opts, true, "serve").await {
            Ok(synced) => break synced,
            Err(e) if tries < SYNC_TRIES => {
                tracing::warn!(error = %e, "syncing the plugin directory; trying again");
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("syncing the plugin directory {}", dir.display()));
            }
        }
    };
    for (plugin, revision, what) in &synced.done {
        tracing::info!(%plugin, %revision, what, "plugin directory synced");
    }
    for why in &synced.refused {
        tracing::error!(error = %why, "plugin refused; serving the others");
    }
    Ok(())
}
