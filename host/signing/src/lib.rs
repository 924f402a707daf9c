//! Signed plugin releases: what is signed, how, and whether to trust it.
//!
//! This room owns the in-toto statement of a release (plugin, version,
//! component and manifest SHA-256), DSSE v1 envelopes around it, Ed25519 and
//! P-256 keys (PKCS#8 and SPKI PEM), and [`verify`]: the pure, offline
//! decision of whether a pinned, unrevoked signer vouches for the presented
//! bytes, with a typed [`Refusal`] otherwise.
//!
//! It also owns [`verify_bundle`]: the same decision for a keyless signer
//! ([`Identity::Keyless`], an OIDC issuer and subject) whose release comes
//! as a Sigstore bundle, checked offline against a [`TrustRoot`].
//!
//! It does not own the trust store's rows (`storage` keeps them, the admin
//! API edits them), fetching plugins or their signatures (intake reads
//! directories and OCI referrers), refreshing a trust root (the operator
//! supplies `trusted_root.json`; no TUF client here), or what an intake does
//! with a refusal. All cryptography is RustCrypto's (`ed25519-dalek`,
//! `p256`) for keys and `sigstore-verify`'s (on `aws-lc-rs`) for bundles;
//! nothing here is a home-made primitive.
//!
//! ```
//! use toolhost_signing::{
//!     Algorithm, Envelope, Identity, Presented, Release, SigningKey, TrustedSigner, verify,
//! };
//! use toolhost_types::Digest;
//!
//! let key = SigningKey::generate(Algorithm::Ed25519).expect("OS randomness");
//! let (component, manifest) = (Digest::of(b"\0asm..."), Digest::of(b"name = \"hello\""));
//! let release = Release { plugin: "hello".into(), version: "1.0.0".into(), component, manifest };
//! let json = Envelope::sign(&release, &key).to_json();
//!
//! let signers = [TrustedSigner {
//!     name: "acme".into(),
//!     identity: Identity::Key(key.public_key()),
//!     plugins: vec!["hello".parse().expect("a valid pattern")],
//!     revoked: false,
//! }];
//! let envelope = Envelope::from_json(json.as_bytes()).expect("well-formed");
//! let presented = Presented {
//!     plugin: "hello", version: "1.0.0", component: &component, manifest: &manifest,
//!     envelope: Some(&envelope),
//! };
//! assert_eq!(verify(&presented, &signers).expect("trusted").signer, "acme");
//! ```

mod envelope;
mod error;
mod keyless;
mod keys;
mod pattern;
mod refusal;
mod sigstore;
mod statement;
mod trust;

pub use envelope::{Envelope, EnvelopeSignature, MAX_SIGNATURES, pae};
pub use error::SigningError;
pub use keyless::verify_bundle;
pub use keys::{Algorithm, KeyId, PublicKey, SigningKey};
pub use pattern::PluginPattern;
pub use refusal::Refusal;
pub use sigstore::{MAX_BUNDLE_BYTES, TrustRoot, TrustRootError};
pub use statement::Release;
pub use trust::{Identity, Presented, TrustedSigner, Verified, verify};

/// The DSSE payload type of an in-toto statement.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// The in-toto Statement v1 `_type`.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// The `predicateType` of a toolhost plugin release.
pub const PREDICATE_TYPE: &str = "urn:toolhost:plugin-release:v1";
/// Largest envelope accepted (bounds parsing of untrusted input): 64 KiB.
/// A release envelope is well under 2 KiB; a few countersignatures fit easily.
pub const MAX_ENVELOPE_BYTES: usize = 64 * 1024;
