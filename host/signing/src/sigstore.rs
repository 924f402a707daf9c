//! The Sigstore side of keyless verification: the trusted root, reading a
//! bundle, and one `sigstore-verify` run for one pinned identity, its verdict
//! reduced to an [`Outcome`]. The only file that sees `sigstore-verify`'s
//! types; every certificate, log and signature check is that crate's.

use std::fmt;

use sigstore_verify::trust_root::{SIGSTORE_PRODUCTION_TRUSTED_ROOT, TrustedRoot};
use sigstore_verify::types::{Bundle, SignatureContent};
use sigstore_verify::types::{Sha256Hash, bundle::VerificationMaterialContent};
use sigstore_verify::{Error, IdentityMatcher, VerificationPolicy, Verifier};
use toolhost_types::Digest;

use crate::trust::keyless_label;
use crate::{KeyId, MAX_ENVELOPE_BYTES, PAYLOAD_TYPE, Refusal};

/// Largest Sigstore bundle accepted (bounds parsing of untrusted input):
/// the same 64 KiB as a DSSE envelope, so intake, the registry and the
/// HTTP upload keep one bound for either kind of signature file. A bundle
/// holds the envelope (under 2 KiB for a release), the Fulcio certificate
/// (~1 KiB DER, a third more in base64), a Rekor entry whose body repeats
/// both, an inclusion proof of a few dozen hashes and a checkpoint: the
/// recorded ones in `tests/data/sigstore/` are 6 to 10 KiB. The rest leaves
/// room for a certificate chain and RFC 3161 timestamps.
pub const MAX_BUNDLE_BYTES: usize = MAX_ENVELOPE_BYTES;

/// The Sigstore trust anchors keyless bundles are checked against: Fulcio
/// certificate authorities, Rekor logs, CT logs and timestamp authorities,
/// as one `trusted_root.json` lists them. Verification against it needs no
/// network. Built once and shared: construction validates every key and
/// certificate in it, so a bad root fails here, not on the first bundle.
pub struct TrustRoot {
    verifier: Verifier,
    counts: [usize; 4],
}

/// Why a `trusted_root.json` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrustRootError {
    /// Not UTF-8 JSON of the trusted-root shape.
    #[error("not a Sigstore trusted_root.json: {detail}")]
    Parse {
        /// The parser's complaint.
        detail: String,
    },
    /// JSON of some other Sigstore document (a bundle, a signing config…).
    #[error("trusted root media type {found:?}, expected {TRUSTED_ROOT_MEDIA_TYPE:?}")]
    MediaType {
        /// The `mediaType` the document carries.
        found: String,
    },
    /// A root against which no keyless bundle could verify here: keyless
    /// certificates need a Fulcio authority, and the transparency log is
    /// never skipped, so a Rekor log key is needed too.
    #[error("trusted root lists no {missing}: no keyless bundle could verify against it")]
    Incomplete {
        /// `"certificate authority"` or `"transparency log"`.
        missing: &'static str,
    },
    /// A key, certificate or validity window in it that `sigstore-verify`
    /// cannot use.
    #[error("trusted root holds unusable trust material: {detail}")]
    Unusable {
        /// `sigstore-verify`'s complaint.
        detail: String,
    },
}

/// The `mediaType` of a trusted root (version 0.1 of the format).
const TRUSTED_ROOT_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.trustedroot+json;version=0.1";

impl TrustRoot {
    /// The Sigstore public-good instance's root, as embedded in
    /// `sigstore-verify` 0.15.1: a snapshot, with no TUF refresh. Bundles
    /// signed after public-good rotates or adds a Fulcio or Rekor key need a
    /// newer root through [`TrustRoot::from_json`] (e.g. fetched by
    /// `cosign trusted-root` or from Sigstore's TUF repository).
    pub fn public_good() -> Self {
        Self::from_json(SIGSTORE_PRODUCTION_TRUSTED_ROOT.as_bytes())
            .expect("the root embedded in sigstore-verify is valid; a test checks it")
    }

    /// An operator's `trusted_root.json` (a private Sigstore, a pinned copy
    /// of public-good). Refused if it is not one, names another media type,
    /// lists no Fulcio authority or no Rekor log, or holds material
    /// `sigstore-verify` cannot use (malformed keys or certificates,
    /// duplicate log ids, a validity window that ends before it starts).
    pub fn from_json(bytes: &[u8]) -> Result<Self, TrustRootError> {
        let parse = |detail: String| TrustRootError::Parse { detail };
        let text = std::str::from_utf8(bytes).map_err(|e| parse(e.to_string()))?;
        let root = TrustedRoot::from_json(text).map_err(|e| parse(e.to_string()))?;
        if root.media_type != TRUSTED_ROOT_MEDIA_TYPE {
            let found = root.media_type.clone();
            return Err(TrustRootError::MediaType { found });
        }
        let missing = match (
            root.certificate_authorities.is_empty(),
            root.tlogs.is_empty(),
        ) {
            (true, _) => Some("certificate authority"),
            (_, true) => Some("transparency log"),
            _ => None,
        };
        if let Some(missing) = missing {
            return Err(TrustRootError::Incomplete { missing });
        }
        let counts = [
            root.certificate_authorities.len(),
            root.tlogs.len(),
            root.ctlogs.len(),
            root.timestamp_authorities.len(),
        ];
        let verifier = Verifier::new(&root).map_err(|e| TrustRootError::Unusable {
            detail: e.to_string(),
        })?;
        Ok(Self { verifier, counts })
    }

    /// Runs every `sigstore-verify` check of `bundle` over the component
    /// digest, for one pinned identity, with nothing skipped: the
    /// certificate chain to a Fulcio authority at the signing time, its
    /// CODE_SIGNING usage and SCT, the identity, the Rekor inclusion proof,
    /// checkpoint and SET, the DSSE signature, the statement's subject
    /// against `component`, and the log entry's consistency with the bundle.
    pub(crate) fn check(
        &self,
        bundle: &KeylessBundle,
        component: &Digest,
        issuer: &str,
        subject: &str,
    ) -> Outcome {
        let policy = VerificationPolicy::new(IdentityMatcher::Exact(subject.to_owned()), issuer);
        let digest = Sha256Hash::new(*component.as_bytes());
        match self.verifier.verify(digest, &bundle.bundle, &policy) {
            Ok(_) => Outcome::Verified,
            Err(Error::IdentityMismatch { .. } | Error::IssuerMismatch { .. }) => {
                Outcome::OtherIdentity
            }
            Err(Error::ArtifactMismatch(_)) => Outcome::OtherArtifact,
            Err(e) => Outcome::Refused(e.to_string()),
        }
    }
}

impl fmt::Debug for TrustRoot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [fulcio, rekor, ct, tsa] = self.counts;
        f.debug_struct("TrustRoot")
            .field("certificate_authorities", &fulcio)
            .field("transparency_logs", &rekor)
            .field("ct_logs", &ct)
            .field("timestamp_authorities", &tsa)
            .finish()
    }
}

/// What one `sigstore-verify` run over a bundle said for one identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Every check passed.
    Verified,
    /// The certificate is for another SAN or another issuer. (The chain and
    /// SCT were checked first; the log and the signature were not.)
    OtherIdentity,
    /// Certificate, identity, log and signature hold, but no subject of the
    /// signed statement is the presented component.
    OtherArtifact,
    /// Refused for another reason, in `sigstore-verify`'s words.
    Refused(String),
}

/// A parsed keyless bundle whose content is a DSSE in-toto envelope.
pub(crate) struct KeylessBundle {
    bundle: Bundle,
    payload: Vec<u8>,
    key_id: KeyId,
    claimed: String,
}

impl KeylessBundle {
    /// Bounds, parses and shapes a bundle; verifies nothing. `Malformed` if
    /// it is over [`MAX_BUNDLE_BYTES`], not UTF-8 bundle JSON of a version
    /// `sigstore-verify` reads, signs the artifact directly (a message
    /// signature) rather than a DSSE envelope of [`PAYLOAD_TYPE`], or has no
    /// Fulcio certificate that parses (a managed-key bundle).
    pub(crate) fn parse(json: &[u8]) -> Result<Self, Refusal> {
        if json.len() > MAX_BUNDLE_BYTES {
            let size = json.len();
            let detail = format!("bundle is {size} bytes, over the {MAX_BUNDLE_BYTES}-byte limit");
            return Err(Refusal::malformed(detail));
        }
        let text = std::str::from_utf8(json)
            .map_err(|e| Refusal::malformed(format!("bundle is not UTF-8: {e}")))?;
        let bundle = Bundle::from_json(text)
            .map_err(|e| Refusal::malformed(format!("not a Sigstore bundle: {e}")))?;
        let payload = dsse_payload(&bundle)?.to_vec();
        let (key_id, claimed) = certificate(&bundle)?;
        Ok(Self {
            bundle,
            payload,
            key_id,
            claimed,
        })
    }

    /// The DSSE payload: authenticated only once a [`TrustRoot::check`]
    /// returned [`Outcome::Verified`] or [`Outcome::OtherArtifact`].
    pub(crate) fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// The id of the certificate's key ([`KeyId`]'s recipe over its SPKI).
    pub(crate) fn key_id(&self) -> &KeyId {
        &self.key_id
    }

    /// The certificate's identity as it claims it, `keyless:<issuer>#<SAN>`:
    /// unverified, so for refusal messages only, never for a decision.
    pub(crate) fn claimed(&self) -> &str {
        &self.claimed
    }

    /// The first `sha256` subject of the statement (for a tampering report).
    pub(crate) fn signed_component(&self) -> Option<Digest> {
        let statement: serde_json::Value = serde_json::from_slice(&self.payload).ok()?;
        let subjects = statement.get("subject")?.as_array()?;
        subjects
            .iter()
            .filter_map(|s| s.get("digest")?.get("sha256")?.as_str())
            .find_map(|hex| hex.parse().ok())
    }
}

fn dsse_payload(bundle: &Bundle) -> Result<&[u8], Refusal> {
    let SignatureContent::DsseEnvelope(envelope) = &bundle.content else {
        return Err(Refusal::malformed(
            "bundle signs the artifact directly (a message signature), not a DSSE in-toto statement",
        ));
    };
    if envelope.payload_type != PAYLOAD_TYPE {
        let (found, want) = (&envelope.payload_type, PAYLOAD_TYPE);
        return Err(Refusal::malformed(format!(
            "bundle payload type {found:?}, expected {want:?}"
        )));
    }
    Ok(envelope.payload.as_bytes())
}

fn certificate(bundle: &Bundle) -> Result<(KeyId, String), Refusal> {
    let keyed = matches!(
        bundle.verification_material.content,
        VerificationMaterialContent::PublicKey(_)
    );
    let cert = bundle.signing_certificate().ok_or_else(|| {
        let what = if keyed {
            "a public-key hint"
        } else {
            "nothing"
        };
        Refusal::malformed(format!(
            "bundle has {what} where a Fulcio certificate belongs"
        ))
    })?;
    let info = sigstore_verify::crypto::parse_certificate_info(cert)
        .map_err(|e| Refusal::malformed(format!("bundle certificate: {e}")))?;
    let issuer = info.issuer.as_deref().unwrap_or("(no issuer)");
    let subject = info
        .identity
        .as_ref()
        .map_or("(no SAN)", |san| san.as_str());
    let key_id = KeyId::of_spki(info.public_key.as_bytes());
    Ok((key_id, keyless_label(issuer, subject)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUNDLE: &[u8] = include_bytes!("../tests/data/sigstore/conda-attestation.sigstore.json");
    const ARTIFACT: &[u8] =
        include_bytes!("../tests/data/sigstore/signed-package-2.1.0-hb0f4dca_0.conda");
    const ISSUER: &str = "https://token.actions.githubusercontent.com";
    const SAN: &str = "https://github.com/prefix-dev/sigstore-example/.github/workflows/action.yaml@refs/heads/main";

    #[test]
    fn the_recorded_bundle_verifies_at_the_sigstore_level_only_for_its_own_pin() {
        let (root, bundle) = (TrustRoot::public_good(), KeylessBundle::parse(BUNDLE));
        let bundle = bundle.expect("a keyless DSSE bundle");
        let (good, flipped) = (Digest::of(ARTIFACT), Digest::of(b"another package"));
        let cases = [
            (ISSUER, SAN, good, Outcome::Verified),
            (
                ISSUER,
                "https://github.com/evil/fork",
                good,
                Outcome::OtherIdentity,
            ),
            (
                "https://accounts.google.com",
                SAN,
                good,
                Outcome::OtherIdentity,
            ),
            (ISSUER, SAN, flipped, Outcome::OtherArtifact),
        ];
        for (issuer, subject, component, expected) in cases {
            let outcome = root.check(&bundle, &component, issuer, subject);
            assert_eq!(outcome, expected, "{issuer} {subject} {component}");
        }
    }

    #[test]
    fn a_parsed_bundle_names_its_claimed_identity_key_and_subject() {
        let bundle = KeylessBundle::parse(BUNDLE).expect("a keyless DSSE bundle");
        assert_eq!(bundle.claimed(), keyless_label(ISSUER, SAN));
        assert_eq!(bundle.signed_component(), Some(Digest::of(ARTIFACT)));
        assert!(bundle.key_id().as_str().starts_with("sha256:"));
        let statement: serde_json::Value =
            serde_json::from_slice(bundle.payload()).expect("the payload is JSON");
        assert_eq!(statement["_type"], crate::STATEMENT_TYPE);
    }
}
