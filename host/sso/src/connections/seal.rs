//! People's tokens at rest: sealed with AES-256-GCM under a key from the
//! host's configuration, bound to whose they are.
//!
//! The operator's key file names one or more keys; the first seals, every
//! one opens, so a key is rotated by putting a new one first and dropping
//! the old one once no row needs it (a row sealed under an older key is
//! sealed again under the first the next time it is read). The associated
//! data names the tenant, the person and the backend: a row copied to
//! another person, or to another backend, does not open.

use aws_lc_rs::aead::{AES_256_GCM, Aad, NONCE_LEN, Nonce, RandomizedNonceKey};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

/// The longest key id: a word, kept in every row.
const MAX_KEY_ID: usize = 32;
/// Separates the associated data of this use from any other.
const AAD_LABEL: &str = "toolhost person connection v1";

/// Why the key file was refused. Never shows a key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// No key at all.
    #[error("the connection key file names no key")]
    Empty,
    /// A line is not `ID KEY`.
    #[error("connection key file line {0}: expected `ID BASE64-KEY`")]
    Malformed(usize),
    /// An id is not 1 to 32 characters of `A-Za-z0-9_-`, or repeats.
    #[error(
        "connection key file line {0}: the id must be 1 to 32 characters of A-Za-z0-9_- and unique"
    )]
    BadId(usize),
    /// A key is not 32 bytes of standard base64.
    #[error("connection key file line {0}: the key must be 32 random bytes in base64")]
    BadKey(usize),
}

/// The keys people's tokens are sealed with; the first seals.
pub struct SealingKeys {
    keys: Vec<(String, RandomizedNonceKey)>,
}

impl std::fmt::Debug for SealingKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<&str> = self.keys.iter().map(|(id, _)| id.as_str()).collect();
        f.debug_struct("SealingKeys").field("ids", &ids).finish()
    }
}

/// Whose a sealed value is: it opens only for the same three.
#[derive(Debug, Clone, Copy)]
pub struct Owner<'a> {
    /// The tenant.
    pub tenant: &'a str,
    /// The person.
    pub user_id: &'a str,
    /// The backend.
    pub backend: &'a str,
}

impl Owner<'_> {
    fn aad(&self) -> String {
        // Names never hold NUL (ids and backend names are words).
        format!(
            "{AAD_LABEL}\0{}\0{}\0{}",
            self.tenant, self.user_id, self.backend
        )
    }
}

impl SealingKeys {
    /// Parses the key file: a line `ID BASE64-KEY` per key (32 bytes),
    /// the sealing key first; blank lines and `#` comments are skipped.
    pub fn parse(text: &str) -> Result<Self, KeyError> {
        let mut keys: Vec<(String, RandomizedNonceKey)> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let n = n + 1;
            let (id, key) = line
                .split_once(char::is_whitespace)
                .ok_or(KeyError::Malformed(n))?;
            let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
            let id_ok = !id.is_empty() && id.len() <= MAX_KEY_ID && id.chars().all(word);
            if !id_ok || keys.iter().any(|(known, _)| known == id) {
                return Err(KeyError::BadId(n));
            }
            let bytes = STANDARD
                .decode(key.trim())
                .map_err(|_| KeyError::BadKey(n))?;
            let key = (bytes.len() == 32)
                .then(|| RandomizedNonceKey::new(&AES_256_GCM, &bytes).ok())
                .flatten()
                .ok_or(KeyError::BadKey(n))?;
            keys.push((id.to_owned(), key));
        }
        if keys.is_empty() {
            return Err(KeyError::Empty);
        }
        Ok(SealingKeys { keys })
    }

    /// The id of the key that seals.
    pub fn current(&self) -> &str {
        &self.keys[0].0
    }

    /// `plain` sealed for `owner` under the current key: base64url of the
    /// nonce and the sealed bytes.
    pub fn seal(&self, owner: Owner<'_>, plain: &[u8]) -> Result<String, String> {
        let mut in_out = plain.to_vec();
        let nonce = (self.keys[0].1)
            .seal_in_place_append_tag(Aad::from(owner.aad().as_bytes()), &mut in_out)
            .map_err(|_| "sealing failed".to_owned())?;
        let mut out = nonce.as_ref().to_vec();
        out.extend_from_slice(&in_out);
        Ok(URL_SAFE_NO_PAD.encode(out))
    }

    /// The plain bytes of `sealed`, sealed under key `key_id` for `owner`;
    /// `None` for an unknown key, another owner, or any change.
    pub fn open(&self, key_id: &str, owner: Owner<'_>, sealed: &str) -> Option<Vec<u8>> {
        let (_, key) = self.keys.iter().find(|(id, _)| id == key_id)?;
        let bytes = URL_SAFE_NO_PAD.decode(sealed).ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let (nonce, sealed) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut in_out = sealed.to_vec();
        let plain = key
            .open_in_place(nonce, Aad::from(owner.aad().as_bytes()), &mut in_out)
            .ok()?;
        Some(plain.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> String {
        STANDARD.encode([byte; 32])
    }

    fn ann() -> Owner<'static> {
        Owner {
            tenant: "demo",
            user_id: "u_ann",
            backend: "crm",
        }
    }

    #[test]
    fn a_sealed_value_opens_only_for_its_owner_and_under_its_key() {
        let keys = SealingKeys::parse(&format!("# comment\n\nk1 {}\n", key(1))).expect("keys");
        let sealed = keys.seal(ann(), b"the tokens").expect("sealed");
        assert!(!sealed.contains("the tokens"));
        assert_eq!(
            keys.open("k1", ann(), &sealed).as_deref(),
            Some(&b"the tokens"[..])
        );
        let bob = Owner {
            user_id: "u_bob",
            ..ann()
        };
        let other_backend = Owner {
            backend: "billing",
            ..ann()
        };
        let other_tenant = Owner {
            tenant: "acme",
            ..ann()
        };
        for owner in [bob, other_backend, other_tenant] {
            assert_eq!(keys.open("k1", owner, &sealed), None, "{owner:?}");
        }
        assert_eq!(keys.open("k2", ann(), &sealed), None);
        let mut flipped = URL_SAFE_NO_PAD.decode(&sealed).expect("base64");
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert_eq!(
            keys.open("k1", ann(), &URL_SAFE_NO_PAD.encode(flipped)),
            None
        );
        assert_eq!(keys.open("k1", ann(), "AAAA"), None);
    }

    #[test]
    fn the_first_key_seals_and_every_key_opens() {
        let old = SealingKeys::parse(&format!("old {}", key(1))).expect("keys");
        let sealed_before = old.seal(ann(), b"before").expect("sealed");
        let rotated = SealingKeys::parse(&format!("new {}\nold {}", key(2), key(1))).expect("keys");
        assert_eq!(rotated.current(), "new");
        assert_eq!(
            rotated.open("old", ann(), &sealed_before).as_deref(),
            Some(&b"before"[..])
        );
        let sealed_after = rotated.seal(ann(), b"after").expect("sealed");
        assert_eq!(old.open("old", ann(), &sealed_after), None);
        assert_eq!(
            rotated.open("new", ann(), &sealed_after).as_deref(),
            Some(&b"after"[..])
        );
    }

    #[test]
    fn two_seals_of_one_value_differ() {
        let keys = SealingKeys::parse(&format!("k1 {}", key(1))).expect("keys");
        assert_ne!(
            keys.seal(ann(), b"x").expect("a"),
            keys.seal(ann(), b"x").expect("b")
        );
    }

    #[test]
    fn a_bad_key_file_is_refused_without_showing_a_key() {
        let cases = [
            (String::new(), KeyError::Empty),
            ("# only a comment".to_owned(), KeyError::Empty),
            ("k1".to_owned(), KeyError::Malformed(1)),
            (format!("k/1 {}", key(1)), KeyError::BadId(1)),
            (format!("k1 {}\nk1 {}", key(1), key(2)), KeyError::BadId(2)),
            ("k1 c2hvcnQ=".to_owned(), KeyError::BadKey(1)),
            ("k1 not base64!".to_owned(), KeyError::BadKey(1)),
        ];
        for (text, want) in cases {
            let err = SealingKeys::parse(&text).expect_err(&text);
            assert_eq!(err, want, "{text}");
            assert!(!err.to_string().contains(&key(1)));
        }
        let keys = SealingKeys::parse(&format!("k1 {}", key(1))).expect("keys");
        assert_eq!(format!("{keys:?}"), "SealingKeys { ids: [\"k1\"] }");
    }
}
