//! [`CatalogStore`]: where the live catalog is kept. Revisions, their
//! component bytes by digest, the signers the operator trusts and the
//! catalog's version live in the store, so every replica serves the same
//! catalog; `storage` implements this for SQLite and PostgreSQL.
//!
//! Decisions (approve, reject, roll back, withdraw) are not methods here:
//! they are [`toolhost_audit::Effect::Catalog`]s written with their audit
//! row, so a decision and its row are one transaction.

use std::future::Future;

use toolhost_types::Digest;

/// A boxed future, so stores can be used as trait objects.
pub type CatalogFuture<'a, T> =
    std::pin::Pin<Box<dyn Future<Output = Result<T, CatalogStoreError>> + Send + 'a>>;

/// Why the store did not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum CatalogStoreError {
    /// A signer of that name or key is already trusted.
    #[error("a signer named {name:?} or holding key {key_id} is already trusted")]
    SignerExists {
        /// The name asked for.
        name: String,
        /// The key asked for.
        key_id: String,
    },
    /// No signer of that name.
    #[error("no trusted signer named {0:?}")]
    NoSuchSigner(String),
    /// The database failed.
    #[error("catalog store: {0}")]
    Failed(String),
    /// The database could not be reached: the request may be tried again.
    #[error(transparent)]
    Unavailable(#[from] toolhost_types::StoreUnavailable),
}

pub use toolhost_review::{Audience, NewRevision, Pin, Revision, RevisionState};

/// The catalog's generation (every change of what is served counts one)
/// and semantic version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogState {
    /// Replicas compare it to what they serve.
    pub generation: i64,
    /// `MAJOR.MINOR.PATCH`.
    pub version: String,
}

/// Who a signer is: a pinned key, or a keyless Sigstore identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignerIdentity {
    /// A public key, SPKI PEM.
    Key {
        /// The PEM text.
        public_key: String,
    },
    /// A Fulcio certificate's identity: the OIDC issuer and the subject
    /// (SAN), matched exactly.
    Keyless {
        /// e.g. `https://token.actions.githubusercontent.com`.
        issuer: String,
        /// e.g. `https://github.com/org/repo/.github/workflows/release.yml@refs/tags/v1`.
        subject: String,
    },
}

/// A signer the operator trusts, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignerRecord {
    /// The operator's name for it.
    pub name: String,
    /// Unique per identity: `sha256:` of a key's SPKI, or
    /// `keyless:<issuer>#<subject>`.
    pub key_id: String,
    /// Who it is.
    pub identity: SignerIdentity,
    /// The plugin names or prefixes (`acme-*`) it may sign.
    pub plugins: Vec<String>,
    /// Who trusted it, and when (unix ms).
    pub trusted_by: String,
    /// When.
    pub trusted_at_ms: i64,
    /// When it was revoked, by whom and why.
    pub revoked: Option<(i64, String, String)>,
}

/// What [`CatalogStore::submit`] did.
#[derive(Debug, Clone)]
pub enum Submitted {
    /// The revision is stored, pending review.
    New,
    /// The same plugin, component and manifest were submitted before: that
    /// revision, unchanged.
    Existing(Box<Revision>),
}

/// The live catalog's store.
pub trait CatalogStore: Send + Sync {
    /// The catalog's generation and version now.
    fn catalog_state(&self) -> CatalogFuture<'_, CatalogState>;
    /// Stores a new revision (and its component bytes, once per digest),
    /// pending review, in one transaction.
    fn submit(&self, revision: NewRevision) -> CatalogFuture<'_, Submitted>;
    /// The revision `id`.
    fn revision<'a>(&'a self, id: &'a str) -> CatalogFuture<'a, Option<Revision>>;
    /// Revisions, newest first, of one plugin and/or in one state.
    fn revisions<'a>(
        &'a self,
        plugin: Option<&'a str>,
        state: Option<RevisionState>,
    ) -> CatalogFuture<'a, Vec<Revision>>;
    /// What is served: every active revision, and every replaced one whose
    /// retired tools are still listed.
    fn served(&self) -> CatalogFuture<'_, Vec<Revision>>;
    /// Every tenant's pins, by tenant and plugin.
    fn pins(&self) -> CatalogFuture<'_, Vec<Pin>>;
    /// The component bytes of `digest`.
    fn blob<'a>(&'a self, digest: &'a Digest) -> CatalogFuture<'a, Option<Vec<u8>>>;
    /// Trusts a signer.
    fn trust_signer(&self, signer: SignerRecord) -> CatalogFuture<'_, ()>;
    /// Marks a signer revoked (its revisions are withdrawn by the decision
    /// that follows; until then the catalog refuses to serve them).
    fn revoke_signer<'a>(
        &'a self,
        name: &'a str,
        by: &'a str,
        reason: &'a str,
        at_ms: i64,
    ) -> CatalogFuture<'a, ()>;
    /// Every signer, revoked ones included, by name.
    fn signers(&self) -> CatalogFuture<'_, Vec<SignerRecord>>;
}

/// A revision's id: 16 hex digits of a SHA-256 over the plugin's name and
/// both digests, so the same submission always has the same id.
pub fn revision_id(plugin: &str, component: &Digest, manifest: &Digest) -> String {
    let text = format!("toolhost-revision\0{plugin}\0{component}\0{manifest}");
    Digest::of(text.as_bytes()).to_string()[..16].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_through_their_names() {
        for st in RevisionState::ALL {
            assert_eq!(st.as_str().parse::<RevisionState>(), Ok(st));
        }
        assert!("live".parse::<RevisionState>().is_err());
    }

    #[test]
    fn a_revision_id_depends_on_the_plugin_and_both_digests() {
        let (a, b) = (Digest::of(b"a"), Digest::of(b"b"));
        let id = revision_id("hello", &a, &b);
        assert_eq!(id.len(), 16);
        assert_eq!(id, revision_id("hello", &a, &b));
        assert_ne!(id, revision_id("hello", &b, &a));
        assert_ne!(id, revision_id("other", &a, &b));
    }
}
