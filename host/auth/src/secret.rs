//! Random secrets and their stored digests.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest as _, Sha256};

/// A new random secret of `bytes` bytes, base64url without padding: codes,
/// refresh tokens, client secrets, session cookies, CSRF tokens, ids.
pub fn random(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).expect("the OS random source is available");
    URL_SAFE_NO_PAD.encode(buf)
}

/// Prefixes of the host's own secrets, so a scanner (`toolhost_secrets`)
/// recognizes one wherever it turns up: refresh tokens, authorization
/// codes, client secrets, and browser cookies.
pub const REFRESH_TOKEN: &str = "thrt_";
/// See [`REFRESH_TOKEN`].
pub const AUTHORIZATION_CODE: &str = "thac_";
/// See [`REFRESH_TOKEN`].
pub const CLIENT_SECRET: &str = "thcs_";
/// See [`REFRESH_TOKEN`].
pub const COOKIE: &str = "thss_";

/// A new secret of the host's own kind `prefix`: the prefix, then 256
/// random bits as [`random`] writes them.
pub fn token(prefix: &str) -> String {
    format!("{prefix}{}", random(32))
}

/// The form a secret is stored in: SHA-256, lower-case hex. Every secret we
/// hash carries at least 256 random bits, so a fast hash is enough (a
/// password is never hashed this way).
pub fn digest(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Compares two strings in time independent of where they differ.
pub fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_distinct_and_url_safe() {
        let (a, b) = (random(32), random(32));
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
    }

    #[test]
    fn digests_are_stable_hex() {
        assert_eq!(digest("abc").len(), 64);
        assert_eq!(digest("abc"), digest("abc"));
        assert_ne!(digest("abc"), digest("abd"));
    }

    #[test]
    fn comparison_is_exact() {
        assert!(same("token", "token"));
        assert!(!same("token", "tokem"));
        assert!(!same("token", "token2"));
    }
}
