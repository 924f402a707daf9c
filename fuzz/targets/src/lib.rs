//! The fuzz targets of the host's edge parsers. Each target takes the
//! fuzzer's bytes, feeds them to one parser (or a few that read the same
//! input), and checks a property that must hold for any input: no panic,
//! and what the parser accepts round-trips or stays within its rules.
//!
//! `fuzz/afl` wraps each in `afl::fuzz!` for coverage-guided runs
//! (`make fuzz`); the tests below replay every file of `fuzz/corpus/<target>`
//! (seeds, and every input that ever crashed a target, kept as a
//! regression) on each `make test`.
//!
//! The targets of the first edges are here; those that need a fixture of
//! their own (keys, a snapshot, base URLs) have a module each, named for
//! the room they fuzz. What a room keeps private is reached through its
//! hidden `fuzzing` module, there for these targets only.

mod auth;
mod backend;
mod mcp;
mod resolver;

use std::path::Path;

use toolhost_auth::{client_metadata, pkce, scope::Scopes};
use toolhost_catalog::Manifest;
use toolhost_registry::Reference;
use toolhost_secrets::Scanner;
use toolhost_signing::{Envelope, PublicKey};
use toolhost_types::Permission;

pub use auth::{dpop_proof, jwt, oauth_params};
pub use backend::backend_path;
pub use mcp::{cursor_state, mcp_request};
pub use resolver::resolver_query;

/// A target: bytes in, a panic on a broken property.
pub type Target = fn(&[u8]);

/// Every target, by the name of its corpus directory and AFL binary.
pub const TARGETS: [(&str, Target); 14] = [
    ("oauth_client_metadata", oauth_client_metadata),
    ("scopes_pkce", scopes_pkce),
    ("manifest", manifest),
    ("signed_envelope", signed_envelope),
    ("oci_reference", oci_reference),
    ("secret_scanner", secret_scanner),
    ("permission", permission),
    ("mcp_request", mcp_request),
    ("jwt", jwt),
    ("oauth_params", oauth_params),
    ("cursor_state", cursor_state),
    ("resolver_query", resolver_query),
    ("backend_path", backend_path),
    ("dpop_proof", dpop_proof),
];

/// The scopes a registration may ask for in these targets.
const SCOPES: [&str; 3] = ["mcp", "hello:read", "testbench:run"];

/// RFC 7591 registration bodies and Client ID Metadata Documents: any
/// body is refused or accepted without a panic; what is accepted has
/// redirect URIs that each pass the single-URI rule.
pub fn oauth_client_metadata(data: &[u8]) {
    if let Ok(m) = client_metadata::validate_registration(data, &SCOPES, "mcp") {
        for uri in &m.redirect_uris {
            assert!(
                client_metadata::validate_redirect_uri(uri).is_ok(),
                "an accepted registration holds a refused redirect URI {uri:?}"
            );
        }
    }
    let url = "https://client.example/oauth/metadata.json";
    let _ = client_metadata::validate_document(url, data, &SCOPES, "mcp");
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = client_metadata::validate_redirect_uri(text);
        let _ = toolhost_auth::cimd::is_document_url(text);
    }
}

/// Scope strings and PKCE: a parsed scope set reads back the same; a
/// well-formed verifier, and only one, verifies against its own S256
/// challenge, and that challenge is a valid one.
pub fn scopes_pkce(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(scopes) = Scopes::parse(text) {
        let again = scopes.iter().collect::<Vec<_>>().join(" ");
        let reparsed = Scopes::parse(&again).expect("a parsed scope set parses again");
        assert!(
            reparsed.is_subset_of(&scopes) && scopes.is_subset_of(&reparsed),
            "{text:?} did not read back"
        );
    }
    let _ = pkce::valid_challenge(text);
    let challenge = pkce::s256(text);
    assert!(pkce::valid_challenge(&challenge), "S256 of {text:?}");
    // RFC 7636 §4.1: 43 to 128 of [A-Za-z0-9-._~]; only such a verifier
    // verifies, and it does against its own challenge.
    let well_formed = (43..=128).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    assert_eq!(
        pkce::verify(text, &challenge),
        well_formed,
        "{text:?} against its own challenge"
    );
}

/// Plugin manifests (TOML): refused with an error or parsed, never a panic.
pub fn manifest(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = Manifest::parse(text, Path::new("fuzz/plugin.toml"));
    }
}

/// Signed releases: DSSE envelopes and public keys in PEM. An envelope
/// that parses serializes to JSON that parses again.
pub fn signed_envelope(data: &[u8]) {
    if let Ok(envelope) = Envelope::from_json(data) {
        let json = envelope.to_json();
        assert!(
            Envelope::from_json(json.as_bytes()).is_ok(),
            "a parsed envelope does not read back: {json}"
        );
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = PublicKey::from_pem(text);
    }
}

/// OCI references (`oci://registry/repository:tag@digest`): a parsed
/// reference names a registry and a repository.
pub fn oci_reference(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(r) = Reference::parse(text) {
        assert!(!r.registry().is_empty(), "{text:?}: no registry");
        assert!(!r.repository().is_empty(), "{text:?}: no repository");
    }
}

/// The secret scanner: whatever it redacts holds no finding afterwards,
/// and a text it calls clean it leaves as it is.
pub fn secret_scanner(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let scanner = Scanner::new()
        .with_secret("s3cr3t-backend-token-value")
        .with_host_path(Path::new("/srv/toolhost"));
    let redacted = scanner.redact(text);
    assert!(
        scanner.is_clean(&redacted),
        "still a finding after redaction: {:?}",
        scanner.find(&redacted)
    );
    if scanner.is_clean(text) {
        assert_eq!(redacted, text, "a clean text was changed");
    }
}

/// Permissions (`resource:action`): one that parses reads back the same.
pub fn permission(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(p) = text.parse::<Permission>() {
        let shown = p.to_string();
        assert_eq!(
            shown.parse::<Permission>().ok(),
            Some(p),
            "{text:?} read back as {shown:?}"
        );
    }
}

/// `original` with one byte changed as `data`'s first three bytes say:
/// the one at the position the first two name (modulo the length),
/// XORed with the third. `None` when the third is zero or `data` shorter.
pub(crate) fn flipped(original: &[u8], data: &[u8]) -> Option<Vec<u8>> {
    let [hi, lo, x, ..] = *data else {
        return None;
    };
    if x == 0 || original.is_empty() {
        return None;
    }
    let at = usize::from(u16::from_be_bytes([hi, lo])) % original.len();
    let mut changed = original.to_vec();
    changed[at] ^= x;
    Some(changed)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::TARGETS;

    fn corpus(target: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../corpus")
            .join(target)
    }

    /// Every seed and every kept crash of every target, replayed.
    #[test]
    fn every_corpus_input_keeps_its_targets_property() {
        for (name, target) in TARGETS {
            let dir = corpus(name);
            let entries =
                std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
            let mut replayed = 0;
            for entry in entries {
                let path = entry.expect("a corpus entry").path();
                let data =
                    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                target(&data);
                replayed += 1;
            }
            assert!(replayed > 0, "{name}: an empty corpus");
        }
    }

    /// Every target has its AFL binary (fuzz/afl/src/bin/<name>.rs).
    #[test]
    fn every_target_has_a_fuzzer_binary() {
        for (name, _) in TARGETS {
            let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../afl/src/bin")
                .join(format!("{name}.rs"));
            assert!(bin.is_file(), "{} is missing", bin.display());
        }
    }
}
