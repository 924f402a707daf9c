//! The runs service: exploration runs served as host tools, above the
//! call path. It starts runs (every catalog tool whose manifest entry has a
//! `run` table, which it claims ([`RunTools`]), and `start_exploration`),
//! reads, lists and cancels them (the host tools in [`tools`]), follows
//! one while its caller waits ([`follow`]), and runs the worker that
//! executes queued runs in the exploration sandbox ([`worker`]), settling
//! each with a receipt ([`settle`]).
//!
//! The run row is written with the starting call's audit row
//! ([`toolhost_runs::RunEffect::Queue`]), so a caller told about a run can
//! always read it, on any replica; its end is written with its last
//! attempt's row ([`toolhost_runs::RunEffect::Finish`]).
//!
//! It owns when a run may start and who sees it. It does not own what a
//! run is (`toolhost_runs`), the store (`toolhost_storage`), the sandbox
//! (`toolhost_runtime`), whether a caller may call a run tool at all (the
//! call path, `toolhost_invoke`, admits every call), nor drafts: a run of
//! an authoring session's draft is started by the authoring service, and
//! the worker loads drafts through [`Drafts`].

mod answer;
mod error;
mod follow;
mod settle;
mod start;
mod started;
mod stops;
mod tools;
mod view;
mod worker;

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use toolhost_audit::Effect;
use toolhost_catalog::{LiveCatalog, LoadedPlugin};
use toolhost_invoke::{AnswerFuture, BoxFuture, HostCall, HostTool, HostToolFuture};
use toolhost_runs::{QueueLimits, RunStore};
use toolhost_runtime::Payer;

pub use answer::Answered;
pub use error::{RunEnd, RunError};
pub use start::{permitted, plugin_tool, queued_run, run_lost};
pub use started::started;
use tools::StartTool;
pub use tools::{RUN_PERMISSION, RunTools};
pub use view::run_output;
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

/// The runs service: its configuration, shared by its host tools, its
/// claim on run tools and its workers.
pub struct Runs {
    config: RunsConfig,
    /// This replica's running runs' signals, for cancels.
    stops: Arc<stops::RunStops>,
}

impl Runs {
    /// The service over `config`.
    pub fn new(config: RunsConfig) -> Arc<Self> {
        let stops = Arc::default();
        Arc::new(Self { config, stops })
    }

    /// How runs are kept and bounded.
    pub fn config(&self) -> &RunsConfig {
        &self.config
    }

    /// A cancel of run `id` was stored (heard from another replica through
    /// the store): if a worker here runs it, it stops it now rather than at
    /// its next heartbeat.
    pub fn cancel_heard(&self, id: &toolhost_runs::RunId) {
        self.stops.signal(id);
    }

    /// The exploration host tools: starting, reading, cancelling and
    /// listing runs; runs that join an authoring session are started by
    /// `sessions` (without it, `session_id` is refused).
    pub fn host_tools(
        self: &Arc<Self>,
        sessions: Option<Arc<dyn Sessions>>,
    ) -> Vec<Arc<dyn HostTool>> {
        let start: Arc<dyn HostTool> = Arc::new(StartTool::named(self.clone(), sessions));
        let mut tools = vec![start];
        tools.extend(tools::runs_tools(self));
        tools
    }

    /// The claim that serves every run tool of a catalog as a run.
    pub fn claims(self: &Arc<Self>) -> Arc<RunTools> {
        Arc::new(RunTools::new(self.clone()))
    }
}

/// What the runs service asks of the authoring service: runs that join an
/// authoring session (`start_exploration` with a `session_id`), and the
/// drafts such runs pin, which the worker loads.
pub trait Sessions: Send + Sync + 'static {
    /// Queues a run of `tool` with `arguments` for `c.who` that joins the
    /// session `c.args` names, at the version it names.
    fn start_run<'a>(
        &'a self,
        c: HostCall<'a>,
        tool: &'a str,
        arguments: &'a Value,
    ) -> HostToolFuture<'a>;

    /// What the caller is told when the session change of such a call
    /// lost to another writer.
    fn lost<'a>(&'a self, c: HostCall<'a>, effect: &'a Effect) -> AnswerFuture<'a>;

    /// The plugin of `draft`, loaded (never served), its compile charged
    /// to `payer`.
    fn draft<'a>(&'a self, draft: DraftRef<'a>, payer: Payer) -> DraftFuture<'a>;
}

/// A draft a run pinned: a proposal of an authoring session of a tenant.
#[derive(Debug, Clone, Copy)]
pub struct DraftRef<'a> {
    /// The session's tenant.
    pub tenant: &'a str,
    /// The session.
    pub session: &'a str,
    /// The proposal whose candidate revision is the draft.
    pub proposal: &'a str,
}

/// A draft's plugin, or why it does not load.
pub type DraftFuture<'a> = BoxFuture<'a, Result<Arc<LoadedPlugin>, String>>;
