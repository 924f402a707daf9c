//! [`MemoryStore`]: a [`CatalogStore`] in memory, for tests and tools that
//! put revisions in place by hand (no submission, no signers, no
//! decisions written: those are the real stores', `toolhost_storage`).

use std::collections::HashMap;
use std::sync::Mutex;

use toolhost_types::Digest;

use crate::{
    CatalogFuture, CatalogState, CatalogStore, CatalogStoreError, NewRevision, Pin, Revision,
    RevisionState, SignerRecord, Submitted,
};

/// Revisions, component bytes and pins held in memory, at a fixed catalog
/// generation and version. It trusts no signer; `submit`, `trust_signer`
/// and `revoke_signer` are refused.
pub struct MemoryStore {
    state: CatalogState,
    revisions: Mutex<Vec<Revision>>,
    blobs: Mutex<HashMap<Digest, Vec<u8>>>,
    pins: Mutex<Vec<Pin>>,
}

impl MemoryStore {
    /// An empty store at catalog `generation` and `version`.
    pub fn at(generation: i64, version: &str) -> Self {
        Self {
            state: CatalogState {
                generation,
                version: version.to_owned(),
            },
            revisions: Mutex::default(),
            blobs: Mutex::default(),
            pins: Mutex::default(),
        }
    }

    /// Puts `revision` in place as it is (its state included), with its
    /// component's `bytes` if any.
    pub fn put(&self, revision: Revision, bytes: Option<Vec<u8>>) {
        if let Some(bytes) = bytes {
            let mut blobs = self.blobs.lock().expect("never poisoned");
            blobs.insert(revision.component_digest, bytes);
        }
        self.revisions
            .lock()
            .expect("never poisoned")
            .push(revision);
    }

    /// Changes revision `id` with `edit`.
    ///
    /// # Panics
    ///
    /// If there is no revision `id`: a test's own mistake.
    pub fn change(&self, id: &str, edit: impl FnOnce(&mut Revision)) {
        let mut all = self.revisions.lock().expect("never poisoned");
        edit(all.iter_mut().find(|r| r.id == id).expect("the revision"));
    }

    /// Holds a tenant to a revision.
    pub fn pin(&self, pin: Pin) {
        self.pins.lock().expect("never poisoned").push(pin);
    }

    fn all(&self) -> Vec<Revision> {
        self.revisions.lock().expect("never poisoned").clone()
    }
}

fn ready<'a, T: Send + 'a>(value: T) -> CatalogFuture<'a, T> {
    Box::pin(async move { Ok(value) })
}

fn refused<'a, T: Send + 'a>(what: &str) -> CatalogFuture<'a, T> {
    let why = format!("a memory store does not {what}");
    Box::pin(async move { Err(CatalogStoreError::Failed(why)) })
}

impl CatalogStore for MemoryStore {
    fn catalog_state(&self) -> CatalogFuture<'_, CatalogState> {
        ready(self.state.clone())
    }
    fn submit(&self, _: NewRevision) -> CatalogFuture<'_, Submitted> {
        refused("take submissions")
    }
    fn revision<'a>(&'a self, id: &'a str) -> CatalogFuture<'a, Option<Revision>> {
        ready(self.all().into_iter().find(|r| r.id == id))
    }
    fn revisions<'a>(
        &'a self,
        plugin: Option<&'a str>,
        state: Option<RevisionState>,
    ) -> CatalogFuture<'a, Vec<Revision>> {
        let mut found = self.all();
        found
            .retain(|r| plugin.is_none_or(|p| r.plugin == p) && state.is_none_or(|s| r.state == s));
        ready(found)
    }
    fn served(&self) -> CatalogFuture<'_, Vec<Revision>> {
        let mut found = self.all();
        found.retain(|r| r.state == RevisionState::Active || r.retired.is_some());
        ready(found)
    }
    fn pins(&self) -> CatalogFuture<'_, Vec<Pin>> {
        ready(self.pins.lock().expect("never poisoned").clone())
    }
    fn blob<'a>(&'a self, digest: &'a Digest) -> CatalogFuture<'a, Option<Vec<u8>>> {
        ready(
            self.blobs
                .lock()
                .expect("never poisoned")
                .get(digest)
                .cloned(),
        )
    }
    fn trust_signer(&self, _: SignerRecord) -> CatalogFuture<'_, ()> {
        refused("trust signers")
    }
    fn revoke_signer<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: &'a str,
        _: i64,
    ) -> CatalogFuture<'a, ()> {
        refused("revoke signers")
    }
    fn signers(&self) -> CatalogFuture<'_, Vec<SignerRecord>> {
        ready(Vec::new())
    }
}
