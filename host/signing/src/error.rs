//! Why a key, key id, algorithm name or plugin pattern the operator supplied
//! was refused. (Why a *release* was refused is a [`crate::Refusal`].)

use toolhost_types::NameError;

/// A refused key or trust-store value; each variant names what was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SigningError {
    /// The text is not one PEM block holding well-formed DER.
    #[error("not a PEM key: {detail}")]
    Pem {
        /// The PEM decoder's complaint.
        detail: String,
    },
    /// A PEM block of the wrong kind, e.g. a public key where a private one belongs.
    #[error("expected a PEM {expected:?} block, found {found:?}")]
    WrongLabel {
        /// The label this reader accepts.
        expected: &'static str,
        /// The label the text carries.
        found: String,
    },
    /// A key of an algorithm other than Ed25519 or P-256 (RSA, P-384, …).
    #[error("unsupported key algorithm {oid}: only ed25519 and p256 keys are accepted")]
    UnsupportedKey {
        /// The key's algorithm OID, and its curve OID if it has one.
        oid: String,
    },
    /// The DER inside the PEM is not a valid key of its algorithm.
    #[error("invalid {algorithm} key: {detail}")]
    InvalidKey {
        /// The algorithm, or "unknown" if the structure did not get that far.
        algorithm: String,
        /// The decoder's complaint.
        detail: String,
    },
    /// The operating system could not provide randomness for a new key.
    #[error("no randomness for a new key: {detail}")]
    Randomness {
        /// The underlying failure.
        detail: String,
    },
    /// An algorithm name other than `ed25519` or `p256`.
    #[error("unknown signature algorithm {value:?}: expected \"ed25519\" or \"p256\"")]
    UnknownAlgorithm {
        /// The refused name.
        value: String,
    },
    /// A key id that is not `sha256:` and 64 lowercase hex characters.
    #[error("key id {value:?} is not \"sha256:\" and 64 lowercase hex characters")]
    KeyId {
        /// The refused id.
        value: String,
    },
    /// A plugin pattern that is neither a plugin name nor a name prefix and `*`.
    #[error(
        "plugin pattern {value:?} is not a plugin name or a name prefix ending in '*': {reason}"
    )]
    Pattern {
        /// The refused pattern.
        value: String,
        /// Why its name part was refused.
        reason: NameError,
    },
}
