//! The host's HTTP edges, composed and served: MCP at `/mcp`, the
//! authorization server, the console, catalog submissions and workspace
//! uploads behind the host's own listener; and the graceful stop (stop
//! accepting, let calls in flight finish and be audited, then close MCP
//! sessions).

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use metrics_exporter_prometheus::PrometheusHandle;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use toolhost_artifacts::ArtifactStore;
use toolhost_auth::{AuthConfig, AuthServer};
use toolhost_invoke::Toolhost;
use toolhost_policy::PolicyStore;
use toolhost_storage::Store;

use crate::background::Background;
use crate::compose::{Features, Parts};
use crate::config::Config;
use crate::http::{Guard, Ops, router};
use crate::rate_limit::RateLimiter;

/// After the last call in flight is answered, how long its response gets to
/// reach the wire before MCP sessions (and their streams) are closed.
const FLUSH: Duration = Duration::from_millis(100);

/// How often signing keys are re-read, idle clients expired and ended
/// rate-limit windows purged.
const MAINTENANCE: Duration = Duration::from_secs(60);

/// Serves `host` over HTTP until `stopping` (SIGINT or SIGTERM), then
/// drains it.
pub(crate) async fn serve(
    parts: &Parts<'_>,
    host: Arc<Toolhost>,
    features: &Features,
    metrics: PrometheusHandle,
    background: &mut Background,
    stopping: CancellationToken,
) -> anyhow::Result<()> {
    let (config, store) = (parts.config, parts.store);
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("listening on {}", config.listen))?;
    let addr = listener.local_addr()?;
    let (auth, providers) = start_auth(config, addr, store.clone()).await?;
    // Backends told who acts get assertions signed with the host's own
    // assertion keys (issue 46); until now their requests were refused.
    features.backends.assert_with(auth.backend_assertions());
    // Token-exchange backends get each person's token from their provider,
    // the host proving who acts with a subject token of the same keys.
    features
        .backends
        .exchange_with(Arc::new(toolhost_sso::PersonTokens::new(
            providers,
            auth.backend_assertions(),
            store.clone() as Arc<dyn toolhost_auth::AuthStore>,
        )));
    for (backend, x) in features.backends.exchanges() {
        let (provider, audience) = (&x.provider, &x.audience);
        tracing::info!(backend, provider, audience, "token-exchange backend");
    }
    let issuer = issuer(config, addr);
    let connections = person_connections(config, &issuer, store, features)?;
    let demo_password = match config.seed_demo {
        true => crate::demo::seed_demo(store).await?,
        false => None,
    };
    background.spawn(auth.clone().maintain_every(MAINTENANCE));
    background.spawn(purge_artifacts_every(store.clone(), MAINTENANCE));
    let edge = Edge {
        accepting: Arc::new(AtomicBool::new(true)),
        sessions: CancellationToken::new(),
        guard: Guard::new(config.max_request_bytes),
    };
    let app = app(
        parts,
        &host,
        features,
        (&auth, connections),
        &edge,
        metrics,
        background,
    );
    let app = app.await?;
    announce(config, addr, &host, &auth, demo_password)?;
    let closing = CancellationToken::new();
    let connections = crate::connections::Connections::new(
        config.connection_caps,
        config.trusted_proxies.clone(),
    );
    let serving = crate::listen::serve(
        listener,
        app,
        config.connection_limits,
        connections,
        closing.clone(),
    );
    let drain = edge.drain(config, host, stopping, closing);
    tokio::join!(serving, drain);
    Ok(())
}

/// What the edges share with the graceful stop.
struct Edge {
    /// Whether `/readyz` says ready.
    accepting: Arc<AtomicBool>,
    /// Closes the MCP sessions, last.
    sessions: CancellationToken,
    /// The body guard, which knows the requests in flight.
    guard: Guard,
}

impl Edge {
    /// Stopping: `/readyz` fails at once; the listener stays open for the
    /// drain delay (a load balancer's health checks notice and stop sending
    /// here), then closes, and calls in flight get the grace period.
    async fn drain(
        self,
        config: &Config,
        host: Arc<Toolhost>,
        stopping: CancellationToken,
        closing: CancellationToken,
    ) {
        let (grace, delay) = (config.shutdown_grace, config.drain_delay);
        stopping.cancelled().await;
        self.accepting.store(false, Ordering::Relaxed);
        if !delay.is_zero() {
            tracing::info!(?delay, "not ready; serving on while the balancer notices");
            tokio::time::sleep(delay).await;
        }
        closing.cancel();
        let answered = async {
            host.drain().await;
            self.guard.drain().await;
        };
        if tokio::time::timeout(grace, answered).await.is_err() {
            tracing::warn!(
                ?grace,
                "calls still in flight at the end of the grace period"
            );
        }
        tokio::time::sleep(FLUSH).await;
        self.sessions.cancel();
    }
}

/// People's own connections, if a backend takes them: the connector the
/// backends ask for each person's token, and the console's pages.
fn person_connections(
    config: &Config,
    issuer: &str,
    store: &Arc<Store>,
    features: &Features,
) -> anyhow::Result<Option<Arc<toolhost_sso::connections::Connections>>> {
    let Some(keys) = config.connections.keys.clone() else {
        return Ok(None);
    };
    let connections = toolhost_sso::connections::Connections::new(
        issuer,
        config.connections.backends.clone(),
        keys,
        store.clone() as Arc<dyn toolhost_auth::AuthStore>,
    )
    .map_err(|e| anyhow::anyhow!("people's connections: {e}"))?;
    let connections = Arc::new(connections);
    features.backends.connect_with(connections.clone());
    for backend in connections.backend_names() {
        let callback = connections.callback_url(&backend);
        tracing::info!(backend, callback, "connection backend");
    }
    Ok(Some(connections))
}

/// Every route of the host, with the layers each needs.
async fn app(
    parts: &Parts<'_>,
    host: &Arc<Toolhost>,
    features: &Features,
    (auth, connections): (
        &Arc<AuthServer>,
        Option<Arc<toolhost_sso::connections::Connections>>,
    ),
    edge: &Edge,
    metrics: PrometheusHandle,
    background: &mut Background,
) -> anyhow::Result<axum::Router> {
    let (config, store) = (parts.config, parts.store);
    let ops = ops(config, store, edge, metrics);
    if let Some(at) = config.metrics_listen {
        let bound =
            crate::prometheus::serve(at, crate::http::metrics_router(ops.clone()), background)
                .await?;
        println!("Metrics on: http://{bound}/metrics");
    }
    let mcp = Mcp::new(config, host, features, store, edge).await?;
    let app = router(ops, mcp.service, edge.guard.clone(), auth.clone());
    let console = (auth.clone(), connections);
    let app = crate::http::with_console(app, console, host.clone(), store.clone())?;
    let submissions = crate::catalog_http::CatalogHttp {
        store: store.clone(),
        runtime: parts.runtime.clone(),
        opts: parts.intake.clone(),
        host: host.clone(),
    };
    let app = app.merge(crate::catalog_http::routes(submissions, auth.clone()));
    let app = app.merge(crate::workspace_http::routes(
        host.clone(),
        features.authoring.clone(),
        auth.clone(),
    ));
    let limiter = RateLimiter::new(config.rate_limits, store.clone(), host.clone());
    background.spawn(limiter.clone().purge_every(MAINTENANCE));
    Ok(with_layers(app, config, limiter, mcp.owners, mcp.events))
}

/// The operations routes' state: the store, the metrics, readiness, and
/// this replica's name.
fn ops(config: &Config, store: &Arc<Store>, edge: &Edge, metrics: PrometheusHandle) -> Ops {
    Ops {
        store: store.clone(),
        metrics,
        accepting: edge.accepting.clone(),
        dev_unsigned: config.dev_allow_unsigned,
        replica: axum::http::HeaderValue::from_str(&crate::replica::replica_id())
            .unwrap_or_else(|_| axum::http::HeaderValue::from_static("replica")),
    }
}

/// `/mcp`: the MCP service, and what its layers consult besides the rate
/// limiter: the session table and the event store.
struct Mcp {
    service: StreamableHttpService<toolhost_mcp::McpServer, LocalSessionManager>,
    owners: crate::mcp_sessions::SessionOwners,
    events: Arc<toolhost_mcp::MemoryEvents>,
}

impl Mcp {
    async fn new(
        config: &Config,
        host: &Arc<Toolhost>,
        features: &Features,
        store: &Arc<Store>,
        edge: &Edge,
    ) -> anyhow::Result<Mcp> {
        let mcp_config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(config.allowed_hosts.clone())
            .with_allowed_origins(config.allowed_origins.clone())
            .enforce_origin_validation()
            .with_json_response(true)
            .with_max_request_body_bytes(config.max_request_bytes)
            .with_cancellation_token(edge.sessions.clone());
        let states = Arc::new(crate::request_states::StoreStates(store.clone()));
        let server = toolhost_mcp::McpServer::shared(host.clone(), states)
            .await
            .map_err(|e| anyhow::anyhow!("loading the request-state keys: {e}"))?
            .with_runs(features.runs.clone())
            .with_discovery(config.discovery.clone());
        let events = Arc::new(toolhost_mcp::MemoryEvents::default());
        let session_manager = Arc::new(
            LocalSessionManager::default()
                .with_event_store(Arc::new(toolhost_mcp::SharedEvents(events.clone()))),
        );
        let owners = crate::mcp_sessions::SessionOwners::new(
            config.session_caps,
            Some(session_manager.clone()),
        );
        Ok(Mcp {
            service: toolhost_mcp::service_with(server, mcp_config, session_manager),
            owners,
            events,
        })
    }
}

/// `app` with every answer's headers, and with the rate limiter, the
/// session table and the event store in each request's extensions for
/// `/mcp`'s layers; outer layers only where they have work (a trusted
/// proxy, an exporter).
fn with_layers(
    app: axum::Router,
    config: &Config,
    limiter: RateLimiter,
    owners: crate::mcp_sessions::SessionOwners,
    events: Arc<toolhost_mcp::MemoryEvents>,
) -> axum::Router {
    // One layer of the router for all four: each `Router::layer` boxes
    // every route's service and future again.
    let mut app = app.layer(
        tower::ServiceBuilder::new()
            .map_response(crate::http::answer_headers)
            .layer(axum::Extension(limiter))
            .layer(axum::Extension(owners))
            .layer(axum::Extension(events)),
    );
    if !config.trusted_proxies.is_empty() {
        app = app.layer(axum::middleware::from_fn_with_state(
            Arc::new(config.trusted_proxies.clone()),
            crate::forwarded::client_addr,
        ));
    }
    if crate::telemetry::exporting() {
        app = app.layer(axum::middleware::from_fn(crate::telemetry::request_span));
    }
    app
}

/// Tells the operator where everything is.
fn announce(
    config: &Config,
    addr: SocketAddr,
    host: &Toolhost,
    auth: &AuthServer,
    demo_password: Option<(String, bool)>,
) -> anyhow::Result<()> {
    let catalog = host.catalogs().everyone().clone();
    tracing::info!(%addr, tools = catalog.tools().count(), catalog = %catalog.version(),
        issuer = %auth.config().issuer, "toolhost serving");
    println!("Listening on: {addr}");
    println!("MCP endpoint: {}", auth.config().resource());
    println!("OAuth issuer: {}", auth.config().issuer);
    println!("Admin console: {}/admin", auth.config().issuer);
    match config.operators.name() {
        Some(t) => println!("Operator tenant: {t} (reviews the catalog for every tenant)"),
        None => println!(
            "Operator tenant: none (nobody reviews the catalog over MCP or in the console)"
        ),
    }
    match demo_password {
        Some((_, true)) => println!("Demo login: user demo, password from $TOOLHOST_DEMO_PASSWORD"),
        Some((p, false)) => println!("Demo login: user demo, password {p}"),
        None if config.seed_demo => {
            println!("Demo login: user demo (created earlier; password unchanged)")
        }
        None => {}
    }
    std::io::stdout().flush()?;
    Ok(())
}

/// The authorization server: issuer from the configuration or the bound
/// address, keys loaded (or made) from the store; and the sign-in
/// providers it was given.
/// The host's public address: its OAuth issuer, and the base of its pages.
fn issuer(config: &Config, addr: SocketAddr) -> String {
    (config.public_url.clone()).unwrap_or_else(|| format!("http://{addr}"))
}

async fn start_auth(
    config: &Config,
    addr: SocketAddr,
    store: Arc<Store>,
) -> anyhow::Result<(Arc<AuthServer>, Vec<Arc<toolhost_sso::OidcProvider>>)> {
    let mut auth = AuthConfig::new(issuer(config, addr));
    if let Some(ttl) = config.access_token_ttl {
        auth.access_ttl = ttl;
    }
    if let Some(ttl) = config.refresh_token_ttl {
        auth.refresh_ttl = ttl;
    }
    if let Some(age) = config.grant_max_age {
        auth.grant_max_age = age;
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
    let mut providers = Vec::new();
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
    let upstream = providers.iter().cloned();
    let sso = toolhost_auth::upstream::Sso {
        providers: upstream
            .map(|p| p as Arc<dyn toolhost_auth::upstream::UpstreamIdentity>)
            .collect(),
        audit: Some(Arc::new(crate::sso_config::StoreAudit(store.clone()))),
    };
    let auth = AuthServer::start_with_sso(auth, store, sso).await;
    Ok((
        auth.context("starting the authorization server")?,
        providers,
    ))
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

/// Cancels `stopping` on SIGINT or SIGTERM.
pub(crate) async fn stop_on_signal(stopping: CancellationToken) {
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
