//! Why a plugin was refused. Every message names the file and the value.

use std::path::PathBuf;

use toolhost_types::Digest;

/// A plugin the catalog refused to load (the rest still load).
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The manifest is not valid TOML of the manifest's shape (unknown keys included).
    #[error("manifest {path}: {detail}")]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// What was wrong, naming the key or value.
        detail: String,
    },
    /// The manifest names no component digest.
    #[error("manifest {path}: no plugin.sha256: pin the component first (`toolhost plugin pin`)")]
    Unpinned {
        /// The manifest.
        path: PathBuf,
    },
    /// The component's SHA-256 differs from the pinned one.
    #[error(
        "manifest {path}: component {component} has sha256 {actual}, the manifest pins {expected}"
    )]
    DigestMismatch {
        /// The manifest.
        path: PathBuf,
        /// The component file.
        component: PathBuf,
        /// The pinned digest.
        expected: Digest,
        /// The file's digest.
        actual: Digest,
    },
    /// Two manifests name the same plugin.
    #[error("manifest {path}: plugin {plugin:?} is already loaded from another manifest")]
    DuplicatePlugin {
        /// The later manifest.
        path: PathBuf,
        /// The plugin name.
        plugin: String,
    },
    /// A tool name, a prompt name or a resource's URI space is already
    /// served by another plugin: the incumbent keeps it.
    #[error("manifest {path}: {taken}")]
    NameTaken {
        /// The refused plugin's manifest.
        path: PathBuf,
        /// What it claims, and who serves it.
        taken: Box<crate::NameTaken>,
    },
    /// A resource or template in a URI scheme the host answers itself.
    #[error(
        "manifest {path}: {subject} is at {uri:?}: the {scheme}: scheme is the host's own, no plugin may serve it"
    )]
    ReservedScheme {
        /// The manifest.
        path: PathBuf,
        /// The resource (`"resource NAME"`).
        subject: String,
        /// Its URI or URI template.
        uri: String,
        /// The reserved scheme.
        scheme: String,
    },
    /// The component and the reviewed manifest disagree about the tools.
    #[error("manifest {path}: {detail}")]
    Mismatch {
        /// The manifest.
        path: PathBuf,
        /// The tool and what differs.
        detail: String,
    },
    /// A budget override the host does not allow.
    #[error("manifest {path}: {source}")]
    Limit {
        /// The manifest.
        path: PathBuf,
        /// Which limit and why.
        source: toolhost_limits::LimitError,
    },
    /// The runtime refused the component.
    #[error("manifest {path}: {source}")]
    Load {
        /// The manifest.
        path: PathBuf,
        /// The runtime's reason.
        source: toolhost_runtime::LoadError,
    },
}

impl CatalogError {
    /// Whether the component was not refused but not compiled yet either:
    /// its tenant holds its share of the compile queue (retry later).
    pub fn is_busy(&self) -> bool {
        matches!(
            self,
            CatalogError::Load {
                source: toolhost_runtime::LoadError::Busy { .. },
                ..
            }
        )
    }
}
