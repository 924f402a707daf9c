//! Exploration runs on the call path: starting one (a `run` tool's call, or
//! `start_exploration`), reading and cancelling one (the host tools in
//! [`tools`]), following one while its caller waits ([`follow`]), and the
//! worker that executes queued runs in the exploration sandbox
//! ([`worker`]), settling each with a receipt ([`settle`]).
//!
//! The run row is written with the starting call's audit row
//! ([`toolhost_runs::RunEffect::Queue`]), so a caller told about a run can
//! always read it, on any replica; its end is written with its last
//! attempt's row ([`toolhost_runs::RunEffect::Finish`]).

mod error;
mod follow;
mod settle;
mod tools;
mod worker;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolhost_audit::{Effect, argument_digest};
use toolhost_catalog::{LiveCatalog, ToolRef};
use toolhost_limits::RunBudget;
use toolhost_policy::{Use, decide};
use toolhost_runs::{
    MAX_ATTEMPTS, NewRun, QueueLimits, RevisionRef, Run, RunEffect, RunId, RunSource, RunSpec,
    RunState, RunStore,
};
use toolhost_runtime::ToolOutput;
use toolhost_types::{Principal, PrincipalKind};

use crate::{InvokeError, Tool, Toolhost};

pub use error::RunError;
pub use tools::{
    CancelExploration, GetExplorationResult, ListExplorations, RUN_PERMISSION, StartExploration,
};
pub use worker::{RunWorker, WorkerConfig};

/// How runs are kept and bounded.
#[derive(Clone)]
pub struct RunsConfig {
    /// The queue every replica shares.
    pub store: Arc<dyn RunStore>,
    /// The live catalog: candidate revisions (and revisions replaced since
    /// a run was queued) are loaded from it.
    pub catalog: Option<Arc<LiveCatalog>>,
    /// Queue bounds per tenant and principal.
    pub limits: QueueLimits,
    /// How long a run's artifacts stay readable.
    pub artifact_ttl: Duration,
    /// Woken when this host queues a run, so its workers claim it at once
    /// (other replicas hear of it by NOTIFY, or by polling).
    pub wake: Arc<tokio::sync::Notify>,
}

impl Toolhost {
    /// Runs are kept in `config.store`: run tools queue, and the
    /// exploration host tools work.
    pub fn with_runs(mut self, config: RunsConfig) -> Self {
        self.runs = Some(config);
        self
    }

    pub(crate) fn runs(&self) -> Result<&RunsConfig, InvokeError> {
        self.runs.as_ref().ok_or_else(|| {
            RunError::Store(toolhost_runs::RunStoreError::Failed(
                "no run store is configured".into(),
            ))
            .into()
        })
    }

    /// Queues a run of the catalog tool `tool` with `args` for `who`: the
    /// caller must be allowed to call it, the arguments must fit its
    /// schema, and the queue must have room. Nothing is written here: the
    /// run is the returned effect, written with the call's audit row.
    pub(crate) async fn start_run(
        &self,
        who: &Principal,
        tool: &ToolRef,
        args: &Value,
    ) -> Result<(ToolOutput, Vec<Effect>), InvokeError> {
        self.check_arguments(&Tool::Plugin(tool.clone()), args)?;
        let catalog_version = self.catalog().version().to_owned();
        let name = tool.spec().name.to_string();
        self.queue_run(
            who,
            tool.plugin(),
            &name,
            args,
            RunSource::Active,
            Some(catalog_version),
        )
        .await
    }

    /// Queues a run of `tool` of the revision `revision`, not active yet,
    /// for the one who submitted it: an author tries a candidate in the
    /// exploration sandbox before asking for review. Anyone else is told
    /// the revision does not exist.
    pub(crate) async fn start_candidate_run(
        &self,
        who: &Principal,
        revision: &str,
        tool: &str,
        args: &Value,
    ) -> Result<(ToolOutput, Vec<Effect>), InvokeError> {
        let not_found = || InvokeError::InvalidArguments {
            detail: format!("no revision {revision:?} of yours is waiting for review"),
        };
        let live = self.runs()?.catalog.clone().ok_or_else(not_found)?;
        let rev = live
            .store()
            .revision(revision)
            .await
            .map_err(|_| not_found())?
            .filter(|r| r.submitted_by == who.subject)
            .ok_or_else(not_found)?;
        if !matches!(
            rev.state,
            toolhost_catalog::RevisionState::PendingReview
                | toolhost_catalog::RevisionState::Approved
        ) {
            return Err(not_found());
        }
        let (_, plugin) =
            live.load_revision(revision)
                .await
                .map_err(|why| InvokeError::InvalidArguments {
                    detail: format!("revision {revision} does not load: {why}"),
                })?;
        let source = RunSource::Candidate {
            revision: revision.to_owned(),
        };
        self.queue_run(who, &plugin, tool, args, source, None).await
    }

    pub(crate) async fn queue_run(
        &self,
        who: &Principal,
        plugin: &toolhost_catalog::LoadedPlugin,
        tool: &str,
        args: &Value,
        source: RunSource,
        catalog_version: Option<String>,
    ) -> Result<(ToolOutput, Vec<Effect>), InvokeError> {
        let runs = self.runs()?;
        let unknown = || InvokeError::ToolNotFound {
            tool: tool.to_owned(),
        };
        let spec = plugin
            .plugin
            .tools()
            .iter()
            .find(|t| t.name.as_str() == tool)
            .ok_or_else(unknown)?;
        let section = plugin.manifest.tools.get(&spec.name).ok_or_else(unknown)?;
        let grants = self.grants(who).await?;
        if !decide(who, &grants, &spec.permission, spec.risk, Use::Call).permits() {
            return Err(InvokeError::PermissionDenied {
                tool: spec.name.to_string(),
            });
        }
        let budget = match &source {
            RunSource::Draft { .. } => run_budget(section)?.at_most(&RunBudget::DRAFT_CEILING),
            _ => run_budget(section)?,
        };
        let (tenant_runs, principal_runs) = runs
            .store
            .active(&who.tenant, &who.subject)
            .await
            .map_err(RunError::Store)?;
        full(principal_runs, runs.limits.per_principal, "this principal")?;
        full(tenant_runs, runs.limits.per_tenant, "this tenant")?;
        let new = NewRun {
            id: RunId::new(),
            tenant: who.tenant.clone(),
            principal: who.subject.clone(),
            principal_kind: kind(who).into(),
            client_id: who.client_id.clone(),
            spec: RunSpec {
                tool: spec.name.to_string(),
                source,
                revision: RevisionRef {
                    id: plugin.revision.clone(),
                    plugin: plugin.manifest.plugin.name.to_string(),
                    version: plugin.manifest.plugin.version.clone(),
                    component_sha256: plugin.plugin.digest().to_string(),
                    manifest_sha256: None,
                    signer: None,
                    catalog_version,
                },
                arguments: if args.is_null() {
                    json!({})
                } else {
                    args.clone()
                },
                argument_digest: argument_digest(args).to_string(),
                budget,
            },
            created_at_ms: self.gate_policy.now_ms(),
            max_attempts: MAX_ATTEMPTS,
            limits: runs.limits,
        };
        let new = self
            .describe_revision(new, plugin.revision.as_deref())
            .await;
        let run = queued(&new);
        let text = format!(
            "Run {} of {} is queued. Follow it with get_exploration_result {{\"run_id\": \"{}\"}}.",
            run.id, run.spec.tool, run.id
        );
        let out = ToolOutput {
            structured: snapshot(&run),
            text: Some(text),
            content: Vec::new(),
        };
        Ok((out, vec![Effect::Run(RunEffect::Queue(Box::new(new)))]))
    }

    /// Fills in the revision's manifest digest and signer from the store.
    async fn describe_revision(&self, mut new: NewRun, revision: Option<&str>) -> NewRun {
        let (Some(live), Some(id)) = (self.runs.as_ref().and_then(|r| r.catalog.clone()), revision)
        else {
            return new;
        };
        if let Ok(Some(rev)) = live.store().revision(id).await {
            new.spec.revision.manifest_sha256 = Some(rev.manifest_digest.to_string());
            new.spec.revision.signer = rev.signer.clone();
        }
        new
    }

    /// The run `id` as `who` may see it: their own, or any of their
    /// tenant's if they are its admin. Anything else is not found.
    pub(crate) async fn visible_run(&self, who: &Principal, id: &str) -> Result<Run, InvokeError> {
        let not_found = || RunError::NotFound { id: id.to_owned() };
        let run_id = RunId::parse(id).ok_or_else(not_found)?;
        let run = self
            .runs()?
            .store
            .run(&who.tenant, &run_id)
            .await
            .map_err(RunError::Store)?
            .ok_or_else(not_found)?;
        if run.owned_by(&who.tenant, &who.subject) || self.is_tenant_admin(who).await? {
            Ok(run)
        } else {
            Err(not_found().into())
        }
    }

    /// The run `id` as `who` may see it (see [`Toolhost::call`]'s
    /// exploration tools): `RUN_NOT_FOUND` for anyone but its principal and
    /// the tenant's admins.
    pub async fn run_for(&self, who: &Principal, id: &str) -> Result<Run, InvokeError> {
        self.visible_run(who, id).await
    }

    /// How long a run is kept readable once over (its artifacts' TTL).
    pub fn run_retention(&self) -> Option<Duration> {
        self.runs.as_ref().map(|r| r.artifact_ttl)
    }

    /// Whether `who` administers its tenant (services never do).
    pub(crate) async fn is_tenant_admin(&self, who: &Principal) -> Result<bool, InvokeError> {
        Ok(who.kind == PrincipalKind::User && self.grants(who).await?.is_admin())
    }
}

/// The budget of a run of `tool`: the run defaults, moved by its manifest
/// entry's `run` table.
fn run_budget(section: &toolhost_catalog::ToolSection) -> Result<RunBudget, InvokeError> {
    let o = section.run.clone().unwrap_or_default();
    toolhost_catalog::run_budget(&o).map_err(|e| InvokeError::InvalidArguments {
        detail: format!("the tool's run budget: {e}"),
    })
}

fn full(count: u32, limit: u32, scope: &'static str) -> Result<(), InvokeError> {
    if count >= limit {
        return Err(RunError::QueueFull { scope, limit }.into());
    }
    Ok(())
}

fn kind(who: &Principal) -> &'static str {
    match who.kind {
        PrincipalKind::User => "user",
        PrincipalKind::Service => "service",
    }
}

/// The row a queued run will have.
fn queued(new: &NewRun) -> Run {
    Run {
        id: new.id.clone(),
        tenant: new.tenant.clone(),
        principal: new.principal.clone(),
        principal_kind: new.principal_kind.clone(),
        client_id: new.client_id.clone(),
        spec: new.spec.clone(),
        state: RunState::Queued,
        attempt: 0,
        max_attempts: new.max_attempts,
        created_at_ms: new.created_at_ms,
        started_at_ms: None,
        finished_at_ms: None,
        deadline_at_ms: None,
        cancel_requested_at_ms: None,
        lease_owner: None,
        lease_until_ms: None,
        audited_attempts: 0,
        progress: None,
        outcome: None,
        receipt: None,
        receipt_sha256: None,
    }
}

/// How long a caller should wait before asking again.
pub(crate) const POLL_AFTER_MS: u64 = 1000;

/// A run as the exploration tools answer with it: its snapshot, and a line
/// for people.
pub fn run_output(run: &Run) -> ToolOutput {
    let text = match &run.receipt_sha256 {
        Some(sha) => format!("Run {} is {}; receipt sha256 {sha}.", run.id, run.state),
        None => format!("Run {} is {}.", run.id, run.state),
    };
    ToolOutput {
        structured: snapshot(run),
        text: Some(text),
        content: Vec::new(),
    }
}

/// What every exploration tool answers about a run: its id and state,
/// progress, and once it is over, its outcome, receipt digest and
/// artifacts.
pub(crate) fn snapshot(run: &Run) -> Value {
    let mut v = json!({
        "run_id": run.id.as_str(),
        "state": run.state.as_str(),
        "tool": run.spec.tool,
        "plugin": run.spec.revision.plugin,
        "attempt": run.attempt,
        "created_at_ms": run.created_at_ms,
        "started_at_ms": run.started_at_ms,
        "finished_at_ms": run.finished_at_ms,
        "progress": run.progress,
    });
    if run.state.is_terminal() {
        v["outcome"] = serde_json::to_value(&run.outcome).unwrap_or(Value::Null);
        v["receipt_sha256"] = json!(run.receipt_sha256);
        let receipt = run
            .receipt
            .as_deref()
            .and_then(|r| serde_json::from_str::<toolhost_runs::Receipt>(r).ok());
        if let Some(r) = receipt {
            v["artifacts"] = serde_json::to_value(&r.artifacts).unwrap_or_default();
            v["receipt"] = serde_json::to_value(&r).unwrap_or_default();
        }
    } else {
        v["poll_after_ms"] = json!(POLL_AFTER_MS);
    }
    v
}
