//! The trust decision: which pinned signer, if any, vouches for a presented
//! release. Pure: the trust store's rows come in, a verdict goes out.
//! (Keyless Sigstore bundles take [`crate::verify_bundle`], which ends with
//! the same release checks.)

use std::fmt;

use toolhost_types::Digest;

use crate::{
    Envelope, EnvelopeSignature, KeyId, MAX_SIGNATURES, PAYLOAD_TYPE, PluginPattern, PublicKey,
    Refusal, Release, pae,
};

/// An identity the operator trusts, as the trust store keeps it. A signer
/// with no `plugins` is trusted for nothing (its signatures are reported as
/// [`Refusal::SignerNotPinned`], so an admin can bind it).
#[derive(Debug, Clone)]
pub struct TrustedSigner {
    /// The operator's name for the signer; reported in verdicts and refusals.
    pub name: String,
    /// How the signer proves itself.
    pub identity: Identity,
    /// The plugin names it may sign.
    pub plugins: Vec<PluginPattern>,
    /// A revoked signer's signatures still verify, but are refused.
    pub revoked: bool,
}

impl TrustedSigner {
    /// True if one of the signer's patterns matches `plugin` (revocation aside).
    pub fn pinned_to(&self, plugin: &str) -> bool {
        self.plugins.iter().any(|p| p.matches(plugin))
    }

    fn key(&self) -> Option<&PublicKey> {
        match &self.identity {
            Identity::Key(key) => Some(key),
            Identity::Keyless { .. } => None,
        }
    }

    /// The (issuer, subject) pair of a keyless signer.
    pub(crate) fn keyless(&self) -> Option<(&str, &str)> {
        match &self.identity {
            Identity::Keyless { issuer, subject } => Some((issuer, subject)),
            Identity::Key(_) => None,
        }
    }
}

/// How a signer proves itself: a pinned key (DSSE envelopes, [`verify`]) or
/// a keyless Sigstore identity (bundles, [`crate::verify_bundle`]). Each
/// kind is only ever tried by its own verifier.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Identity {
    /// A pinned Ed25519 or P-256 public key.
    Key(PublicKey),
    /// A keyless Sigstore identity: a short-lived Fulcio certificate whose
    /// OIDC issuer and subject (its SAN: an e-mail address or a URI such as
    /// `https://github.com/org/repo/.github/workflows/release.yml@refs/tags/v1`)
    /// equal these exactly. No patterns: a workflow path or tag is pinned
    /// as written, so a new release workflow is a new, explicit pin.
    Keyless {
        /// The OIDC issuer, e.g. `https://token.actions.githubusercontent.com`.
        issuer: String,
        /// The certificate's SAN, compared byte for byte whatever its kind.
        subject: String,
    },
}

impl fmt::Display for Identity {
    /// `key:sha256:<hex>` for a key, `keyless:<issuer>#<subject>` for a
    /// keyless identity: a label for verdicts, audit rows and refusals.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Key(key) => write!(f, "key:{}", key.key_id()),
            Self::Keyless { issuer, subject } => write!(f, "{}", keyless_label(issuer, subject)),
        }
    }
}

/// How a keyless identity is written in verdicts and refusals.
pub(crate) fn keyless_label(issuer: &str, subject: &str) -> String {
    format!("keyless:{issuer}#{subject}")
}

/// What an intake presents: the release it claims, the digests of the
/// bytes it actually holds, and the envelope if it found one.
#[derive(Debug, Clone, Copy)]
pub struct Presented<'a> {
    /// The plugin name the intake would install under.
    pub plugin: &'a str,
    /// The version the intake would install.
    pub version: &'a str,
    /// SHA-256 of the component bytes the intake holds.
    pub component: &'a Digest,
    /// SHA-256 of the manifest bytes the intake holds.
    pub manifest: &'a Digest,
    /// The DSSE envelope, if one came with the plugin.
    pub envelope: Option<&'a Envelope>,
}

/// A release a trusted, pinned, unrevoked signer vouches for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The [`TrustedSigner::name`] whose signature was accepted.
    pub signer: String,
    /// The id of the key that signed: for a key signer, its pinned key's id;
    /// for a keyless signer, the id of the short-lived Fulcio certificate's
    /// key (same recipe, SHA-256 of the SPKI DER), which identifies this one
    /// signature, not the signer: pin and record [`Verified::identity`] instead.
    pub key_id: KeyId,
    /// The accepted signer's [`Identity`], as its `Display` writes it:
    /// `key:sha256:<hex>` or `keyless:<issuer>#<subject>`.
    pub identity: String,
    /// The signed release (equal to what was presented).
    pub release: Release,
}

/// Decides whether `signers` vouch for the presented release, offline.
///
/// In order: no envelope → `Unsigned`; a payload type other than
/// [`PAYLOAD_TYPE`], or zero or over [`MAX_SIGNATURES`] signatures →
/// `Malformed`. Each signature is tried against the signers whose key id
/// equals its keyid (every key-holding signer if it has none), over
/// `pae(payload_type, payload)`. Then the first of these that applies:
/// 1. a verifying signer that is unrevoked and pinned to `presented.plugin`:
///    the statement is parsed (`Malformed`), then the plugin name and the
///    version are compared (`ReleaseMismatch`), then the component
///    (`ComponentTampered`) and manifest (`ManifestTampered`) digests → `Ok`;
/// 2. a verifying signer that is revoked → `RevokedSigner`;
/// 3. a verifying signer pinned elsewhere → `SignerNotPinned`;
/// 4. some signer's key was tried but nothing verified → `BadSignature`;
/// 5. otherwise → `UnknownSigner`, listing the keyids presented.
///
/// The statement is parsed only after a trusted key's signature over it
/// verifies: an unauthenticated payload is never parsed. Work is bounded by
/// signatures × signers. Hostile input yields a `Refusal`, never a panic.
pub fn verify(presented: &Presented<'_>, signers: &[TrustedSigner]) -> Result<Verified, Refusal> {
    let plugin = presented.plugin;
    let envelope = presented.envelope.ok_or_else(|| Refusal::Unsigned {
        plugin: plugin.to_owned(),
    })?;
    check_shape(envelope)?;
    let message = pae(&envelope.payload_type, &envelope.payload);
    let tally = Tally::of(&envelope.signatures, &message, signers);
    let (signer, key_id) = tally.decide(plugin, &envelope.signatures)?;
    let release = Release::from_statement(&envelope.payload)?;
    check_release(presented, &release)?;
    Ok(Verified {
        signer: signer.name.clone(),
        key_id,
        identity: signer.identity.to_string(),
        release,
    })
}

fn check_shape(envelope: &Envelope) -> Result<(), Refusal> {
    if envelope.payload_type != PAYLOAD_TYPE {
        let (found, want) = (&envelope.payload_type, PAYLOAD_TYPE);
        return Err(Refusal::malformed(format!(
            "payload type {found:?}, expected {want:?}"
        )));
    }
    let count = envelope.signatures.len();
    if count == 0 || count > MAX_SIGNATURES {
        let detail = format!("envelope has {count} signatures, expected 1 to {MAX_SIGNATURES}");
        return Err(Refusal::malformed(detail));
    }
    Ok(())
}

/// Which trusted signers each signature named, and which of them verified.
struct Tally<'s> {
    tried: Vec<&'s TrustedSigner>,
    verified: Vec<(&'s TrustedSigner, KeyId)>,
}

impl<'s> Tally<'s> {
    fn of(signatures: &[EnvelopeSignature], message: &[u8], signers: &'s [TrustedSigner]) -> Self {
        let keyed: Vec<_> = signers
            .iter()
            .filter_map(|s| s.key().map(|k| (s, k, k.key_id())))
            .collect();
        let mut tally = Tally {
            tried: Vec::new(),
            verified: Vec::new(),
        };
        for sig in signatures {
            let named = |id: &KeyId| sig.keyid.as_deref().is_none_or(|k| k == id.as_str());
            for (signer, key, id) in keyed.iter().filter(|(_, _, id)| named(id)) {
                tally.tried.push(signer);
                if key.verifies(message, &sig.sig) {
                    tally.verified.push((signer, id.clone()));
                }
            }
        }
        tally
    }

    fn decide(
        self,
        plugin: &str,
        signatures: &[EnvelopeSignature],
    ) -> Result<(&'s TrustedSigner, KeyId), Refusal> {
        let verified = self.verified;
        let accepted = verified
            .iter()
            .find(|(s, _)| !s.revoked && s.pinned_to(plugin));
        if let Some((signer, id)) = accepted {
            return Ok((signer, id.clone()));
        }
        if let Some((signer, _)) = verified.iter().find(|(s, _)| s.revoked) {
            return Err(Refusal::RevokedSigner {
                signer: signer.name.clone(),
            });
        }
        if let Some((signer, _)) = verified.first() {
            return Err(Refusal::SignerNotPinned {
                signer: signer.name.clone(),
                plugin: plugin.to_owned(),
                pins: signer.plugins.iter().map(ToString::to_string).collect(),
            });
        }
        if let Some(signer) = self.tried.first() {
            return Err(Refusal::BadSignature {
                signer: signer.name.clone(),
                detail: "no signature verifies with its key".to_owned(),
            });
        }
        let key_ids = signatures
            .iter()
            .map(|s| s.keyid.clone().unwrap_or_else(|| "(none)".to_owned()))
            .collect();
        Err(Refusal::UnknownSigner { key_ids })
    }
}

/// The checks every accepted statement goes through, whichever envelope
/// carried it: plugin name and version, then the component and manifest digests.
pub(crate) fn check_release(presented: &Presented<'_>, signed: &Release) -> Result<(), Refusal> {
    for (field, signed, presented) in [
        ("plugin", &signed.plugin, presented.plugin),
        ("version", &signed.version, presented.version),
    ] {
        if signed != presented {
            return Err(Refusal::ReleaseMismatch {
                field,
                signed: signed.clone(),
                presented: presented.to_owned(),
            });
        }
    }
    if signed.component != *presented.component {
        return Err(Refusal::ComponentTampered {
            signed: signed.component,
            actual: *presented.component,
        });
    }
    if signed.manifest != *presented.manifest {
        return Err(Refusal::ManifestTampered {
            signed: signed.manifest,
            actual: *presented.manifest,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Algorithm, SigningKey};

    /// A realistic intake: `hello` 1.0.0 signed by `acme`, who is pinned to it.
    struct Intake {
        plugin: String,
        version: String,
        component: Digest,
        manifest: Digest,
        envelope: Option<Envelope>,
        key: SigningKey,
        signers: Vec<TrustedSigner>,
    }

    fn key(alg: Algorithm) -> SigningKey {
        SigningKey::generate(alg).expect("the test machine has OS randomness")
    }

    fn signer(name: &str, key: &SigningKey, pins: &[&str]) -> TrustedSigner {
        TrustedSigner {
            name: name.into(),
            identity: Identity::Key(key.public_key()),
            plugins: pins
                .iter()
                .map(|p| p.parse().expect("valid pattern"))
                .collect(),
            revoked: false,
        }
    }

    impl Intake {
        fn new(alg: Algorithm, plugin: &str, pins: &[&str]) -> Self {
            let key = key(alg);
            let (component, manifest) = (Digest::of(b"\0asm"), Digest::of(b"[tools]"));
            let release = Release {
                plugin: plugin.into(),
                version: "1.0.0".into(),
                component,
                manifest,
            };
            Intake {
                plugin: plugin.into(),
                version: release.version.clone(),
                envelope: Some(Envelope::sign(&release, &key)),
                signers: vec![signer("acme", &key, pins)],
                component,
                manifest,
                key,
            }
        }

        fn envelope(&mut self) -> &mut Envelope {
            self.envelope.as_mut().expect("the intake has an envelope")
        }

        /// Replaces the payload and signs it again with the intake's key.
        fn resign(&mut self, payload: Vec<u8>) {
            let key = self.key.clone();
            let envelope = self.envelope();
            envelope.payload = payload;
            envelope.signatures.clear();
            envelope.countersign(&key);
        }

        fn verify(&self) -> Result<Verified, Refusal> {
            let presented = Presented {
                plugin: &self.plugin,
                version: &self.version,
                component: &self.component,
                manifest: &self.manifest,
                envelope: self.envelope.as_ref(),
            };
            verify(&presented, &self.signers)
        }
    }

    fn flip_last(bytes: &mut [u8]) {
        if let Some(b) = bytes.last_mut() {
            *b ^= 1;
        }
    }

    type Tamper = fn(&mut Intake);

    #[test]
    fn each_refusal_comes_from_a_realistic_intake() {
        let cases: [(&str, Tamper, Option<&str>); 15] = [
            ("untouched", |_| {}, None),
            (
                "no keyid: every trusted key is tried",
                |i| i.envelope().signatures[0].keyid = None,
                None,
            ),
            ("no envelope", |i| i.envelope = None, Some("UNSIGNED")),
            (
                "another payload type",
                |i| i.envelope().payload_type = "text/plain".into(),
                Some("MALFORMED_SIGNATURE"),
            ),
            (
                "no signatures",
                |i| i.envelope().signatures.clear(),
                Some("MALFORMED_SIGNATURE"),
            ),
            (
                "a key nobody trusts",
                |i| i.signers[0].identity = Identity::Key(key(Algorithm::Ed25519).public_key()),
                Some("UNKNOWN_SIGNER"),
            ),
            (
                "a flipped payload byte",
                |i| flip_last(&mut i.envelope().payload),
                Some("BAD_SIGNATURE"),
            ),
            (
                "a flipped signature byte",
                |i| flip_last(&mut i.envelope().signatures[0].sig),
                Some("BAD_SIGNATURE"),
            ),
            (
                "a revoked signer",
                |i| i.signers[0].revoked = true,
                Some("REVOKED_SIGNER"),
            ),
            (
                "a signer pinned to another plugin",
                |i| i.signers[0].plugins = vec!["other".parse().expect("valid")],
                Some("SIGNER_NOT_PINNED"),
            ),
            (
                "other component bytes",
                |i| i.component = Digest::of(b"\0asm evil"),
                Some("COMPONENT_TAMPERED"),
            ),
            (
                "other manifest bytes",
                |i| i.manifest = Digest::of(b"[tools] more"),
                Some("MANIFEST_TAMPERED"),
            ),
            (
                "another version",
                |i| i.version = "1.0.1".into(),
                Some("RELEASE_MISMATCH"),
            ),
            (
                "a statement for another plugin",
                |i| {
                    i.signers[0].plugins.push("other".parse().expect("valid"));
                    i.plugin = "other".into();
                },
                Some("RELEASE_MISMATCH"),
            ),
            (
                "a signed statement with two subjects",
                |i| {
                    let text = String::from_utf8(i.envelope().payload.clone()).expect("UTF-8");
                    let (head, rest) = text.split_once("[{").expect("a subject list");
                    let (subject, tail) = rest.split_once("}}").expect("one subject");
                    i.resign(format!("{head}[{{{subject}}}}},{{{subject}}}}}{tail}").into_bytes());
                },
                Some("MALFORMED_SIGNATURE"),
            ),
        ];
        for alg in [Algorithm::Ed25519, Algorithm::P256] {
            for (case, tamper, code) in cases {
                let mut intake = Intake::new(alg, "hello", &["hello"]);
                tamper(&mut intake);
                let outcome = intake.verify();
                assert_eq!(
                    outcome.as_ref().err().map(Refusal::code),
                    code,
                    "{alg}, {case}: {outcome:?}"
                );
            }
        }
    }

    #[test]
    fn a_verified_release_names_its_signer_key_and_release() {
        let intake = Intake::new(Algorithm::P256, "hello", &["hello"]);
        let verified = intake.verify().expect("trusted");
        assert_eq!(verified.signer, "acme");
        assert_eq!(verified.key_id, intake.key.public_key().key_id());
        assert_eq!(
            (
                verified.release.plugin.as_str(),
                verified.release.version.as_str()
            ),
            ("hello", "1.0.0")
        );
    }

    #[test]
    fn refusals_carry_the_values_involved() {
        let mut intake = Intake::new(Algorithm::Ed25519, "hello", &["other", "acme-*"]);
        let pins = vec!["other".to_owned(), "acme-*".to_owned()];
        let (signer, plugin) = ("acme".to_owned(), "hello".to_owned());
        assert_eq!(
            intake.verify(),
            Err(Refusal::SignerNotPinned {
                signer,
                plugin,
                pins
            })
        );

        intake.signers[0].plugins = vec!["hello".parse().expect("valid")];
        intake.version = "2.0.0".into();
        let (signed, presented) = ("1.0.0".to_owned(), "2.0.0".to_owned());
        let mismatch = Refusal::ReleaseMismatch {
            field: "version",
            signed,
            presented,
        };
        assert_eq!(intake.verify(), Err(mismatch));

        intake.version = "1.0.0".into();
        let (signed, actual) = (intake.component, Digest::of(b"other"));
        intake.component = actual;
        assert_eq!(
            intake.verify(),
            Err(Refusal::ComponentTampered { signed, actual })
        );

        flip_last(&mut intake.envelope().signatures[0].sig);
        assert_eq!(
            intake.verify(),
            Err(Refusal::BadSignature {
                signer: "acme".into(),
                detail: "no signature verifies with its key".into(),
            })
        );

        let presented = intake.key.public_key().key_id().to_string();
        intake.signers[0].identity = Identity::Key(key(Algorithm::P256).public_key());
        assert_eq!(
            intake.verify(),
            Err(Refusal::UnknownSigner {
                key_ids: vec![presented]
            })
        );
        intake.envelope().signatures[0].keyid = None;
        intake.signers.clear();
        let none = vec!["(none)".to_owned()];
        assert_eq!(
            intake.verify(),
            Err(Refusal::UnknownSigner { key_ids: none })
        );
    }

    #[test]
    fn a_verified_release_names_the_signers_identity_and_keyless_signers_are_not_tried() {
        let mut intake = Intake::new(Algorithm::Ed25519, "hello", &["hello"]);
        let id = intake.key.public_key().key_id();
        let verified = intake.verify().expect("trusted");
        assert_eq!(verified.identity, format!("key:{id}"));

        intake.signers[0].identity = Identity::Keyless {
            issuer: "https://token.actions.githubusercontent.com".into(),
            subject: "https://github.com/acme/hello/.github/workflows/release.yml@refs/tags/v1"
                .into(),
        };
        let key_ids = vec![id.to_string()];
        assert_eq!(intake.verify(), Err(Refusal::UnknownSigner { key_ids }));
        let label = intake.signers[0].identity.to_string();
        assert!(label.starts_with(
            "keyless:https://token.actions.githubusercontent.com#https://github.com/acme/"
        ));
    }

    #[test]
    fn a_prefix_pin_covers_names_with_that_prefix_only() {
        for (plugin, code) in [
            ("acme-x", None),
            ("acme-", None),
            ("acmex", Some("SIGNER_NOT_PINNED")),
        ] {
            let intake = Intake::new(Algorithm::Ed25519, plugin, &["acme-*"]);
            let outcome = intake.verify();
            assert_eq!(
                outcome.as_ref().err().map(Refusal::code),
                code,
                "{plugin}: {outcome:?}"
            );
        }
    }

    #[test]
    fn a_countersignature_from_a_trusted_signer_is_enough() {
        let stranger = key(Algorithm::P256);
        let trusted = key(Algorithm::Ed25519);
        let mut intake = Intake::new(Algorithm::P256, "hello", &["hello"]);
        intake.signers = vec![signer("security", &trusted, &["hello"])];
        let release = Release::from_statement(&intake.envelope().payload).expect("own statement");
        let mut envelope = Envelope::sign(&release, &stranger);
        envelope.countersign(&trusted);
        intake.envelope = Some(envelope);
        let verified = intake.verify().expect("the countersigner is trusted");
        assert_eq!(
            (verified.signer.as_str(), verified.key_id),
            ("security", trusted.public_key().key_id())
        );
    }

    #[test]
    fn a_pinned_signer_wins_over_a_revoked_one() {
        let mut intake = Intake::new(Algorithm::Ed25519, "hello", &["hello"]);
        let old = key(Algorithm::P256);
        let mut revoked = signer("old", &old, &["hello"]);
        revoked.revoked = true;
        intake.signers.insert(0, revoked);
        intake.envelope().countersign(&old);
        assert_eq!(intake.verify().map(|v| v.signer), Ok("acme".to_owned()));
        intake.signers[1].plugins.clear();
        assert_eq!(intake.verify().map_err(|r| r.code()), Err("REVOKED_SIGNER"));
    }
}
