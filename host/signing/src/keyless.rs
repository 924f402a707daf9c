//! The keyless trust decision: which pinned keyless signer, if any, vouches
//! for a release presented with a Sigstore bundle. The same verdicts as the
//! key path ([`crate::verify`]), in the same order of precedence.

use crate::sigstore::{KeylessBundle, Outcome};
use crate::trust::{check_release, keyless_label};
use crate::{Presented, Refusal, Release, TrustRoot, TrustedSigner, Verified};

/// Decides whether the keyless `signers` vouch for the presented release,
/// carried by a Sigstore bundle (v0.3, or an older version `sigstore-verify`
/// reads) whose content is a DSSE envelope around the release's in-toto
/// statement: what `cosign attest-blob --type urn:toolhost:plugin-release:v1
/// --bundle …` and GitHub's `actions/attest` write. Offline.
///
/// The component is checked by its digest, `presented.component`, not its
/// bytes: `sigstore-verify` binds a DSSE statement to its artifact through
/// the subject's SHA-256 alone. `presented.envelope` is not read (the
/// bundle carries its own envelope), and key signers are not tried.
///
/// In order:
/// 1. the bundle is bounded ([`crate::MAX_BUNDLE_BYTES`]) and parsed →
///    `Malformed` if it is not UTF-8 bundle JSON, signs the artifact
///    directly (a message signature) instead of carrying a DSSE envelope of
///    [`crate::PAYLOAD_TYPE`], or has no Fulcio certificate (a managed-key
///    bundle);
/// 2. `sigstore-verify` runs once per keyless signer, with that signer's
///    exact (issuer, subject) as its policy and nothing skipped: the
///    certificate chain to a Fulcio authority of `root` at the signing
///    time, its code-signing usage and SCT, the identity, the Rekor
///    inclusion proof, checkpoint and SET (or TSA time), the DSSE
///    signature, the statement's subject against `presented.component`,
///    and the log entry's consistency with the bundle. Unrevoked signers
///    pinned to the plugin go first, stopping at the first that verifies,
///    then revoked ones, then the rest;
/// 3. the first of these that applies:
///    - a pinned, unrevoked signer whose run verified → step 4; whose run
///      found its identity but another subject → `ComponentTampered`;
///    - a revoked signer whose identity the bundle proved → `RevokedSigner`;
///    - a signer pinned elsewhere whose identity it proved → `SignerNotPinned`;
///    - a run refused for any other reason (chain, SCT, log, timestamps,
///      signature) → `BadSignature`, with `sigstore-verify`'s message;
///    - keyless signers are pinned to the plugin, but none has the
///      certificate's identity → `IdentityMismatch`;
///    - otherwise → `UnknownSigner`, naming the certificate's identity;
/// 4. the now authenticated statement is parsed (`Malformed`) and checked
///    like any other: plugin name and version (`ReleaseMismatch`),
///    component (`ComponentTampered`), manifest (`ManifestTampered`) → `Ok`.
///
/// So a genuine Sigstore bundle over something that is not this release
/// passes step 2 and is refused at step 4. Work is bounded by the number of
/// keyless signers; hostile input yields a `Refusal`, never a panic.
pub fn verify_bundle(
    presented: &Presented<'_>,
    bundle_json: &[u8],
    signers: &[TrustedSigner],
    root: &TrustRoot,
) -> Result<Verified, Refusal> {
    let bundle = KeylessBundle::parse(bundle_json)?;
    let tally = Tally::of(&bundle, presented, signers, root);
    let signer = tally.decide(&bundle, presented)?;
    let release = Release::from_statement(bundle.payload())?;
    check_release(presented, &release)?;
    Ok(Verified {
        signer: signer.name.clone(),
        key_id: bundle.key_id().clone(),
        identity: signer.identity.to_string(),
        release,
    })
}

/// How a signer ranks for a plugin: who is tried first and whose verdict wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    Pinned,
    Revoked,
    Elsewhere,
}

fn rank(signer: &TrustedSigner, plugin: &str) -> Rank {
    match (signer.revoked, signer.pinned_to(plugin)) {
        (true, _) => Rank::Revoked,
        (false, true) => Rank::Pinned,
        (false, false) => Rank::Elsewhere,
    }
}

/// Each keyless signer tried, in rank order, with what Sigstore said.
struct Tally<'s> {
    runs: Vec<(&'s TrustedSigner, Rank, Outcome)>,
}

impl<'s> Tally<'s> {
    fn of(
        bundle: &KeylessBundle,
        presented: &Presented<'_>,
        signers: &'s [TrustedSigner],
        root: &TrustRoot,
    ) -> Self {
        let mut keyless: Vec<_> = signers
            .iter()
            .filter_map(|s| Some((s, s.keyless()?, rank(s, presented.plugin))))
            .collect();
        keyless.sort_by_key(|(_, _, rank)| *rank);
        let mut runs = Vec::new();
        for (signer, (issuer, subject), rank) in keyless {
            let outcome = root.check(bundle, presented.component, issuer, subject);
            let done = rank == Rank::Pinned && outcome == Outcome::Verified;
            runs.push((signer, rank, outcome));
            if done {
                break;
            }
        }
        Tally { runs }
    }

    fn decide(
        self,
        bundle: &KeylessBundle,
        presented: &Presented<'_>,
    ) -> Result<&'s TrustedSigner, Refusal> {
        let proved = |o: &Outcome| matches!(o, Outcome::Verified | Outcome::OtherArtifact);
        if let Some((signer, _, outcome)) = self
            .runs
            .iter()
            .find(|(_, r, o)| *r == Rank::Pinned && proved(o))
        {
            return match outcome {
                Outcome::Verified => Ok(signer),
                _ => Err(tampered(bundle, presented)),
            };
        }
        if let Some((signer, ..)) = self
            .runs
            .iter()
            .find(|(_, r, o)| *r == Rank::Revoked && proved(o))
        {
            return Err(Refusal::RevokedSigner {
                signer: signer.name.clone(),
            });
        }
        if let Some((signer, ..)) = self.runs.iter().find(|(_, _, o)| proved(o)) {
            return Err(Refusal::SignerNotPinned {
                signer: signer.name.clone(),
                plugin: presented.plugin.to_owned(),
                pins: signer.plugins.iter().map(ToString::to_string).collect(),
            });
        }
        let refused = self.runs.iter().find_map(|(s, _, o)| match o {
            Outcome::Refused(detail) => Some((s, detail)),
            _ => None,
        });
        if let Some((signer, detail)) = refused {
            return Err(Refusal::BadSignature {
                signer: signer.name.clone(),
                detail: detail.clone(),
            });
        }
        Err(self.unmatched(bundle))
    }

    /// No signer has the certificate's identity.
    fn unmatched(&self, bundle: &KeylessBundle) -> Refusal {
        let expected: Vec<_> = self
            .runs
            .iter()
            .filter(|(_, rank, _)| *rank == Rank::Pinned)
            .filter_map(|(s, ..)| s.keyless())
            .map(|(issuer, subject)| keyless_label(issuer, subject))
            .collect();
        let found = bundle.claimed().to_owned();
        if expected.is_empty() {
            return Refusal::UnknownSigner {
                key_ids: vec![found],
            };
        }
        Refusal::IdentityMismatch {
            expected: expected.join(" or "),
            found,
        }
    }
}

/// The signed statement's subject is not the presented component.
fn tampered(bundle: &KeylessBundle, presented: &Presented<'_>) -> Refusal {
    match bundle.signed_component() {
        Some(signed) => Refusal::ComponentTampered {
            signed,
            actual: *presented.component,
        },
        None => Refusal::malformed("the signed statement has no sha256 subject"),
    }
}
