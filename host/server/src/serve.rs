//! `toolhost serve`: wire the rooms together, listen, and shut down
//! gracefully (stop accepting, let calls in flight finish and be audited,
//! then close MCP sessions).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use tokio_util::sync::CancellationToken;
use toolhost_artifacts::ArtifactStore;
use toolhost_auth::{AuthConfig, AuthServer};
use toolhost_backend::Backends;
use toolhost_catalog::LiveCatalog;
use toolhost_decisions::{
    DecideApproval, DecideCheckpoint, DecidePluginReview, ListCheckpoints, ListPendingApprovals,
    ListPluginReviews, RollbackPlugin,
};
use toolhost_invoke::{
    CancelExploration, CreateAuthoringSession, DEFAULT_UPLOAD_TTL, GatePolicy, GetAuthoringSession,
    GetExplorationResult, GetRevisionDiff, ListAuthoringSessions, ListExplorations,
    PromoteRevision, ProposeRevision, RunsConfig, StartExploration, Toolhost, WorkspaceConfig,
};
use toolhost_policy::{PolicyStore, PolicyStoreError};
use toolhost_runtime::{Runtime, RuntimeConfig};
use toolhost_secrets::Scanner;
use toolhost_storage::Store;

use crate::config::Config;
use crate::http::{Guard, Ops, router};
use crate::rate_limit::RateLimiter;

/// After the last call in flight is answered, how long its response gets to
/// reach the wire before MCP sessions (and their streams) are closed.
const FLUSH: Duration = Duration::from_millis(100);

/// How often signing keys are re-read, idle clients expired and ended
/// rate-limit windows purged.
const MAINTENANCE: Duration = Duration::from_secs(60);

/// Latency buckets (seconds): sandbox calls take tens of microseconds,
/// tools that wait on backends take seconds.
const LATENCY_BUCKETS: [f64; 12] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 10.0,
];

/// How often the metrics recorder folds histogram samples into their
/// buckets. It keeps every sample until then (or until a scrape), so a host
/// nobody scrapes would grow by each call's samples (`bench footprint`
/// found it: about 2 MiB per 100,000 calls).
const METRICS_UPKEEP: Duration = Duration::from_secs(5);

/// Runs the host until SIGINT or SIGTERM.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let metrics = install_metrics()?;
    let upkeep = tokio::spawn(metrics_upkeep_every(metrics.clone(), METRICS_UPKEEP));
    let runtime_config = RuntimeConfig {
        slots: config.slots,
        cache_dir: config.cache_dir.clone(),
        compile_workers: config.compile_workers,
        compile_share: config.compile_share,
        ..RuntimeConfig::default()
    };
    let engine_sha256 = toolhost_types::Digest::of(format!("{runtime_config:?}").as_bytes());
    let runtime = Arc::new(Runtime::new(runtime_config)?);
    let store = Arc::new(
        Store::connect_with(
            &config.database_url,
            &toolhost_storage::StoreOptions {
                acquire_timeout: config.database_timeout,
                ..toolhost_storage::StoreOptions::default()
            },
        )
        .await
        .with_context(|| format!("opening the store {}", redact(&config.database_url)))?,
    );
    if config.dev_allow_unsigned {
        tracing::warn!(
            "DEV MODE: unsigned plugin revisions are accepted and served (loopback only); never run a shared host like this"
        );
        record_dev_mode(&store).await?;
    }
    let intake = crate::catalog_cli::intake_options(
        config.dev_allow_unsigned,
        config.sigstore_trusted_root.as_deref(),
    )?;
    if let Some(dir) = &config.plugins {
        // Idempotent, so replicas starting together may each run it: the
        // loser of a decision both made tries again and finds it done.
        let mut tries = 0;
        let synced = loop {
            tries += 1;
            match crate::catalog_cli::sync(&store, &runtime, dir, &intake, true, "serve").await {
                Ok(synced) => break synced,
                Err(e) if tries < SYNC_TRIES => {
                    tracing::warn!(error = %e, "syncing the plugin directory; trying again");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("syncing the plugin directory {}", dir.display())
                    });
                }
            }
        };
        for (plugin, revision, what) in &synced.done {
            tracing::info!(%plugin, %revision, what, "plugin directory synced");
        }
        for why in &synced.refused {
            tracing::error!(error = %why, "plugin refused; serving the others");
        }
    }
    let live = Arc::new(LiveCatalog::new(store.clone(), runtime.clone(), &intake));
    let built = live
        .build()
        .await
        .context("building the catalog from the store")?;
    let loaded_catalog = built.catalog;
    let tools = loaded_catalog.tools().count();
    let backends = Backends::new(config.backends.clone()).context("configuring backends")?;
    for plugin in loaded_catalog.plugins() {
        for name in plugin.manifest.backends.keys() {
            if !backends.is_configured(name) {
                tracing::warn!(plugin = %plugin.manifest.plugin.name, backend = %name,
                    "the plugin declares a backend the configuration does not name: its requests to it are refused");
            }
        }
    }
    let scanner = secret_scanner(&config, &backends);
    crate::log_redact::set(scanner.credentials.clone());
    let catalog = Arc::new(loaded_catalog);
    let gate_policy = GatePolicy {
        ttl: config.gate_ttl,
        allow_self_approval: config.allow_self_approval,
        ..GatePolicy::default()
    };
    let runs = RunsConfig {
        store: store.clone(),
        catalog: Some(live.clone()),
        limits: config.run_limits,
        artifact_ttl: config.results.artifact_ttl,
        wake: Arc::default(),
    };
    let permissions: Arc<std::sync::OnceLock<std::sync::Weak<Toolhost>>> = Arc::default();
    let lookup = permissions.clone();
    let tool_permission = Arc::new(move |name: &str| {
        let host = lookup.get()?.upgrade()?;
        host.catalog()
            .lookup(name)
            .map(|t| t.spec().permission.clone())
    });
    let host = Arc::new(
        Toolhost::new(catalog, store.clone(), runtime.clone(), store.clone())
            .with_request_limits(config.request_limits)
            .with_scanner(scanner.answers)
            .with_artifacts(store.clone(), config.results)
            .with_backends(backends)
            .with_entity_generations(Arc::new(crate::entity_generations::StoreGenerations(
                store.clone(),
            )))
            .with_gates(store.clone(), gate_policy.clone())
            .with_host_tool(Arc::new(ListPendingApprovals::new(
                store.clone(),
                store.clone(),
                gate_policy.clone(),
                tool_permission,
            )))?
            .with_host_tool(Arc::new(DecideApproval::new(
                store.clone(),
                gate_policy.clone(),
            )))?
            .with_host_tool(Arc::new(ListPluginReviews::new(store.clone())))?
            .with_host_tool(Arc::new(DecidePluginReview::new(
                store.clone(),
                config.allow_self_approval,
            )))?
            .with_host_tool(Arc::new(RollbackPlugin::new(store.clone())))?
            .with_checkpoints(store.clone())
            .with_host_tool(Arc::new(ListCheckpoints::new(store.clone())))?
            .with_host_tool(Arc::new(DecideCheckpoint::new(store.clone(), gate_policy)))?
            .with_runs(runs.clone())
            .with_host_tool(Arc::new(StartExploration::default()))?
            .with_host_tool(Arc::new(GetExplorationResult::default()))?
            .with_host_tool(Arc::new(CancelExploration::default()))?
            .with_host_tool(Arc::new(ListExplorations::default()))?
            .with_workspace(WorkspaceConfig {
                store: store.clone(),
                catalog: Some(live.clone()),
                intake: intake.clone(),
                upload_ttl: DEFAULT_UPLOAD_TTL,
                upload_quota: config.upload_quota,
            })
            .with_host_tool(Arc::new(CreateAuthoringSession::default()))?
            .with_host_tool(Arc::new(GetAuthoringSession::default()))?
            .with_host_tool(Arc::new(ListAuthoringSessions::default()))?
            .with_host_tool(Arc::new(ProposeRevision::default()))?
            .with_host_tool(Arc::new(GetRevisionDiff::default()))?
            .with_host_tool(Arc::new(PromoteRevision::default()))?
            .with_update_relay(Arc::new(crate::resource_relay::StoreRelay::new(
                store.clone(),
                crate::runs_cli::replica_id(),
            ))),
    );

    let _ = permissions.set(Arc::downgrade(&host));
    let catalog_poll = tokio::spawn(follow_catalog(live, host.clone(), store.clone()));
    let relayed_updates = tokio::spawn(crate::resource_relay::follow(
        store.clone(),
        Arc::downgrade(&host),
        crate::runs_cli::replica_id(),
    ));
    let workers = CancellationToken::new();
    let worker_id = crate::runs_cli::worker_id(config.listen, config.worker_only);
    crate::runs_cli::spawn_workers(
        &config,
        &host,
        &store,
        &runs,
        worker_id,
        engine_sha256.to_string(),
        workers.clone(),
    );
    if config.worker_only {
        println!(
            "toolhost worker: executing exploration runs, {} at once (Ctrl-C stops)",
            config.run_workers
        );
        std::io::stdout().flush()?;
        let stopping = CancellationToken::new();
        stop_on_signal(stopping.clone()).await;
        workers.cancel();
        catalog_poll.abort();
        relayed_updates.abort();
        store.close().await;
        return Ok(());
    }

    let sessions = CancellationToken::new();
    let mcp_config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(config.allowed_hosts.clone())
        .with_allowed_origins(config.allowed_origins.clone())
        .enforce_origin_validation()
        .with_json_response(true)
        .with_max_request_body_bytes(config.max_request_bytes)
        .with_cancellation_token(sessions.clone());
    let accepting = Arc::new(AtomicBool::new(true));
    let ops = Ops {
        store: store.clone(),
        metrics,
        accepting: accepting.clone(),
        dev_unsigned: config.dev_allow_unsigned,
        replica: axum::http::HeaderValue::from_str(&crate::runs_cli::replica_id())
            .unwrap_or_else(|_| axum::http::HeaderValue::from_static("replica")),
    };
    let guard = Guard::new(config.max_request_bytes);

    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("listening on {}", config.listen))?;
    let addr = listener.local_addr()?;
    let auth = start_auth(&config, addr, store.clone()).await?;
    let demo_password = if config.seed_demo {
        seed_demo(&store).await?
    } else {
        None
    };
    let maintenance = tokio::spawn(auth.clone().maintain_every(MAINTENANCE));
    let limiter = RateLimiter::new(config.rate_limits, store.clone(), host.clone());
    let purge = tokio::spawn(limiter.clone().purge_every(MAINTENANCE));
    let artifacts = tokio::spawn(purge_artifacts_every(store.clone(), MAINTENANCE));
    let states = Arc::new(crate::request_states::StoreStates(store.clone()));
    let mcp = toolhost_mcp::McpServer::shared(host.clone(), states)
        .await
        .map_err(|e| anyhow::anyhow!("loading the request-state keys: {e}"))?;
    let events = Arc::new(toolhost_mcp::MemoryEvents::default());
    let session_manager = Arc::new(
        rmcp::transport::streamable_http_server::session::local::LocalSessionManager::default()
            .with_event_store(events.clone()),
    );
    let owners =
        crate::mcp_sessions::SessionOwners::new(config.session_caps, Some(session_manager.clone()));
    let metrics_served = match config.metrics_listen {
        Some(at) => Some(serve_metrics(at, crate::http::metrics_router(ops.clone())).await?),
        None => None,
    };
    let app = router(
        ops,
        toolhost_mcp::service_with(mcp, mcp_config, session_manager),
        guard.clone(),
        auth.clone(),
    );
    let app = crate::http::with_console(app, auth.clone(), host.clone(), store.clone())?;
    let submissions = crate::catalog_http::CatalogHttp {
        store: store.clone(),
        runtime: runtime.clone(),
        opts: intake.clone(),
    };
    let app = app.merge(crate::catalog_http::routes(submissions, auth.clone()));
    let app = app.merge(crate::workspace_http::routes(host.clone(), auth.clone()));
    tracing::info!(%addr, tools, catalog = %host.catalog().version(), issuer = %auth.config().issuer, "toolhost serving");
    if let Some((at, _)) = &metrics_served {
        println!("Metrics on: http://{at}/metrics");
    }
    println!("Listening on: {addr}");
    println!("MCP endpoint: {}", auth.config().resource());
    println!("OAuth issuer: {}", auth.config().issuer);
    println!("Admin console: {}/admin", auth.config().issuer);
    match demo_password {
        Some((_, true)) => println!("Demo login: user demo, password from $TOOLHOST_DEMO_PASSWORD"),
        Some((p, false)) => println!("Demo login: user demo, password {p}"),
        None if config.seed_demo => {
            println!("Demo login: user demo (created earlier; password unchanged)")
        }
        None => {}
    }
    std::io::stdout().flush()?;

    let stopping = CancellationToken::new();
    tokio::spawn(stop_on_signal(stopping.clone()));
    // Stopping: `/readyz` fails at once; the listener stays open for the
    // drain delay (a load balancer's health checks notice and stop sending
    // here), then closes, and calls in flight get the grace period.
    let closing = CancellationToken::new();
    let drain = {
        let (stopping, closing, host, guard, grace, delay) = (
            stopping.clone(),
            closing.clone(),
            host.clone(),
            guard.clone(),
            config.shutdown_grace,
            config.drain_delay,
        );
        async move {
            stopping.cancelled().await;
            accepting.store(false, Ordering::Relaxed);
            if !delay.is_zero() {
                tracing::info!(?delay, "not ready; serving on while the balancer notices");
                tokio::time::sleep(delay).await;
            }
            closing.cancel();
            let answered = async {
                host.drain().await;
                guard.drain().await;
            };
            if tokio::time::timeout(grace, answered).await.is_err() {
                tracing::warn!(
                    ?grace,
                    "calls still in flight at the end of the grace period"
                );
            }
            tokio::time::sleep(FLUSH).await;
            sessions.cancel();
        }
    };
    // Every answer's headers; and `/mcp`'s rate-limit, session and replay
    // layers find the limiter, the session table and the event store in
    // the request's extensions. One layer of the router for all four: each
    // `Router::layer` boxes every route's service and future again.
    let mut app = app.layer(
        tower::ServiceBuilder::new()
            .map_response(crate::http::answer_headers)
            .layer(axum::Extension(limiter))
            .layer(axum::Extension(owners))
            .layer(axum::Extension(events)),
    );
    // Each outer layer only where it has work: a trusted proxy, an exporter.
    if !config.trusted_proxies.is_empty() {
        app = app.layer(axum::middleware::from_fn_with_state(
            Arc::new(config.trusted_proxies.clone()),
            crate::forwarded::client_addr,
        ));
    }
    if crate::telemetry::exporting() {
        app = app.layer(axum::middleware::from_fn(crate::telemetry::request_span));
    }
    let connections = crate::connections::Connections::new(
        config.connection_caps,
        config.trusted_proxies.clone(),
    );
    let serve = crate::listen::serve(
        listener,
        app,
        config.connection_limits,
        connections,
        closing.clone(),
    );
    tokio::join!(serve, drain);
    workers.cancel();
    maintenance.abort();
    catalog_poll.abort();
    relayed_updates.abort();
    purge.abort();
    artifacts.abort();
    upkeep.abort();
    if let Some((_, task)) = metrics_served {
        task.abort();
    }
    store.close().await;
    tracing::info!("toolhost stopped");
    Ok(())
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

/// How often a replica looks whether the store's catalog moved on: a
/// decision on any replica is served by all within about this. On
/// PostgreSQL the database also pushes each change (`LISTEN`), and the poll
/// only covers a lost notification.
const CATALOG_POLL: Duration = Duration::from_millis(500);
/// The poll when changes are pushed.
const CATALOG_POLL_LISTENING: Duration = Duration::from_secs(5);

/// Serves each new catalog the store holds, as soon as a notification or a
/// poll shows its generation moved. A build that fails keeps the catalog
/// served now.
async fn follow_catalog(live: Arc<LiveCatalog>, host: Arc<Toolhost>, store: Arc<Store>) {
    let mut listener = match store.listen_catalog().await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "not listening for catalog changes; polling");
            None
        }
    };
    let period = if listener.is_some() {
        CATALOG_POLL_LISTENING
    } else {
        CATALOG_POLL
    };
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // A listener lost with its connection (the store restarted) is opened
    // again at the next poll that finds the store answering.
    let mut lost = false;
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            heard = pushed(&mut listener) => {
                if let Err(e) = heard {
                    tracing::warn!(error = %e, "catalog notifications failed; polling");
                    listener = None;
                    lost = true;
                    tick = tokio::time::interval(CATALOG_POLL);
                }
            }
        }
        if lost && let Ok(Some(again)) = store.listen_catalog().await {
            tracing::info!("listening for catalog changes again");
            listener = Some(again);
            lost = false;
            tick = tokio::time::interval(CATALOG_POLL_LISTENING);
        }
        match live.generation().await {
            Ok(g) if g == host.catalog().generation() => continue,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "reading the catalog's generation failed");
                continue;
            }
        }
        match live.build().await {
            Ok(built) => {
                let catalog = Arc::new(built.catalog);
                tracing::info!(version = %catalog.version(), generation = catalog.generation(),
                    tools = catalog.tools().count(), refused = built.refused.len(), "serving a new catalog");
                host.serve_catalog(catalog);
            }
            Err(e) => {
                tracing::error!(error = %e, "building the new catalog failed; serving the old one")
            }
        }
    }
}

/// The next pushed change; never, without a listener.
async fn pushed(
    listener: &mut Option<toolhost_storage::CatalogListener>,
) -> Result<(), toolhost_storage::StorageError> {
    match listener {
        Some(l) => l.changed().await,
        None => std::future::pending().await,
    }
}

/// How often starting replicas try to sync the plugin directory.
const SYNC_TRIES: u32 = 3;

/// Dev mode leaves a row in the audit trail each time the host starts with it.
async fn record_dev_mode(store: &Store) -> anyhow::Result<()> {
    use toolhost_audit::AuditSink;
    let no_arguments = toolhost_audit::argument_digest(&serde_json::json!({}));
    let event = toolhost_audit::AuditEvent {
        plugin: Some("(host)".into()),
        ..toolhost_audit::AuditEvent::new(
            "(operator)",
            "(operator)",
            "dev_allow_unsigned",
            no_arguments,
        )
    };
    store.record(&event).await.context("auditing dev mode")
}

/// Serves `app` (metrics) on `at`: the address bound and the serving task.
async fn serve_metrics(
    at: SocketAddr,
    app: axum::Router,
) -> anyhow::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(at)
        .await
        .with_context(|| format!("listening for metrics on {at}"))?;
    let bound = listener.local_addr()?;
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "serving metrics failed");
        }
    });
    Ok((bound, task))
}

/// Folds the metrics recorder's samples into their buckets every `period`.
async fn metrics_upkeep_every(metrics: PrometheusHandle, period: Duration) {
    let mut tick = tokio::time::interval(period);
    loop {
        tick.tick().await;
        metrics.run_upkeep();
    }
}

/// Deletes expired artifacts every `period`.
async fn purge_artifacts_every(store: Arc<Store>, period: Duration) {
    let mut tick = tokio::time::interval(period);
    loop {
        tick.tick().await;
        let now = toolhost_invoke::millis(std::time::SystemTime::now());
        match ArtifactStore::purge(&*store, now).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(purged = n, "expired artifacts deleted"),
            Err(e) => tracing::warn!(error = %e, "purging expired artifacts failed"),
        }
    }
}

/// The demo tenant, its admin role and the user `demo` holding it, unless
/// they exist: the password made (and whether it came from
/// `$TOOLHOST_DEMO_PASSWORD`), or `None` when `demo` existed already.
pub(crate) async fn seed_demo(store: &Store) -> anyhow::Result<Option<(String, bool)>> {
    let wanted = std::env::var("TOOLHOST_DEMO_PASSWORD")
        .ok()
        .filter(|p| !p.is_empty());
    let created = toolhost_auth::admin::seed_demo(store, wanted.as_deref())
        .await
        .context("seeding the demo user")?;
    seed_demo_admin(store).await?;
    Ok(created.map(|p| (p, wanted.is_some())))
}

/// The demo tenant's `admin` role (an admin role: every tool), held by `demo`.
async fn seed_demo_admin(store: &Store) -> anyhow::Result<()> {
    match PolicyStore::create_role(store, "demo", "admin", true).await {
        Ok(()) | Err(PolicyStoreError::Conflict { .. }) => {}
        Err(e) => return Err(e).context("seeding the demo admin role"),
    }
    let demo = toolhost_auth::AuthStore::user_by_name(store, "demo")
        .await
        .context("reading the demo user")?
        .context("the demo user is missing")?;
    PolicyStore::assign(store, "demo", "admin", &demo.id)
        .await
        .context("giving demo the admin role")?;
    Ok(())
}

/// The authorization server: issuer from the configuration or the bound
/// address, keys loaded (or made) from the store.
async fn start_auth(
    config: &Config,
    addr: SocketAddr,
    store: Arc<Store>,
) -> anyhow::Result<Arc<AuthServer>> {
    let issuer = config
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{addr}"));
    let mut auth = AuthConfig::new(issuer);
    if let Some(ttl) = config.access_token_ttl {
        auth.access_ttl = ttl;
    }
    if let Some(ttl) = config.code_ttl {
        auth.code_ttl = ttl;
    }
    if let Some(n) = config.registrations_per_minute {
        auth.registrations_per_minute = n;
    }
    if let Some(n) = config.logins_per_minute {
        auth.logins_per_minute = n;
    }
    if let Some(n) = config.authorizations_per_minute {
        auth.authorizations_per_minute = n;
    }
    if let Some(n) = config.max_pending_authorizations {
        auth.max_pending = n;
    }
    auth.password_login = config.password_login;
    let mut providers: Vec<Arc<dyn toolhost_auth::upstream::UpstreamIdentity>> = Vec::new();
    for p in &config.sso {
        let provider = toolhost_sso::OidcProvider::new(
            p.clone(),
            store.clone() as Arc<dyn toolhost_auth::AuthStore>,
            store.clone() as Arc<dyn PolicyStore>,
        )?;
        tracing::info!(
            provider = %p.name,
            issuer = %p.issuer,
            callback = %toolhost_auth::sso_callback_url(&auth.issuer, &p.name),
            "single sign-on provider"
        );
        providers.push(Arc::new(provider));
    }
    let sso = toolhost_auth::upstream::Sso {
        providers,
        audit: Some(Arc::new(crate::sso_config::StoreAudit(store.clone()))),
    };
    AuthServer::start_with_sso(auth, store, sso)
        .await
        .context("starting the authorization server")
}

fn install_metrics() -> anyhow::Result<PrometheusHandle> {
    Ok(PrometheusBuilder::new()
        .set_buckets(&LATENCY_BUCKETS)?
        .install_recorder()?)
}

async fn stop_on_signal(stopping: CancellationToken) {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! { _ = ctrl_c => {}, _ = term.recv() => {} }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
    tracing::info!("shutdown requested: finishing calls in flight");
    stopping.cancel();
}

/// A database URL without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn database_passwords_never_reach_messages() {
        assert_eq!(
            redact("postgres://app:s3cret@db:5432/x"),
            "postgres://app:***@db:5432/x"
        );
        assert_eq!(
            redact("sqlite://toolhost.db?mode=rwc"),
            "sqlite://toolhost.db?mode=rwc"
        );
    }
}
