//! The composition root's list: the call path over the store, the runtime
//! and the served catalog, and the features installed on it, each with its
//! host tools (people's decisions, exploration runs, authoring, discovery).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock, Weak};

use toolhost_authoring::{Authoring, DEFAULT_UPLOAD_TTL, WorkspaceConfig};
use toolhost_backend::Backends;
use toolhost_catalog::intake::IntakeOptions;
use toolhost_catalog::{Catalogs, LiveCatalog};
use toolhost_decisions::{
    DecideApproval, DecideCheckpoint, DecidePluginReview, KnownTenants, ListCatalogChanges,
    ListCheckpoints, ListPendingApprovals, ListPluginReviews, PinPlugin, RollbackPlugin,
    ToolPermission,
};
use toolhost_invoke::{GatePolicy, HostTool, Toolhost};
use toolhost_runs_service::{Runs, RunsConfig, Sessions};
use toolhost_runtime::Runtime;
use toolhost_secrets::Scanner;
use toolhost_storage::Store;

use crate::config::Config;

/// What the host is composed of, from the configuration.
pub(crate) struct Parts<'a> {
    pub config: &'a Config,
    pub store: &'a Arc<Store>,
    pub runtime: &'a Arc<Runtime>,
    pub live: &'a Arc<LiveCatalog>,
    pub intake: &'a IntakeOptions,
}

/// The features installed above the call path that the edges and the
/// workers reach besides their host tools.
pub(crate) struct Features {
    /// Exploration runs: their tasks (MCP), their workers.
    pub runs: Arc<Runs>,
    /// Authoring: its upload route; the drafts the workers run.
    pub authoring: Arc<Authoring>,
    /// The operator's backends, as the call path holds them: the
    /// authorization server's identity-assertion signer is installed in
    /// them once it has started.
    pub backends: Backends,
}

/// The host: the call path with every feature installed.
pub(crate) fn host(parts: &Parts, catalogs: Catalogs) -> anyhow::Result<(Arc<Toolhost>, Features)> {
    let Parts { config, store, .. } = *parts;
    let backends = backends(config, &catalogs)?;
    let scanner = secret_scanner(config, &backends);
    crate::log_redact::set(scanner.credentials.clone());
    let gate_policy = GatePolicy {
        ttl: config.gate_ttl,
        allow_self_approval: config.allow_self_approval,
        ..GatePolicy::default()
    };
    let runs = Runs::new(RunsConfig {
        store: store.clone(),
        catalog: Some(parts.live.clone()),
        limits: config.run_limits,
        artifact_ttl: config.results.artifact_ttl,
        wake: Arc::default(),
    });
    let authoring = Authoring::new(workspace(parts), runs.clone());
    let call_path = Toolhost::new(
        catalogs.everyone().clone(),
        store.clone(),
        parts.runtime.clone(),
        store.clone(),
    )
    .with_operators(config.operators.clone())
    .with_request_limits(config.request_limits)
    .with_scanner(scanner.answers)
    .with_artifacts(store.clone(), config.results)
    .with_backends(backends.clone())
    .with_entity_generations(Arc::new(crate::entity_generations::StoreGenerations(
        store.clone(),
    )))
    .with_gates(store.clone(), gate_policy.clone())
    .with_checkpoints(store.clone())
    .with_claims(runs.claims())
    .with_update_relay(Arc::new(crate::resource_relay::StoreRelay::new(
        store.clone(),
        crate::replica::replica_id(),
    )));
    let served: Arc<OnceLock<Weak<Toolhost>>> = Arc::default();
    let features = [
        decisions(config, store, &gate_policy, tool_permission(&served)),
        runs.host_tools(Some(authoring.clone() as Arc<dyn Sessions>)),
        authoring.host_tools(),
        toolhost_discovery::host_tools(Arc::new(toolhost_mcp::tool_json)),
        toolhost_toolsets::host_tools(store.clone()),
    ];
    let host = (features.into_iter().flatten()).try_fold(call_path, Toolhost::with_host_tool)?;
    // Every tenant's catalog, now that the features claiming tools are in.
    host.serve_catalogs(catalogs);
    let host = Arc::new(host);
    let _ = served.set(Arc::downgrade(&host));
    let features = Features {
        runs,
        authoring,
        backends,
    };
    Ok((host, features))
}

/// People's decisions: approvals, plugin reviews (the operators') and what
/// a tenant sees of the catalog, and checkpoints.
fn decisions(
    config: &Config,
    store: &Arc<Store>,
    gates: &GatePolicy,
    tool_permission: ToolPermission,
) -> Vec<Arc<dyn HostTool>> {
    let s = store;
    vec![
        Arc::new(ListPendingApprovals::new(
            s.clone(),
            s.clone(),
            gates.clone(),
            tool_permission,
        )),
        Arc::new(DecideApproval::new(s.clone(), gates.clone())),
        Arc::new(ListPluginReviews::new(s.clone())),
        Arc::new(DecidePluginReview::new(
            s.clone(),
            config.allow_self_approval,
            known_tenants(s),
        )),
        Arc::new(RollbackPlugin::new(s.clone())),
        Arc::new(PinPlugin::new(s.clone(), known_tenants(s))),
        Arc::new(ListCatalogChanges::new(s.clone())),
        Arc::new(ListCheckpoints::new(s.clone())),
        Arc::new(DecideCheckpoint::new(s.clone(), gates.clone())),
    ]
}

fn workspace(parts: &Parts) -> WorkspaceConfig {
    WorkspaceConfig {
        store: parts.store.clone(),
        catalog: Some(parts.live.clone()),
        intake: parts.intake.clone(),
        upload_ttl: DEFAULT_UPLOAD_TTL,
        upload_quota: parts.config.upload_quota,
    }
}

/// The store's tenants, for the decisions that name some.
fn known_tenants(store: &Arc<Store>) -> KnownTenants {
    let store = store.clone();
    Arc::new(move || {
        let store = store.clone();
        Box::pin(async move { store.tenants().await.map_err(|e| e.to_string()) })
    })
}

/// The permission a tool of the served catalog needs, for the approvals
/// list (a gate is listed only to who may see its tool). The host is made
/// after its tools, so `served` is filled in once it exists.
fn tool_permission(served: &Arc<OnceLock<Weak<Toolhost>>>) -> ToolPermission {
    let served = served.clone();
    Arc::new(move |tenant: &str, name: &str| {
        let host = served.get()?.upgrade()?;
        host.catalog(tenant)
            .lookup(name)
            .map(|t| t.spec().permission.clone())
    })
}

/// The operator's backends; a plugin declaring one the configuration does
/// not name is served, and its requests to it refused.
fn backends(config: &Config, catalogs: &Catalogs) -> anyhow::Result<Backends> {
    use anyhow::Context;
    let backends = Backends::new(config.backends.clone()).context("configuring backends")?;
    let mut warned = std::collections::BTreeSet::new();
    let plugins = catalogs.all().flat_map(|c| c.plugins());
    for plugin in
        plugins.filter(|p| warned.insert((p.manifest.plugin.name.to_string(), p.revision.clone())))
    {
        for name in plugin.manifest.backends.keys() {
            if !backends.is_configured(name) {
                tracing::warn!(plugin = %plugin.manifest.plugin.name, backend = %name,
                    "the plugin declares a backend the configuration does not name: its requests to it are refused");
            }
        }
    }
    Ok(backends)
}

/// The scanners secrets are caught with: `credentials` (the built-in
/// patterns and every backend's secret) for log lines; `answers`, the same
/// plus the host's own paths (plugin and cache directories, the SQLite
/// file, the working and home directories), for what leaves through MCP.
struct SecretScanners {
    credentials: Scanner,
    answers: Scanner,
}

fn secret_scanner(config: &Config, backends: &Backends) -> SecretScanners {
    let credentials = backends
        .secrets()
        .iter()
        .fold(Scanner::new(), |s, secret| s.with_secret(secret.expose()));
    let sqlite_file = config
        .database_url
        .strip_prefix("sqlite://")
        .or_else(|| config.database_url.strip_prefix("sqlite:"))
        .map(|rest| PathBuf::from(rest.split('?').next().unwrap_or(rest)));
    let paths = [
        config.plugins.clone(),
        config.cache_dir.clone(),
        sqlite_file,
        std::env::current_dir().ok(),
        std::env::var_os("HOME").map(PathBuf::from),
    ];
    let answers = paths
        .into_iter()
        .flatten()
        .flat_map(|p| {
            // Both as configured and as resolved: either may be quoted.
            let resolved = std::fs::canonicalize(&p).ok();
            [Some(p), resolved]
        })
        .flatten()
        .filter(|p| p.is_absolute())
        .fold(credentials.clone(), |s, p| s.with_host_path(&p));
    SecretScanners {
        credentials,
        answers,
    }
}
