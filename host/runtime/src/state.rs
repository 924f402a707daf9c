//! The state of one sandboxed call: a WASI context that grants nothing, the
//! resource limiter, and each host capability's own state.

use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::host::HostCallMeter;
use crate::host::artifacts::ArtifactsCapability;
use crate::host::backend::BackendCapability;
use crate::host::checkpoint::CheckpointCapability;
use crate::host::client::{Acted, ClientCapability};
use crate::host::log::LogCapability;
use crate::host::notify::NotifyCapability;
use crate::host::progress::ProgressCapability;
use crate::host::protocol::ProtocolCapability;
use crate::host::resolver::{Quiet, ResolverCapability};
use crate::limiter::CallLimiter;
use crate::sandbox::CallContext;
use toolhost_limits::CallBudget;

/// Everything a `Store` holds for one call. Built fresh per call, dropped
/// with the store: nothing survives between callers.
pub(crate) struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limiter: CallLimiter,
    pub(crate) log: LogCapability,
    pub(crate) progress: ProgressCapability,
    pub(crate) resolver: ResolverCapability,
    pub(crate) backend: BackendCapability,
    pub(crate) checkpoint: CheckpointCapability,
    pub(crate) artifacts: ArtifactsCapability,
    pub(crate) client: ClientCapability,
    pub(crate) notify: NotifyCapability,
    pub(crate) protocol: ProtocolCapability,
    /// The exploration run this call is, if it is one.
    run: Option<crate::host::exploration::Exploration>,
}

impl HostState {
    /// The state of one call of `plugin` for `ctx`. `quiet`: the call may
    /// not have side effects (planning, listing entities).
    pub(crate) fn for_call(
        plugin: &str,
        ctx: &CallContext,
        call_id: &str,
        budget: &CallBudget,
        quiet: bool,
    ) -> Self {
        let meter = HostCallMeter::new(budget.host_calls);
        let acted = Acted::default();
        // A run asks only by rounds, when its worker linked its client (a
        // run followed as a task): never a live session.
        let link = ctx.client.clone().filter(|l| {
            ctx.exploration.is_none() || matches!(l.channel, crate::ClientChannel::Rounds(_))
        });
        let client = ClientCapability::new(link, meter.clone(), quiet, acted.clone());
        // A run tells no one: it is read-only.
        let updates = ctx.updates.clone().filter(|_| ctx.exploration.is_none());
        let notify = NotifyCapability::new(updates, meter.clone(), quiet);
        let quiet = Quiet::new(quiet);
        Self {
            wasi: sandbox_wasi(),
            table: ResourceTable::new(),
            limiter: CallLimiter::new(budget),
            log: LogCapability::new(plugin, call_id, budget.log, meter.clone())
                .with_sink(ctx.log.clone()),
            progress: ProgressCapability::new(ctx.progress.clone(), meter.clone()),
            protocol: ProtocolCapability::new(meter.clone(), ctx.scanner.clone()),
            notify,
            resolver: ResolverCapability::new(
                plugin,
                &ctx.tenant,
                ctx.snapshots.clone(),
                meter.clone(),
                quiet.clone(),
            ),
            backend: BackendCapability::new(
                ctx.backends.clone(),
                &ctx.tenant,
                meter.clone(),
                quiet.clone(),
            )
            .in_run(ctx.exploration.clone())
            .acting(acted.clone())
            .for_whom(ctx.acting.clone()),
            artifacts: ArtifactsCapability::new(
                ctx.exploration.clone(),
                &ctx.tenant,
                &ctx.principal,
                meter.clone(),
            ),
            checkpoint: CheckpointCapability::new(
                ctx.checkpoints.clone(),
                &ctx.tenant,
                &ctx.principal,
                meter,
                quiet,
            )
            .acting(acted),
            client,
            run: ctx.exploration.clone(),
        }
    }

    /// Notes a refused attempt in the run's receipt (outside a run, the
    /// refusal is only what the guest sees).
    pub(crate) fn refused(&self, what: &str, detail: String) {
        if let Some(run) = &self.run {
            run.refused(what, detail);
        }
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// A wall clock stopped at the Unix epoch: guests get no ambient time of
/// day (time is a capability a later manifest key may grant).
struct StoppedWallClock;

impl wasmtime_wasi::HostWallClock for StoppedWallClock {
    fn resolution(&self) -> std::time::Duration {
        std::time::Duration::from_secs(1)
    }
    fn now(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
}

/// WASI p2 with nothing granted: no preopened directories, no environment,
/// no arguments, stdin closed, stdout/stderr discarded, no TCP, UDP or name
/// lookup and every socket address refused, the wall clock stopped. The
/// monotonic clock and randomness stay (Rust's std needs them).
fn sandbox_wasi() -> WasiCtx {
    WasiCtx::builder()
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .socket_addr_check(|_, _| Box::pin(async { false }))
        .wall_clock(StoppedWallClock)
        .build()
}
