//! PKCE (RFC 7636), S256 only: OAuth 2.1 makes it mandatory and we refuse
//! `plain`, which protects nothing if the authorization request leaks.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest as _, Sha256};

use crate::secret;

/// Checks a `code_challenge` from an authorization request: the base64url
/// SHA-256 of a verifier is exactly 43 characters of the URL-safe alphabet.
pub fn valid_challenge(challenge: &str) -> bool {
    challenge.len() == 43
        && challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Checks a `code_verifier` against the stored S256 challenge. A verifier
/// is 43–128 characters of `[A-Za-z0-9-._~]` (RFC 7636 §4.1).
pub fn verify(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    well_formed && secret::same(&s256(verifier), challenge)
}

/// The S256 challenge of a verifier.
pub fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b_vector() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert_eq!(s256(verifier), challenge);
        assert!(valid_challenge(challenge));
        assert!(verify(verifier, challenge));
    }

    #[test]
    fn wrong_or_malformed_verifiers_fail() {
        let challenge = s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
        assert!(!verify(
            "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXj",
            &challenge
        ));
        assert!(!verify("short", &s256("short")));
        assert!(!verify(&"a".repeat(129), &s256(&"a".repeat(129))));
        assert!(!valid_challenge("plain-text-challenge"));
    }
}
