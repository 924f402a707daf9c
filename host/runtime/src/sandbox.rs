//! The runtime: load a component once, run each call in a fresh store.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use toolhost_limits::CallBudget;
use toolhost_resolver::{Clarification, Entity};
use toolhost_secrets::Scanner;
use toolhost_types::{CallId, Digest, PluginName};
use wasmtime::component::{InstancePre, Linker};
use wasmtime::{Engine, Store, UpdateDeadline};

use crate::authoring::{AuthoringAnswer, AuthoringAsk, AuthoringKind};
use crate::bindings::exports::toolhost::plugin::entities as wit_entities;
use crate::bindings::exports::toolhost::plugin::resources as wit_resources;
use crate::bindings::toolhost::plugin::types as wit;
use crate::cache::{CacheOutcome, ComponentCache};
use crate::compile_queue::{CompileQueue, Payer};
use crate::config::RuntimeConfig;
use crate::content::{self, ContentBlock};
use crate::contract::Contract;
use crate::engine::{self, EpochTicker};
use crate::error::{Breach, CallError, ContractBreach, LoadError};
use crate::host;
use crate::host::backend::BackendGrant;
use crate::host::checkpoint::CheckpointGrant;
use crate::host::client::{
    CLIENT_ASK_TIMEOUT, ClientCapability, ClientLink, ClientStop, MAX_CLIENT_ROUNDS,
};
use crate::host::exploration::Exploration;
use crate::host::log::LogSink;
use crate::host::notify::UpdateSink;
use crate::host::progress::ProgressSink;
use crate::host::protocol::ProtocolStop;
use crate::host::resolver::Snapshots;
use crate::spec::{self, Plan, ToolOutput, ToolSpec};
use crate::state::HostState;

/// Time allowed beyond the budget for the whole call before the host gives
/// up on it: the epoch deadline normally fires first; this catches a call
/// stuck in a host import.
pub(crate) const WALL_GRACE: Duration = Duration::from_millis(100);

/// Most tools one plugin may describe: beyond this, a catalog is a flood.
const MAX_TOOLS_PER_PLUGIN: usize = 256;
/// Most entity kinds one plugin may list, and the longest kind name.
const MAX_KINDS_PER_PLUGIN: usize = 64;
const MAX_KIND_LEN: usize = 64;

/// Epoch ticks a guest runs before it yields its worker thread to the
/// other ready tasks: its turn. The deadline is checked at every tick
/// either way. A turn of one tick put every call that crossed a tick
/// behind all the other running calls: at 32 concurrent Python calls of
/// about 0.6 ms of CPU each, the p99 was 100–160 ms. Five ticks (5 ms at
/// the default tick) let a short call run to its end (p99 1.6 ms) while a
/// long one still leaves the worker every few milliseconds (BENCHMARKS.md
/// part 24).
const TICKS_PER_TURN: u32 = 5;

/// The sandbox runtime: one engine, one linker, the compiled-component
/// cache and a bounded pool of sandboxes. Cheap to share behind an `Arc`.
pub struct Runtime {
    engine: Engine,
    linker: Linker<HostState>,
    cache: Arc<ComponentCache>,
    compiles: CompileQueue,
    slots: Arc<Semaphore>,
    _ticker: EpochTicker,
}

/// A loaded plugin: its component pre-instantiated against the host's
/// imports, and the tools it described.
pub struct Plugin {
    name: PluginName,
    digest: Digest,
    pre: InstancePre<HostState>,
    /// Its exports, by the contract version it was built against.
    pub(crate) contract: Contract,
    tools: Vec<ToolSpec>,
    kinds: Vec<String>,
    pub(crate) authoring_kinds: Vec<AuthoringKind>,
    imports: Vec<String>,
    exports: Vec<String>,
    pub(crate) prompts: Vec<crate::prompts::PromptSpec>,
    pub(crate) resources: (
        Vec<crate::resources::ResourceSpec>,
        Vec<crate::resources::TemplateSpec>,
    ),
    /// The budget `describe`, `kinds` and the authoring kinds ran under.
    pub(crate) describe_budget: CallBudget,
}

impl Plugin {
    /// The plugin's name.
    pub fn name(&self) -> &PluginName {
        &self.name
    }
    /// The SHA-256 of the component it was loaded from.
    pub fn digest(&self) -> &Digest {
        &self.digest
    }
    /// The tools it described at load, validated.
    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }
    /// The entity kinds its `entities` export lists (none without one).
    pub fn kinds(&self) -> &[String] {
        &self.kinds
    }
    /// The interfaces the component imports, as WIT names
    /// (`wasi:cli/environment@0.2.6`, `toolhost:plugin/backend@…`), sorted:
    /// what a reviewer sees of what the code may reach for.
    pub fn imports(&self) -> &[String] {
        &self.imports
    }
    /// The interfaces the component exports, as WIT names
    /// (`toolhost:plugin/tool@0.2.0`, `…/entities@…`), sorted: which of the
    /// host's optional exports it answers.
    pub fn exports(&self) -> &[String] {
        &self.exports
    }
    /// The version of the plugin contract it was built against: `0.2.0`
    /// (current) or `0.1.0`.
    pub fn contract(&self) -> &'static str {
        self.contract.version()
    }
}

/// A call's answer: the tool's output, or the question the resolver asked
/// instead (the call then had no side effects after asking).
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The tool answered.
    Output(ToolOutput),
    /// The call needs a person to choose first.
    Clarify(Clarification),
    /// The call stopped for its client's input (a stateless request): these
    /// requests, by the plugin's key (`{"method", "params"}` each). Run it
    /// again with the answers.
    NeedsInput(std::collections::BTreeMap<String, serde_json::Value>),
}

/// A plan's answer: the plan, or the question the resolver asked instead.
#[derive(Debug, Clone, PartialEq)]
pub enum Planned {
    /// The targets, risk and summary of the call.
    Plan(Plan),
    /// The call needs a person to choose first.
    Clarify(Clarification),
    /// The plan asked its client first (a stateless request): these
    /// requests by the plugin's key, `{"method", "params"}` each. A plan
    /// asks before anything acts, so a run tool asks before its run exists.
    NeedsInput(std::collections::BTreeMap<String, serde_json::Value>),
}

impl Reply {
    /// The tool's output, or the question asked instead.
    pub fn into_output(self) -> Result<ToolOutput, Box<Clarification>> {
        match self {
            Reply::Output(out) => Ok(out),
            Reply::Clarify(c) => Err(Box::new(c)),
            Reply::NeedsInput(_) => Err(Box::new(Clarification {
                reason: toolhost_resolver::Reason::MissingRequired,
                ask_user: "the call needs the client's input".into(),
                candidates: Vec::new(),
                scoped_by: Default::default(),
                field: String::new(),
            })),
        }
    }
}

/// How a load went.
#[derive(Debug, Clone, Copy)]
pub struct LoadReport {
    /// Whether native code came from the precompiled cache.
    pub cache: CacheOutcome,
    /// Time to obtain the compiled component (compile or map).
    pub compile: Duration,
}

/// Who a call is for. Passed to the plugin as its `call-context`.
#[derive(Debug, Clone)]
pub struct CallContext {
    /// The call's id (also in logs and audit).
    pub call_id: CallId,
    /// The caller's tenant.
    pub tenant: String,
    /// The caller's stable id.
    pub principal: String,
    /// Where the plugin's progress reports go (none: they are dropped).
    pub progress: Option<ProgressSink>,
    /// Where the plugin's log lines go besides the operator's log (none:
    /// only there).
    pub log: Option<LogSink>,
    /// Where the plugin's resource updates go (none: telling of one is
    /// refused).
    pub updates: Option<UpdateSink>,
    /// What the resolver import resolves over (empty: nothing declared).
    pub snapshots: Arc<Snapshots>,
    /// The backends the plugin may reach (none: every request is refused).
    pub backends: Option<BackendGrant>,
    /// Who acts, for the backends the operator tells (none: requests to
    /// them are refused). Never visible to the plugin.
    pub acting: Option<toolhost_backend::Acting>,
    /// Where the plugin's checkpoints go (none: opening one is refused).
    pub checkpoints: Option<CheckpointGrant>,
    /// Who the plugin may ask for input (none: every ask is `unsupported`).
    pub client: Option<ClientLink>,
    /// The exploration run this call is (none: an ordinary call): its
    /// backends are the exploration ones, read-only, and it may keep
    /// artifacts.
    pub exploration: Option<Exploration>,
    /// What a JSON-RPC error the plugin raises is redacted with (default:
    /// the built-in patterns; the call path gives the host's scanner).
    pub scanner: Scanner,
}

impl CallContext {
    /// A context with a new call id.
    pub fn new(tenant: &str, principal: &str) -> Self {
        Self {
            call_id: CallId::new(),
            tenant: tenant.into(),
            principal: principal.into(),
            progress: None,
            log: None,
            updates: None,
            snapshots: Arc::default(),
            backends: None,
            acting: None,
            checkpoints: None,
            client: None,
            exploration: None,
            scanner: Scanner::new(),
        }
    }

    /// This context, redacting a raised error's message with `scanner`.
    pub fn with_scanner(mut self, scanner: Scanner) -> Self {
        self.scanner = scanner;
        self
    }

    /// This context, asking its client through `link`.
    pub fn with_client(mut self, link: Option<ClientLink>) -> Self {
        self.client = link;
        self
    }

    /// This context, telling of resource updates through `sink`.
    pub fn with_updates(mut self, sink: Option<UpdateSink>) -> Self {
        self.updates = sink;
        self
    }

    /// This context, as exploration run `run`.
    pub fn in_run(mut self, run: Exploration) -> Self {
        self.exploration = Some(run);
        self
    }

    /// This context, opening checkpoints through `grant`.
    pub fn with_checkpoints(mut self, grant: Option<CheckpointGrant>) -> Self {
        self.checkpoints = grant;
        self
    }

    /// This context, resolving over `snapshots`.
    pub fn with_snapshots(mut self, snapshots: Arc<Snapshots>) -> Self {
        self.snapshots = snapshots;
        self
    }

    /// This context, reaching the backends of `grant`.
    pub fn with_backends(mut self, grant: Option<BackendGrant>) -> Self {
        self.backends = grant;
        self
    }

    /// This context, telling the backends that ask who acts: `acting`.
    pub fn with_acting(mut self, acting: Option<toolhost_backend::Acting>) -> Self {
        self.acting = acting;
        self
    }

    /// This context, relaying progress reports to `sink`.
    pub fn with_progress(mut self, sink: Option<ProgressSink>) -> Self {
        self.progress = sink;
        self
    }

    /// The context with its log lines also handed to `sink`.
    pub fn with_log(mut self, sink: Option<LogSink>) -> Self {
        self.log = sink;
        self
    }

    pub(crate) fn wit(&self) -> wit::CallContext {
        wit::CallContext {
            call_id: self.call_id.to_string(),
            tenant: self.tenant.clone(),
            principal: self.principal.clone(),
        }
    }
}

/// How `plugin` is refused at load: what it answered, after `part` (the
/// answer's name, or nothing for its tools).
pub(crate) fn refusal_at_load<'a>(
    plugin: &'a Plugin,
    part: &'a str,
) -> impl Fn(String) -> LoadError + Copy + 'a {
    move |detail| LoadError::Describe {
        plugin: plugin.name.to_string(),
        detail: format!("{part}{detail}"),
    }
}

/// What to ask of a fresh instance.
pub(crate) enum Ask<'a> {
    Describe,
    Kinds,
    Snapshot(&'a wit::CallContext, &'a str),
    Plan(&'a wit::CallContext, &'a str, &'a str),
    Call(&'a wit::CallContext, &'a str, &'a str),
    Authoring(AuthoringAsk<'a>),
    Prompts,
    PromptGet(&'a wit::CallContext, &'a str, &'a [(String, String)]),
    Resources,
    ResourceRead(&'a wit::CallContext, &'a str),
}

impl Ask<'_> {
    /// Asks that may have side effects; every other runs quiet (safe
    /// backend methods only).
    fn may_act(&self) -> bool {
        matches!(self, Ask::Call(..))
    }

    /// Asks that may ask the client for input: a plan, a call, a prompt's
    /// get (each only when its context links a client).
    fn may_ask(&self) -> bool {
        matches!(self, Ask::Plan(..) | Ask::Call(..) | Ask::PromptGet(..))
    }
}

/// What it answered.
pub(crate) enum Answer {
    Describe(Vec<wit::ToolSpec>),
    Kinds(Vec<String>),
    Snapshot(Result<Vec<wit_entities::Entity>, wit::ToolError>),
    Plan(Result<wit::CallPlan, wit::ToolError>, Option<Clarification>),
    Call(
        Result<wit::ToolOutput, wit::ToolError>,
        Option<Clarification>,
    ),
    Authoring(AuthoringAnswer),
    Prompts(Vec<crate::bindings::exports::toolhost::plugin::prompts::PromptSpec>),
    PromptGet(Result<crate::bindings::exports::toolhost::plugin::prompts::Prompt, wit::ToolError>),
    Resources(
        Vec<wit_resources::ResourceSpec>,
        Vec<wit_resources::TemplateSpec>,
    ),
    ResourceRead(Result<Vec<wit_resources::ResourceContents>, wit::ToolError>),
}

impl Runtime {
    /// Builds the engine, the linker with every host import, and starts the
    /// epoch ticker.
    pub fn new(config: RuntimeConfig) -> Result<Self, LoadError> {
        let engine = engine::build(&config).map_err(|e| engine_error(&e))?;
        let mut linker = Linker::new(&engine);
        host::add_to_linker(&mut linker).map_err(|e| engine_error(&e))?;
        let cache = Arc::new(ComponentCache::new(&engine, config.cache_dir.clone())?);
        let compiles = CompileQueue::new(config.compile_workers, config.compile_share);
        let _ticker = EpochTicker::start(engine.clone(), config.epoch_tick);
        let slots = Arc::new(Semaphore::new(config.slots as usize));
        Ok(Self {
            engine,
            linker,
            cache,
            compiles,
            slots,
            _ticker,
        })
    }

    /// Compiles (or maps from the cache) a component, links it against the
    /// host's imports, and asks it to describe its tools.
    pub async fn load(
        &self,
        name: PluginName,
        bytes: &[u8],
    ) -> Result<(Plugin, LoadReport), LoadError> {
        self.load_within(name, bytes, &CallBudget::DEFAULT, &Payer::Host)
            .await
    }

    /// [`load`](Self::load), asking the component what it exports under
    /// `budget` (its manifest's limits): a component that needs more than
    /// the defaults to instantiate (a Python one creates 14 core
    /// instances) describes itself within what its manifest was granted.
    /// A compile is charged to `payer` in the compile queue.
    pub async fn load_within(
        &self,
        name: PluginName,
        bytes: &[u8],
        budget: &CallBudget,
        payer: &Payer,
    ) -> Result<(Plugin, LoadReport), LoadError> {
        let plugin = name.to_string();
        let digest = Digest::of(bytes);
        let started = Instant::now();
        let (component, cache) = self
            .compiles
            .component(&self.engine, &self.cache, &plugin, &digest, bytes, payer)
            .await?;
        let report = LoadReport {
            cache,
            compile: started.elapsed(),
        };
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| LoadError::Imports {
                plugin: plugin.clone(),
                detail: format!("{e:#}"),
            })?;
        let contract = Contract::of(&pre, &plugin)?;
        let mut imports: Vec<String> = component
            .component_type()
            .imports(&self.engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        imports.sort();
        let mut exports: Vec<String> = component
            .component_type()
            .exports(&self.engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        exports.sort();
        let mut loaded = Plugin {
            name,
            digest,
            imports,
            exports,
            pre,
            contract,
            tools: Vec::new(),
            kinds: Vec::new(),
            authoring_kinds: Vec::new(),
            prompts: Vec::new(),
            resources: (Vec::new(), Vec::new()),
            describe_budget: *budget,
        };
        loaded.tools = self.describe(&loaded).await?;
        loaded.kinds = self.kinds(&loaded).await?;
        loaded.authoring_kinds = self.load_authoring_kinds(&loaded).await?;
        loaded.prompts = self.load_prompts(&loaded).await?;
        loaded.resources = self.load_resources(&loaded).await?;
        Ok((loaded, report))
    }

    async fn kinds(&self, plugin: &Plugin) -> Result<Vec<String>, LoadError> {
        if !plugin.contract.has_entities() {
            return Ok(Vec::new());
        }
        let refuse = refusal_at_load(plugin, "");
        let answer = self
            .ask_at_load(plugin, Ask::Kinds)
            .await
            .map_err(|e| refuse(format!("kinds: {e}")))?;
        let Answer::Kinds(mut kinds) = answer else {
            unreachable!("kinds answers kinds")
        };
        if kinds.len() > MAX_KINDS_PER_PLUGIN {
            return Err(refuse(format!(
                "{} entity kinds, more than {MAX_KINDS_PER_PLUGIN}",
                kinds.len()
            )));
        }
        if let Some(bad) = kinds.iter().find(|k| !valid_kind(k)) {
            return Err(refuse(format!(
                "entity kind {bad:?} is not 1–{MAX_KIND_LEN} of [a-z0-9_]"
            )));
        }
        kinds.sort();
        kinds.dedup();
        Ok(kinds)
    }

    /// Lists every entity of `kind` for `ctx.tenant` in a fresh sandbox
    /// that may not have side effects. Rows are returned as the plugin gave
    /// them: the tenancy floor is the caller's to apply.
    pub async fn snapshot(
        &self,
        plugin: &Plugin,
        ctx: &CallContext,
        kind: &str,
        budget: &CallBudget,
    ) -> Result<Vec<Entity>, CallError> {
        if !plugin.contract.has_entities() || !plugin.kinds.iter().any(|k| k == kind) {
            return Err(CallError::ContractViolation {
                detail: format!("the plugin lists no entities of kind {kind:?}"),
            });
        }
        let wctx = ctx.wit();
        match self
            .sandboxed(plugin, ctx, budget, Ask::Snapshot(&wctx, kind))
            .await?
        {
            Answer::Snapshot(Ok(rows)) => {
                let size: usize = rows.iter().map(entity_size).sum();
                check_output(size, budget)?;
                Ok(rows.into_iter().map(spec::entity).collect())
            }
            Answer::Snapshot(Err(e)) => Err(tool_error(e, budget)),
            _ => unreachable!("snapshot answers snapshot"),
        }
    }

    async fn describe(&self, plugin: &Plugin) -> Result<Vec<ToolSpec>, LoadError> {
        let refuse = refusal_at_load(plugin, "");
        let answer = self
            .ask_at_load(plugin, Ask::Describe)
            .await
            .map_err(|e| refuse(e.to_string()))?;
        let Answer::Describe(specs) = answer else {
            unreachable!("describe answers describe")
        };
        if specs.len() > MAX_TOOLS_PER_PLUGIN {
            return Err(refuse(format!(
                "{} tools, more than {MAX_TOOLS_PER_PLUGIN}",
                specs.len()
            )));
        }
        let mut tools = Vec::with_capacity(specs.len());
        for s in specs {
            let spec = spec::tool_spec(s).map_err(refuse)?;
            if tools.iter().any(|t: &ToolSpec| t.name == spec.name) {
                return Err(refuse(format!(
                    "tool {:?} is described twice",
                    spec.name.as_str()
                )));
            }
            tools.push(spec);
        }
        Ok(tools)
    }

    /// Plans `tool` with `args` (a JSON object as text) in a fresh sandbox
    /// that may not have side effects (safe backend methods only). A plan
    /// may ask a question instead, as a call may, and ask its client when
    /// `ctx` links one.
    pub async fn plan(
        &self,
        plugin: &Plugin,
        ctx: &CallContext,
        tool: &str,
        args: &str,
        budget: &CallBudget,
    ) -> Result<Planned, CallError> {
        let wctx = ctx.wit();
        let answer = match self
            .sandboxed(plugin, ctx, budget, Ask::Plan(&wctx, tool, args))
            .await
        {
            Err(CallError::InputRequired { requests }) => return Ok(Planned::NeedsInput(requests)),
            other => other?,
        };
        match answer {
            Answer::Plan(_, Some(question)) => Ok(Planned::Clarify(question)),
            Answer::Plan(Ok(p), None) => {
                let size = p.summary.len() + p.targets.iter().map(target_size).sum::<usize>();
                check_output(size, budget)?;
                Ok(Planned::Plan(spec::plan(p)))
            }
            Answer::Plan(Err(e), None) => Err(tool_error(e, budget)),
            _ => unreachable!("plan answers plan"),
        }
    }

    /// Calls `tool` with `args` (a JSON object as text) in a fresh sandbox.
    /// If the plugin's resolver asked a question, that question is the
    /// answer, whatever the plugin returned after.
    ///
    /// Dropping the returned future interrupts the guest at its next epoch
    /// tick; the sandbox is discarded either way.
    pub async fn call(
        &self,
        plugin: &Plugin,
        ctx: &CallContext,
        tool: &str,
        args: &str,
        budget: &CallBudget,
    ) -> Result<Reply, CallError> {
        let wctx = ctx.wit();
        let answer = match self
            .sandboxed(plugin, ctx, budget, Ask::Call(&wctx, tool, args))
            .await
        {
            Err(CallError::InputRequired { requests }) => return Ok(Reply::NeedsInput(requests)),
            other => other?,
        };
        match answer {
            Answer::Call(_, Some(question)) => Ok(Reply::Clarify(question)),
            Answer::Call(Ok(out), None) => {
                let size = out.structured.len() + out.text.as_ref().map_or(0, String::len);
                let content = content::checked(out.content)
                    .map_err(|detail| CallError::InvalidOutput { detail })?;
                check_output(
                    size + content.iter().map(ContentBlock::size).sum::<usize>(),
                    budget,
                )?;
                let structured = serde_json::from_str(&out.structured).map_err(|e| {
                    CallError::InvalidOutput {
                        detail: format!("structured is not JSON: {e}"),
                    }
                })?;
                Ok(Reply::Output(ToolOutput {
                    structured,
                    text: out.text,
                    content,
                }))
            }
            Answer::Call(Err(e), None) => Err(tool_error(e, budget)),
            _ => unreachable!("call answers call"),
        }
    }

    /// Instantiates `plugin` in a fresh sandbox under `budget` and drops it,
    /// calling nothing: proves the plugin still instantiates (a readiness
    /// check) and measures the per-call set-up cost on its own.
    pub async fn probe(&self, plugin: &Plugin, budget: &CallBudget) -> Result<(), CallError> {
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|_| CallError::Internal)?;
        let ctx = CallContext::new("", "");
        let mut store = self.new_store(plugin.name.as_str(), &ctx, "probe", budget, true);
        let outcome = plugin.pre.instantiate_async(&mut store).await.map(drop);
        outcome.map_err(|e| classify(&e, store.data(), budget, "probe"))
    }

    /// Asks `plugin` at load, in a fresh sandbox within its describe
    /// budget, for no one.
    pub(crate) async fn ask_at_load(
        &self,
        plugin: &Plugin,
        ask: Ask<'_>,
    ) -> Result<Answer, CallError> {
        let ctx = CallContext::new("", "");
        self.sandboxed(plugin, &ctx, &plugin.describe_budget, ask)
            .await
    }

    /// Runs one ask in a fresh store with `budget` applied before the first
    /// guest instruction.
    pub(crate) async fn sandboxed(
        &self,
        plugin: &Plugin,
        ctx: &CallContext,
        budget: &CallBudget,
        ask: Ask<'_>,
    ) -> Result<Answer, CallError> {
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|_| CallError::Internal)?;
        let call_id = ctx.call_id.to_string();
        let quiet = !ask.may_act();
        let mut store = self.new_store(plugin.name.as_str(), ctx, &call_id, budget, quiet);
        store.data_mut().client.allow_asking(ask.may_ask());
        let run = run_ask(plugin, &mut store, ask);
        // A live client's answers are waited for beyond the budget.
        let waits = if ClientCapability::is_live(ctx.client.as_ref()) {
            CLIENT_ASK_TIMEOUT * MAX_CLIENT_ROUNDS as u32
        } else {
            Duration::ZERO
        };
        let outcome = match tokio::time::timeout(budget.timeout + WALL_GRACE + waits, run).await {
            Ok(r) => r,
            Err(_) => {
                return Err(CallError::Timeout {
                    limit: budget.timeout,
                });
            }
        };
        outcome.map_err(|e| classify(&e, store.data(), budget, &call_id))
    }
}

impl Runtime {
    /// A fresh store for one call: its own host state, the budget's limiter,
    /// and a deadline checked on every epoch tick (yielding to the
    /// scheduler in between, behind its other ready tasks and its I/O, so
    /// a spinning guest never pins a thread).
    pub(crate) fn new_store(
        &self,
        plugin: &str,
        ctx: &CallContext,
        call_id: &str,
        budget: &CallBudget,
        quiet: bool,
    ) -> Store<HostState> {
        let state = HostState::for_call(plugin, ctx, call_id, budget, quiet);
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limiter);
        let deadline = Instant::now() + budget.timeout;
        store.set_epoch_deadline(1);
        let mut ticks_this_turn = 0;
        store.epoch_deadline_callback(move |store| {
            // Time spent waiting for a live client is not the call's.
            if Instant::now() >= deadline + store.data().client.waited {
                return Err(Breach::Timeout.into());
            }
            ticks_this_turn += 1;
            if ticks_this_turn < TICKS_PER_TURN {
                return Ok(UpdateDeadline::Continue(1));
            }
            ticks_this_turn = 0;
            // Tokio's yield puts the guest behind every other ready task
            // and lets the worker poll the I/O driver first; a plain wake
            // would run it again at once, and a worker busy with spinning
            // guests would read its sockets only every 61st task (a
            // cancel's notice, a heartbeat's answer, a request all waiting
            // hundreds of milliseconds).
            Ok(UpdateDeadline::YieldCustom(
                1,
                Box::pin(tokio::task::yield_now()),
            ))
        });
        store
    }
}

async fn run_ask(
    plugin: &Plugin,
    store: &mut Store<HostState>,
    ask: Ask<'_>,
) -> wasmtime::Result<Answer> {
    let instance = plugin.pre.instantiate_async(&mut *store).await?;
    plugin.contract.run(store, &instance, ask).await
}

/// Names a failed call after its cause.
pub(crate) fn classify(
    e: &wasmtime::Error,
    state: &HostState,
    budget: &CallBudget,
    call: &str,
) -> CallError {
    if let Some(b) = e.downcast_ref::<Breach>() {
        return match *b {
            Breach::Timeout => CallError::Timeout {
                limit: budget.timeout,
            },
            Breach::Log { limit } => CallError::LogLimit { limit },
            Breach::HostCalls { limit } => CallError::HostCallLimit { limit },
        };
    }
    if let Some(stop) = e.downcast_ref::<ClientStop>() {
        return match stop {
            ClientStop::InputRequired => CallError::InputRequired {
                requests: state.client.pending.clone(),
            },
            ClientStop::MissingCapability(c) => CallError::MissingClientCapability {
                capability: (*c).to_owned(),
            },
        };
    }
    if let Some(ProtocolStop { code, message }) = e.downcast_ref::<ProtocolStop>() {
        return CallError::Protocol {
            code: *code,
            message: message.clone(),
        };
    }
    if let Some(stop) = e.downcast_ref::<crate::host::backend::ConnectionStop>() {
        return CallError::ConnectionRequired {
            backend: stop.backend.clone(),
            url: stop.url.clone(),
        };
    }
    if let Some(ContractBreach(detail)) = e.downcast_ref::<ContractBreach>() {
        return CallError::ContractViolation {
            detail: detail.clone(),
        };
    }
    if state.limiter.memory_refused {
        return CallError::MemoryLimit {
            limit: budget.memory,
        };
    }
    if state.limiter.table_refused {
        return CallError::ResourceLimit {
            detail: "table elements".into(),
        };
    }
    if let Some(trap) = e.downcast_ref::<wasmtime::Trap>() {
        return match trap {
            wasmtime::Trap::StackOverflow => CallError::StackOverflow,
            wasmtime::Trap::Interrupt => CallError::Timeout {
                limit: budget.timeout,
            },
            other => CallError::Trapped {
                detail: other.to_string(),
            },
        };
    }
    // wasmtime reports instance/table/memory count limits only as text.
    let text = e.to_string();
    if let Some(detail) = text.strip_prefix("resource limit exceeded: ") {
        return CallError::ResourceLimit {
            detail: detail.to_owned(),
        };
    }
    // The pooling allocator ran dry (`maximum concurrent limit of N for
    // core instances reached`): the host's capacity, not the plugin's
    // fault, and not an internal error either.
    if text.contains("maximum concurrent limit of") {
        return CallError::ResourceLimit {
            detail: format!("the host's sandbox pool is full ({text}); retry shortly"),
        };
    }
    tracing::warn!(call, error = format!("{e:?}"), "sandbox failure");
    CallError::Internal
}

pub(crate) fn check_output(size: usize, budget: &CallBudget) -> Result<(), CallError> {
    if size as u64 > budget.output.as_u64() {
        return Err(CallError::OutputLimit {
            limit: budget.output,
            size: size as u64,
        });
    }
    Ok(())
}

fn entity_size(e: &wit_entities::Entity) -> usize {
    e.name.len()
        + e.tenant.len()
        + e.detail.as_ref().map_or(0, String::len)
        + e.parents.iter().map(|p| p.kind.len() + 8).sum::<usize>()
        + 8
}

pub(crate) fn valid_kind(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= MAX_KIND_LEN
        && k.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn target_size(t: &wit::Target) -> usize {
    t.kind.len() + t.id.len() + t.name.len() + t.tags.iter().map(String::len).sum::<usize>()
}

pub(crate) fn tool_error(e: wit::ToolError, budget: &CallBudget) -> CallError {
    let (text, make): (String, fn(String) -> CallError) = match e {
        wit::ToolError::UnknownTool(t) => (t, CallError::UnknownTool),
        wit::ToolError::InvalidArguments(t) => (t, CallError::InvalidArguments),
        wit::ToolError::NotFound(t) => (t, CallError::NotFound),
        wit::ToolError::Failed(t) => (t, CallError::ToolFailed),
    };
    match check_output(text.len(), budget) {
        Ok(()) => make(text),
        Err(e) => e,
    }
}

fn engine_error(e: &wasmtime::Error) -> LoadError {
    LoadError::Compile {
        plugin: "(engine)".into(),
        detail: format!("{e:#}"),
    }
}

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
