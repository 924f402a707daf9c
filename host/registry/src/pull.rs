//! A release from a registry: the tag resolved once, then everything by
//! digest, every byte bounded and checked.

use toolhost_catalog::intake::{MAX_COMPONENT_BYTES, MAX_MANIFEST_BYTES};
use toolhost_signing::MAX_ENVELOPE_BYTES;
use toolhost_types::Digest;

use crate::check;
use crate::layout::{self, MAX_OCI_MANIFEST_BYTES};
use crate::reference::parse_digest;
use crate::wire::Wire;
use crate::{Reference, RegistryError, Release};

/// A release as pulled.
#[derive(Debug, Clone)]
pub struct Pulled {
    /// Its bytes, each checked against its digest.
    pub release: Release,
    /// Where it came from, by manifest digest, even when a tag was given:
    /// `oci://HOST:PORT/REPO@sha256:…`.
    pub pinned: Reference,
}

/// Pulls the release `at` names. A tag is resolved to a manifest digest
/// once; the manifest, both layers and the signature artifact are then read
/// by digest and refused (`DIGEST_MISMATCH`) if their bytes are not the
/// digest's. Sizes are checked against the descriptor before a download
/// and on the bytes after: the OCI manifest against
/// [`MAX_OCI_MANIFEST_BYTES`], the component against
/// [`MAX_COMPONENT_BYTES`], the manifest text against
/// [`MAX_MANIFEST_BYTES`], the envelope against [`MAX_ENVELOPE_BYTES`]. No
/// signature artifact gives `envelope: None`; whether that, or the
/// signature, is acceptable is intake's decision.
pub async fn pull(at: &Reference) -> Result<Pulled, RegistryError> {
    let wire = Wire::connect(at);
    let digest = wire.resolve(at).await?;
    let pinned = at.pinned(digest);
    let raw = wire.manifest(at, digest, "manifest").await?;
    let layers = check::release_layers(&pinned, &raw)?;
    let (component_layer, manifest_layer) = (layout::layer_name(0), layout::layer_name(1));
    let component = wire
        .blob(
            &pinned,
            &layers.component,
            &component_layer,
            MAX_COMPONENT_BYTES,
        )
        .await?;
    let text = wire
        .blob(
            &pinned,
            &layers.manifest,
            &manifest_layer,
            MAX_MANIFEST_BYTES,
        )
        .await?;
    let manifest = String::from_utf8(text).map_err(|_| RegistryError::NotAPlugin {
        reference: pinned.to_string(),
        why: "its manifest layer is not UTF-8 text".into(),
    })?;
    let envelope = signature(&wire, &pinned, digest).await?;
    Ok(Pulled {
        release: Release {
            manifest,
            component,
            envelope,
        },
        pinned,
    })
}

/// The envelope of the newest signature artifact referring to `pinned`
/// (manifest `subject`).
async fn signature(
    wire: &Wire,
    pinned: &Reference,
    subject: Digest,
) -> Result<Option<Vec<u8>>, RegistryError> {
    let index = wire.referrers(pinned).await?;
    let Some(entry) = check::newest_signature(&index) else {
        return Ok(None);
    };
    let what = "signature manifest";
    let digest = parse_digest(&entry.digest).ok_or_else(|| RegistryError::NotAPlugin {
        reference: pinned.to_string(),
        why: format!("its signature's digest {:?} is not sha256", entry.digest),
    })?;
    let at = pinned.pinned(digest);
    check::declared(&at, what, entry.size, MAX_OCI_MANIFEST_BYTES)?;
    let raw = wire.manifest(pinned, digest, what).await?;
    let layer = check::signature_layer(&at, &raw, &subject)?;
    let name = format!("signature layer ({})", layout::ENVELOPE_MEDIA_TYPE);
    let envelope = wire.blob(&at, &layer, &name, MAX_ENVELOPE_BYTES).await?;
    Ok(Some(envelope))
}
