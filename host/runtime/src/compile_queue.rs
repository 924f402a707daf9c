//! The compile queue: where a component that is not in the precompiled
//! cache is turned into native code. Compiling a large component takes
//! CPU-seconds, so it never runs on the thread that serves a request: it
//! runs on a blocking thread, behind a host-wide number of compile workers
//! (tokio's semaphore hands them out first come, first served), and each
//! tenant may hold only its share of the queue (waiting or compiling).
//! A tenant past its share is refused at once with [`LoadError::Busy`]
//! rather than queued, so one tenant's drafts cannot keep another tenant's
//! compile waiting for more than the compiles ahead of it. The host's own
//! loads (the catalog at start-up, a reviewed revision, a run's pinned
//! revision) wait for a worker but are never refused.
//!
//! A component already in the cache is mapped without the queue.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;
use toolhost_types::Digest;
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::cache::{CacheOutcome, ComponentCache};
use crate::error::LoadError;

/// Who a compile is charged to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Payer {
    /// The host itself: waits for a worker, never refused.
    #[default]
    Host,
    /// A tenant (a workspace draft or candidate): within its share.
    Tenant(String),
}

/// Compile workers and each tenant's share of the queue.
pub(crate) struct CompileQueue {
    workers: Arc<Semaphore>,
    share: usize,
    held: Mutex<HashMap<String, usize>>,
}

/// A tenant's place in the queue, given back when the compile ends.
struct Place<'a> {
    queue: &'a CompileQueue,
    tenant: String,
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        let mut held = self.queue.held.lock().expect("never poisoned");
        if let Some(n) = held.get_mut(&self.tenant) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.tenant);
            }
        }
    }
}

impl CompileQueue {
    /// `workers` compiles at once host-wide (at least one); `share` places
    /// per tenant (at least one).
    pub(crate) fn new(workers: usize, share: usize) -> Self {
        Self {
            workers: Arc::new(Semaphore::new(workers.max(1))),
            share: share.max(1),
            held: Mutex::new(HashMap::new()),
        }
    }

    /// The component for `bytes` (of `plugin`, hashing to `digest`): mapped
    /// from `cache` when it is there, else compiled by a worker for `payer`.
    pub(crate) async fn component(
        &self,
        engine: &Engine,
        cache: &Arc<ComponentCache>,
        plugin: &str,
        digest: &Digest,
        bytes: &[u8],
        payer: &Payer,
    ) -> Result<(Component, CacheOutcome), LoadError> {
        let compile_error = |e: wasmtime::Error| LoadError::Compile {
            plugin: plugin.to_owned(),
            detail: format!("{e:#}"),
        };
        if let Some(hit) = cache.mapped(engine, digest) {
            return Ok((hit, CacheOutcome::Hit));
        }
        let _place = self.place(plugin, payer)?;
        let _worker = self
            .workers
            .acquire()
            .await
            .expect("the compile semaphore is never closed");
        let (engine, cache, digest, bytes) =
            (engine.clone(), cache.clone(), *digest, bytes.to_vec());
        tokio::task::spawn_blocking(move || cache.load(&engine, &digest, &bytes))
            .await
            .map_err(|e| LoadError::Compile {
                plugin: plugin.to_owned(),
                detail: format!("the compile worker stopped: {e}"),
            })?
            .map_err(compile_error)
    }

    /// A place in the queue for `payer`, or [`LoadError::Busy`] when its
    /// tenant already holds its share.
    fn place(&self, plugin: &str, payer: &Payer) -> Result<Option<Place<'_>>, LoadError> {
        let Payer::Tenant(tenant) = payer else {
            return Ok(None);
        };
        let mut held = self.held.lock().expect("never poisoned");
        let n = held.entry(tenant.clone()).or_default();
        if *n >= self.share {
            return Err(LoadError::Busy {
                plugin: plugin.to_owned(),
                share: self.share,
            });
        }
        *n += 1;
        Ok(Some(Place {
            queue: self,
            tenant: tenant.clone(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenant_holds_at_most_its_share_and_gets_it_back() {
        let queue = CompileQueue::new(1, 2);
        let a = Payer::Tenant("a".into());
        let first = queue.place("p", &a).expect("first place");
        let second = queue.place("p", &a).expect("second place");
        let refused = queue.place("p", &a).err().expect("past the share");
        assert!(matches!(refused, LoadError::Busy { share: 2, .. }));
        assert!(
            queue.place("p", &Payer::Tenant("b".into())).is_ok(),
            "another tenant has its own share"
        );
        assert!(
            queue.place("p", &Payer::Host).is_ok(),
            "the host is never refused"
        );
        drop(first);
        let third = queue
            .place("p", &a)
            .expect("a place given back is free again");
        drop((second, third));
        assert!(
            queue.held.lock().expect("lock").is_empty(),
            "no count is kept for a tenant with nothing queued"
        );
    }
}
