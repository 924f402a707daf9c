//! The review of a plugin revision: its capability diff against the active
//! revision, and the catalog version bump that diff implies.
//!
//! This room owns:
//! - [`Capabilities`]: what one revision may do (tools, backends, limits,
//!   risk rules, imports, entity kinds, signer), in plain values;
//! - [`diff`]: one pure, total function from two of those to a [`Diff`],
//!   each [`Change`] judged as widening, narrowing or neutral and bumping
//!   patch, minor or major (the rules are [`What`]'s variant docs), and
//!   marked when a reviewer must look ([`Change::needs_review`]): every
//!   string a client's model reads is compared old → new
//!   ([`What::Text`], with [`flags`], a small documented highlighter for
//!   text that reads like an instruction), the component's bytes are an
//!   entry of their own, and a name taken from another plugin is a
//!   breaking transfer;
//! - the JSON Schema classifier behind [`What::InputSchema`] and
//!   [`What::OutputSchema`] (breaking or additive, with detail lines);
//! - [`CatalogVersion`], the catalog's `MAJOR.MINOR.PATCH`, and its bump;
//! - [`Revision`], the one record of a plugin revision (what was submitted,
//!   and where it is in its life: [`RevisionState`]), and [`NewRevision`],
//!   that record before it is stored, with its component's bytes. The
//!   catalog stores and re-exports them; rooms below the catalog (the
//!   workspace's promotion) hand one to the store without depending on it.
//!
//! It does not read manifests or components, store revisions, approve them
//! or verify signatures: the catalog builds [`Capabilities`] from its loaded
//! plugin and stores the diff, `signing` names the signer, and the admin
//! approves. No I/O, no async; the serde shapes are a contract (tests and the
//! admin page read the diff as JSON).
//!
//! ```
//! use std::collections::{BTreeMap, BTreeSet};
//! use toolhost_review::{Bump, Capabilities, CatalogVersion, ToolCapabilities, What, diff};
//!
//! let greet = ToolCapabilities {
//!     permission: "hello:read".into(), description: "Greets.".into(),
//!     input_schema: serde_json::json!({"type": "object"}), output_schema: None,
//!     risk: "low".into(), risk_floor: None, mutating: false,
//!     resolves: BTreeSet::new(), replaces: None, texts: BTreeMap::new(),
//! };
//! let v1 = Capabilities {
//!     plugin: "hello".into(), version: "0.1.0".into(), signer: Some("alice".into()),
//!     tools: BTreeMap::from([("greet".to_owned(), greet.clone())]),
//!     backends: BTreeMap::new(), limits: BTreeMap::new(), high_risk_tags: BTreeSet::new(),
//!     imports: BTreeSet::new(), entity_kinds: BTreeSet::new(), prompts: BTreeMap::new(),
//!     resources: BTreeMap::new(), texts: BTreeMap::new(), uris: BTreeMap::new(),
//!     component: None, takes: BTreeMap::new(),
//! };
//! let mut v2 = v1.clone();
//! v2.tools.insert("wave".into(), greet);
//!
//! let review = diff(Some(&v1), &v2);
//! // The tool, then its description: a string the model reads.
//! assert_eq!(review.changes.len(), 2);
//! assert_eq!(review.changes[0].what, What::ToolAdded { tool: "wave".into() });
//! assert!(review.changes[1].needs_review);
//! assert!(review.widens());
//! assert_eq!(review.bump, Bump::Minor);
//! assert_eq!(CatalogVersion::INITIAL.bump(review.bump).to_string(), "1.1.0");
//! ```

mod audience;
mod capabilities;
mod change;
mod diff;
mod instructions;
mod revision;
mod schema;
mod texts;
mod version;

pub use audience::{Audience, AudienceError, MAX_AUDIENCE, MAX_TENANT_LEN, Pin, valid_tenant};
pub use capabilities::{Capabilities, ToolCapabilities};
pub use change::{Bump, Change, Diff, Effect, Retired, SchemaClass, What};
pub use diff::diff;
pub use instructions::{Flag, INSTRUCTION_PHRASES, SECRET_WORDS, flags};
pub use revision::{NewRevision, Revision, RevisionState};
pub use texts::schema_texts;
pub use version::{CatalogVersion, VersionError};
