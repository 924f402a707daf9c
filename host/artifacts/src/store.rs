//! What an artifact says, a new one's bytes, and the store reads go through.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use toolhost_types::Digest;

use crate::ArtifactId;

/// A stored artifact's description (everything but its bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// Its id (its URI is [`ArtifactId::uri`]).
    pub id: ArtifactId,
    /// The tenant of the call that produced it: the only tenant that reads it.
    pub tenant: String,
    /// Who made that call.
    pub principal: String,
    /// The client that made it, if known.
    pub client_id: Option<String>,
    /// The tool that produced it: a reader needs that tool's permission.
    pub tool: String,
    /// The call's id, as in its audit row.
    pub call_id: String,
    /// The exploration run that kept it, if one did: then only the run's
    /// principal (and the tenant's admins) read it.
    pub run_id: Option<String>,
    /// `application/json` or `text/plain; charset=utf-8`.
    pub mime_type: String,
    /// Length of the bytes.
    pub size: u64,
    /// SHA-256 of the bytes.
    pub sha256: Digest,
    /// Unix milliseconds.
    pub created_at_ms: i64,
    /// Unix milliseconds; unreadable from then on.
    pub expires_at_ms: i64,
}

/// An artifact to store: its description and its bytes, whose size and
/// digest [`NewArtifact::new`] computes so they always agree.
#[derive(Clone, PartialEq, Eq)]
pub struct NewArtifact {
    /// The description.
    pub artifact: Artifact,
    /// The bytes.
    pub body: Arc<[u8]>,
}

impl NewArtifact {
    /// `body` described by `artifact`, whose `size` and `sha256` are
    /// overwritten with `body`'s own.
    pub fn new(mut artifact: Artifact, body: Vec<u8>) -> Self {
        artifact.size = body.len() as u64;
        artifact.sha256 = Digest::of(&body);
        NewArtifact {
            artifact,
            body: body.into(),
        }
    }
}

impl std::fmt::Debug for NewArtifact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewArtifact")
            .field("artifact", &self.artifact)
            .field("body", &format_args!("{} bytes", self.body.len()))
            .finish()
    }
}

/// Why the store did not answer (its message names the operation, never the bytes).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ArtifactStoreError {
    /// The database failed.
    #[error("artifact store: {0}")]
    Failed(String),
    /// The database could not be reached: the request may be tried again.
    #[error(transparent)]
    Unavailable(#[from] toolhost_types::StoreUnavailable),
}

impl ArtifactStoreError {
    /// The unreachable store, if that is why.
    pub fn unavailable(&self) -> Option<&toolhost_types::StoreUnavailable> {
        match self {
            ArtifactStoreError::Unavailable(u) => Some(u),
            ArtifactStoreError::Failed(_) => None,
        }
    }
}

/// What the store methods return.
pub type ArtifactFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, ArtifactStoreError>> + Send + 'a>>;

/// Where artifacts are read from (they are written with their call's
/// audit row). Implemented by `storage` for SQLite and PostgreSQL.
pub trait ArtifactStore: Send + Sync {
    /// The artifact `id` of `tenant` with its bytes, unless it has expired
    /// by `now_ms`. Another tenant's artifact is `None`, exactly as a
    /// missing one is.
    fn read<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a ArtifactId,
        now_ms: i64,
    ) -> ArtifactFuture<'a, Option<(Artifact, Vec<u8>)>>;

    /// Deletes every artifact expired by `now_ms`; how many.
    fn purge(&self, now_ms: i64) -> ArtifactFuture<'_, u64>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_artifact_carries_its_own_size_and_digest() {
        let artifact = Artifact {
            id: ArtifactId::new(),
            tenant: "demo".into(),
            principal: "ada".into(),
            client_id: None,
            tool: "greet".into(),
            call_id: "c1".into(),
            run_id: None,
            mime_type: "application/json".into(),
            size: 0,
            sha256: Digest::of(b""),
            created_at_ms: 1,
            expires_at_ms: 2,
        };
        let new = NewArtifact::new(artifact, b"{\"a\":1}".to_vec());
        assert_eq!(new.artifact.size, 7);
        assert_eq!(new.artifact.sha256, Digest::of(b"{\"a\":1}"));
        assert!(format!("{new:?}").contains("7 bytes"));
    }
}
