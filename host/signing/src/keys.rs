//! Ed25519 and P-256 keys: generation, PKCS#8 and SPKI PEM, key ids, and the
//! one signing and verifying primitive each algorithm offers. The primitives
//! are the RustCrypto crates'; this file only chooses and wires them.

use std::fmt;
use std::str::FromStr;

use p256::ecdsa::signature::{Signer as _, Verifier as _};
use p256::elliptic_curve::zeroize::Zeroize as _;
use p256::pkcs8::{
    AssociatedOid as _, DecodePrivateKey as _, DecodePublicKey as _, EncodePrivateKey as _,
    EncodePublicKey as _, LineEnding, ObjectIdentifier, PrivateKeyInfoRef, SecretDocument,
    SubjectPublicKeyInfoRef,
};
use serde::{Deserialize, Serialize};
use toolhost_types::Digest;

use crate::SigningError;

/// The signature algorithms a pinned key may use. Both are what cosign and
/// `ssh-keygen`/`openssl` produce; RSA is deliberately absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// Ed25519 (RFC 8032), signing the DSSE PAE bytes directly.
    Ed25519,
    /// ECDSA over NIST P-256 with SHA-256, DER-encoded signatures (cosign's shape).
    P256,
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Self::Ed25519 => "ed25519",
            Self::P256 => "p256",
        })
    }
}

impl FromStr for Algorithm {
    type Err = SigningError;
    /// Accepts exactly `ed25519` or `p256`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "ed25519" => Ok(Self::Ed25519),
            "p256" => Ok(Self::P256),
            _ => Err(SigningError::UnknownAlgorithm {
                value: s.to_owned(),
            }),
        }
    }
}

/// A private key. It never prints: `Debug` shows the algorithm and key id
/// only, and the underlying keys zeroize their bytes on drop.
#[derive(Clone)]
pub struct SigningKey(Secret);

#[derive(Clone)]
enum Secret {
    Ed25519(ed25519_dalek::SigningKey),
    P256(p256::ecdsa::SigningKey),
}

/// How many random draws `generate` makes before giving up on P-256: a draw
/// fails only if it is zero or not below the group order (odds ~2^-32).
const P256_DRAWS: usize = 8;

impl SigningKey {
    /// A fresh key from the operating system's randomness (`getrandom`).
    /// Fails only if the OS cannot provide randomness.
    pub fn generate(alg: Algorithm) -> Result<Self, SigningError> {
        let mut bytes = [0u8; 32];
        let key = match alg {
            Algorithm::Ed25519 => {
                fill(&mut bytes)?;
                Ok(Secret::Ed25519(ed25519_dalek::SigningKey::from_bytes(
                    &bytes,
                )))
            }
            Algorithm::P256 => generate_p256(&mut bytes),
        };
        bytes.zeroize();
        key.map(Self)
    }

    /// Reads a PKCS#8 `PRIVATE KEY` PEM block of either algorithm, detected
    /// from the key's algorithm OID. Encrypted PKCS#8 is not supported.
    pub fn from_pem(text: &str) -> Result<Self, SigningError> {
        let (label, doc) = SecretDocument::from_pem(text.trim()).map_err(pem_error)?;
        expect_label("PRIVATE KEY", label)?;
        let info = PrivateKeyInfoRef::try_from(doc.as_bytes()).map_err(|e| invalid(None, e))?;
        let (oid, params) = (info.algorithm.oid, info.algorithm.parameters_oid().ok());
        let der = doc.as_bytes();
        match algorithm_of(oid, params)? {
            Algorithm::Ed25519 => ed25519_dalek::SigningKey::from_pkcs8_der(der)
                .map(Secret::Ed25519)
                .map_err(|e| invalid(Some(Algorithm::Ed25519), e)),
            Algorithm::P256 => p256::ecdsa::SigningKey::from_pkcs8_der(der)
                .map(Secret::P256)
                .map_err(|e| invalid(Some(Algorithm::P256), e)),
        }
        .map(Self)
    }

    /// The key as PKCS#8 PEM (LF line endings). The returned text is the
    /// secret: the caller decides where it may be written.
    pub fn to_pem(&self) -> String {
        let pem = match &self.0 {
            Secret::Ed25519(k) => k.to_pkcs8_pem(LineEnding::LF),
            Secret::P256(k) => k.to_pkcs8_pem(LineEnding::LF),
        };
        pem.expect("a valid in-memory key always encodes as PKCS#8")
            .to_string()
    }

    /// The matching public key.
    pub fn public_key(&self) -> PublicKey {
        let der = match &self.0 {
            Secret::Ed25519(k) => k.verifying_key().to_public_key_der(),
            Secret::P256(k) => k.verifying_key().to_public_key_der(),
        };
        let der = der.expect("a valid in-memory public key always encodes as SPKI");
        PublicKey {
            algorithm: self.algorithm(),
            der: der.into_vec(),
        }
    }

    /// Which algorithm this key uses.
    pub fn algorithm(&self) -> Algorithm {
        match self.0 {
            Secret::Ed25519(_) => Algorithm::Ed25519,
            Secret::P256(_) => Algorithm::P256,
        }
    }

    /// Signs `message`: Ed25519 over the bytes, P-256 as ECDSA-SHA256 with a
    /// DER signature. Both are deterministic (RFC 8032, RFC 6979).
    pub(crate) fn sign(&self, message: &[u8]) -> Vec<u8> {
        match &self.0 {
            Secret::Ed25519(k) => k.sign(message).to_bytes().to_vec(),
            Secret::P256(k) => {
                let sig: p256::ecdsa::DerSignature = k.sign(message);
                sig.as_bytes().to_vec()
            }
        }
    }
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("algorithm", &self.algorithm())
            .field("key_id", &self.public_key().key_id().as_str())
            .finish()
    }
}

fn fill(bytes: &mut [u8]) -> Result<(), SigningError> {
    getrandom::fill(bytes).map_err(|e| SigningError::Randomness {
        detail: e.to_string(),
    })
}

fn generate_p256(bytes: &mut [u8; 32]) -> Result<Secret, SigningError> {
    for _ in 0..P256_DRAWS {
        fill(bytes)?;
        if let Ok(key) = p256::ecdsa::SigningKey::from_slice(bytes) {
            return Ok(Secret::P256(key));
        }
    }
    Err(SigningError::Randomness {
        detail: format!("{P256_DRAWS} draws in a row were not a valid P-256 scalar"),
    })
}

/// A public key: its algorithm and its SubjectPublicKeyInfo DER, kept in the
/// canonical (uncompressed, for P-256) encoding so the key id is stable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    algorithm: Algorithm,
    der: Vec<u8>,
}

impl PublicKey {
    /// Reads an SPKI `PUBLIC KEY` PEM block of either algorithm (what
    /// `cosign generate-key-pair` and `openssl pkey -pubout` write). A
    /// compressed P-256 point is accepted and re-encoded uncompressed.
    pub fn from_pem(text: &str) -> Result<Self, SigningError> {
        let (label, doc) = p256::pkcs8::Document::from_pem(text.trim()).map_err(pem_error)?;
        expect_label("PUBLIC KEY", label)?;
        let info =
            SubjectPublicKeyInfoRef::try_from(doc.as_bytes()).map_err(|e| invalid(None, e))?;
        let (oid, params) = (info.algorithm.oid, info.algorithm.parameters_oid().ok());
        let der = doc.as_bytes();
        let algorithm = algorithm_of(oid, params)?;
        let canonical = match algorithm {
            Algorithm::Ed25519 => ed25519_dalek::VerifyingKey::from_public_key_der(der)
                .and_then(|k| k.to_public_key_der()),
            Algorithm::P256 => p256::ecdsa::VerifyingKey::from_public_key_der(der)
                .and_then(|k| k.to_public_key_der()),
        };
        let canonical = canonical.map_err(|e| invalid(Some(algorithm), e))?;
        Ok(Self {
            algorithm,
            der: canonical.into_vec(),
        })
    }

    /// The key as SPKI PEM (LF line endings).
    pub fn to_pem(&self) -> String {
        p256::pkcs8::der::pem::encode_string("PUBLIC KEY", LineEnding::LF, &self.der)
            .expect("a key of a few dozen bytes is far below PEM's length limit")
    }

    /// `sha256:` and the hex SHA-256 of the SPKI DER: the value DSSE
    /// signatures carry as `keyid`.
    pub fn key_id(&self) -> KeyId {
        KeyId::of_spki(&self.der)
    }

    /// Which algorithm this key uses.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// True if `sig` is this key's signature over `message`. Any malformed
    /// signature is simply false. Ed25519 uses strict verification (no
    /// malleable or small-order forms); P-256 accepts high-S, as Go's
    /// `crypto/ecdsa` (cosign) may produce it.
    pub(crate) fn verifies(&self, message: &[u8], sig: &[u8]) -> bool {
        match self.algorithm {
            Algorithm::Ed25519 => {
                let key = ed25519_dalek::VerifyingKey::from_public_key_der(&self.der);
                let sig = ed25519_dalek::Signature::from_slice(sig);
                matches!((key, sig), (Ok(k), Ok(s)) if k.verify_strict(message, &s).is_ok())
            }
            Algorithm::P256 => {
                let key = p256::ecdsa::VerifyingKey::from_public_key_der(&self.der);
                let sig = p256::ecdsa::Signature::from_der(sig);
                matches!((key, sig), (Ok(k), Ok(s)) if k.verify(message, &s).is_ok())
            }
        }
    }
}

/// A public key's id: `sha256:` and 64 lowercase hex characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct KeyId(String);

impl KeyId {
    /// The id of a key given as SubjectPublicKeyInfo DER, of any algorithm
    /// (a Fulcio certificate's key may be one this crate does not verify).
    pub(crate) fn of_spki(der: &[u8]) -> Self {
        KeyId(format!("sha256:{}", Digest::of(der)))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for KeyId {
    type Err = SigningError;
    /// Refuses anything but `sha256:` and 64 lowercase hex (no uppercase:
    /// ids are compared as text).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let hex = s.strip_prefix("sha256:").unwrap_or_default();
        if hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            Ok(Self(s.to_owned()))
        } else {
            Err(SigningError::KeyId {
                value: s.to_owned(),
            })
        }
    }
}

impl TryFrom<String> for KeyId {
    type Error = SigningError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<KeyId> for String {
    fn from(id: KeyId) -> String {
        id.0
    }
}

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.0)
    }
}

fn algorithm_of(
    oid: ObjectIdentifier,
    params: Option<ObjectIdentifier>,
) -> Result<Algorithm, SigningError> {
    if oid == ed25519_dalek::pkcs8::ALGORITHM_OID {
        return Ok(Algorithm::Ed25519);
    }
    if oid == p256::elliptic_curve::ALGORITHM_OID && params == Some(p256::NistP256::OID) {
        return Ok(Algorithm::P256);
    }
    let curve = params.map(|p| format!(" ({p})")).unwrap_or_default();
    Err(SigningError::UnsupportedKey {
        oid: format!("{oid}{curve}"),
    })
}

fn expect_label(expected: &'static str, found: &str) -> Result<(), SigningError> {
    if found == expected {
        return Ok(());
    }
    Err(SigningError::WrongLabel {
        expected,
        found: found.to_owned(),
    })
}

fn pem_error(e: impl fmt::Display) -> SigningError {
    SigningError::Pem {
        detail: e.to_string(),
    }
}

fn invalid(algorithm: Option<Algorithm>, e: impl fmt::Display) -> SigningError {
    SigningError::InvalidKey {
        algorithm: algorithm.map_or_else(|| "unknown".to_owned(), |a| a.to_string()),
        detail: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PAYLOAD_TYPE, pae};

    const ALGORITHMS: [Algorithm; 2] = [Algorithm::Ed25519, Algorithm::P256];

    // Throwaway keys made by OpenSSL 3.0 (`openssl genpkey`), and its
    // signatures over pae(PAYLOAD_TYPE, b"hello"): `openssl dgst -sha256
    // -sign` (DER ECDSA) and `openssl pkeyutl -sign -rawin` (Ed25519).
    const OPENSSL_P256_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgCy7IzG2cSkSEnXgc
qKwkpcIF+LiJbDtx4Cg5vzEvx9ehRANCAAT9zVEE7em70XJaFAx3+dShtI7xDoDN
f4M8SCjK98YRIaLuQu6JqSxWzyxHywiV+NFjqgHZIDW2/biCKGmGgnlv
-----END PRIVATE KEY-----
";
    const OPENSSL_P256_PUB: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE/c1RBO3pu9FyWhQMd/nUobSO8Q6A
zX+DPEgoyvfGESGi7kLuiaksVs8sR8sIlfjRY6oB2SA1tv24gihphoJ5bw==
-----END PUBLIC KEY-----
";
    const OPENSSL_P256_PUB_COMPRESSED: &str = "-----BEGIN PUBLIC KEY-----
MDkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDIgAD/c1RBO3pu9FyWhQMd/nUobSO8Q6A
zX+DPEgoyvfGESE=
-----END PUBLIC KEY-----
";
    const OPENSSL_P256_SIG: &str = "MEUCIQDaUANqnz8zneNNzNynNH9qnS02v6zIWZduhv9CqNoPkQIgELoDDRS6l+g/SB3GHmGOTup7w8B4rwAc/w1yAB1ijo0=";
    const OPENSSL_ED25519_KEY: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIMMaDa15yWTHrSe91VSMTB75C3RFEFxNHGg8MGmuOZsQ
-----END PRIVATE KEY-----
";
    const OPENSSL_ED25519_PUB: &str = "-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEA9noYVHog++SQpJTF9p/RVGWYY2p+EH2Jib4I33gDQSk=
-----END PUBLIC KEY-----
";
    const OPENSSL_ED25519_SIG: &str =
        "LnLYM9ux3F79/ZRX9rHSLFOKbpke6POiJC9dFtLR892MOvoaLrrU/x10FgK3atOCFYwVBqWiIx4ueBvmLh4nBg==";
    const X25519_KEY: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VuBCIEICBeXfIGzor6dWUVt4NaS6V6+iJTiTw+miakFk2NtD5W
-----END PRIVATE KEY-----
";
    const X25519_PUB: &str = "-----BEGIN PUBLIC KEY-----
MCowBQYDK2VuAyEA0XUoLnjip06no9IZN+8jgRNyGXSCY9hBHe4x4x/N4mE=
-----END PUBLIC KEY-----
";

    const GARBAGE_PUB: &str = "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n";

    fn generate(alg: Algorithm) -> SigningKey {
        SigningKey::generate(alg).expect("the test machine has OS randomness")
    }

    fn base64(text: &str) -> Vec<u8> {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .expect("fixture is base64")
    }

    #[test]
    fn algorithms_round_trip_through_their_names() {
        for (alg, name) in [(Algorithm::Ed25519, "ed25519"), (Algorithm::P256, "p256")] {
            assert_eq!(alg.to_string(), name);
            assert_eq!(name.parse::<Algorithm>(), Ok(alg));
        }
        for bad in ["", "Ed25519", "rsa", "p-256"] {
            assert!(bad.parse::<Algorithm>().is_err(), "{bad}");
        }
    }

    #[test]
    fn private_keys_round_trip_through_pkcs8_pem() {
        for alg in ALGORITHMS {
            let key = generate(alg);
            let pem = key.to_pem();
            assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----\n"), "{alg}");
            let back = SigningKey::from_pem(&pem).expect("own PEM reads back");
            assert_eq!(back.algorithm(), alg);
            assert_eq!(back.public_key(), key.public_key(), "{alg}");
            assert_eq!(back.to_pem(), pem, "{alg}");
        }
    }

    #[test]
    fn public_keys_round_trip_through_spki_pem() {
        for alg in ALGORITHMS {
            let public = generate(alg).public_key();
            let pem = public.to_pem();
            assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----\n"), "{alg}");
            let back = PublicKey::from_pem(&pem).expect("own PEM reads back");
            assert_eq!(back, public, "{alg}");
            assert_eq!(back.algorithm(), alg);
        }
    }

    #[test]
    fn key_ids_are_stable_distinct_and_well_formed() {
        let keys: Vec<_> = ALGORITHMS
            .into_iter()
            .chain(ALGORITHMS)
            .map(generate)
            .collect();
        let ids: Vec<_> = keys.iter().map(|k| k.public_key().key_id()).collect();
        for (key, id) in keys.iter().zip(&ids) {
            let again = PublicKey::from_pem(&key.public_key().to_pem()).expect("reads back");
            assert_eq!(&again.key_id(), id, "same key, same id");
            assert_eq!(id.as_str().parse::<KeyId>().as_ref(), Ok(id));
        }
        for (i, a) in ids.iter().enumerate() {
            assert!(ids[i + 1..].iter().all(|b| a != b), "{a} repeats");
        }
    }

    #[test]
    fn key_ids_refuse_anything_but_sha256_and_lowercase_hex() {
        let hex = "ab".repeat(32);
        for bad in [
            hex.clone(),
            format!("sha512:{hex}"),
            format!("sha256:{}", hex.to_uppercase()),
        ]
        .iter()
        .map(String::as_str)
        .chain(["", "sha256:", "sha256:abc"])
        {
            let err = bad.parse::<KeyId>().expect_err("refused");
            assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
        }
    }

    #[test]
    fn openssl_keys_and_signatures_are_understood() {
        let message = pae(PAYLOAD_TYPE, b"hello");
        let cases = [
            (
                OPENSSL_P256_KEY,
                OPENSSL_P256_PUB,
                OPENSSL_P256_SIG,
                Algorithm::P256,
            ),
            (
                OPENSSL_ED25519_KEY,
                OPENSSL_ED25519_PUB,
                OPENSSL_ED25519_SIG,
                Algorithm::Ed25519,
            ),
        ];
        for (private, public, sig, alg) in cases {
            let key = SigningKey::from_pem(private).expect("OpenSSL's PKCS#8 reads");
            let public = PublicKey::from_pem(public).expect("OpenSSL's SPKI reads");
            assert_eq!((key.algorithm(), key.public_key()), (alg, public.clone()));
            assert!(
                public.verifies(&message, &base64(sig)),
                "{alg}: OpenSSL's signature"
            );
            assert!(
                !public.verifies(b"other", &base64(sig)),
                "{alg}: other message"
            );
        }
    }

    #[test]
    fn a_compressed_p256_key_has_the_same_id_as_the_uncompressed_one() {
        let compressed = PublicKey::from_pem(OPENSSL_P256_PUB_COMPRESSED).expect("reads");
        let uncompressed = PublicKey::from_pem(OPENSSL_P256_PUB).expect("reads");
        assert_eq!(compressed, uncompressed);
    }

    #[test]
    fn own_signatures_verify_only_for_their_message_and_key() {
        for alg in ALGORITHMS {
            let (key, other) = (generate(alg), generate(alg));
            let sig = key.sign(b"message");
            assert!(key.public_key().verifies(b"message", &sig), "{alg}");
            assert!(!key.public_key().verifies(b"messagE", &sig), "{alg}");
            assert!(!other.public_key().verifies(b"message", &sig), "{alg}");
            assert!(
                !key.public_key().verifies(b"message", b""),
                "{alg}: empty sig"
            );
        }
    }

    #[test]
    fn pem_readers_refuse_with_a_reason() {
        let ed = generate(Algorithm::Ed25519);
        let private = |t: &str| {
            SigningKey::from_pem(t)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let public = |t: &str| {
            PublicKey::from_pem(t)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let off_curve = OPENSSL_P256_PUB.replace("zX+D", "zY+D");
        let cases = [
            ("garbage private", private("not pem"), "not a PEM key"),
            (
                "public as private",
                private(&ed.public_key().to_pem()),
                "\"PUBLIC KEY\"",
            ),
            ("private as public", public(&ed.to_pem()), "\"PRIVATE KEY\""),
            ("x25519 private", private(X25519_KEY), "1.3.101.110"),
            ("x25519 public", public(X25519_PUB), "1.3.101.110"),
            ("garbage public", public(GARBAGE_PUB), "not a PEM key"),
            (
                "point off the curve",
                public(&off_curve),
                "invalid p256 key",
            ),
        ];
        for (case, result, named) in cases {
            let err = result.expect_err(case);
            assert!(err.contains(named), "{case}: {err}");
        }
    }

    #[test]
    fn debug_of_a_signing_key_shows_no_key_bytes() {
        for alg in ALGORITHMS {
            let key = generate(alg);
            let debug = format!("{key:?}");
            let id = key.public_key().key_id();
            assert_eq!(
                debug,
                format!(
                    "SigningKey {{ algorithm: {alg:?}, key_id: {:?} }}",
                    id.as_str()
                )
            );
            let body: String = key
                .to_pem()
                .lines()
                .filter(|l| !l.starts_with("-----"))
                .collect();
            let der = base64(&body);
            for window in der.windows(8) {
                let hex: String = window.iter().map(|b| format!("{b:02x}")).collect();
                let list = format!("{:?}", window).trim_matches(['[', ']']).to_owned();
                assert!(
                    !debug.contains(&hex) && !debug.contains(&list),
                    "{alg}: {debug}"
                );
            }
        }
    }
}
