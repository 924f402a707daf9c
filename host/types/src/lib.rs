//! The shared words of toolhost: tool and plugin names, digests, permissions,
//! risk classes, call identities and principals.
//!
//! This room owns validation of these values at the boundary (parse once,
//! then pass types). It does no I/O and decides nothing; the rooms that
//! decide (`policy`, `limits`, `gates`) and the rooms that act (`runtime`,
//! `storage`) all speak these types.
//!
//! ```
//! use toolhost_types::{Permission, ToolName};
//! let tool: ToolName = "greet".parse().expect("a valid tool name");
//! let perm: Permission = "dataset:lineage:refresh".parse().expect("a valid permission");
//! assert_eq!(perm.resource(), "dataset:lineage");
//! assert_eq!(tool.as_str(), "greet");
//! ```

mod address;
mod canonical;
mod digest;
mod ids;
mod names;
mod page;
mod permission;
mod principal;
mod unavailable;

pub use address::is_public_address;
pub use canonical::canonical_json;
pub use digest::{Digest, DigestError, Hasher};
pub use ids::CallId;
pub use names::{NameError, PluginName, ToolName};
pub use page::keep_page;
pub use permission::{Permission, PermissionError, Risk};
pub use principal::{Principal, PrincipalKind};
pub use unavailable::StoreUnavailable;
