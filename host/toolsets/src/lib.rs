//! Toolsets: named subsets of a tenant's tools that clients are bound to.
//!
//! A tenant admin composes a toolset from tools by name, whole plugins and
//! tags, less exclusions, with the host tools of this room
//! (`list_toolsets`, `define_toolset`, `delete_toolset`), the console's
//! Toolsets page (through the same tools) or `toolhost toolset`. A client
//! is bound by a `toolset:NAME` scope: in its registration, picked by the
//! person at consent, or added by the toolset's endpoint
//! `/mcp/toolsets/NAME`.
//!
//! This room owns composing them. It does not own what a binding does
//! (`toolhost_policy::Within`, applied by the call path to every listing
//! and call, so a tool outside is hidden and not found), how a token comes
//! to carry one (`toolhost_auth`), or storing them (`toolhost_storage`,
//! through the policy store; a change is written with its call's audit
//! row as a [`ToolsetEffect`](toolhost_audit::ToolsetEffect)).

mod error;
mod tools;

pub use error::ToolsetError;

pub use tools::{
    DEFINE_TOOLSET, DELETE_TOOLSET, LIST_TOOLSETS, READ_PERMISSION, WRITE_PERMISSION, host_tools,
};
