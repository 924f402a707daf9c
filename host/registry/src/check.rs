//! What a pull checks before it trusts a byte: that a manifest is the
//! release layout, that a signature artifact refers to it, that sizes are
//! within their limits, and that bytes are their digest's. Pure.

use oci_client::manifest::{ImageIndexEntry, OciDescriptor, OciImageIndex, OciImageManifest};
use toolhost_types::Digest;

use crate::layout::{
    COMPONENT_MEDIA_TYPE, CONFIG_MEDIA_TYPE, ENVELOPE_MEDIA_TYPE, MANIFEST_MEDIA_TYPE,
    PLUGIN_MANIFEST_MEDIA_TYPE, oci_digest,
};
use crate::reference::parse_digest;
use crate::{Reference, RegistryError};

/// The two layers of a release manifest, checked against the layout.
#[derive(Debug, Clone)]
pub(crate) struct ReleaseLayers {
    pub component: Layer,
    pub manifest: Layer,
}

/// A layer to pull: its digest and declared size, both checked.
#[derive(Debug, Clone)]
pub(crate) struct Layer {
    pub digest: Digest,
    pub size: u64,
}

/// Checks that `bytes` is a release manifest in this layout.
pub(crate) fn release_layers(at: &Reference, bytes: &[u8]) -> Result<ReleaseLayers, RegistryError> {
    let m = image_manifest(at, bytes)?;
    if m.config.media_type != CONFIG_MEDIA_TYPE {
        return Err(not_a_plugin(
            at,
            format!(
                "its config is {:?}, not {CONFIG_MEDIA_TYPE}",
                m.config.media_type
            ),
        ));
    }
    let [component, manifest] = &m.layers[..] else {
        return Err(not_a_plugin(
            at,
            format!(
                "it has {} layers, not 2 (component, manifest)",
                m.layers.len()
            ),
        ));
    };
    Ok(ReleaseLayers {
        component: layer(at, 0, component, COMPONENT_MEDIA_TYPE)?,
        manifest: layer(at, 1, manifest, PLUGIN_MANIFEST_MEDIA_TYPE)?,
    })
}

/// The newest signature artifact a referrers index lists: the last entry
/// of the envelope's type (a re-signed release appends; intake judges the
/// one it is given).
pub(crate) fn newest_signature(index: &OciImageIndex) -> Option<&ImageIndexEntry> {
    index.manifests.iter().rev().find(|m| {
        m.artifact_type.as_deref() == Some(ENVELOPE_MEDIA_TYPE)
            && m.media_type == MANIFEST_MEDIA_TYPE
    })
}

/// Checks that `bytes` is a signature artifact of `subject`: its one layer.
pub(crate) fn signature_layer(
    at: &Reference,
    bytes: &[u8],
    subject: &Digest,
) -> Result<Layer, RegistryError> {
    let m = image_manifest(at, bytes)?;
    if m.artifact_type.as_deref() != Some(ENVELOPE_MEDIA_TYPE) {
        return Err(not_a_plugin(
            at,
            format!("the signature artifact's type is {:?}", m.artifact_type),
        ));
    }
    if m.subject.as_ref().map(|s| s.digest.as_str()) != Some(&oci_digest(subject)) {
        return Err(not_a_plugin(
            at,
            "the signature artifact's subject is another manifest".into(),
        ));
    }
    let [envelope] = &m.layers[..] else {
        return Err(not_a_plugin(
            at,
            format!(
                "the signature artifact has {} layers, not 1",
                m.layers.len()
            ),
        ));
    };
    layer(at, 0, envelope, ENVELOPE_MEDIA_TYPE)
}

/// A declared size within `limit`, before anything is downloaded.
pub(crate) fn declared(
    at: &Reference,
    what: &str,
    size: i64,
    limit: usize,
) -> Result<u64, RegistryError> {
    let size = u64::try_from(size)
        .map_err(|_| not_a_plugin(at, format!("{what} declares size {size}")))?;
    within(at, what, size, limit)?;
    Ok(size)
}

/// `size` bytes (declared, or read so far) within `limit`.
pub(crate) fn within(
    at: &Reference,
    what: &str,
    size: u64,
    limit: usize,
) -> Result<(), RegistryError> {
    let limit = u64::try_from(limit).expect("a limit fits a u64");
    if size > limit {
        return Err(RegistryError::LimitExceeded {
            reference: at.to_string(),
            what: what.to_owned(),
            size,
            limit,
        });
    }
    Ok(())
}

/// `bytes` are those `expected` names.
pub(crate) fn digest_matches(
    at: &Reference,
    what: &str,
    bytes: &[u8],
    expected: &Digest,
) -> Result<(), RegistryError> {
    let actual = Digest::of(bytes);
    if actual != *expected {
        return Err(RegistryError::DigestMismatch {
            reference: at.to_string(),
            what: what.to_owned(),
            expected: oci_digest(expected),
            actual: oci_digest(&actual),
        });
    }
    Ok(())
}

fn image_manifest(at: &Reference, bytes: &[u8]) -> Result<OciImageManifest, RegistryError> {
    let m: OciImageManifest = serde_json::from_slice(bytes).map_err(|e| {
        not_a_plugin(
            at,
            format!("its manifest is not an OCI image manifest: {e}"),
        )
    })?;
    if m.schema_version != 2 || m.media_type.as_deref() != Some(MANIFEST_MEDIA_TYPE) {
        return Err(not_a_plugin(
            at,
            format!(
                "its manifest is {:?}, not {MANIFEST_MEDIA_TYPE}",
                m.media_type
            ),
        ));
    }
    Ok(m)
}

/// Layer `index` of type `media_type`, with a sha256 digest, a size, and
/// no foreign URLs (a blob comes from this registry or not at all).
fn layer(
    at: &Reference,
    index: usize,
    d: &OciDescriptor,
    media_type: &str,
) -> Result<Layer, RegistryError> {
    if d.media_type != media_type {
        return Err(not_a_plugin(
            at,
            format!("layer {index} is {:?}, not {media_type}", d.media_type),
        ));
    }
    if d.urls.as_ref().is_some_and(|u| !u.is_empty()) {
        return Err(not_a_plugin(
            at,
            format!("layer {index} names foreign URLs"),
        ));
    }
    let digest = parse_digest(&d.digest).ok_or_else(|| {
        not_a_plugin(
            at,
            format!("layer {index}'s digest {:?} is not sha256", d.digest),
        )
    })?;
    let size = u64::try_from(d.size)
        .map_err(|_| not_a_plugin(at, format!("layer {index} declares size {}", d.size)))?;
    Ok(Layer { digest, size })
}

fn not_a_plugin(at: &Reference, why: String) -> RegistryError {
    RegistryError::NotAPlugin {
        reference: at.to_string(),
        why,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::layout::{
        EMPTY_MEDIA_TYPE, INDEX_MEDIA_TYPE, MAX_OCI_MANIFEST_BYTES, layer_name, release_manifest,
        signature_manifest,
    };

    fn at() -> Reference {
        Reference::parse("oci://127.0.0.1:5000/authors/hello:0.2.0").expect("valid")
    }

    use crate::test_fixtures::{json, release};

    /// A release manifest with `edit` applied to its JSON.
    fn edited(edit: impl FnOnce(&mut Value)) -> Vec<u8> {
        let mut v = json(&release_manifest(&release(None)).bytes);
        edit(&mut v);
        serde_json::to_vec(&v).expect("JSON")
    }

    #[test]
    fn what_a_push_builds_a_pull_accepts_with_each_layers_digest_and_size() {
        let r = release(None);
        let layers = release_layers(&at(), &release_manifest(&r).bytes).expect("the layout");
        assert_eq!(layers.component.digest, Digest::of(&r.component));
        assert_eq!(layers.component.size, r.component.len() as u64);
        assert_eq!(layers.manifest.digest, Digest::of(r.manifest.as_bytes()));
    }

    #[test]
    fn manifests_that_are_not_the_release_layout_are_not_a_plugin() {
        let refused: Vec<(&str, Vec<u8>)> = vec![
            ("not JSON", b"<html>".to_vec()),
            (
                "an index",
                edited(|v| v["mediaType"] = INDEX_MEDIA_TYPE.into()),
            ),
            (
                "another config",
                edited(|v| {
                    v["config"]["mediaType"] = "application/vnd.oci.image.config.v1+json".into()
                }),
            ),
            (
                "a wkg artifact (one layer)",
                edited(|v| {
                    v["layers"].as_array_mut().expect("layers").pop();
                }),
            ),
            (
                "swapped layers",
                edited(|v| v["layers"].as_array_mut().expect("layers").swap(0, 1)),
            ),
            (
                "a foreign layer",
                edited(|v| v["layers"][0]["urls"] = json!(["https://elsewhere.example/blob"])),
            ),
            (
                "a sha512 layer",
                edited(|v| v["layers"][0]["digest"] = format!("sha512:{}", "ab".repeat(64)).into()),
            ),
            (
                "a negative size",
                edited(|v| v["layers"][1]["size"] = (-1).into()),
            ),
        ];
        for (case, bytes) in refused {
            let err = release_layers(&at(), &bytes).expect_err(case);
            assert_eq!(err.code(), "NOT_A_PLUGIN", "{case}: {err}");
            assert!(
                err.to_string()
                    .contains("oci://127.0.0.1:5000/authors/hello"),
                "{case}: {err}"
            );
        }
    }

    #[test]
    fn a_signature_is_a_referrer_of_the_release_with_one_envelope_layer() {
        let release = release_manifest(&release(None));
        let sig = signature_manifest(&release, b"{\"payload\":\"\"}");
        let v = json(&sig.bytes);
        assert_eq!(v["artifactType"], ENVELOPE_MEDIA_TYPE);
        assert_eq!(v["subject"]["digest"], oci_digest(&release.digest).as_str());
        assert_eq!(v["subject"]["size"], release.bytes.len());
        assert_eq!(v["config"]["mediaType"], EMPTY_MEDIA_TYPE);
        let layer = signature_layer(&at(), &sig.bytes, &release.digest).expect("accepted");
        assert_eq!(layer.digest, Digest::of(b"{\"payload\":\"\"}"));
        let other = signature_layer(&at(), &sig.bytes, &Digest::of(b"another release"));
        assert_eq!(other.expect_err("another subject").code(), "NOT_A_PLUGIN");
    }

    #[test]
    fn an_index_without_an_envelope_entry_has_no_signature() {
        let mut index: OciImageIndex = serde_json::from_value(json!({
            "schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE,
            "manifests": [{"mediaType": MANIFEST_MEDIA_TYPE, "digest": oci_digest(&Digest::of(b"x")),
                           "size": 3, "artifactType": "application/vnd.dev.sigstore.bundle.v0.3+json"}],
        }))
        .expect("an index");
        assert!(newest_signature(&index).is_none());
        index.manifests[0].artifact_type = Some(ENVELOPE_MEDIA_TYPE.into());
        assert!(newest_signature(&index).is_some());
    }

    #[test]
    fn sizes_over_their_limit_are_refused_before_and_after_a_download() {
        let err = declared(
            &at(),
            "signature manifest",
            64 * 1024 + 1,
            MAX_OCI_MANIFEST_BYTES,
        )
        .expect_err("over");
        assert_eq!(err.code(), "LIMIT_EXCEEDED");
        assert!(
            err.to_string().contains("signature manifest")
                && err.to_string().contains("65537 bytes"),
            "{err}"
        );
        assert_eq!(
            declared(&at(), "x", -5, 10).expect_err("negative").code(),
            "NOT_A_PLUGIN"
        );
        assert_eq!(declared(&at(), "x", 10, 10).expect("at the limit"), 10);
        assert_eq!(
            within(&at(), "x", 11, 10).expect_err("over").code(),
            "LIMIT_EXCEEDED"
        );
    }

    #[test]
    fn bytes_that_are_not_their_digests_are_a_mismatch_naming_both() {
        let expected = Digest::of(b"component");
        let err =
            digest_matches(&at(), &layer_name(0), b"tampered", &expected).expect_err("tampered");
        assert_eq!(err.code(), "DIGEST_MISMATCH");
        let shown = err.to_string();
        assert!(
            shown.contains("component layer (application/wasm)"),
            "{shown}"
        );
        assert!(shown.contains(&oci_digest(&expected)), "{shown}");
        assert!(
            shown.contains(&oci_digest(&Digest::of(b"tampered"))),
            "{shown}"
        );
        assert!(digest_matches(&at(), "x", b"component", &expected).is_ok());
    }
}
