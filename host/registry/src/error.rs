//! Why a push or a pull failed, each with a stable code.

use oci_client::errors::{OciDistributionError, OciErrorCode};

/// A push or pull that did not happen. Every message names the reference
/// (and the layer, where there is one).
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The text is not an `oci://` reference this host reads.
    #[error("{text:?} is not an OCI reference: {why}")]
    InvalidReference {
        /// The text as given.
        text: String,
        /// What is wrong with it.
        why: String,
    },
    /// A manifest or blob's bytes are not those its digest names.
    #[error("{what} of {reference}: expected {expected}, the registry sent {actual}")]
    DigestMismatch {
        /// The pinned reference.
        reference: String,
        /// Which part (`component layer (application/wasm)`, `manifest`, …).
        what: String,
        /// The digest asked for.
        expected: String,
        /// The digest of the bytes received.
        actual: String,
    },
    /// The repository, tag, manifest or blob does not exist.
    #[error("{reference}: {what} not found in the registry")]
    NotFound {
        /// The reference as asked for.
        reference: String,
        /// What was missing.
        what: String,
    },
    /// The manifest is not a toolhost release in the layout of `layout`.
    #[error("{reference} is not a toolhost plugin release: {why}")]
    NotAPlugin {
        /// The reference.
        reference: String,
        /// Which rule of the layout it breaks.
        why: String,
    },
    /// A manifest or layer is larger than this host reads.
    #[error("{what} of {reference} is {size} bytes, over the {limit}-byte limit")]
    LimitExceeded {
        /// The reference.
        reference: String,
        /// Which part.
        what: String,
        /// Its size (declared, or read so far).
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The registry could not be reached, refused access, or answered
    /// something that is not the distribution protocol.
    #[error("registry {registry}: {why}")]
    Unreachable {
        /// `HOST:PORT`.
        registry: String,
        /// What went wrong.
        why: String,
    },
}

impl RegistryError {
    /// The stable code shown with a refusal.
    pub fn code(&self) -> &'static str {
        match self {
            RegistryError::InvalidReference { .. } => "INVALID_REFERENCE",
            RegistryError::DigestMismatch { .. } => "DIGEST_MISMATCH",
            RegistryError::NotFound { .. } => "NOT_FOUND",
            RegistryError::NotAPlugin { .. } => "NOT_A_PLUGIN",
            RegistryError::LimitExceeded { .. } => "LIMIT_EXCEEDED",
            RegistryError::Unreachable { .. } => "UNREACHABLE",
        }
    }
}

/// What oci-client's error means here: `what` (of `reference`, at
/// `registry`) was being fetched or sent.
pub(crate) fn from_oci(
    e: OciDistributionError,
    registry: &str,
    reference: &str,
    what: &str,
) -> RegistryError {
    let not_found = || RegistryError::NotFound {
        reference: reference.to_owned(),
        what: what.to_owned(),
    };
    match &e {
        OciDistributionError::RegistryError { envelope, .. }
            if envelope.errors.iter().any(|e| missing(&e.code)) =>
        {
            not_found()
        }
        OciDistributionError::ServerError { code: 404, .. }
        | OciDistributionError::ImageManifestNotFoundError(_) => not_found(),
        OciDistributionError::DigestError(oci_client::errors::DigestError::VerificationError {
            expected,
            actual,
        }) => RegistryError::DigestMismatch {
            reference: reference.to_owned(),
            what: what.to_owned(),
            expected: expected.clone(),
            actual: actual.clone(),
        },
        _ => RegistryError::Unreachable {
            registry: registry.to_owned(),
            why: format!("{what} of {reference}: {e}"),
        },
    }
}

fn missing(code: &OciErrorCode) -> bool {
    matches!(
        code,
        OciErrorCode::BlobUnknown
            | OciErrorCode::ManifestUnknown
            | OciErrorCode::NameUnknown
            | OciErrorCode::NotFound
    )
}
