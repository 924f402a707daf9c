//! The OCI layout of a release, as a push builds it (`check` is what a
//! pull makes of it). Pure: a release in, manifests and blobs out.
//!
//! ```text
//! image manifest (application/vnd.oci.image.manifest.v1+json)   <- the pinned digest
//!   config  application/vnd.wasm.config.v0+json                  {"architecture":"wasm",…}
//!   layer 0 application/wasm                                     the component (wkg reads it)
//!   layer 1 application/vnd.toolhost.plugin.manifest.v1+toml     the manifest, byte for byte
//! image manifest, artifactType application/vnd.dsse.envelope.v1+json
//!   subject the release manifest
//!   config  application/vnd.oci.empty.v1+json                    {}
//!   layer 0 application/vnd.dsse.envelope.v1+json                the DSSE envelope
//! image index at tag sha256-<release hex>                       the referrers tag schema
//! ```

use oci_client::manifest::{ImageIndexEntry, OciDescriptor, OciImageIndex, OciImageManifest};
use serde::Serialize;
use toolhost_types::Digest;

use crate::Release;

/// An OCI image manifest.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// An OCI image index (the referrers tag schema's list).
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";
/// The config of a Wasm OCI artifact (CNCF TAG-Runtime; wkg, oci-wasm).
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The component: the first layer, as wkg and wassette expect it.
pub const COMPONENT_MEDIA_TYPE: &str = "application/wasm";
/// The toolhost manifest's text: the second layer.
pub const PLUGIN_MANIFEST_MEDIA_TYPE: &str = "application/vnd.toolhost.plugin.manifest.v1+toml";
/// The signature artifact's type and its one layer's media type.
pub const ENVELOPE_MEDIA_TYPE: &str = "application/vnd.dsse.envelope.v1+json";
/// The OCI 1.1 empty descriptor, the config of an artifact that has none.
pub const EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
/// The empty descriptor's blob.
pub const EMPTY_CONFIG: &[u8] = b"{}";

/// Largest OCI manifest read: a release manifest is under 1 KiB (three
/// descriptors); 64 KiB leaves room for annotations while bounding what a
/// hostile registry can make this host parse.
pub const MAX_OCI_MANIFEST_BYTES: usize = 64 * 1024;

/// The `created` written into every config: a fixed instant, so pushing the
/// same release twice gives the same manifest digest (wkg's config type
/// requires the field; nothing reads its value).
const CREATED: &str = "1970-01-01T00:00:00Z";

/// A blob to push: its descriptor and bytes.
#[derive(Debug, Clone)]
pub(crate) struct Blob {
    pub descriptor: OciDescriptor,
    pub bytes: Vec<u8>,
}

impl Blob {
    fn new(media_type: &str, bytes: Vec<u8>) -> Blob {
        let descriptor = OciDescriptor {
            media_type: media_type.to_owned(),
            digest: oci_digest(&Digest::of(&bytes)),
            size: i64::try_from(bytes.len()).expect("a blob in memory fits an i64"),
            ..OciDescriptor::default()
        };
        Blob { descriptor, bytes }
    }
}

/// A manifest to push: its JSON, exactly the bytes its digest covers.
#[derive(Debug, Clone)]
pub(crate) struct Manifest {
    pub blobs: Vec<Blob>,
    pub bytes: Vec<u8>,
    pub digest: Digest,
}

impl Manifest {
    fn new(blobs: Vec<Blob>, manifest: &OciImageManifest) -> Manifest {
        let bytes = serde_json::to_vec(manifest).expect("a manifest serializes");
        let digest = Digest::of(&bytes);
        Manifest {
            blobs,
            bytes,
            digest,
        }
    }

    /// The descriptor a referrer's `subject`, or an index entry, names.
    fn descriptor(&self) -> OciDescriptor {
        OciDescriptor {
            media_type: MANIFEST_MEDIA_TYPE.to_owned(),
            digest: oci_digest(&self.digest),
            size: i64::try_from(self.bytes.len()).expect("a manifest fits an i64"),
            ..OciDescriptor::default()
        }
    }
}

/// The config blob: the Wasm artifact config, without the component's
/// WIT world (nothing here reads it).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WasmConfig<'a> {
    created: &'a str,
    architecture: &'a str,
    os: &'a str,
    layer_digests: Vec<&'a str>,
}

/// The release manifest of `release`, with its config and two layers.
pub(crate) fn release_manifest(release: &Release) -> Manifest {
    let component = Blob::new(COMPONENT_MEDIA_TYPE, release.component.clone());
    let text = Blob::new(
        PLUGIN_MANIFEST_MEDIA_TYPE,
        release.manifest.as_bytes().to_vec(),
    );
    let config = WasmConfig {
        created: CREATED,
        architecture: "wasm",
        os: "wasip2",
        layer_digests: vec![&component.descriptor.digest, &text.descriptor.digest],
    };
    let config = Blob::new(
        CONFIG_MEDIA_TYPE,
        serde_json::to_vec(&config).expect("a config serializes"),
    );
    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.to_owned()),
        config: config.descriptor.clone(),
        layers: vec![component.descriptor.clone(), text.descriptor.clone()],
        ..OciImageManifest::default()
    };
    Manifest::new(vec![component, text, config], &manifest)
}

/// The signature artifact beside `subject`: one envelope layer.
pub(crate) fn signature_manifest(subject: &Manifest, envelope: &[u8]) -> Manifest {
    let config = Blob::new(EMPTY_MEDIA_TYPE, EMPTY_CONFIG.to_vec());
    let layer = Blob::new(ENVELOPE_MEDIA_TYPE, envelope.to_vec());
    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.to_owned()),
        artifact_type: Some(ENVELOPE_MEDIA_TYPE.to_owned()),
        config: config.descriptor.clone(),
        layers: vec![layer.descriptor.clone()],
        subject: Some(subject.descriptor()),
        ..OciImageManifest::default()
    };
    Manifest::new(vec![config, layer], &manifest)
}

/// The referrers tag of a manifest: `sha256-<hex>`.
pub(crate) fn referrers_tag(subject: &Digest) -> String {
    format!("sha256-{subject}")
}

/// The referrers index with `signature` listed: `existing` (the tag's
/// current index, if any) with one entry appended, or `None` when it is
/// already listed and nothing needs writing.
pub(crate) fn with_referrer(
    existing: Option<&[u8]>,
    signature: &Manifest,
) -> Result<Option<Vec<u8>>, String> {
    let mut index = match existing {
        Some(bytes) => serde_json::from_slice::<OciImageIndex>(bytes)
            .map_err(|e| format!("the referrers tag holds no image index: {e}"))?,
        None => OciImageIndex {
            schema_version: 2,
            media_type: Some(INDEX_MEDIA_TYPE.to_owned()),
            manifests: Vec::new(),
            artifact_type: None,
            annotations: None,
        },
    };
    let entry = signature.descriptor();
    if index.manifests.iter().any(|m| m.digest == entry.digest) {
        return Ok(None);
    }
    index.manifests.push(ImageIndexEntry {
        media_type: entry.media_type,
        digest: entry.digest,
        size: entry.size,
        platform: None,
        annotations: None,
        artifact_type: Some(ENVELOPE_MEDIA_TYPE.to_owned()),
    });
    Ok(Some(
        serde_json::to_vec(&index).expect("an index serializes"),
    ))
}

/// What a layer is called in messages: `component layer (application/wasm)`.
pub(crate) fn layer_name(index: usize) -> String {
    match index {
        0 => format!("component layer ({COMPONENT_MEDIA_TYPE})"),
        _ => format!("manifest layer ({PLUGIN_MANIFEST_MEDIA_TYPE})"),
    }
}

/// `sha256:<hex>`, as OCI writes digests.
pub(crate) fn oci_digest(d: &Digest) -> String {
    format!("sha256:{d}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::check::newest_signature;

    use crate::test_fixtures::{json, release};

    #[test]
    fn a_release_is_a_wasm_artifact_with_the_component_first_and_the_manifest_second() {
        let r = release(None);
        let m = release_manifest(&r);
        let v = json(&m.bytes);
        let component = oci_digest(&Digest::of(&r.component));
        let text = oci_digest(&Digest::of(r.manifest.as_bytes()));
        assert_eq!(v["mediaType"], MANIFEST_MEDIA_TYPE);
        assert_eq!(v["config"]["mediaType"], CONFIG_MEDIA_TYPE);
        assert_eq!(v["layers"][0]["mediaType"], COMPONENT_MEDIA_TYPE);
        assert_eq!(v["layers"][0]["digest"], component.as_str());
        assert_eq!(v["layers"][1]["mediaType"], PLUGIN_MANIFEST_MEDIA_TYPE);
        assert_eq!(v["layers"][1]["digest"], text.as_str());
        let config = m
            .blobs
            .iter()
            .find(|b| b.descriptor.media_type == CONFIG_MEDIA_TYPE);
        let config = json(&config.expect("a config blob").bytes);
        assert_eq!(config["architecture"], "wasm");
        assert_eq!(config["os"], "wasip2");
        assert_eq!(config["layerDigests"], json!([component, text]));
        assert_eq!(m.digest, Digest::of(&m.bytes));
        assert_eq!(
            release_manifest(&r).bytes,
            m.bytes,
            "the same release, the same digest"
        );
    }

    #[test]
    fn the_referrers_index_gains_a_signature_once_and_keeps_what_it_listed() {
        let subject = release_manifest(&release(None));
        let (one, two) = (
            signature_manifest(&subject, b"1"),
            signature_manifest(&subject, b"2"),
        );
        let first = with_referrer(None, &one).expect("new").expect("written");
        assert_eq!(
            with_referrer(Some(&first), &one),
            Ok(None),
            "already listed"
        );
        let both = with_referrer(Some(&first), &two)
            .expect("appended")
            .expect("written");
        let index: OciImageIndex = serde_json::from_slice(&both).expect("an index");
        assert_eq!(index.media_type.as_deref(), Some(INDEX_MEDIA_TYPE));
        let digests: Vec<&str> = index.manifests.iter().map(|m| m.digest.as_str()).collect();
        assert_eq!(digests, [oci_digest(&one.digest), oci_digest(&two.digest)]);
        assert_eq!(
            newest_signature(&index).map(|m| m.digest.clone()),
            Some(oci_digest(&two.digest))
        );
        assert!(with_referrer(Some(b"not an index"), &one).is_err());
        assert_eq!(
            referrers_tag(&subject.digest),
            format!("sha256-{}", subject.digest)
        );
    }
}
