//! Why a presented release was not accepted: one typed reason per refusal,
//! each with a stable code for audit events and admin responses.

use toolhost_types::Digest;

/// Why [`crate::verify`] or [`crate::verify_bundle`] refused a release. Messages name the refusal and
/// the values involved; [`Refusal::code`] is the stable machine-readable form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No envelope was presented at all.
    #[error("unsigned: plugin {plugin:?} was presented without a signature envelope")]
    Unsigned {
        /// The plugin name presented.
        plugin: String,
    },
    /// The envelope or the statement inside it is not of the expected shape.
    #[error("malformed signature: {detail}")]
    Malformed {
        /// What was wrong, naming the offending value.
        detail: String,
    },
    /// No trusted signer holds any of the keys the signatures name (or, for
    /// a keyless bundle, no keyless signer is pinned to this plugin and none
    /// has the certificate's identity).
    #[error("unknown signer: no trusted signer holds any of the presented keys {key_ids:?}")]
    UnknownSigner {
        /// The key ids the signatures carry (`(none)` for a signature without
        /// one); for a keyless bundle, the identity its certificate claims,
        /// as `keyless:<issuer>#<subject>`.
        key_ids: Vec<String>,
    },
    /// A trusted signer's key was named, but no signature verifies with it;
    /// or Sigstore refused a keyless bundle for a trusted signer (certificate
    /// chain, SCT, transparency log, timestamps or the signature itself).
    #[error("bad signature from trusted signer {signer:?}: {detail}")]
    BadSignature {
        /// The (first) trusted signer whose key or identity was tried.
        signer: String,
        /// Why: for a keyless bundle, sigstore-verify's own message.
        detail: String,
    },
    /// A keyless bundle whose certificate names an identity none of the
    /// keyless signers pinned to this plugin has.
    #[error(
        "identity mismatch: the certificate names {found:?}, this plugin's keyless signers are {expected:?}"
    )]
    IdentityMismatch {
        /// The identities pinned to the plugin, `keyless:<issuer>#<subject>`,
        /// joined by `" or "`.
        expected: String,
        /// The identity the certificate claims, in the same form.
        found: String,
    },
    /// The signature verifies, but its signer has been revoked.
    #[error("revoked signer: {signer:?} signed this release but is revoked")]
    RevokedSigner {
        /// The revoked signer.
        signer: String,
    },
    /// A trusted, valid signer, but not pinned to this plugin name.
    #[error("signer not pinned: {signer:?} may sign {pins:?}, not plugin {plugin:?}")]
    SignerNotPinned {
        /// The signer whose signature verified.
        signer: String,
        /// The plugin name presented.
        plugin: String,
        /// The patterns the signer is pinned to.
        pins: Vec<String>,
    },
    /// The component bytes presented are not the ones signed.
    #[error("component tampered: signed sha256 {signed}, presented bytes have {actual}")]
    ComponentTampered {
        /// The digest in the signed statement.
        signed: Digest,
        /// The digest of the presented bytes.
        actual: Digest,
    },
    /// The manifest bytes presented are not the ones signed.
    #[error("manifest tampered: signed sha256 {signed}, presented bytes have {actual}")]
    ManifestTampered {
        /// The digest in the signed statement.
        signed: Digest,
        /// The digest of the presented bytes.
        actual: Digest,
    },
    /// The signed statement is for another plugin name or version.
    #[error("release mismatch: signed {field} {signed:?}, presented {presented:?}")]
    ReleaseMismatch {
        /// `"plugin"` or `"version"`.
        field: &'static str,
        /// The value in the signed statement.
        signed: String,
        /// The value presented.
        presented: String,
    },
}

impl Refusal {
    /// The stable code: `UNSIGNED`, `MALFORMED_SIGNATURE`, `UNKNOWN_SIGNER`,
    /// `BAD_SIGNATURE`, `IDENTITY_MISMATCH`, `REVOKED_SIGNER`,
    /// `SIGNER_NOT_PINNED`, `COMPONENT_TAMPERED`, `MANIFEST_TAMPERED` or
    /// `RELEASE_MISMATCH`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unsigned { .. } => "UNSIGNED",
            Self::Malformed { .. } => "MALFORMED_SIGNATURE",
            Self::UnknownSigner { .. } => "UNKNOWN_SIGNER",
            Self::BadSignature { .. } => "BAD_SIGNATURE",
            Self::IdentityMismatch { .. } => "IDENTITY_MISMATCH",
            Self::RevokedSigner { .. } => "REVOKED_SIGNER",
            Self::SignerNotPinned { .. } => "SIGNER_NOT_PINNED",
            Self::ComponentTampered { .. } => "COMPONENT_TAMPERED",
            Self::ManifestTampered { .. } => "MANIFEST_TAMPERED",
            Self::ReleaseMismatch { .. } => "RELEASE_MISMATCH",
        }
    }

    pub(crate) fn malformed(detail: impl Into<String>) -> Self {
        Self::Malformed {
            detail: detail.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refusal_has_its_code_and_names_its_values() {
        let (a, b) = (Digest::of(b"a"), Digest::of(b"b"));
        let cases = [
            (
                Refusal::Unsigned {
                    plugin: "hello".into(),
                },
                "UNSIGNED",
                "\"hello\"",
            ),
            (
                Refusal::malformed("bad base64"),
                "MALFORMED_SIGNATURE",
                "bad base64",
            ),
            (
                Refusal::UnknownSigner {
                    key_ids: vec!["sha256:ab".into()],
                },
                "UNKNOWN_SIGNER",
                "sha256:ab",
            ),
            (
                Refusal::BadSignature {
                    signer: "acme".into(),
                    detail: "certificate chain is invalid".into(),
                },
                "BAD_SIGNATURE",
                "\"acme\"",
            ),
            (
                Refusal::IdentityMismatch {
                    expected: "keyless:https://issuer#ci@acme".into(),
                    found: "keyless:https://issuer#ci@evil".into(),
                },
                "IDENTITY_MISMATCH",
                "ci@evil",
            ),
            (
                Refusal::RevokedSigner {
                    signer: "old".into(),
                },
                "REVOKED_SIGNER",
                "\"old\"",
            ),
            (
                Refusal::SignerNotPinned {
                    signer: "acme".into(),
                    plugin: "hello".into(),
                    pins: vec!["acme-*".into()],
                },
                "SIGNER_NOT_PINNED",
                "acme-*",
            ),
            (
                Refusal::ComponentTampered {
                    signed: a,
                    actual: b,
                },
                "COMPONENT_TAMPERED",
                &b.to_string(),
            ),
            (
                Refusal::ManifestTampered {
                    signed: a,
                    actual: b,
                },
                "MANIFEST_TAMPERED",
                &a.to_string(),
            ),
            (
                Refusal::ReleaseMismatch {
                    field: "version",
                    signed: "1.0.0".into(),
                    presented: "1.0.1".into(),
                },
                "RELEASE_MISMATCH",
                "\"1.0.1\"",
            ),
        ];
        for (refusal, code, named) in cases {
            assert_eq!(refusal.code(), code);
            let message = refusal.to_string();
            assert!(message.contains(named), "{message} should name {named}");
        }
    }
}
