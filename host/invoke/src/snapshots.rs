//! Entity snapshots for the resolver, fetched once per conversation,
//! tenant, plugin and kind (seed 000: "a 5-turn conversation that resolves
//! the same project multiple times produces a single GET /api/projects").
//!
//! A conversation is a legacy MCP session, or for stateless clients the
//! pair (principal, client). Entries expire after a short idle time and the
//! cache holds a bounded number of them. Concurrent misses on one key wait
//! for one fetch. The tenancy floor is applied here, at fetch: a row of
//! another tenant never enters the cache, and its presence is logged as a
//! violation.
//!
//! Across replicas: a call that changes entities moves their kind's
//! generation in the store, in its audit row's transaction
//! ([`toolhost_audit::Effect::Entities`]). A snapshot is remembered with
//! the generation it was listed under and listed again once the generation
//! has moved, whichever replica moved it; one whose generation could not
//! be read is used for its call only.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;
use toolhost_resolver::Entity;

/// How long a conversation's snapshots live without being used. Long
/// enough for a person to answer a question; short enough that a new
/// project shows up in the next conversation without a restart.
pub const SNAPSHOT_IDLE: Duration = Duration::from_secs(5 * 60);
/// Most entries held; past it the least recently used go first.
const MAX_ENTRIES: usize = 10_000;

/// Names one conversation of one caller.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Conversation {
    /// A legacy (2025-11-25) MCP session, by its `Mcp-Session-Id`.
    Session(String),
    /// A stateless client: the principal's subject and its OAuth client.
    Client {
        /// The principal's subject.
        subject: String,
        /// The OAuth client id.
        client: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    conversation: Conversation,
    tenant: String,
    plugin: String,
    kind: String,
}

struct Entry {
    cell: Arc<OnceCell<Arc<[Entity]>>>,
    used: Instant,
    /// The generation of its kind when it was listed.
    generation: i64,
}

/// The generation of one entity kind, or why it could not be read.
pub type GenerationFuture<'a> = Pin<Box<dyn Future<Output = Result<i64, String>> + Send + 'a>>;

/// Where the generations of entity kinds are read: the store every replica
/// shares (migration 0016).
pub trait EntityGenerations: Send + Sync {
    /// The generation of `plugin`'s entities of `kind` in `tenant`: moved
    /// by each call that changes them.
    fn generation<'a>(
        &'a self,
        tenant: &'a str,
        plugin: &'a str,
        kind: &'a str,
    ) -> GenerationFuture<'a>;
}

/// The snapshot cache. Cheap to share.
#[derive(Default)]
pub struct SnapshotCache {
    entries: Mutex<HashMap<Key, Entry>>,
}

impl SnapshotCache {
    fn cell(
        &self,
        key: Key,
        now: Instant,
        generation: Option<i64>,
    ) -> Arc<OnceCell<Arc<[Entity]>>> {
        // A generation that could not be read: listed for this call alone.
        let Some(generation) = generation else {
            return Arc::new(OnceCell::new());
        };
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = entries.get_mut(&key)
            && now.duration_since(e.used) < SNAPSHOT_IDLE
            && e.generation == generation
        {
            e.used = now;
            return e.cell.clone();
        }
        if entries.len() >= MAX_ENTRIES {
            entries.retain(|_, e| now.duration_since(e.used) < SNAPSHOT_IDLE);
        }
        if entries.len() >= MAX_ENTRIES
            && let Some(oldest) = entries
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone())
        {
            entries.remove(&oldest);
        }
        let cell = Arc::new(OnceCell::new());
        entries.insert(
            key,
            Entry {
                cell: cell.clone(),
                used: now,
                generation,
            },
        );
        cell
    }

    /// The snapshot of `kind` for this conversation and tenant: cached
    /// under `generation` (the kind's, as just read; `None` if it could not
    /// be), or fetched by `fetch` (once, however many callers miss
    /// together) and cut to `tenant`'s rows.
    #[allow(clippy::too_many_arguments)]
    pub async fn get<F, Fut, E>(
        &self,
        conversation: &Conversation,
        tenant: &str,
        plugin: &str,
        kind: &str,
        generation: Option<i64>,
        fetch: F,
    ) -> Result<Arc<[Entity]>, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Vec<Entity>, E>>,
    {
        let key = Key {
            conversation: conversation.clone(),
            tenant: tenant.into(),
            plugin: plugin.into(),
            kind: kind.into(),
        };
        let cell = self.cell(key, Instant::now(), generation);
        let rows = cell
            .get_or_try_init(|| async {
                let rows = fetch().await?;
                Ok(floor(rows, tenant, plugin, kind))
            })
            .await?;
        Ok(rows.clone())
    }

    /// Forgets `kinds` for this conversation and tenant (a call changed them).
    pub fn invalidate(
        &self,
        conversation: &Conversation,
        tenant: &str,
        plugin: &str,
        kinds: &[String],
    ) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.retain(|k, _| {
            !(k.conversation == *conversation
                && k.tenant == tenant
                && k.plugin == plugin
                && kinds.contains(&k.kind))
        });
    }
}

/// The tenancy floor: `tenant`'s rows only, whatever the plugin returned.
pub fn floor(rows: Vec<Entity>, tenant: &str, plugin: &str, kind: &str) -> Arc<[Entity]> {
    let total = rows.len();
    let kept: Vec<Entity> = rows.into_iter().filter(|e| e.tenant == tenant).collect();
    if kept.len() < total {
        tracing::warn!(
            plugin,
            kind,
            tenant,
            dropped = total - kept.len(),
            "tenancy violation: the plugin listed rows of another tenant; they were dropped"
        );
        metrics::counter!("toolhost_tenancy_violations_total", "plugin" => plugin.to_owned())
            .increment((total - kept.len()) as u64);
    }
    kept.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn session(id: &str) -> Conversation {
        Conversation::Session(id.into())
    }

    async fn fetch_counting(
        cache: &SnapshotCache,
        conv: &Conversation,
        tenant: &str,
        fetches: &AtomicUsize,
    ) -> Arc<[Entity]> {
        fetch_at(cache, conv, tenant, Some(0), fetches).await
    }

    async fn fetch_at(
        cache: &SnapshotCache,
        conv: &Conversation,
        tenant: &str,
        generation: Option<i64>,
        fetches: &AtomicUsize,
    ) -> Arc<[Entity]> {
        cache
            .get(conv, tenant, "testbench", "project", generation, || async {
                fetches.fetch_add(1, Ordering::SeqCst);
                Ok::<_, Infallible>(vec![
                    Entity::new(1, "payments", "acme"),
                    Entity::new(9, "payments", "globex"),
                ])
            })
            .await
            .expect("infallible")
    }

    #[tokio::test]
    async fn five_turns_of_one_conversation_fetch_once() {
        let cache = SnapshotCache::default();
        let fetches = AtomicUsize::new(0);
        for _ in 0..5 {
            fetch_counting(&cache, &session("s1"), "acme", &fetches).await;
        }
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
        fetch_counting(&cache, &session("s2"), "acme", &fetches).await;
        assert_eq!(
            fetches.load(Ordering::SeqCst),
            2,
            "another conversation fetches its own"
        );
    }

    #[tokio::test]
    async fn concurrent_misses_wait_for_one_fetch() {
        let cache = SnapshotCache::default();
        let fetches = AtomicUsize::new(0);
        let conv = session("s1");
        let slow = || {
            cache.get(&conv, "acme", "testbench", "project", Some(0), || async {
                fetches.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok::<_, Infallible>(vec![Entity::new(1, "payments", "acme")])
            })
        };
        let (a, b, c) = tokio::join!(slow(), slow(), slow());
        assert!(a.is_ok() && b.is_ok() && c.is_ok());
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_moved_generation_lists_again_and_an_unread_one_is_not_kept() {
        let cache = SnapshotCache::default();
        let fetches = AtomicUsize::new(0);
        let conv = session("s1");
        fetch_at(&cache, &conv, "acme", Some(3), &fetches).await;
        fetch_at(&cache, &conv, "acme", Some(3), &fetches).await;
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
        // Another replica's call changed the kind: listed again, once.
        fetch_at(&cache, &conv, "acme", Some(4), &fetches).await;
        fetch_at(&cache, &conv, "acme", Some(4), &fetches).await;
        assert_eq!(fetches.load(Ordering::SeqCst), 2);
        // The store did not answer: listed for the call, kept for none.
        fetch_at(&cache, &conv, "acme", None, &fetches).await;
        fetch_at(&cache, &conv, "acme", None, &fetches).await;
        assert_eq!(fetches.load(Ordering::SeqCst), 4);
        fetch_at(&cache, &conv, "acme", Some(4), &fetches).await;
        assert_eq!(fetches.load(Ordering::SeqCst), 4, "the kept one stands");
    }

    #[tokio::test]
    async fn another_tenants_rows_never_enter_the_cache() {
        let cache = SnapshotCache::default();
        let fetches = AtomicUsize::new(0);
        let rows = fetch_counting(&cache, &session("s1"), "acme", &fetches).await;
        assert_eq!(rows.iter().map(|e| e.id).collect::<Vec<_>>(), [1]);
    }

    #[tokio::test]
    async fn a_failed_fetch_is_not_cached_and_invalidation_refetches() {
        let cache = SnapshotCache::default();
        let conv = session("s1");
        let failed = cache
            .get(&conv, "acme", "p", "project", Some(0), || async {
                Err::<Vec<Entity>, _>("down")
            })
            .await;
        assert_eq!(failed.err(), Some("down"));
        let fetches = AtomicUsize::new(0);
        fetch_counting(&cache, &conv, "acme", &fetches).await;
        cache.invalidate(&conv, "acme", "testbench", &["project".into()]);
        fetch_counting(&cache, &conv, "acme", &fetches).await;
        assert_eq!(fetches.load(Ordering::SeqCst), 2);
    }
}
