//! Progressive narrowing (seed 000) under the tenancy floor (seed 003): a
//! tool argument that names a thing accepts a name or an id, and anything
//! missing, unknown or ambiguous becomes a typed question, never a guess.
//!
//! This room is pure: [`scope`] cuts an entity snapshot down to what the
//! caller may see and what the pins allow; [`resolve`] runs the decision
//! tree over that scope. Fetching and caching snapshots, and carrying the
//! question to the client, belong to the host rooms around it.
//!
//! ```
//! use toolhost_resolver::{Entity, Query, Reason, resolve, scope};
//! let snapshot = vec![Entity::new(1, "payments", "acme"), Entity::new(2, "auth", "acme")];
//! let scoped = scope(&snapshot, "acme", &[]);
//! let q = Query::new("project", "project", Some("pay"));
//! assert_eq!(resolve(&scoped, &q), Ok(1));
//! let missing = resolve(&scoped, &Query::new("project", "project", None)).unwrap_err();
//! assert_eq!(missing.reason, Reason::MissingRequired);
//! assert_eq!(missing.ask_user, "Which project? Available: payments, auth.");
//! ```

mod labels;
mod scope;
mod tree;

pub use scope::{Entity, Parent, Pin, Scope, scope};
pub use tree::{Candidate, Clarification, MAX_CANDIDATES, Query, Reason, resolve};
