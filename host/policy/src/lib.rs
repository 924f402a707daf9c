//! RBAC and tenancy: who may see and use which tool, decided by one pure
//! function over live state.
//!
//! - [`decide`] is the only decision: `tools/list` and `tools/call` both ask
//!   it, so the two can never drift. A missing permission hides the tool from
//!   the list and denies the call; contextual risk never hides a tool, it
//!   gates the call.
//! - [`Grants`] are a principal's roles in its tenant, read from the store on
//!   every request ([`PolicyStore::grants`]): a role granted or revoked
//!   changes the next list and the next call, with the same token.
//! - Service principals are bounded by their token's scopes alone; roles
//!   are for people.
//! - [`Toolset`]s narrow: a principal whose token names `toolset:NAME`
//!   sees and calls only the tools in that toolset of its tenant
//!   ([`Within`], carried by its [`Grants`]), and within it what its
//!   permissions allow.
//! - [`Operators`]: the catalog every tenant shares is governed from one
//!   tenant the host names. A host-level permission ([`host_level`]:
//!   `catalog:*`) is held there only; another tenant's admin role, its
//!   `catalog:*` and its services' scopes never reach it.
//!
//! ```
//! use toolhost_policy::{Decision, Grants, Use, decide};
//! use toolhost_types::{Principal, PrincipalKind, Risk};
//! let who = Principal { subject: "u1".into(), kind: PrincipalKind::User, name: "ada".into(),
//!     tenant: "acme".into(), client_id: "app".into(), scopes: vec!["mcp".into()], session: "s".into() };
//! let grants = Grants::new(false, ["hello:read".parse().unwrap()]);
//! assert_eq!(decide(&who, &grants, &"hello:read".parse().unwrap(), Risk::Low, Use::Call), Decision::Allowed);
//! assert_eq!(decide(&who, &grants, &"hello:write".parse().unwrap(), Risk::Low, Use::List), Decision::Hidden);
//! ```

mod decide;
mod operators;
mod store;
mod toolsets;

pub use decide::{Decision, Grants, Use, decide};
pub use operators::{HOST_RESOURCE, Operators, host_level};
pub use store::{FixedGrants, PolicyFuture, PolicyStore, PolicyStoreError, Role};
pub use toolsets::{
    MAX_TOOLSET_ENTRIES, MAX_TOOLSET_ENTRY, MAX_TOOLSET_NAME, MAX_TOOLSETS, TOOLSET_SCOPE, Toolset,
    ToolsetError, Within, bound_toolsets, is_toolset_name,
};
