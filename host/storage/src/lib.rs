//! The host's database: SQLite or PostgreSQL behind one [`Store`], which
//! implements the store traits the other rooms declare:
//!
//! - [`toolhost_audit::AuditSink`]: one row per tool call in the `audit` table,
//!   hash-chained as it is appended, walked by [`Store::verify_chain`] and
//!   read by [`Store::search`] (`src/store.rs`, `src/chain.rs`);
//! - [`toolhost_auth::AuthStore`]: the authorization server's tenants, users,
//!   clients, grants, codes, refresh tokens, signing keys, browser sessions,
//!   consents and security events (`src/auth.rs`); an admin's change to
//!   a tenant's people (the console's) is an audit effect instead
//!   ([`toolhost_audit::PeopleEffect`], `src/effects/people.rs`);
//! - [`toolhost_policy::PolicyStore`]: each tenant's roles, their
//!   permissions and their members (`src/policy.rs`), plus
//!   [`Store::tenants`] for operators. The two reads every request makes,
//!   `live_grant` and `grants`, are live views: served from memory until
//!   the database's change generation moves ([`LIVE_VIEWS_POLL`],
//!   `src/live.rs`);
//! - [`toolhost_gates::GateStore`]: approval gates and idempotency keys,
//!   every transition a compare-and-set in the database (`src/gates.rs`);
//! - [`toolhost_gates::CheckpointStore`]: human checkpoints, one per
//!   plugin's subject, decided by a compare-and-set on their version
//!   (`src/checkpoints.rs`).
//! - [`toolhost_catalog::CatalogStore`]: plugin revisions, their component
//!   bytes by digest, trusted signers and the catalog's version
//!   (`src/catalog.rs`); decisions are audit effects (`src/effects.rs`).
//! - [`toolhost_runs::RunStore`]: the exploration runs' durable queue,
//!   claimed under fenced leases by workers on any replica
//!   (`src/runs.rs`); runs are queued and settled as audit effects
//!   (`src/effects.rs`), and [`Store::listen_runs`] wakes workers and
//!   tells them of stored cancels on PostgreSQL.
//! - [`Store::add_hits`]: the rate limits' fixed-window counters, to which
//!   each host adds what it counted in memory, atomically, so every host on
//!   the store learns the total (`src/rate.rs`).
//! - [`Store::notify_resource_update`] and
//!   [`Store::listen_resource_updates`]: resource updates passed between
//!   replicas on PostgreSQL (`NOTIFY`, nothing stored;
//!   `src/resource_updates.rs`).
//!
//! This room owns the SQL, the schema migrations (`migrations/sqlite` and
//! `migrations/postgres`, same numbers, same meaning, embedded in the binary
//! and applied at connect), connection pooling and the engines' durability
//! settings. It does not decide what an event says (`audit` does) nor when it
//! is written (`invoke` does), nor what a token or a grant allows (`auth`
//! does), nor what a role's permissions let a principal do (`policy`
//! does), nor when a call needs a gate (`invoke` does), and `sqlx` stays
//! inside it: callers see [`StorageError`] (or the trait's own error, such
//! as [`toolhost_auth::AuthStoreError`]).
//!
//! The engine is chosen by the URL: `sqlite://audit.db?mode=rwc` (a file,
//! created if missing), `sqlite::memory:` (tests, demos) or
//! `postgres://user@host/db`.
//!
//! ```
//! use std::time::Duration;
//! use serde_json::json;
//! use toolhost_audit::{AuditEvent, AuditSink, argument_digest};
//! use toolhost_storage::Store;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = Store::connect("sqlite::memory:").await?;
//! let digest = argument_digest(&json!({"name": "world"}));
//! let event = AuditEvent {
//!     call_id: "call-1".into(),
//!     client_id: Some("cli".into()),
//!     duration: Duration::from_micros(250),
//!     ..AuditEvent::new("acme", "alice", "greet", digest)
//! };
//! store.record(&event).await?;
//! assert_eq!(store.recent(10).await?[0].event.call_id, "call-1");
//! assert!(store.record(&event).await.is_err(), "a call is recorded once");
//! assert_eq!(store.verify_chain().await?.expect("an intact chain").verified, 1);
//! # Ok(())
//! # }
//! ```

mod artifacts;
mod auth;
mod catalog;
mod chain;
mod checkpoints;
mod connect;
mod effects;
mod entities;
mod error;
mod explain;
mod fields;
mod gates;
pub mod group;
mod keyset;
mod live;
mod migrations;
mod policy;
mod rate;
mod record;
mod request_state;
mod resource_updates;
mod runs;
mod store;
#[cfg(test)]
mod test_event;
mod workspace;

pub use auth::people::{ClientKey, PageFrom, ServiceClientsQuery, UsersQuery};
pub use catalog::{CATALOG_CHANNEL, CatalogListener};
pub use chain::{ANCHOR_LOCK, ExportError, ExportRequest};
pub use connect::{
    DEFAULT_ACQUIRE_TIMEOUT, DEFAULT_MAX_CONNECTIONS, SQLITE_BUSY_TIMEOUT, StoreOptions,
};
pub use error::{Engine, StorageError};
pub use gates::UnauditedGate;
pub use live::POLL as LIVE_VIEWS_POLL;
pub use policy::TenantCounts;
pub use rate::Hits;
pub use record::AuditRecord;
pub use request_state::{KEY_PERIOD as REQUEST_STATE_KEY_PERIOD, RequestStateKeys};
pub use resource_updates::{RESOURCES_CHANNEL, ResourceListener};
pub use runs::{RUN_CANCELS_CHANNEL, RUNS_CHANNEL, RunListener, RunNotice};
pub use store::{AuditQuery, PoolStats, Store};
