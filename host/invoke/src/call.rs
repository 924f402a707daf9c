//! [`Toolhost::call`]: the one path every tool call takes.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use toolhost_audit::{AuditError, AuditEvent, AuditSink, Effect, Outcome, argument_digest};
use toolhost_backend::{Acting, Backends, Identity};
use toolhost_catalog::{Catalog, Catalogs};
use toolhost_catalog::{LoadedPlugin, ToolRef};
use toolhost_gates::{CheckpointStore, GateStore, IdempotencyKey};
use toolhost_policy::{
    Decision, Grants, Operators, PolicyStore, Use, Within, bound_toolsets, decide,
};
use toolhost_runtime::{
    BackendGrant, CallContext, ClientLink, LogSink, ProgressSink, Runtime, Snapshots, ToolOutput,
};
use toolhost_secrets::Scanner;
use toolhost_types::{Principal, PrincipalKind};
use tracing::Instrument;

use crate::gating::GatePolicy;
use crate::snapshots::{Conversation, EntityGenerations, SnapshotCache};
use crate::tool::{ClaimTools, Host, HostCall, section};
use crate::{Answer, HostTool, InvokeError, Tool};

/// One tool call as the MCP edge received it.
#[derive(Debug, Clone)]
pub struct CallRequest {
    /// The tool's name.
    pub tool: String,
    /// The arguments: a JSON object (an absent object is `{}`).
    pub arguments: Value,
    /// Where the plugin's progress reports go, if the client asked for them.
    pub progress: Option<ProgressSink>,
    /// Where the plugin's log lines go besides the operator's log, if the
    /// client asked for them.
    pub log: Option<LogSink>,
    /// The conversation the call belongs to (the resolver's snapshots are
    /// cached per conversation). `None`: the principal and its client.
    pub conversation: Option<Conversation>,
    /// Who the plugin may ask for input (the `client` import): the MCP
    /// client, live or by rounds. `None`: nobody.
    pub client: Option<ClientLink>,
    /// Whether a run this call starts is followed as a task (a 2026-07-28
    /// request that declared the Tasks extension): its client can answer
    /// the run's requests for input (`tasks/update`).
    pub task: bool,
}

impl CallRequest {
    /// A call of `tool` with `arguments`, no progress, in the caller's
    /// default conversation.
    pub fn new(tool: &str, arguments: Value) -> Self {
        Self {
            tool: tool.into(),
            arguments,
            progress: None,
            log: None,
            conversation: None,
            client: None,
            task: false,
        }
    }
}

/// What [`Toolhost::list`] shows one caller: tools of one catalog.
#[derive(Clone)]
pub struct Listing {
    /// The version of the catalog they were listed from.
    pub catalog_version: String,
    /// The tools, in name order.
    pub tools: Vec<Tool>,
}

/// The host's call path: the catalog, the policy's live state, the sandbox
/// runtime and the audit sink.
pub struct Toolhost {
    served: RwLock<Arc<ServedViews>>,
    changes: watch::Sender<i64>,
    pub(crate) resource_updates: tokio::sync::broadcast::Sender<crate::resources::ResourceUpdate>,
    pub(crate) update_relay: Option<Arc<dyn crate::resources::UpdateRelay>>,
    policy: Arc<dyn PolicyStore>,
    operators: Operators,
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) audit: Arc<dyn AuditSink>,
    /// The host's own tools, by name: each a [`Tool::Host`].
    host_tools: BTreeMap<String, Tool>,
    claims: Vec<Arc<dyn ClaimTools>>,
    pub(crate) backends: Backends,
    pub(crate) snapshots: SnapshotCache,
    entity_generations: Option<Arc<dyn EntityGenerations>>,
    pub(crate) gates: Option<Arc<dyn GateStore>>,
    pub(crate) checkpoints: Option<Arc<dyn CheckpointStore>>,
    pub(crate) gate_policy: GatePolicy,
    pub(crate) bounds: crate::bounds::Bounds,
    pub(crate) artifacts: Option<crate::results::Artifacts>,
    pub(crate) scanner: Scanner,
    in_flight: TaskTracker,
}

impl Toolhost {
    /// Wires the call path.
    pub fn new(
        catalog: Arc<Catalog>,
        policy: Arc<dyn PolicyStore>,
        runtime: Arc<Runtime>,
        audit: Arc<dyn AuditSink>,
    ) -> Self {
        let (changes, _) = watch::channel(catalog.generation());
        Self {
            bounds: crate::bounds::Bounds::default(),
            served: RwLock::new(Arc::new(ServedViews::new(Catalogs::single(catalog), &[]))),
            changes,
            resource_updates: tokio::sync::broadcast::channel(crate::resources::UPDATES_BUFFER).0,
            update_relay: None,
            policy,
            operators: Operators::none(),
            runtime,
            audit,
            host_tools: BTreeMap::new(),
            claims: Vec::new(),
            backends: Backends::empty(),
            snapshots: SnapshotCache::default(),
            entity_generations: None,
            gates: None,
            checkpoints: None,
            gate_policy: GatePolicy::default(),
            artifacts: None,
            scanner: Scanner::new(),
            in_flight: TaskTracker::new(),
        }
    }

    /// The host's operator tenant, whose principals alone hold host-level
    /// permissions (the catalog's). Without it nobody holds them here.
    pub fn with_operators(mut self, operators: Operators) -> Self {
        self.operators = operators;
        self
    }

    /// Where the generations of entity kinds are read, so a snapshot is
    /// listed again once another replica's call changed its kind (without
    /// it, only this host's own calls invalidate its snapshots).
    pub fn with_entity_generations(mut self, generations: Arc<dyn EntityGenerations>) -> Self {
        self.entity_generations = Some(generations);
        self
    }

    /// Where plugins' human checkpoints are kept (without one, a plugin's
    /// `checkpoint.open` is refused).
    pub fn with_checkpoints(mut self, store: Arc<dyn CheckpointStore>) -> Self {
        self.checkpoints = Some(store);
        self
    }

    /// The gate store, and how gates behave. Without one, a call that
    /// must be gated fails (internal error) rather than run unapproved.
    pub fn with_gates(mut self, store: Arc<dyn GateStore>, policy: GatePolicy) -> Self {
        self.gates = Some(store);
        self.gate_policy = policy;
        self
    }

    /// Where resource updates go besides this replica's subscribers (the
    /// other replicas'). Without one, they reach this replica's only.
    pub fn with_update_relay(mut self, relay: Arc<dyn crate::resources::UpdateRelay>) -> Self {
        self.update_relay = Some(relay);
        self
    }

    /// The operator's backends, which plugins reach by the names their
    /// manifests declare.
    pub fn with_backends(mut self, backends: Backends) -> Self {
        self.backends = backends;
        self
    }

    /// Adds a tool the host provides itself. Its name must not collide with
    /// a plugin's or another host tool's. The digest of its definition is
    /// taken now: its spec, reviewed with the host's release.
    pub fn with_host_tool(mut self, tool: Arc<dyn HostTool>) -> Result<Self, InvokeError> {
        let name = tool.spec().name.to_string();
        let in_catalog = (self.catalogs().all()).any(|c| c.lookup(&name).is_some());
        if in_catalog || self.host_tools.contains_key(&name) {
            return Err(InvokeError::DuplicateTool { tool: name });
        }
        let definition = toolhost_catalog::definition_digest(tool.spec(), None, None);
        self.host_tools.insert(name, Tool::Host(tool, definition));
        Ok(self)
    }

    /// Adds a feature that serves some catalog tools itself (see
    /// [`ClaimTools`]): from now on, in every catalog served.
    pub fn with_claims(mut self, claims: Arc<dyn ClaimTools>) -> Self {
        self.claims.push(claims);
        let catalogs = self.catalogs();
        self.served = RwLock::new(Arc::new(ServedViews::new(catalogs, &self.claims)));
        self
    }

    /// The narrow handle on this host that host tools get, for the
    /// features' own edges and workers.
    pub fn host(&self) -> Host<'_> {
        Host::new(self)
    }

    /// Waits until every call in flight has finished (and been audited).
    /// Calls that start meanwhile are waited for too: stop accepting
    /// requests first.
    pub async fn drain(&self) {
        self.in_flight.close();
        self.in_flight.wait().await;
    }

    /// The tools `who` may see, in name order: the same decision a call
    /// gets, from the principal's roles as they are now; all from one
    /// catalog, whose version the listing names.
    pub async fn list(&self, who: &Principal) -> Result<Listing, InvokeError> {
        let grants = self.grants(who).await?;
        let served = self.served(&who.tenant);
        let plugins = served.catalog.tools().map(|t| served.tool(t));
        let mut tools: Vec<Tool> = plugins
            .chain(self.host_tools.values().cloned())
            .filter(|t| decision(who, &grants, t, Use::List).permits())
            .collect();
        tools.sort_by(|a, b| a.spec().name.cmp(&b.spec().name));
        Ok(Listing {
            catalog_version: served.catalog.version().to_owned(),
            tools,
        })
    }

    /// Whether `who` may see `tool` listed: the decision [`list`](Self::list)
    /// makes for it. What an edge checks before it says anything of a tool
    /// beyond "not found".
    pub async fn lists(&self, who: &Principal, tool: &Tool) -> Result<bool, InvokeError> {
        let grants = self.grants(who).await?;
        Ok(decision(who, &grants, tool, Use::List).permits())
    }

    /// `who`'s roles in its tenant, read now (services have none: their
    /// token's scopes bound them), with its tenant's standing: whether it
    /// is the operator tenant; narrowed to the toolsets its token names,
    /// as its tenant defines them now (read only for a bound principal).
    pub(crate) async fn grants(&self, who: &Principal) -> Result<Grants, InvokeError> {
        let grants = match who.kind {
            PrincipalKind::User => self
                .policy
                .grants(&who.tenant, &who.subject)
                .await
                .map_err(InvokeError::Policy)?,
            PrincipalKind::Service => Grants::none(),
        };
        let named = bound_toolsets(&who.scopes);
        let within = match named.is_empty() {
            true => None,
            false => {
                let defined = (self.policy.toolsets(&who.tenant, &named).await)
                    .map_err(InvokeError::Policy)?;
                Some(Within::new(named, defined))
            }
        };
        Ok(self
            .operators
            .standing(&who.tenant, grants)
            .narrowed(within))
    }

    /// The tool called `name` in the catalog `tenant` is served (schemas
    /// are the same for every caller of the tenant).
    pub fn tool(&self, tenant: &str, name: &str) -> Option<Tool> {
        self.tool_in(&self.served(tenant), name)
    }

    /// The tool called `name` in the catalog of every tenant without one
    /// of its own: for what needs a definition before its caller is known
    /// (a tool served to some tenants only is not found here).
    pub fn tool_of_everyone(&self, name: &str) -> Option<Tool> {
        self.tool_in(&self.views().everyone, name)
    }

    /// Whether any tenant's catalog, or the host, serves a tool called
    /// `name` that changes something: for what classifies a request before
    /// its caller is known.
    pub fn mutating_anywhere(&self, name: &str) -> bool {
        if let Some(t) = self.host_tools.get(name) {
            return t.spec().mutating;
        }
        let views = self.views();
        (views.all()).any(|s| {
            s.catalog
                .lookup(name)
                .is_some_and(|t| s.tool(t).spec().mutating)
        })
    }

    fn tool_in(&self, served: &Served, name: &str) -> Option<Tool> {
        match self.host_tools.get(name) {
            Some(t) => Some(t.clone()),
            None => served.catalog.lookup(name).map(|t| served.tool(t)),
        }
    }

    /// The catalog `tenant` is served now. A call keeps the catalog it
    /// started with, however often it is replaced meanwhile.
    pub fn catalog(&self, tenant: &str) -> Arc<Catalog> {
        self.served(tenant).catalog.clone()
    }

    /// Every tenant's catalog served now.
    pub fn catalogs(&self) -> Catalogs {
        self.views().catalogs.clone()
    }

    /// The version of the catalogs served now (every tenant's carries it).
    pub fn catalog_version(&self) -> String {
        self.views().catalogs.version().to_owned()
    }

    fn views(&self) -> Arc<ServedViews> {
        self.served
            .read()
            .expect("the served catalog's lock is never poisoned")
            .clone()
    }

    fn served(&self, tenant: &str) -> Arc<Served> {
        self.views().for_tenant(tenant).clone()
    }

    /// Serves `catalog` to every tenant: [`serve_catalogs`](Self::serve_catalogs).
    pub fn serve_catalog(&self, catalog: Arc<Catalog>) {
        self.serve_catalogs(Catalogs::single(catalog));
    }

    /// Serves `catalogs` from the next call on, each tenant its own, and
    /// tells every [`catalog_changes`](Self::catalog_changes) receiver.
    /// Host tools keep their names: a plugin tool of the same name is
    /// shadowed.
    pub fn serve_catalogs(&self, catalogs: Catalogs) {
        let generation = catalogs.generation();
        *self
            .served
            .write()
            .expect("the served catalog's lock is never poisoned") =
            Arc::new(ServedViews::new(catalogs, &self.claims));
        self.changes.send_replace(generation);
    }

    /// Changes to the served catalog (the value: its store generation).
    pub fn catalog_changes(&self) -> watch::Receiver<i64> {
        self.changes.subscribe()
    }

    /// The one path every tool call takes. Read this first.
    ///
    /// The audit event is written before the answer is returned: a caller
    /// that got a reply can rely on its row. The state the call leaves
    /// behind (its idempotency key settled, its artifact kept) is written
    /// in the row's transaction. Cancelling `cancel` interrupts the guest
    /// at its next epoch tick; the call is still audited.
    pub async fn call(
        &self,
        who: &Principal,
        req: CallRequest,
        cancel: &CancellationToken,
    ) -> Result<Answer, InvokeError> {
        self.in_flight
            .track_future(async {
                let (answer, written) = self.audited(who, &req, cancel).await;
                // A host tool's answer, once its row is written: a tool
                // that started a run its caller waits for answers here.
                match (answer, written) {
                    (Ok(Answer::Output(out)), Some((tool, effects))) => {
                        let call = self.host_call(who, &req, cancel);
                        tool.written(call, out, &effects).await.map(Answer::Output)
                    }
                    (answer, _) => answer,
                }
            })
            .await
    }

    /// The call of a host tool by `who` as `req` asks it, on this host.
    fn host_call<'a>(
        &'a self,
        who: &'a Principal,
        req: &'a CallRequest,
        cancel: &'a CancellationToken,
    ) -> HostCall<'a> {
        HostCall {
            who,
            args: &req.arguments,
            progress: req.progress.as_ref(),
            cancel,
            host: Host::new(self),
            client: req.client.as_ref(),
            task: req.task,
        }
    }

    /// The call of a host tool by `who` with `args` alone: no progress, no
    /// client to ask.
    fn bare_call<'a>(
        &'a self,
        who: &'a Principal,
        args: &'a Value,
        cancel: &'a CancellationToken,
    ) -> HostCall<'a> {
        HostCall {
            who,
            args,
            progress: None,
            cancel,
            host: Host::new(self),
            client: None,
            task: false,
        }
    }

    /// The call, its row written; with a host tool's answer once written,
    /// the tool and the effects written with the row.
    async fn audited(
        &self,
        who: &Principal,
        req: &CallRequest,
        cancel: &CancellationToken,
    ) -> (Result<Answer, InvokeError>, Option<Written>) {
        let mut audit = Audit::start(who, req, &self.scanner);
        // The call's span (the MCP edge's `tools/call`) and every log line
        // within it name the call, as its audit row does.
        tracing::Span::current().record("call_id", audit.event.call_id.as_str());
        let outcome = self.run(who, req, cancel, &mut audit).await;
        let outcome = outcome.and_then(|answer| self.screen(&answer).map(|()| answer)); // a secret → SECRET_EXPOSURE
        let mut effects = std::mem::take(&mut audit.effects);
        let call_id = audit.event.call_id.clone();
        let outcome = outcome.map(|a| self.bound(who, &req.tool, &call_id, a, &mut effects)); // large → artifact
        if let Some(key) = audit.held_key.take() {
            effects.push(crate::gating::settle(key, &outcome));
        }
        let tool = audit.host_tool.take();
        let mut event = audit.finish(&outcome);
        event.client_rounds = crate::prompts::client_rounds(req.client.as_ref());
        event.receipt_sha256 = effects.iter().find_map(Effect::settled_receipt);
        let recorded = (self.audit.record_with(&event, &effects))
            .instrument(tracing::info_span!("audit"))
            .await;
        match recorded {
            Ok(()) => (outcome, tool.map(|t| (t, effects))),
            Err(AuditError::Lost { effect }) => {
                let call = self.bare_call(who, &req.arguments, cancel);
                (self.lost(call, event, tool, &effects[effect]).await, None)
            }
            Err(e) => (Err(InvokeError::Audit(e)), None), // unreachable → STORE_UNAVAILABLE
        }
    }

    async fn run(
        &self,
        who: &Principal,
        req: &CallRequest,
        cancel: &CancellationToken,
        audit: &mut Audit,
    ) -> Result<Answer, InvokeError> {
        let served = self.served(&who.tenant);
        let tool = self
            .tool_in(&served, &req.tool)
            .ok_or_else(|| InvokeError::ToolNotFound {
                tool: req.tool.clone(),
            })?;
        audit.tool_found(&tool, served.catalog.version());
        let grants = self.admit(&served, who, &tool, &req.arguments).await?;
        let tool = match tool {
            Tool::Plugin(t) => t,
            Tool::Host(t, _) => {
                arguments_text(&req.arguments)?;
                let call = self.host_call(who, req, cancel);
                let (out, effects) = tokio::select! {
                    out = t.call(call) => match out {
                        // A run tool's plan asked its client before the run.
                        Err(InvokeError::Call(toolhost_runtime::CallError::InputRequired {
                            requests,
                        })) => return Ok(Answer::NeedsInput(requests)),
                        out => out?,
                    },
                    () = cancel.cancelled() => return Err(InvokeError::Cancelled),
                };
                audit.effects = effects;
                return Ok(Answer::Output(out));
            }
        };
        let out = tokio::select! {
            out = self.run_plugin(who, &grants, &tool, req, &audit.event.call_id, &mut audit.held_key) => out,
            () = cancel.cancelled() => Err(InvokeError::Cancelled),
        };
        // A tool that changes entities ran: every replica lists them again.
        let kinds = &section(&tool).invalidates;
        if matches!(out, Ok(Answer::Output(_))) && !kinds.is_empty() {
            audit.effects.push(Effect::Entities {
                tenant: who.tenant.clone(),
                plugin: tool.plugin().manifest.plugin.name.to_string(),
                kinds: kinds.clone(),
            });
        }
        out
    }

    /// Whether `who` may call `tool` with `args`, as every call and every
    /// [`read`](Self::read) is decided: their roles as they are now, the
    /// policy's decision, the arguments' bounds and schema. `who`'s grants.
    async fn admit(
        &self,
        served: &Served,
        who: &Principal,
        tool: &Tool,
        args: &Value,
    ) -> Result<Grants, InvokeError> {
        let spec = tool.spec();
        let policy = tracing::info_span!("policy");
        let grants = self.grants(who).instrument(policy.clone()).await?;
        let decided = policy.in_scope(|| decision(who, &grants, tool, Use::Call));
        match decided {
            Decision::Denied => {
                return Err(InvokeError::PermissionDenied {
                    tool: spec.name.to_string(),
                });
            }
            // Outside the caller's toolsets, as if the catalog had none.
            Decision::Hidden => {
                return Err(InvokeError::ToolNotFound {
                    tool: spec.name.to_string(),
                });
            }
            Decision::Allowed | Decision::Gated => {}
        }
        served.schemas.check(&self.bounds, tool, args)?; // over a limit → LIMIT_EXCEEDED, off-schema → INVALID_ARGUMENTS
        Ok(grants)
    }

    /// Reads through host tool `tool` as `who`, for a page of the console:
    /// the same lookup, decision and argument checks as [`call`](Self::call)
    /// (see `admit`), and the tool's own tenant scoping, but no audit row.
    /// A page view is not a call: over MCP the same tool is a call with its
    /// row, as every call is. Only a host tool that changes nothing
    /// (`mutating: false`) may be read, and a read that decided a change
    /// (an effect, which only a call's row may carry) is refused without
    /// making it ([`InvokeError::NotARead`], a bug of the caller's).
    pub async fn read(
        &self,
        who: &Principal,
        tool: &str,
        args: &Value,
    ) -> Result<ToolOutput, InvokeError> {
        let not_a_read = || InvokeError::NotARead { tool: tool.into() };
        let served = self.served(&who.tenant);
        let found = self
            .tool_in(&served, tool)
            .ok_or_else(|| InvokeError::ToolNotFound { tool: tool.into() })?;
        let host_tool = match &found {
            Tool::Host(t, _) if !t.spec().mutating && t.claimed().is_none() => t.clone(),
            _ => return Err(not_a_read()),
        };
        self.admit(&served, who, &found, args).await?;
        arguments_text(args)?;
        let cancel = CancellationToken::new();
        let (out, effects) = host_tool.call(self.bare_call(who, args, &cancel)).await?;
        if !effects.is_empty() {
            return Err(not_a_read());
        }
        let answer = Answer::Output(out);
        self.screen(&answer)?; // a secret → SECRET_EXPOSURE, as a call
        answer.output().ok_or_else(not_a_read)
    }

    /// Checks `args` against `tool`'s bounds and input schema, as a call of
    /// it by a principal of `tenant` would be checked.
    pub(crate) fn check_arguments(
        &self,
        tenant: &str,
        tool: &Tool,
        args: &Value,
    ) -> Result<(), InvokeError> {
        self.served(tenant).schemas.check(&self.bounds, tool, args)
    }

    /// The snapshots of every kind `tool` resolves, for this conversation
    /// and tenant: cached, or listed by the plugin in sandboxes of their
    /// own, one kind after another, before the call starts.
    pub(crate) async fn snapshots_for(
        &self,
        who: &Principal,
        tool: &ToolRef,
        conversation: &Conversation,
        acting: &Acting,
    ) -> Result<Arc<Snapshots>, InvokeError> {
        let plugin = tool.plugin();
        let mut snapshots = Snapshots::new();
        let name = plugin.manifest.plugin.name.as_str();
        // A snapshot listed with a person's own connection is theirs while
        // the connection lasts: once it is revoked (or expired past
        // refreshing), it is listed again, which asks them to connect.
        let kinds = &section(tool).resolves;
        let disconnected = !kinds.is_empty() && self.disconnected(plugin, acting).await;
        for kind in kinds {
            let generation = match &self.entity_generations {
                _ if disconnected => None,
                None => Some(0),
                Some(g) => g
                    .generation(&who.tenant, name, kind)
                    .await
                    .inspect_err(|e| {
                        tracing::warn!(error = %e, kind, "reading an entity generation failed: the snapshot is listed for this call alone");
                    })
                    .ok(),
            };
            let rows = self
                .snapshots
                .get(
                    conversation,
                    &who.tenant,
                    name,
                    kind,
                    generation,
                    || async {
                        let ctx = CallContext::new(&who.tenant, &who.subject)
                            .with_backends(self.grant(plugin))
                            .with_acting(Some(acting.clone()));
                        self.runtime
                            .snapshot(&plugin.plugin, &ctx, kind, &plugin.budget)
                            .await
                    },
                )
                .await?;
            snapshots.insert(kind.clone(), rows);
        }
        Ok(Arc::new(snapshots))
    }

    /// Whether the person acting lacks a connection to a backend of
    /// `plugin` that acts with each person's own connection.
    async fn disconnected(&self, plugin: &LoadedPlugin, acting: &Acting) -> bool {
        let personal = self.backends.connection_backends();
        let declared = |b: &&String| plugin.manifest.backends.contains_key(b.as_str());
        for backend in personal.iter().filter(declared) {
            if !self.backends.connected(backend, acting.identity()).await {
                return true;
            }
        }
        false
    }

    /// The backends `plugin` may reach: those its manifest declares.
    pub(crate) fn grant(&self, plugin: &LoadedPlugin) -> Option<BackendGrant> {
        if plugin.manifest.backends.is_empty() {
            return None;
        }
        Some(BackendGrant {
            backends: self.backends.clone(),
            declared: Arc::new(plugin.manifest.backend_names()),
        })
    }
}

impl Toolhost {
    /// Whether `who` has a usable connection to `backend`, a backend that
    /// acts with each person's own connection (false for any other, and
    /// for a service).
    pub async fn connected(&self, who: &Principal, backend: &str) -> bool {
        let acting = acting(who, "", "");
        self.backends.connected(backend, acting.identity()).await
    }
}

/// Who acts in call `call_id` of `tool` by `who`, for the backends the
/// operator tells (`auth = "credential+assertion"`): the principal the call
/// path admitted, never anything the plugin says. A service is named as
/// itself; its client is its own `act`.
pub(crate) fn acting(who: &Principal, tool: &str, call_id: &str) -> Acting {
    Acting::new(Identity {
        subject: who.subject.clone(),
        kind: who.kind.as_str(),
        tenant: who.tenant.clone(),
        client_id: who.client_id.clone(),
        tool: tool.to_owned(),
        call_id: call_id.to_owned(),
    })
}

/// The policy's decision for `who` on `tool`: an open host tool
/// ([`Tool::open`]) is every principal's, whose answers are decided per
/// caller; any other is [`decide`]d by its permission and risk.
fn decision(who: &Principal, grants: &Grants, tool: &Tool, use_: Use) -> Decision {
    if tool.open() {
        return Decision::Allowed;
    }
    if !tool.within(grants) {
        return Decision::Hidden; // outside the caller's toolsets: not found
    }
    let spec = tool.spec();
    decide(who, grants, &spec.permission, spec.risk, use_)
}

/// A host tool's answer once its row is written: the tool, and the
/// effects written with the row.
type Written = (Arc<dyn HostTool>, Vec<Effect>);

/// Every tenant's catalog as served: each [`Served`] once.
struct ServedViews {
    catalogs: Catalogs,
    everyone: Arc<Served>,
    tenants: BTreeMap<String, Arc<Served>>,
}

impl ServedViews {
    fn new(catalogs: Catalogs, claims: &[Arc<dyn ClaimTools>]) -> Self {
        let everyone = Arc::new(Served::new(catalogs.everyone().clone(), claims));
        let tenants = (catalogs.tenants())
            .map(|(t, c)| (t.to_owned(), Arc::new(Served::new(c.clone(), claims))))
            .collect();
        Self {
            catalogs,
            everyone,
            tenants,
        }
    }

    fn for_tenant(&self, tenant: &str) -> &Arc<Served> {
        self.tenants.get(tenant).unwrap_or(&self.everyone)
    }

    fn all(&self) -> impl Iterator<Item = &Arc<Served>> {
        std::iter::once(&self.everyone).chain(self.tenants.values())
    }
}

/// One catalog as served: the tools, their compiled input schemas, and the
/// host tools that serve the tools features claimed.
struct Served {
    catalog: Arc<Catalog>,
    schemas: crate::bounds::Schemas,
    /// Each a [`Tool::Host`] with its catalog tool's definition digest.
    claimed: BTreeMap<String, Tool>,
}

impl Served {
    fn new(catalog: Arc<Catalog>, claims: &[Arc<dyn ClaimTools>]) -> Self {
        let claimed = catalog
            .tools()
            .filter_map(|t| {
                let tool = claims.iter().find_map(|c| c.claim(t))?;
                let served = Tool::Host(tool, *t.definition_digest());
                Some((t.spec().name.to_string(), served))
            })
            .collect();
        Self {
            schemas: crate::bounds::Schemas::new(&catalog),
            catalog,
            claimed,
        }
    }

    /// Catalog tool `t` as served: by the host tool that claimed it, or
    /// by its plugin.
    fn tool(&self, t: &ToolRef) -> Tool {
        match self.claimed.get(t.spec().name.as_str()) {
            Some(host) => host.clone(),
            None => Tool::Plugin(t.clone()),
        }
    }
}

pub(crate) fn arguments_text(args: &Value) -> Result<String, InvokeError> {
    match args {
        Value::Object(_) => Ok(args.to_string()),
        Value::Null => Ok("{}".into()),
        _ => Err(InvokeError::ArgumentsNotAnObject),
    }
}

/// The audit event of one call, filled in as the call proceeds.
struct Audit {
    started: Instant,
    event: AuditEvent,
    /// A well-formed `gate_id` argument: linked once the tool is known to
    /// take one (a gateable plugin tool, or a host tool such as
    /// `decide_approval`); to any other plugin tool it is a plain argument.
    presented_gate: Option<String>,
    /// The idempotency key the call claimed, settled by its audit row.
    held_key: Option<IdempotencyKey>,
    /// What a host tool decided, written with the row.
    effects: Vec<Effect>,
    /// The host tool called, once found.
    host_tool: Option<Arc<dyn HostTool>>,
}

impl Audit {
    /// The event of `req`; the tool's name as called is kept only with any
    /// secret in it redacted (a client may call any name).
    fn start(who: &Principal, req: &CallRequest, scanner: &Scanner) -> Self {
        let tool = scanner.redact(&req.tool);
        let digest = argument_digest(&req.arguments);
        let event = AuditEvent {
            client_id: Some(who.client_id.clone()),
            outcome: Outcome::Error,
            ..AuditEvent::new(&who.tenant, &who.subject, &tool, digest)
        };
        Self {
            started: Instant::now(),
            event,
            presented_gate: presented_gate(&req.arguments),
            held_key: None,
            effects: Vec::new(),
            host_tool: None,
        }
    }

    fn tool_found(&mut self, tool: &Tool, catalog_version: &str) {
        if let Tool::Host(t, _) = tool {
            self.host_tool = Some(t.clone());
        }
        let own = matches!(tool, Tool::Host(t, _) if t.claimed().is_none());
        if tool.gateable() || own {
            self.event.gate_id = self.presented_gate.take();
        }
        self.event.definition_digest = Some(tool.definition_digest());
        match tool.catalog_tool() {
            Some(t) => {
                let loaded = t.plugin();
                self.event.plugin = Some(loaded.plugin.name().to_string());
                self.event.plugin_digest = Some(*loaded.plugin.digest());
                self.event.catalog_version = Some(catalog_version.to_owned());
            }
            None => self.event.plugin = Some("(host)".into()),
        }
    }

    fn finish(mut self, outcome: &Result<Answer, InvokeError>) -> AuditEvent {
        self.event.duration = self.started.elapsed();
        let breach = matches!(outcome, Err(InvokeError::Call(e)) if e.is_breach());
        match outcome {
            Ok(Answer::Output(_) | Answer::Artifact(..)) => self.event.outcome = Outcome::Executed,
            Ok(Answer::Clarify(_) | Answer::NeedsInput(_)) => {
                self.event.outcome = Outcome::NeedsClarification;
            }
            Ok(Answer::ApprovalRequired(gate)) => {
                self.event.outcome = Outcome::ApprovalRequired;
                self.event.gate_id = Some(gate.opened.id.to_string());
            }
            Err(e @ InvokeError::PermissionDenied { .. }) => {
                self.event.outcome = Outcome::Denied;
                self.event.error_code = Some(e.code().to_owned());
            }
            Err(e @ InvokeError::LimitExceeded { .. }) => {
                self.event.outcome = Outcome::LimitRejected;
                self.event.error_code = Some(e.code().to_owned());
            }
            Err(e) => {
                self.event.outcome = Outcome::Error;
                self.event.error_code = Some(e.code().to_owned());
            }
        }
        let e = &self.event;
        // Unknown names are the client's to choose: one label for all of
        // them keeps the metric's cardinality bounded by the catalog.
        let label = if e.plugin.is_some() {
            e.tool.as_str()
        } else {
            "(unknown)"
        };
        crate::metrics::record_call(
            label,
            e.outcome,
            e.error_code.as_deref(),
            breach,
            e.duration,
        );
        tracing::info!(call = %e.call_id, tool = %e.tool, outcome = e.outcome.as_str(),
            code = e.error_code.as_deref(), took_us = e.duration.as_micros() as u64, "tool call");
        self.event
    }
}

/// The gate a call presents: its `gate_id` argument, when that is a
/// well-formed gate id (a malformed one fails a gateable call, which says so).
fn presented_gate(args: &Value) -> Option<String> {
    let id = args.get(crate::gating::GATE_ID_ARG)?.as_str()?;
    id.parse::<toolhost_gates::GateId>()
        .ok()
        .map(|_| id.to_owned())
}
