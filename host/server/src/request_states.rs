//! The MRTR request states of `/mcp` over the store: a question one replica
//! asks (its `requestState` sealed with the store's key of the day) is
//! answered on any replica, once (its nonce spent in the store).

use std::sync::Arc;

use toolhost_mcp::{Keyring, RequestStates, StatesError, StatesFuture};
use toolhost_storage::{StorageError, Store};

/// [`RequestStates`] over the store.
pub(crate) struct StoreStates(pub Arc<Store>);

impl RequestStates for StoreStates {
    fn keys(&self) -> StatesFuture<'_, Keyring> {
        Box::pin(async move {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or_default();
            let keys = self.0.request_state_keys(now).await.map_err(states_error)?;
            Ok(Keyring {
                active: keys.active,
                keys: keys.keys,
            })
        })
    }

    fn spend<'a>(&'a self, nonce: &'a str, expires_at: i64) -> StatesFuture<'a, bool> {
        Box::pin(async move {
            self.0
                .spend_request_state(nonce, expires_at)
                .await
                .map_err(states_error)
        })
    }
}

/// The store's error as the request states' (the unreachable store kept
/// apart: the client is told to answer again).
fn states_error(e: StorageError) -> StatesError {
    match e {
        StorageError::Unavailable(down) => StatesError::Unavailable(down),
        other => StatesError::Failed(other.to_string()),
    }
}
