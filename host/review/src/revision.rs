//! [`NewRevision`]: a plugin revision as submitted, before it is stored.
//! Defined here, with the capabilities it carries, so the rooms that hand
//! a revision to the store with another change (the workspace's
//! promotion) need not depend on the catalog.

use toolhost_types::Digest;

/// A revision as submitted, before it is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRevision {
    /// Its id (`toolhost_catalog::revision_id` of plugin and digests).
    pub id: String,
    /// The plugin's name.
    pub plugin: String,
    /// The manifest's `plugin.version`.
    pub version: String,
    /// The component's bytes (stored once per digest).
    pub component: Vec<u8>,
    /// Their SHA-256.
    pub component_digest: Digest,
    /// The manifest's text as signed.
    pub manifest: String,
    /// Its SHA-256.
    pub manifest_digest: Digest,
    /// The DSSE envelope as submitted; `None` for an unsigned dev revision.
    pub envelope: Option<String>,
    /// The trusted signer that verified it.
    pub signer: Option<String>,
    /// Where it came from (`dir:…`, `oci://…@sha256:…`, `http`).
    pub source: String,
    /// The capabilities the host computed (JSON of `toolhost_review::Capabilities`).
    pub capabilities: String,
    /// Who submitted it.
    pub submitted_by: String,
    /// When, unix milliseconds.
    pub submitted_at_ms: i64,
}
