//! Resource updates across replicas over the store (PostgreSQL `NOTIFY`):
//! [`StoreRelay`] sends what this replica's calls tell, [`follow`] passes
//! on what the others' tell. Each update names the replica that told it,
//! so a replica never hears its own twice. On SQLite there is nothing to
//! relay: one process serves every subscriber.

use std::sync::{Arc, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolhost_invoke::{ResourceUpdate, Toolhost, UpdateRelay};
use toolhost_storage::Store;

/// How long a replica waits before listening again after the listener
/// failed (the driver re-establishes a lost connection on its own).
const RETRY: Duration = Duration::from_secs(1);

/// An update on the wire: the replica that told it, and the update.
#[derive(Serialize, Deserialize)]
struct Relayed {
    origin: String,
    #[serde(flatten)]
    update: ResourceUpdate,
}

/// Sends this replica's updates to the others through the store.
pub(crate) struct StoreRelay {
    store: Arc<Store>,
    origin: String,
}

impl StoreRelay {
    /// A relay over `store` for the replica named `origin`.
    pub(crate) fn new(store: Arc<Store>, origin: String) -> Self {
        Self { store, origin }
    }
}

impl UpdateRelay for StoreRelay {
    fn relay(&self, update: &ResourceUpdate) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("no runtime to relay a resource update on");
            return;
        };
        let relayed = Relayed {
            origin: self.origin.clone(),
            update: update.clone(),
        };
        let payload = serde_json::to_string(&relayed).unwrap_or_default();
        let store = self.store.clone();
        runtime.spawn(async move {
            if let Err(e) = store.notify_resource_update(&payload).await {
                tracing::warn!(error = %e, "relaying a resource update to the other replicas failed");
            }
        });
    }
}

/// Passes the updates other replicas tell on to this replica's
/// subscribers, while `host` lives. Returns at once on SQLite.
pub(crate) async fn follow(store: Arc<Store>, host: Weak<Toolhost>, origin: String) {
    loop {
        let mut listener = match store.listen_resource_updates().await {
            Ok(Some(listener)) => listener,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(error = %e, "listening for other replicas' resource updates failed");
                tokio::time::sleep(RETRY).await;
                continue;
            }
        };
        loop {
            let payload = match listener.next().await {
                Ok(payload) => payload,
                Err(e) => {
                    tracing::warn!(error = %e, "a resource update was lost");
                    tokio::time::sleep(RETRY).await;
                    break;
                }
            };
            let Some(host) = host.upgrade() else { return };
            match serde_json::from_str::<Relayed>(&payload) {
                Ok(r) if r.origin != origin => host.resource_updated_elsewhere(r.update),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "an unreadable resource update was ignored"),
            }
        }
    }
}
