//! `toolhost serve`: the host composed from its configuration (the store,
//! the runtime, the catalog, the call path with its features), its
//! background tasks started into one set, its HTTP edges served, and all of
//! it stopped in one place.

use std::io::Write;
use std::sync::Arc;

use anyhow::Context;
use toolhost_catalog::LiveCatalog;
use toolhost_runtime::{Runtime, RuntimeConfig};
use toolhost_storage::Store;

use crate::background::Background;
use crate::compose::Parts;
use crate::config::Config;

/// Runs the host until SIGINT or SIGTERM.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let mut background = Background::default();
    let metrics = crate::prometheus::install(&mut background)?;
    let (runtime, engine_sha256) = runtime(&config)?;
    let store = Arc::new(open_store(&config).await?);
    if config.dev_allow_unsigned {
        tracing::warn!(
            "DEV MODE: unsigned plugin revisions are accepted and served (loopback only); never run a shared host like this"
        );
        record_dev_mode(&store).await?;
    }
    let intake = crate::catalog_sync::intake_options(
        config.dev_allow_unsigned,
        config.sigstore_trusted_root.as_deref(),
    )?;
    if let Some(dir) = &config.plugins {
        crate::catalog_sync::sync_at_start(&store, &runtime, dir, &intake).await?;
    }
    let live = Arc::new(LiveCatalog::new(store.clone(), runtime.clone(), &intake));
    let built = live
        .build()
        .await
        .context("building the catalog from the store")?;
    let parts = Parts {
        config: &config,
        store: &store,
        runtime: &runtime,
        live: &live,
        intake: &intake,
    };
    let catalogs = built.catalogs.with_refused(built.refused);
    let (generation, version) = (catalogs.generation(), catalogs.version().to_owned());
    crate::catalog_refusals::seen(&*store, generation, &version, catalogs.refused()).await;
    let (host, features) = crate::compose::host(&parts, catalogs)?;
    background.spawn(crate::catalog_follow::follow_catalog(
        live.clone(),
        host.clone(),
        store.clone(),
    ));
    background.spawn(crate::resource_relay::follow(
        store.clone(),
        Arc::downgrade(&host),
        crate::replica::replica_id(),
    ));
    // SIGINT or SIGTERM: the edges drain, and the run workers claim no
    // more and hand over what they hold, at once and together.
    let stopping = tokio_util::sync::CancellationToken::new();
    tokio::spawn(crate::edges::stop_on_signal(stopping.clone()));
    let worker_id = crate::replica::worker_id(config.listen, config.worker_only);
    let workers = crate::run_workers::spawn_workers(
        &config,
        &host,
        &store,
        &features,
        worker_id,
        engine_sha256,
        (stopping.clone(), background.stopping()),
    );
    if config.worker_only {
        work_until_stopped(&config, stopping).await?;
    } else {
        let stopping = stopping.clone();
        crate::edges::serve(&parts, host, &features, metrics, &mut background, stopping).await?;
    }
    // The store stays open until every run held is settled or handed over.
    if let Some(workers) = workers
        && let Err(e) = workers.await
    {
        tracing::warn!(error = %e, "the run workers ended abnormally");
    }
    background.stop();
    store.close().await;
    tracing::info!("toolhost stopped");
    Ok(())
}

/// `toolhost worker`: only run workers, until `stopping` (SIGINT or
/// SIGTERM).
async fn work_until_stopped(
    config: &Config,
    stopping: tokio_util::sync::CancellationToken,
) -> anyhow::Result<()> {
    println!(
        "toolhost worker: executing exploration runs, {} at once (Ctrl-C stops)",
        config.run_workers
    );
    std::io::stdout().flush()?;
    stopping.cancelled().await;
    Ok(())
}

/// The sandbox runtime, and the digest of its configuration (receipts name
/// the engine that ran a run).
fn runtime(config: &Config) -> anyhow::Result<(Arc<Runtime>, String)> {
    let runtime_config = RuntimeConfig {
        slots: config.slots,
        cache_dir: config.cache_dir.clone(),
        compile_workers: config.compile_workers,
        compile_share: config.compile_share,
        ..RuntimeConfig::default()
    };
    let engine_sha256 = toolhost_types::Digest::of(format!("{runtime_config:?}").as_bytes());
    Ok((
        Arc::new(Runtime::new(runtime_config)?),
        engine_sha256.to_string(),
    ))
}

/// The store the configuration names.
async fn open_store(config: &Config) -> anyhow::Result<Store> {
    let options = toolhost_storage::StoreOptions {
        acquire_timeout: config.database_timeout,
        ..toolhost_storage::StoreOptions::default()
    };
    Store::connect_with(&config.database_url, &options)
        .await
        .with_context(|| format!("opening the store {}", redact(&config.database_url)))
}

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
