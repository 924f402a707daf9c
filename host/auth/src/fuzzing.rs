//! What `fuzz/targets` drives and the public API does not offer: the form
//! parameters every OAuth endpoint reads (`params`), and the signing and
//! verification of access tokens (`token`), both private to the endpoints
//! and the bearer check that call them. Hidden from the docs and not an
//! API: nothing but the fuzz targets uses it. A ring from
//! [`ephemeral_key_ring`] lives in memory only and signs nothing the host
//! trusts (its tokens name a key the store never published).

pub use crate::params::{MAX_VALUE, Params};
pub use crate::token::{sign, verify};

use crate::keys::KeyRing;

/// A ring of one fresh Ed25519 key, made without a store.
pub fn ephemeral_key_ring() -> KeyRing {
    KeyRing::ephemeral()
}
