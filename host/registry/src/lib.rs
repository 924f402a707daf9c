//! Plugin releases to and from OCI registries, digest-checked.
//!
//! This room owns moving a release (a component, its TOML manifest and its
//! DSSE envelope) between this host and an OCI registry: the layout (a Wasm
//! OCI artifact wkg and wassette can read, with the manifest as a second
//! layer and the signature as an OCI 1.1 referrer, see [`layout`]),
//! [`Reference`]s (`oci://HOST:PORT/REPO:TAG` or `…@sha256:…`), [`push`],
//! which also keeps the referrers tag schema's index for registries without
//! the referrers API, and [`pull`], which resolves a tag once, reads
//! everything after by digest, bounds every read and refuses any byte that
//! is not its digest's. Registries on this machine are spoken to over plain
//! HTTP, every other one over HTTPS.
//!
//! It does not verify signatures, compile components or decide anything
//! about a release: `toolhost_catalog::intake` does, for releases from a
//! registry exactly as for those from a directory. It does not keep a
//! cache: a pulled release is handed to intake, which stores it
//! content-addressed.
//!
//! ```no_run
//! # async fn demo() -> Result<(), toolhost_registry::RegistryError> {
//! use toolhost_registry::{Reference, Release, pull, push};
//!
//! let release = Release { manifest: "…".into(), component: b"\0asm...".to_vec(), envelope: None };
//! let tag = Reference::parse("oci://127.0.0.1:5000/authors/hello:0.2.0")?;
//! let pushed = push(&tag, &release).await?;
//! let pulled = pull(&tag).await?; // the tag, looked up once
//! assert_eq!(pulled.pinned, pushed.pinned); // oci://127.0.0.1:5000/authors/hello@sha256:…
//! # Ok(()) }
//! ```

mod check;
mod error;
pub mod layout;
mod pull;
mod push;
mod reference;
mod wire;

pub use error::RegistryError;
pub use pull::{Pulled, pull};
pub use push::{Pushed, push};
pub use reference::{Reference, SCHEME, Target};
pub use wire::{CONNECT_TIMEOUT, PASSWORD_ENV, READ_TIMEOUT, USER_ENV};

/// A release as it travels: what a release directory holds, in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    /// The manifest's text, byte for byte (its digest is signed).
    pub manifest: String,
    /// The component's bytes.
    pub component: Vec<u8>,
    /// The DSSE envelope's JSON, if the release is signed.
    pub envelope: Option<Vec<u8>>,
}

/// What the unit tests of the layout and the checks share.
#[cfg(test)]
mod test_fixtures {
    use serde_json::Value;

    use crate::Release;

    /// A tiny release, signed with `envelope` if given.
    pub(crate) fn release(envelope: Option<&[u8]>) -> Release {
        Release {
            manifest: "[plugin]\nname = \"hello\"\n".into(),
            component: b"\0asm\x0d\0\x01\0".to_vec(),
            envelope: envelope.map(<[u8]>::to_vec),
        }
    }

    /// `bytes` as JSON.
    pub(crate) fn json(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).expect("JSON")
    }
}
