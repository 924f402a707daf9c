//! What is signed: a plugin release, written as an in-toto Statement v1.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toolhost_types::{Digest, PluginName};

use crate::{PREDICATE_TYPE, Refusal, STATEMENT_TYPE};

/// A plugin release: the name and version, and the digests that bind the
/// code and the capabilities it asks for. One signature covers all four.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    /// The plugin's name (a [`PluginName`] when parsed from a statement).
    pub plugin: String,
    /// The release's version, as the author wrote it (non-empty).
    pub version: String,
    /// SHA-256 of the component (`<plugin>.wasm`) bytes.
    pub component: Digest,
    /// SHA-256 of the manifest bytes.
    pub manifest: Digest,
}

#[derive(Serialize, Deserialize)]
struct Statement {
    #[serde(rename = "_type")]
    type_: String,
    subject: Vec<Subject>,
    #[serde(rename = "predicateType")]
    predicate_type: String,
    predicate: Predicate,
}

/// The two fields that say what a statement is, read before the rest so
/// that another kind of attestation is refused for its type, not for a
/// missing predicate field.
#[derive(Deserialize)]
struct Header {
    #[serde(rename = "_type")]
    type_: String,
    #[serde(rename = "predicateType")]
    predicate_type: String,
}

#[derive(Serialize, Deserialize)]
struct Subject {
    name: String,
    digest: BTreeMap<String, String>,
}

#[derive(Serialize, Deserialize)]
struct Predicate {
    plugin: String,
    version: String,
    manifest_sha256: String,
}

impl Release {
    /// The in-toto Statement v1 bytes (compact JSON, fields in the order
    /// below): `{"_type": STATEMENT_TYPE, "subject": [{"name": "<plugin>.wasm",
    /// "digest": {"sha256": "<hex>"}}], "predicateType": PREDICATE_TYPE,
    /// "predicate": {"plugin", "version", "manifest_sha256": "<hex>"}}`.
    pub fn statement(&self) -> Vec<u8> {
        let statement = Statement {
            type_: STATEMENT_TYPE.to_owned(),
            subject: vec![Subject {
                name: format!("{}.wasm", self.plugin),
                digest: BTreeMap::from([("sha256".to_owned(), self.component.to_string())]),
            }],
            predicate_type: PREDICATE_TYPE.to_owned(),
            predicate: Predicate {
                plugin: self.plugin.clone(),
                version: self.version.clone(),
                manifest_sha256: self.manifest.to_string(),
            },
        };
        serde_json::to_vec(&statement).expect("a struct of strings always serialises")
    }

    /// Parses a statement. Refuses ([`Refusal::Malformed`]) anything not
    /// JSON of that shape, a wrong `_type` or `predicateType`, other than
    /// exactly one subject, a subject without a valid `sha256`, an invalid
    /// `manifest_sha256`, a plugin that is not a valid plugin name, or an
    /// empty version. Unknown fields are ignored, as in-toto requires of
    /// consumers; the subject's name is informational (the digest binds).
    pub fn from_statement(bytes: &[u8]) -> Result<Self, Refusal> {
        let h: Header = serde_json::from_slice(bytes).map_err(|e| {
            Refusal::malformed(format!("statement is not an in-toto statement: {e}"))
        })?;
        if h.type_ != STATEMENT_TYPE {
            let detail = format!("statement _type {:?}, expected {STATEMENT_TYPE:?}", h.type_);
            return Err(Refusal::malformed(detail));
        }
        if h.predicate_type != PREDICATE_TYPE {
            let (found, want) = (&h.predicate_type, PREDICATE_TYPE);
            let detail = format!("statement predicateType {found:?}, expected {want:?}");
            return Err(Refusal::malformed(detail));
        }
        let s: Statement = serde_json::from_slice(bytes)
            .map_err(|e| Refusal::malformed(format!("statement is not a toolhost release: {e}")))?;
        let [subject] = s.subject.as_slice() else {
            let detail = format!(
                "statement has {} subjects, expected exactly 1",
                s.subject.len()
            );
            return Err(Refusal::malformed(detail));
        };
        let component = subject.digest.get("sha256").map_or("", String::as_str);
        let p = s.predicate;
        if let Err(e) = p.plugin.parse::<PluginName>() {
            return Err(Refusal::malformed(format!("statement predicate: {e}")));
        }
        if p.version.is_empty() {
            return Err(Refusal::malformed(
                "statement predicate has an empty version",
            ));
        }
        Ok(Self {
            component: digest("subject sha256", component)?,
            manifest: digest("predicate manifest_sha256", &p.manifest_sha256)?,
            plugin: p.plugin,
            version: p.version,
        })
    }
}

fn digest(what: &str, text: &str) -> Result<Digest, Refusal> {
    text.parse()
        .map_err(|e| Refusal::malformed(format!("statement {what}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release() -> Release {
        Release {
            plugin: "hello".into(),
            version: "1.2.3".into(),
            component: Digest::of(b"component"),
            manifest: Digest::of(b"manifest"),
        }
    }

    #[test]
    fn a_statement_reads_back_as_the_same_release() {
        let r = release();
        assert_eq!(Release::from_statement(&r.statement()), Ok(r));
    }

    #[test]
    fn the_statement_has_the_in_toto_shape() {
        let r = release();
        let expected = format!(
            concat!(
                r#"{{"_type":"https://in-toto.io/Statement/v1","#,
                r#""subject":[{{"name":"hello.wasm","digest":{{"sha256":"{c}"}}}}],"#,
                r#""predicateType":"urn:toolhost:plugin-release:v1","#,
                r#""predicate":{{"plugin":"hello","version":"1.2.3","manifest_sha256":"{m}"}}}}"#
            ),
            c = r.component,
            m = r.manifest
        );
        assert_eq!(String::from_utf8(r.statement()), Ok(expected));
    }

    #[test]
    fn statements_of_the_wrong_shape_are_malformed() {
        let good = String::from_utf8(release().statement()).expect("JSON is UTF-8");
        let c = release().component.to_string();
        let subject = format!(r#"{{"name":"hello.wasm","digest":{{"sha256":"{c}"}}}}"#);
        let cases = [
            ("not JSON", "{not json".to_owned()),
            (
                "wrong _type",
                good.replace("Statement/v1", "Statement/v0.1"),
            ),
            (
                "wrong predicateType",
                good.replace("plugin-release:v1", "other:v1"),
            ),
            (
                "two subjects",
                good.replace(&subject, &format!("{subject},{subject}")),
            ),
            ("no subject", good.replace(&subject, "")),
            ("no sha256", good.replace(r#""sha256":"#, r#""sha512":"#)),
            ("bad component digest", good.replace(&c, "abcd")),
            (
                "bad manifest digest",
                good.replace(&release().manifest.to_string(), "zz"),
            ),
            (
                "bad plugin name",
                good.replace(r#""plugin":"hello""#, r#""plugin":"He llo""#),
            ),
            ("empty version", good.replace("1.2.3", "")),
        ];
        for (case, text) in cases {
            let refused = Release::from_statement(text.as_bytes());
            assert!(
                matches!(refused, Err(Refusal::Malformed { .. })),
                "{case}: {refused:?}"
            );
        }
    }

    #[test]
    fn unknown_statement_fields_are_ignored() {
        let good = String::from_utf8(release().statement()).expect("JSON is UTF-8");
        let extended = good.replacen('{', r#"{"extra":[1,2],"#, 1);
        assert_eq!(Release::from_statement(extended.as_bytes()), Ok(release()));
    }
}
