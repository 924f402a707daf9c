//! Verified access tokens, remembered until they expire: an EdDSA check
//! costs tens of microseconds and a client presents the same token on
//! every request. Only the signature check is remembered; the grant's
//! standing is still read from the store on every request.

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest as _, Sha256};

use crate::token::AccessClaims;

/// How many tokens are remembered; past this, expired ones are swept and,
/// if that is not enough, everything is forgotten (and re-verified).
const CAPACITY: usize = 16_384;

/// Tokens whose signature, issuer and audience were verified, by digest.
#[derive(Default)]
pub(crate) struct Verified {
    tokens: Mutex<HashMap<[u8; 32], AccessClaims>>,
}

impl Verified {
    /// The claims of `token` if it was verified before and has not expired.
    pub(crate) fn get(&self, token: &str, now: i64) -> Option<AccessClaims> {
        let key = key(token);
        let tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        tokens.get(&key).filter(|c| now <= c.exp).cloned()
    }

    /// Remembers a token just verified.
    pub(crate) fn insert(&self, token: &str, claims: &AccessClaims, now: i64) {
        let mut tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        if tokens.len() >= CAPACITY {
            tokens.retain(|_, c| now <= c.exp);
            if tokens.len() >= CAPACITY {
                tokens.clear();
            }
        }
        tokens.insert(key(token), claims.clone());
    }
}

fn key(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_until_expiry_and_only_for_the_same_token() {
        let v = Verified::default();
        let claims = AccessClaims::new("i", "a", "s", "c", "f", "mcp", 100, 60);
        v.insert("token-a", &claims, 100);
        assert_eq!(v.get("token-a", 160), Some(claims));
        assert_eq!(v.get("token-a", 161), None, "expired");
        assert_eq!(v.get("token-b", 100), None);
    }
}
