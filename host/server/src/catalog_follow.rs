//! Every replica serves the catalog the store holds: a change decided on
//! any replica is built and served here within about a second.

use std::sync::Arc;
use std::time::Duration;

use toolhost_catalog::LiveCatalog;
use toolhost_invoke::Toolhost;
use toolhost_storage::Store;

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
pub(crate) async fn follow_catalog(live: Arc<LiveCatalog>, host: Arc<Toolhost>, store: Arc<Store>) {
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
            Ok(g) if g == host.catalogs().generation() => continue,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "reading the catalog's generation failed");
                continue;
            }
        }
        match live.build().await {
            Ok(built) => {
                let catalogs = built.catalogs.with_refused(built.refused);
                crate::catalog_refusals::seen(
                    &*store,
                    catalogs.generation(),
                    catalogs.version(),
                    catalogs.refused(),
                )
                .await;
                tracing::info!(version = %catalogs.version(), generation = catalogs.generation(),
                    tools = catalogs.everyone().tools().count(), tenants_apart = catalogs.tenants().count(),
                    refused = catalogs.refused().len(), "serving a new catalog");
                host.serve_catalogs(catalogs);
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
