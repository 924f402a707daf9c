//! SHA-256 digests: of components, of arguments, of anything the host pins.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// A SHA-256 digest, written as 64 lowercase hex characters.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Digest([u8; 32]);

/// Why a digest was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("digest {value:?} is not 64 hex characters of a SHA-256")]
pub struct DigestError {
    /// The refused value.
    pub value: String,
}

impl Digest {
    /// The SHA-256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }

    /// The raw 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The first 12 hex characters: enough to tell digests apart in logs.
    pub fn short(&self) -> String {
        hex::encode(&self.0[..6])
    }

    /// A digest taken piece by piece, for bytes that arrive in frames and
    /// are never held whole (an upload streamed to the store).
    pub fn hasher() -> Hasher {
        Hasher(Sha256::new())
    }
}

/// A SHA-256 being taken: [`Hasher::update`] with each piece in order,
/// then [`Hasher::finish`] gives the same [`Digest`] as [`Digest::of`]
/// the whole.
#[derive(Clone, Default)]
pub struct Hasher(Sha256);

impl Hasher {
    /// Adds the next piece.
    pub fn update(&mut self, piece: &[u8]) {
        self.0.update(piece);
    }

    /// The digest of every piece so far, in order.
    pub fn finish(self) -> Digest {
        Digest(self.0.finalize().into())
    }
}

impl fmt::Debug for Hasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Hasher")
    }
}

impl FromStr for Digest {
    type Err = DigestError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let refuse = || DigestError {
            value: s.to_owned(),
        };
        let hexed = s.strip_prefix("sha256:").unwrap_or(s);
        if hexed.len() != 64 {
            return Err(refuse());
        }
        let mut out = [0u8; 32];
        hex::decode_to_slice(hexed.to_ascii_lowercase(), &mut out).map_err(|_| refuse())?;
        Ok(Self(out))
    }
}

impl TryFrom<String> for Digest {
    type Error = DigestError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Digest> for String {
    fn from(d: Digest) -> String {
        d.to_string()
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", self.short())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_round_trips_through_hex() {
        let d = Digest::of(b"hello");
        let text = d.to_string();
        assert_eq!(
            text,
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(text.parse::<Digest>(), Ok(d));
        assert_eq!(format!("sha256:{text}").parse::<Digest>(), Ok(d));
    }

    #[test]
    fn a_digest_taken_piece_by_piece_is_the_digest_of_the_whole() {
        let whole = b"the quick brown fox jumps over the lazy dog";
        let mut hasher = Digest::hasher();
        for piece in whole.chunks(7) {
            hasher.update(piece);
        }
        assert_eq!(hasher.finish(), Digest::of(whole));
        assert_eq!(Digest::hasher().finish(), Digest::of(b""));
    }

    #[test]
    fn digest_refuses_short_or_non_hex_text() {
        assert!("abc".parse::<Digest>().is_err());
        assert!("z".repeat(64).parse::<Digest>().is_err());
    }
}
