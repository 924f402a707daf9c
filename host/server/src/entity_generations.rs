//! The resolver's entity generations over the store: a snapshot one
//! replica remembers is listed again once a call on any replica changed
//! its kind (migration 0016).

use std::sync::Arc;

use toolhost_invoke::{EntityGenerations, GenerationFuture};
use toolhost_storage::Store;

/// [`EntityGenerations`] read from the store.
pub(crate) struct StoreGenerations(pub Arc<Store>);

impl EntityGenerations for StoreGenerations {
    fn generation<'a>(
        &'a self,
        tenant: &'a str,
        plugin: &'a str,
        kind: &'a str,
    ) -> GenerationFuture<'a> {
        Box::pin(async move {
            self.0
                .entity_generation(tenant, plugin, kind)
                .await
                .map_err(|e| e.to_string())
        })
    }
}
