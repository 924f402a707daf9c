//! Keyless Sigstore bundles through the public surface, with recorded
//! bundles and roots (`tests/data/sigstore/`, see its README).
//!
//! What cannot be tested here: a keyless bundle *over a toolhost release*.
//! Making one needs the network (an OIDC token, a Fulcio certificate, a
//! Rekor entry), which this machine does not have, and no recorded bundle
//! carries the `urn:toolhost:plugin-release:v1` predicate. So the accepting
//! end-to-end case is covered by construction: these tests show a genuine
//! bundle passing every Sigstore check and then meeting the release checks,
//! which are the very function the key path's accepting tests exercise.

use std::sync::LazyLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use toolhost_signing::{
    Algorithm, Identity, MAX_BUNDLE_BYTES, Presented, Refusal, Release, SigningKey, TrustRoot,
    TrustRootError, TrustedSigner, Verified, verify_bundle,
};
use toolhost_types::Digest;

const BUNDLE: &[u8] = include_bytes!("data/sigstore/conda-attestation.sigstore.json");
const ARTIFACT: &[u8] = include_bytes!("data/sigstore/signed-package-2.1.0-hb0f4dca_0.conda");
const BLOB_BUNDLE: &[u8] = include_bytes!("data/sigstore/cosign-v3-blob.sigstore.json");
const PUBLIC_GOOD_JSON: &[u8] = include_bytes!("data/sigstore/public-good.json");
const SCAFFOLDING_JSON: &[u8] = include_bytes!("data/sigstore/scaffolding.json");

/// The identity in the recorded bundle's certificate.
const ISSUER: &str = "https://token.actions.githubusercontent.com";
const SAN: &str =
    "https://github.com/prefix-dev/sigstore-example/.github/workflows/action.yaml@refs/heads/main";

static PUBLIC_GOOD: LazyLock<TrustRoot> = LazyLock::new(TrustRoot::public_good);

fn keyless(name: &str, issuer: &str, subject: &str, pins: &[&str]) -> TrustedSigner {
    TrustedSigner {
        name: name.into(),
        identity: Identity::Keyless {
            issuer: issuer.into(),
            subject: subject.into(),
        },
        plugins: pins.iter().map(|p| p.parse().expect("valid")).collect(),
        revoked: false,
    }
}

/// `hello` 1.0.0 presented with the recorded bundle, the component being
/// the recorded artifact unless a test says otherwise.
fn verify(
    component: &[u8],
    bundle: &[u8],
    signers: &[TrustedSigner],
    root: &TrustRoot,
) -> Result<Verified, Refusal> {
    let (component, manifest) = (Digest::of(component), Digest::of(b"[tools]"));
    let presented = Presented {
        plugin: "hello",
        version: "1.0.0",
        component: &component,
        manifest: &manifest,
        envelope: None,
    };
    verify_bundle(&presented, bundle, signers, root)
}

fn acme() -> Vec<TrustedSigner> {
    vec![keyless("acme", ISSUER, SAN, &["hello"])]
}

fn found() -> String {
    format!("keyless:{ISSUER}#{SAN}")
}

fn malformed_detail(outcome: Result<Verified, Refusal>) -> String {
    match outcome {
        Err(Refusal::Malformed { detail }) => detail,
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[test]
fn the_embedded_public_good_root_and_recorded_roots_load_and_can_be_shared() {
    fn shareable<T: Send + Sync>(_: &T) {}
    shareable(&*PUBLIC_GOOD);
    for json in [PUBLIC_GOOD_JSON, SCAFFOLDING_JSON] {
        TrustRoot::from_json(json).expect("a recorded trusted_root.json");
    }
    let debug = format!("{:?}", *PUBLIC_GOOD);
    assert!(debug.contains("certificate_authorities: 2"), "{debug}");
}

#[test]
fn a_trusted_root_that_is_not_a_usable_one_is_refused_by_kind() {
    type Expect = fn(&TrustRootError) -> bool;
    let root = String::from_utf8(PUBLIC_GOOD_JSON.to_vec()).expect("UTF-8");
    let value: serde_json::Value = serde_json::from_str(&root).expect("JSON");
    let without = |field: &str| {
        let mut v = value.clone();
        v[field] = serde_json::json!([]);
        v.to_string()
    };
    let mut bad_key = value.clone();
    bad_key["tlogs"][0]["publicKey"]["rawBytes"] = "AAAA".into();
    let cases: [(&str, Vec<u8>, Expect); 6] = [
        ("not UTF-8", vec![0xff, 0xfe], |e| {
            matches!(e, TrustRootError::Parse { .. })
        }),
        ("not JSON", b"{root".to_vec(), |e| {
            matches!(e, TrustRootError::Parse { .. })
        }),
        (
            "a bundle",
            BUNDLE.to_vec(),
            |e| matches!(e, TrustRootError::MediaType { found } if found.contains("bundle")),
        ),
        (
            "no Fulcio",
            without("certificateAuthorities").into_bytes(),
            |e| {
                *e == TrustRootError::Incomplete {
                    missing: "certificate authority",
                }
            },
        ),
        ("no Rekor", without("tlogs").into_bytes(), |e| {
            *e == TrustRootError::Incomplete {
                missing: "transparency log",
            }
        }),
        ("a bad Rekor key", bad_key.to_string().into_bytes(), |e| {
            matches!(e, TrustRootError::Unusable { .. })
        }),
    ];
    for (case, json, expected) in cases {
        let err = TrustRoot::from_json(&json).expect_err(case);
        assert!(expected(&err), "{case}: {err}");
    }
}

#[test]
fn a_genuine_bundle_passes_every_sigstore_check_then_fails_the_release_checks() {
    // Only a bundle that verified for a pinned, unrevoked signer reaches the
    // statement: any Sigstore failure would be BAD_SIGNATURE, IDENTITY_MISMATCH
    // or COMPONENT_TAMPERED. This is a conda attestation, not a toolhost release.
    for root in [
        &*PUBLIC_GOOD,
        &TrustRoot::from_json(PUBLIC_GOOD_JSON).expect("root"),
    ] {
        let detail = malformed_detail(verify(ARTIFACT, BUNDLE, &acme(), root));
        assert!(detail.contains("predicateType"), "{detail}");
        assert!(detail.contains("schemas.conda.org"), "{detail}");
        assert!(
            detail.contains("urn:toolhost:plugin-release:v1"),
            "{detail}"
        );
    }
}

#[test]
fn a_wrong_san_is_refused_as_an_identity_mismatch_naming_both() {
    let other = "https://github.com/evil/fork/.github/workflows/action.yaml@refs/heads/main";
    let signers = [keyless("acme", ISSUER, other, &["hello"])];
    assert_eq!(
        verify(ARTIFACT, BUNDLE, &signers, &PUBLIC_GOOD),
        Err(Refusal::IdentityMismatch {
            expected: format!("keyless:{ISSUER}#{other}"),
            found: found(),
        })
    );
}

#[test]
fn a_wrong_issuer_is_refused_as_an_identity_mismatch() {
    let issuer = "https://accounts.google.com";
    let signers = [keyless("acme", issuer, SAN, &["hello"])];
    let refusal = verify(ARTIFACT, BUNDLE, &signers, &PUBLIC_GOOD).expect_err("refused");
    assert_eq!(refusal.code(), "IDENTITY_MISMATCH");
    assert!(refusal.to_string().contains(issuer), "{refusal}");
    assert!(refusal.to_string().contains(ISSUER), "{refusal}");
}

#[test]
fn a_flipped_byte_of_the_artifact_is_refused_as_component_tampered() {
    let mut artifact = ARTIFACT.to_vec();
    artifact[100] ^= 1;
    assert_eq!(
        verify(&artifact, BUNDLE, &acme(), &PUBLIC_GOOD),
        Err(Refusal::ComponentTampered {
            signed: Digest::of(ARTIFACT),
            actual: Digest::of(&artifact),
        })
    );
}

#[test]
fn a_revoked_keyless_signer_with_the_bundles_identity_is_refused() {
    let mut signers = acme();
    signers[0].revoked = true;
    assert_eq!(
        verify(ARTIFACT, BUNDLE, &signers, &PUBLIC_GOOD),
        Err(Refusal::RevokedSigner {
            signer: "acme".into()
        })
    );
}

#[test]
fn a_keyless_signer_pinned_to_other_plugins_is_refused_as_not_pinned() {
    let signers = [keyless("acme", ISSUER, SAN, &["acme-*"])];
    assert_eq!(
        verify(ARTIFACT, BUNDLE, &signers, &PUBLIC_GOOD),
        Err(Refusal::SignerNotPinned {
            signer: "acme".into(),
            plugin: "hello".into(),
            pins: vec!["acme-*".into()],
        })
    );
}

#[test]
fn a_pinned_signer_with_the_identity_wins_over_a_revoked_one() {
    let mut old = keyless("old", ISSUER, SAN, &["hello"]);
    old.revoked = true;
    let signers = [old, keyless("acme", ISSUER, SAN, &["hello"])];
    // Past the Sigstore checks for `acme`, so refused only by the statement.
    let detail = malformed_detail(verify(ARTIFACT, BUNDLE, &signers, &PUBLIC_GOOD));
    assert!(detail.contains("predicateType"), "{detail}");
}

#[test]
fn with_no_keyless_signer_for_the_plugin_the_identity_is_unknown() {
    let key = SigningKey::generate(Algorithm::Ed25519).expect("OS randomness");
    let key_signer = TrustedSigner {
        name: "keyed".into(),
        identity: Identity::Key(key.public_key()),
        plugins: vec!["hello".parse().expect("valid")],
        revoked: false,
    };
    let stranger = keyless("other", ISSUER, "https://example.com/ci", &["other"]);
    for signers in [vec![], vec![key_signer], vec![stranger]] {
        assert_eq!(
            verify(ARTIFACT, BUNDLE, &signers, &PUBLIC_GOOD),
            Err(Refusal::UnknownSigner {
                key_ids: vec![found()]
            })
        );
    }
}

#[test]
fn a_bundle_from_outside_the_trust_root_is_a_bad_signature_with_sigstores_reason() {
    let scaffolding = TrustRoot::from_json(SCAFFOLDING_JSON).expect("a private root");
    match verify(ARTIFACT, BUNDLE, &acme(), &scaffolding) {
        Err(Refusal::BadSignature { signer, detail }) => {
            assert_eq!(signer, "acme");
            // Its Rekor entry is signed by a log the private root does not list.
            assert!(detail.contains("log"), "{detail}");
        }
        other => panic!("expected BadSignature, got {other:?}"),
    }
}

#[test]
fn a_genuine_bundle_rewritten_into_a_toolhost_release_is_a_bad_signature() {
    let release = Release {
        plugin: "hello".into(),
        version: "1.0.0".into(),
        component: Digest::of(ARTIFACT),
        manifest: Digest::of(b"[tools]"),
    };
    let mut bundle: serde_json::Value = serde_json::from_slice(BUNDLE).expect("JSON");
    let payload = STANDARD.encode(release.statement());
    bundle["dsseEnvelope"]["payload"] = payload.into();
    let forged = bundle.to_string().into_bytes();
    let refusal = verify(ARTIFACT, &forged, &acme(), &PUBLIC_GOOD).expect_err("forged");
    assert_eq!(refusal.code(), "BAD_SIGNATURE", "{refusal}");
    assert!(refusal.to_string().contains("signature"), "{refusal}");
}

#[test]
fn a_tampered_signature_or_log_proof_is_a_bad_signature_in_sigstores_words() {
    let edit = |f: fn(&mut serde_json::Value)| {
        let mut bundle: serde_json::Value = serde_json::from_slice(BUNDLE).expect("JSON");
        f(&mut bundle);
        bundle.to_string().into_bytes()
    };
    let signature = edit(|b| {
        let sig = &mut b["dsseEnvelope"]["signatures"][0]["sig"];
        let flipped = sig.as_str().expect("base64").replacen('M', "N", 1);
        *sig = flipped.into();
    });
    let proof = edit(|b| {
        b["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]["logIndex"] = "1".into();
    });
    for (case, bundle, named) in [
        ("signature", signature, "DSSE signature"),
        ("inclusion proof", proof, "inclusion proof"),
    ] {
        match verify(ARTIFACT, &bundle, &acme(), &PUBLIC_GOOD) {
            Err(Refusal::BadSignature { signer, detail }) => {
                assert_eq!(signer, "acme", "{case}");
                assert!(detail.contains(named), "{case}: {detail}");
            }
            other => panic!("{case}: expected BadSignature, got {other:?}"),
        }
    }
}

#[test]
fn what_is_not_a_keyless_dsse_bundle_is_malformed() {
    let oversize = vec![b' '; MAX_BUNDLE_BYTES + 1];
    let mut in_toto: serde_json::Value = serde_json::from_slice(BUNDLE).expect("JSON");
    in_toto["dsseEnvelope"]["payloadType"] = "text/plain".into();
    let mut keyed: serde_json::Value = serde_json::from_slice(BUNDLE).expect("JSON");
    keyed["verificationMaterial"] = serde_json::json!({
        "publicKey": {"hint": "k"}, "tlogEntries": []
    });
    let cases: [(&str, Vec<u8>, &str); 6] = [
        ("oversize", oversize, "limit"),
        ("not UTF-8", vec![0xff], "UTF-8"),
        ("not JSON", b"{bundle".to_vec(), "not a Sigstore bundle"),
        (
            "a message signature",
            BLOB_BUNDLE.to_vec(),
            "message signature",
        ),
        (
            "another payload",
            in_toto.to_string().into_bytes(),
            "text/plain",
        ),
        (
            "a key hint",
            keyed.to_string().into_bytes(),
            "public-key hint",
        ),
    ];
    for (case, bundle, named) in cases {
        let detail = malformed_detail(verify(ARTIFACT, &bundle, &acme(), &PUBLIC_GOOD));
        assert!(detail.contains(named), "{case}: {detail}");
    }
}
