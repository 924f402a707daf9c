//! A release into a registry: blobs, the release manifest at its tag, and
//! the signature beside it with the referrers tag kept up to date.

use toolhost_catalog::intake::{MAX_COMPONENT_BYTES, MAX_MANIFEST_BYTES};
use toolhost_signing::MAX_ENVELOPE_BYTES;

use crate::check;
use crate::layout::{self, Manifest};
use crate::wire::Wire;
use crate::{Reference, RegistryError, Release, Target};

/// What a push wrote.
#[derive(Debug, Clone)]
pub struct Pushed {
    /// The release manifest by digest: what to submit, and what reviewers see.
    pub pinned: Reference,
    /// The signature artifact by digest, when the release had an envelope.
    pub signature: Option<Reference>,
}

/// Pushes `release` to `at` (which must name a tag). The same release
/// always gives the same manifest digest, so pushing it again is harmless.
/// With an envelope, the signature artifact (its `subject` the release
/// manifest) is pushed too and listed in the referrers index at tag
/// `sha256-<hex>`, which registries without the referrers API need (read,
/// append if absent, write: two pushes racing may drop one entry; the last
/// writer's stays). Refuses what a pull would refuse as too large.
pub async fn push(at: &Reference, release: &Release) -> Result<Pushed, RegistryError> {
    if let Target::Digest(_) = at.target() {
        return Err(RegistryError::InvalidReference {
            text: at.to_string(),
            why: "a push needs a tag (REPO:TAG); the digest is what it prints".into(),
        });
    }
    bounded(at, release)?;
    let wire = Wire::connect(at);
    let manifest = layout::release_manifest(release);
    put(&wire, at, &manifest).await?;
    let pinned = at.pinned(manifest.digest);
    let signature = match &release.envelope {
        Some(envelope) => Some(sign(&wire, &pinned, &manifest, envelope).await?),
        None => None,
    };
    Ok(Pushed { pinned, signature })
}

/// The signature artifact of `subject` and its referrers-tag entry.
async fn sign(
    wire: &Wire,
    pinned: &Reference,
    subject: &Manifest,
    envelope: &[u8],
) -> Result<Reference, RegistryError> {
    let signature = layout::signature_manifest(subject, envelope);
    let at = pinned.pinned(signature.digest);
    put(wire, &at, &signature).await?;
    let tag = pinned.tagged(layout::referrers_tag(&subject.digest));
    let existing = wire.index(&tag).await?;
    let index = layout::with_referrer(existing.as_deref(), &signature).map_err(|why| {
        RegistryError::NotAPlugin {
            reference: tag.to_string(),
            why,
        }
    })?;
    if let Some(index) = index {
        wire.put_manifest(&tag, &index, layout::INDEX_MEDIA_TYPE)
            .await?;
    }
    Ok(at)
}

/// A manifest's blobs, then the manifest itself at `at`.
async fn put(wire: &Wire, at: &Reference, manifest: &Manifest) -> Result<(), RegistryError> {
    for blob in &manifest.blobs {
        wire.put_blob(at, blob).await?;
    }
    wire.put_manifest(at, &manifest.bytes, layout::MANIFEST_MEDIA_TYPE)
        .await
}

fn bounded(at: &Reference, release: &Release) -> Result<(), RegistryError> {
    let sizes = [
        (
            layout::layer_name(0),
            release.component.len(),
            MAX_COMPONENT_BYTES,
        ),
        (
            layout::layer_name(1),
            release.manifest.len(),
            MAX_MANIFEST_BYTES,
        ),
        (
            "envelope".to_owned(),
            release.envelope.as_ref().map_or(0, Vec::len),
            MAX_ENVELOPE_BYTES,
        ),
    ];
    for (what, size, limit) in sizes {
        check::within(at, &what, size as u64, limit)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_push_refuses_what_a_pull_would_refuse_as_too_large() {
        let at = Reference::parse("oci://127.0.0.1:5000/authors/hello:0.2.0").expect("valid");
        let mut release = Release {
            manifest: "name = \"hello\"".into(),
            component: vec![0; MAX_COMPONENT_BYTES + 1],
            envelope: None,
        };
        let err = bounded(&at, &release).expect_err("too large");
        assert_eq!(err.code(), "LIMIT_EXCEEDED");
        assert!(err.to_string().contains("component layer"), "{err}");
        release.component.truncate(8);
        release.envelope = Some(vec![b' '; MAX_ENVELOPE_BYTES + 1]);
        assert_eq!(
            bounded(&at, &release).expect_err("too large").code(),
            "LIMIT_EXCEEDED"
        );
        release.envelope = Some(b"{}".to_vec());
        assert!(bounded(&at, &release).is_ok());
    }

    #[tokio::test]
    async fn a_push_needs_a_tag() {
        let at = Reference::parse(&format!("oci://127.0.0.1:5000/a@sha256:{}", "0".repeat(64)))
            .expect("valid");
        let release = Release {
            manifest: String::new(),
            component: Vec::new(),
            envelope: None,
        };
        let err = push(&at, &release).await.expect_err("a digest");
        assert_eq!(err.code(), "INVALID_REFERENCE");
    }
}
