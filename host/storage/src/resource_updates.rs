//! Resource updates between replicas: a tool call on one replica tells of
//! a change (the `notify` import), and the subscribers on every other hear
//! of it. PostgreSQL carries them with `NOTIFY` on [`RESOURCES_CHANNEL`];
//! nothing is stored, and a replica that is not listening at that moment
//! misses them (its subscribers read again when they next hear). SQLite
//! has no channel: one host, one process serves its subscribers.

use crate::connect::Pools;
use crate::{StorageError, Store};

/// The channel updates travel on; the payload is the host's, opaque here
/// (at most PostgreSQL's 8000 bytes).
pub const RESOURCES_CHANNEL: &str = "toolhost_resources";

/// Updates told on any replica, pushed by the database (PostgreSQL's
/// `LISTEN`). A lost connection is re-established by the driver; updates
/// sent meanwhile are lost.
pub struct ResourceListener(sqlx::postgres::PgListener);

impl ResourceListener {
    /// Waits for the next update and returns its payload.
    pub async fn next(&mut self) -> Result<String, StorageError> {
        self.0
            .recv()
            .await
            .map(|n| n.payload().to_owned())
            .map_err(StorageError::query("wait for a resource update"))
    }
}

impl Store {
    /// Sends `payload` to every replica listening (PostgreSQL); nothing on
    /// SQLite.
    pub async fn notify_resource_update(&self, payload: &str) -> Result<(), StorageError> {
        let Pools::Postgres(pool) = &self.pools else {
            return Ok(());
        };
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(RESOURCES_CHANNEL)
            .bind(payload)
            .execute(pool)
            .await
            .map(drop)
            .map_err(StorageError::query("send a resource update"))
    }

    /// A listener for the updates every replica sends, on PostgreSQL;
    /// `None` on SQLite.
    pub async fn listen_resource_updates(&self) -> Result<Option<ResourceListener>, StorageError> {
        let listener = (self.pools)
            .listen(&[RESOURCES_CHANNEL], "listen for resource updates")
            .await?;
        Ok(listener.map(ResourceListener))
    }
}
