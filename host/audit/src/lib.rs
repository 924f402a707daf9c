//! The audit trail's words: one [`AuditEvent`] per tool call, the digest of
//! its arguments, the [`AuditSink`] it is written to, and the [`chain`] of
//! hashes that makes an edited, removed or inserted row detectable.
//!
//! This room owns what a row says, how arguments are digested (canonical
//! JSON, so the same arguments always give the same digest, whatever the key
//! order) and how rows are hashed and their chain checked (pure functions
//! over stored values). It does not store anything: `storage` implements
//! [`AuditSink`] for SQLite and PostgreSQL, hashing each row as it appends
//! it and walking the rows for `toolhost audit verify`.
//!
//! ```
//! use serde_json::json;
//! use toolhost_audit::argument_digest;
//! assert_eq!(argument_digest(&json!({"a": 1, "b": [2, 3]})), argument_digest(&json!({"b": [2, 3], "a": 1})));
//! ```

pub mod anchor;
pub mod chain;
mod digest;
pub mod encoding;
mod event;
pub mod export;
mod kept;
mod people;
mod toolsets;

pub use chain::{ChainBreak, ChainSummary};
pub use digest::{argument_digest, canonical_json};
pub use encoding::Encoding;
pub use event::{
    AudienceChange, AuditError, AuditEvent, AuditSink, CatalogEffect, ClientRound, Effect, KeyRef,
    Outcome, PinChange, RevisionMove, SinkFuture,
};
pub use kept::{MAX_KEPT_TEXT_BYTES, kept_text};
pub use people::PeopleEffect;
pub use toolsets::ToolsetEffect;
