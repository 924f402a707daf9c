//! Artifacts: tool results too large to send inline. The host keeps the
//! bytes, answers the call with a reference (an MCP resource link carrying
//! the URI, size and SHA-256), and gives the bytes back through MCP
//! `resources/read` to principals of the same tenant who hold the
//! permission of the tool that produced them.
//!
//! This room owns the words: the [`ArtifactId`] and its URI, what a stored
//! artifact says ([`Artifact`]), a new one's bytes and digest
//! ([`NewArtifact`]), and the [`ArtifactStore`] trait reads go through.
//! A new artifact is written in the same transaction as its call's audit
//! row (an effect of that row, see `toolhost_audit::Effect`); `storage`
//! implements the reads for SQLite and PostgreSQL.
//!
//! ```
//! use toolhost_artifacts::ArtifactId;
//! let id = ArtifactId::new();
//! assert_eq!(ArtifactId::from_uri(&id.uri()), Some(id.clone()));
//! assert_eq!(ArtifactId::from_uri("toolhost://artifacts/../etc"), None);
//! ```

mod id;
mod store;

pub use id::{ArtifactId, URI_PREFIX};
pub use store::{Artifact, ArtifactFuture, ArtifactStore, ArtifactStoreError, NewArtifact};
