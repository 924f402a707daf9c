//! [`Revision`]: the one record of a plugin revision, from its submission
//! through its review to its retirement, and [`NewRevision`], the same
//! record before it is stored, with its component's bytes.
//!
//! Defined here, with the capabilities it carries, so every room that
//! reads or writes a revision shares one definition: the catalog (which
//! stores and serves revisions and re-exports these), and the rooms that
//! hand a revision to the store with another change (the workspace's
//! promotion), which need not depend on the catalog.

use std::fmt;
use std::ops::Deref;
use std::str::FromStr;

use toolhost_types::Digest;

use crate::Audience;

/// Where a revision is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RevisionState {
    /// Submitted and verified; waits for a reviewer.
    PendingReview,
    /// Approved once; served again only by a rollback.
    Approved,
    /// Served: at most one revision of a plugin.
    Active,
    /// A reviewer refused it.
    Rejected,
    /// Pulled (its signer revoked, or by an operator): never served again.
    Withdrawn,
}

impl RevisionState {
    /// Every state, in lifecycle order.
    pub const ALL: [RevisionState; 5] = [
        RevisionState::PendingReview,
        RevisionState::Approved,
        RevisionState::Active,
        RevisionState::Rejected,
        RevisionState::Withdrawn,
    ];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            RevisionState::PendingReview => "pending_review",
            RevisionState::Approved => "approved",
            RevisionState::Active => "active",
            RevisionState::Rejected => "rejected",
            RevisionState::Withdrawn => "withdrawn",
        }
    }
}

impl fmt::Display for RevisionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RevisionState {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| format!("{s:?} is not a revision state"))
    }
}

/// A plugin revision: what was submitted (never changed after), and where
/// it is in its life (its state, its review, its activation, the tools it
/// still lists once replaced).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// Its id (`toolhost_catalog::revision_id` of plugin and digests).
    pub id: String,
    /// The plugin's name.
    pub plugin: String,
    /// The manifest's `plugin.version`.
    pub version: String,
    /// The component's SHA-256 (its bytes are stored once per digest:
    /// `toolhost_catalog::CatalogStore::blob`).
    pub component_digest: Digest,
    /// The manifest's text as signed.
    pub manifest: String,
    /// Its SHA-256.
    pub manifest_digest: Digest,
    /// The DSSE envelope as submitted; `None`: unsigned (dev).
    pub envelope: Option<String>,
    /// The trusted signer that verified it at intake.
    pub signer: Option<String>,
    /// Where it came from (`dir:…`, `oci://…@sha256:…`, `http`).
    pub source: String,
    /// The capabilities the host computed (JSON of [`crate::Capabilities`]).
    pub capabilities: String,
    /// Where it is in its life.
    pub state: RevisionState,
    /// Who submitted it.
    pub submitted_by: String,
    /// When it was submitted, unix milliseconds.
    pub submitted_at_ms: i64,
    /// Who decided its review.
    pub reviewed_by: Option<String>,
    /// When.
    pub reviewed_at_ms: Option<i64>,
    /// Why.
    pub review_reason: Option<String>,
    /// When it last became active.
    pub activated_at_ms: Option<i64>,
    /// Tools still listed as deprecated after it was replaced (JSON of
    /// `[`[`crate::Retired`]`]`), and the catalog version that drops them.
    pub retired: Option<(String, String)>,
    /// The tenants it is served to while active (or pinned).
    pub audience: Audience,
}

/// A revision as submitted, before it is stored: its record, pending
/// review and undecided, and its component's bytes. It reads as its record
/// (`new.id`, `new.plugin`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRevision {
    revision: Revision,
    component: Vec<u8>,
}

impl NewRevision {
    /// `revision` as submitted with `component`, its bytes: whatever
    /// `revision` says of its life, a new revision is pending review, has
    /// no review, was never active and retires nothing.
    pub fn new(revision: Revision, component: Vec<u8>) -> Self {
        let revision = Revision {
            state: RevisionState::PendingReview,
            reviewed_by: None,
            reviewed_at_ms: None,
            review_reason: None,
            activated_at_ms: None,
            retired: None,
            audience: Audience::Everyone,
            ..revision
        };
        Self {
            revision,
            component,
        }
    }

    /// The component's bytes.
    pub fn component(&self) -> &[u8] {
        &self.component
    }
}

/// A new revision reads as the record it will be stored as.
impl Deref for NewRevision {
    type Target = Revision;

    fn deref(&self) -> &Revision {
        &self.revision
    }
}
