//! Password hashing: argon2id with the crate's default parameters, off the
//! async threads (a hash takes tens of milliseconds by design).

use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};

/// Hashes a password into a PHC string (`$argon2id$v=19$…`).
pub async fn hash(password: String) -> Result<String, String> {
    tokio::task::spawn_blocking(move || {
        Argon2::default()
            .hash_password(password.as_bytes())
            .map(|h| h.to_string())
            .map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| e.to_string())?
}

/// True if `password` matches the PHC string `stored`. A malformed stored
/// hash never matches.
pub async fn verify(password: String, stored: String) -> bool {
    tokio::task::spawn_blocking(move || match PasswordHash::new(&stored) {
        Ok(parsed) => Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    })
    .await
    .unwrap_or(false)
}

/// A hash no password matches, verified against when the username is
/// unknown so that the answer takes as long as for a known user.
pub const DUMMY: &str = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$Vb0ViFpOfdk6lLc5IfWj0bJ3/3fxTkWvHLcoV7rhq1c";

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hashes_verify_and_differ() {
        let a = hash("correct horse".into()).await.expect("hashes");
        let b = hash("correct horse".into()).await.expect("hashes");
        assert!(a.starts_with("$argon2id$"));
        assert_ne!(a, b, "salted");
        assert!(verify("correct horse".into(), a.clone()).await);
        assert!(!verify("wrong".into(), a).await);
        assert!(!verify("x".into(), "not a hash".into()).await);
        assert!(!verify("x".into(), DUMMY.into()).await);
    }
}
