//! The generations of the resolver's entity kinds (migration 0016): moved
//! by a call that changes entities, in its audit row's transaction
//! (`src/effects.rs`), and read by every replica before it uses a
//! snapshot it remembers (`toolhost_invoke::EntityGenerations`).

use crate::connect::fetch_optional;
use crate::{StorageError, Store};

/// Moves the generation of (`$1` tenant, `$2` plugin, `$3` kind) on by one,
/// from 0 when it has no row yet.
pub(crate) const MOVE_GENERATION: &str = "INSERT INTO entity_generations \
     (tenant, plugin, kind, generation) VALUES ($1, $2, $3, 1) \
     ON CONFLICT (tenant, plugin, kind) \
     DO UPDATE SET generation = entity_generations.generation + 1";

const GENERATION: &str = "SELECT generation FROM entity_generations \
     WHERE tenant = $1 AND plugin = $2 AND kind = $3";

impl Store {
    /// The generation of `plugin`'s entities of `kind` in `tenant`: 0 until
    /// a call first changes them.
    pub async fn entity_generation(
        &self,
        tenant: &str,
        plugin: &str,
        kind: &str,
    ) -> Result<i64, StorageError> {
        let found = fetch_optional!(
            &self.pools,
            |row| sqlx::Row::try_get::<i64, _>(row, 0),
            GENERATION,
            tenant,
            plugin,
            kind
        )
        .map_err(StorageError::query("read an entity generation"))?;
        Ok(found.unwrap_or(0))
    }
}
