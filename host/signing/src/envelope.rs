//! DSSE v1 envelopes: the pre-authentication encoding, signing and
//! countersigning a release, and the standard JSON form.

use base64::Engine as _;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use serde::{Deserialize, Serialize};

use crate::{MAX_ENVELOPE_BYTES, PAYLOAD_TYPE, Refusal, Release, SigningKey};

/// Most signatures one envelope may carry. A release needs one, perhaps a
/// countersignature or two; the cap bounds the verification work an
/// untrusted envelope can demand (signatures × trusted keys).
pub const MAX_SIGNATURES: usize = 16;

/// DSSE v1 pre-authentication encoding: `"DSSEv1" SP LEN(type) SP type SP
/// LEN(body) SP body`, LEN being the ASCII decimal byte length. This, not
/// the payload, is what every signature covers.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let head = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    );
    [head.as_bytes(), payload].concat()
}

/// A DSSE envelope: the payload and the signatures over its PAE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// The payload's media type; releases use [`PAYLOAD_TYPE`].
    pub payload_type: String,
    /// The payload bytes (for releases, the in-toto statement).
    pub payload: Vec<u8>,
    /// One or more signatures over `pae(payload_type, payload)`.
    pub signatures: Vec<EnvelopeSignature>,
}

/// One signature in an envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvelopeSignature {
    /// The signer's hint, normally a [`crate::KeyId`]; unauthenticated, so it
    /// only narrows which keys are tried. An empty keyid parses as `None`.
    pub keyid: Option<String>,
    /// The raw signature: 64 bytes for Ed25519, DER ECDSA for P-256.
    pub sig: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    #[serde(rename = "payloadType")]
    payload_type: String,
    payload: String,
    signatures: Vec<WireSignature>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WireSignature {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    keyid: Option<String>,
    sig: String,
}

/// DSSE allows standard or URL-safe base64; accept either, padded or not.
const LENIENT: GeneralPurposeConfig =
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
const STANDARD_LENIENT: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::STANDARD, LENIENT);
const URL_SAFE_LENIENT: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::URL_SAFE, LENIENT);

impl Envelope {
    /// Signs the release's statement with `key`: one signature whose keyid
    /// is the key's [`crate::KeyId`]. Ed25519 signs the PAE bytes; P-256 is
    /// ECDSA-SHA256 over them with a DER signature, as cosign does.
    pub fn sign(release: &Release, key: &SigningKey) -> Envelope {
        let mut envelope = Envelope {
            payload_type: PAYLOAD_TYPE.to_owned(),
            payload: release.statement(),
            signatures: Vec::new(),
        };
        envelope.countersign(key);
        envelope
    }

    /// Adds one more signature over the same payload (e.g. the security
    /// team's countersignature). Existing signatures are untouched.
    pub fn countersign(&mut self, key: &SigningKey) {
        let sig = key.sign(&pae(&self.payload_type, &self.payload));
        let keyid = Some(key.public_key().key_id().to_string());
        self.signatures.push(EnvelopeSignature { keyid, sig });
    }

    /// The standard DSSE JSON: `{"payloadType", "payload", "signatures":
    /// [{"keyid", "sig"}]}`, base64 standard and padded; a `None` keyid is omitted.
    pub fn to_json(&self) -> String {
        let wire = Wire {
            payload_type: self.payload_type.clone(),
            payload: STANDARD.encode(&self.payload),
            signatures: self.signatures.iter().map(WireSignature::from).collect(),
        };
        serde_json::to_string(&wire).expect("a struct of strings always serialises")
    }

    /// Parses DSSE JSON. [`Refusal::Malformed`] if it is over
    /// [`MAX_ENVELOPE_BYTES`], not JSON of exactly that shape (unknown fields
    /// are refused), has bad base64, or has zero or over [`MAX_SIGNATURES`]
    /// signatures. Nothing is verified here: see [`crate::verify`].
    pub fn from_json(bytes: &[u8]) -> Result<Envelope, Refusal> {
        if bytes.len() > MAX_ENVELOPE_BYTES {
            let detail = format!(
                "envelope is {} bytes, over the {MAX_ENVELOPE_BYTES}-byte limit",
                bytes.len()
            );
            return Err(Refusal::malformed(detail));
        }
        let wire: Wire = serde_json::from_slice(bytes)
            .map_err(|e| Refusal::malformed(format!("envelope is not DSSE JSON: {e}")))?;
        let count = wire.signatures.len();
        if count == 0 || count > MAX_SIGNATURES {
            let detail = format!("envelope has {count} signatures, expected 1 to {MAX_SIGNATURES}");
            return Err(Refusal::malformed(detail));
        }
        let signatures = wire.signatures.into_iter().enumerate();
        Ok(Envelope {
            payload_type: wire.payload_type,
            payload: decode("payload", &wire.payload)?,
            signatures: signatures
                .map(|(i, s)| s.decode(i))
                .collect::<Result<_, _>>()?,
        })
    }
}

impl From<&EnvelopeSignature> for WireSignature {
    fn from(s: &EnvelopeSignature) -> Self {
        Self {
            keyid: s.keyid.clone(),
            sig: STANDARD.encode(&s.sig),
        }
    }
}

impl WireSignature {
    fn decode(self, index: usize) -> Result<EnvelopeSignature, Refusal> {
        Ok(EnvelopeSignature {
            keyid: self.keyid.filter(|k| !k.is_empty()),
            sig: decode(&format!("signature {index}"), &self.sig)?,
        })
    }
}

fn decode(what: &str, text: &str) -> Result<Vec<u8>, Refusal> {
    STANDARD_LENIENT
        .decode(text)
        .or_else(|_| URL_SAFE_LENIENT.decode(text))
        .map_err(|e| Refusal::malformed(format!("envelope {what} is not base64: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Algorithm;
    use toolhost_types::Digest;

    fn release() -> Release {
        Release {
            plugin: "hello".into(),
            version: "1.0.0".into(),
            component: Digest::of(b"component"),
            manifest: Digest::of(b"manifest"),
        }
    }

    fn key(alg: Algorithm) -> SigningKey {
        SigningKey::generate(alg).expect("the test machine has OS randomness")
    }

    fn refusal(json: &str) -> String {
        match Envelope::from_json(json.as_bytes()) {
            Err(Refusal::Malformed { detail }) => detail,
            other => panic!("expected Malformed for {json:.80}, got {other:?}"),
        }
    }

    #[test]
    fn pae_matches_the_dsse_spec() {
        let cases: [(&str, &[u8], &[u8]); 3] = [
            (
                "http://example.com/HelloWorld",
                b"hello world",
                b"DSSEv1 29 http://example.com/HelloWorld 11 hello world",
            ),
            ("", b"", b"DSSEv1 0  0 "),
            (
                PAYLOAD_TYPE,
                b"{}",
                b"DSSEv1 28 application/vnd.in-toto+json 2 {}",
            ),
        ];
        for (payload_type, payload, expected) in cases {
            assert_eq!(pae(payload_type, payload), expected, "{payload_type}");
        }
    }

    #[test]
    fn a_signed_envelope_carries_the_statement_and_the_key_id() {
        for alg in [Algorithm::Ed25519, Algorithm::P256] {
            let key = key(alg);
            let envelope = Envelope::sign(&release(), &key);
            assert_eq!(envelope.payload_type, PAYLOAD_TYPE);
            assert_eq!(envelope.payload, release().statement());
            let [sig] = envelope.signatures.as_slice() else {
                panic!("{alg}: one signature expected");
            };
            let id = key.public_key().key_id();
            assert_eq!(sig.keyid.as_deref(), Some(id.as_str()));
        }
    }

    #[test]
    fn envelopes_round_trip_through_dsse_json() {
        let mut envelope = Envelope::sign(&release(), &key(Algorithm::Ed25519));
        envelope.countersign(&key(Algorithm::P256));
        envelope.signatures.push(EnvelopeSignature {
            keyid: None,
            sig: vec![1, 2, 3],
        });
        let json = envelope.to_json();
        assert_eq!(Envelope::from_json(json.as_bytes()), Ok(envelope.clone()));
        let value: serde_json::Value = serde_json::from_str(&json).expect("to_json is JSON");
        assert_eq!(value["payload"], STANDARD.encode(&envelope.payload));
        assert_eq!(value["payloadType"], PAYLOAD_TYPE);
        assert_eq!(value["signatures"][2], serde_json::json!({"sig": "AQID"}));
    }

    #[test]
    fn url_safe_unpadded_base64_and_an_empty_keyid_are_accepted() {
        let json = r#"{"payloadType":"t","payload":"-_8","signatures":[{"keyid":"","sig":"AQ"}]}"#;
        let expected = Envelope {
            payload_type: "t".into(),
            payload: vec![0xfb, 0xff],
            signatures: vec![EnvelopeSignature {
                keyid: None,
                sig: vec![1],
            }],
        };
        assert_eq!(Envelope::from_json(json.as_bytes()), Ok(expected));
    }

    #[test]
    fn from_json_refuses_what_is_not_a_dsse_envelope() {
        let sig = r#"{"keyid":"k","sig":"AQID"}"#;
        let many = vec![sig; MAX_SIGNATURES + 1].join(",");
        let oversize = format!(
            r#"{{"payloadType":"t","payload":"{}","signatures":[{sig}]}}"#,
            "A".repeat(MAX_ENVELOPE_BYTES)
        );
        let cases = [
            ("oversize", oversize, "limit"),
            ("not JSON", "{payload".to_owned(), "not DSSE JSON"),
            ("an array", "[]".to_owned(), "not DSSE JSON"),
            (
                "bad payload base64",
                format!(r#"{{"payloadType":"t","payload":"*!","signatures":[{sig}]}}"#),
                "payload",
            ),
            (
                "bad sig base64",
                r#"{"payloadType":"t","payload":"","signatures":[{"sig":"@@@"}]}"#.to_owned(),
                "signature 0",
            ),
            (
                "zero signatures",
                r#"{"payloadType":"t","payload":"","signatures":[]}"#.to_owned(),
                "0 signatures",
            ),
            (
                "too many signatures",
                format!(r#"{{"payloadType":"t","payload":"","signatures":[{many}]}}"#),
                "17 signatures",
            ),
            (
                "unknown field",
                format!(r#"{{"payloadType":"t","payload":"","signatures":[{sig}],"x":1}}"#),
                "unknown field",
            ),
            (
                "no sig",
                r#"{"payloadType":"t","payload":"","signatures":[{"keyid":"k"}]}"#.to_owned(),
                "sig",
            ),
            (
                "no payload type",
                format!(r#"{{"payload":"","signatures":[{sig}]}}"#),
                "payloadType",
            ),
        ];
        for (case, json, named) in cases {
            let detail = refusal(&json);
            assert!(detail.contains(named), "{case}: {detail}");
        }
    }
}
