//! People's decisions as host tools: the approval loop
//! (`list_pending_approvals`, `decide_approval`), plugins' human
//! checkpoints (`list_checkpoints`, `decide_checkpoint`) and plugin reviews
//! (`list_plugin_reviews`, `decide_plugin_review`, `rollback_plugin`), so a
//! person decides from any MCP client, and the console is one more
//! renderer of the same tools. Plugin reviews are the host's operators'
//! (`catalog:review`, a host-level permission); a tenant sees what
//! affects it, read only (`list_catalog_changes`).
//!
//! This room owns what each tool accepts, who may decide (a person, not a
//! service; not the one who raised the gate or submitted the revision
//! unless the policy allows it) and what it answers. It owns none of the
//! state: gates and checkpoints are the gate store's, revisions the
//! catalog store's. A decision that changes the served catalog is
//! returned as an effect and written with the call's audit row by the call
//! path (`toolhost_invoke`), which also decides whether the caller may use
//! the tool at all.

mod approvals;
mod arguments;
mod catalog_changes;
mod checkpoints;
mod error;
mod pins;
mod reviews;
mod tenants;
#[cfg(test)]
mod testing;

pub use approvals::{
    DECIDE_PERMISSION, DecideApproval, ListPendingApprovals, READ_PERMISSION, ToolPermission,
};
pub use catalog_changes::{CHANGES_PERMISSION, ListCatalogChanges};
pub use checkpoints::{
    CHECKPOINT_DECIDE_PERMISSION, CHECKPOINT_READ_PERMISSION, DecideCheckpoint, ListCheckpoints,
};
pub use error::DecisionError;
pub use pins::PinPlugin;
pub use reviews::{DecidePluginReview, ListPluginReviews, REVIEW_PERMISSION, RollbackPlugin};
pub use tenants::{KnownTenants, TenantsFuture};
