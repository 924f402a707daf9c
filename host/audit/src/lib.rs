//! The audit trail's words: one [`AuditEvent`] per tool call, the digest of
//! its arguments, and the [`AuditSink`] it is written to.
//!
//! This room owns what a row says and how arguments are digested (canonical
//! JSON, so the same arguments always give the same digest, whatever the key
//! order). It does not store anything: `storage` implements [`AuditSink`]
//! for SQLite and PostgreSQL.
//!
//! ```
//! use serde_json::json;
//! use toolhost_audit::argument_digest;
//! assert_eq!(argument_digest(&json!({"a": 1, "b": [2, 3]})), argument_digest(&json!({"b": [2, 3], "a": 1})));
//! ```

mod digest;
mod event;

pub use digest::{argument_digest, canonical_json};
pub use event::{AuditError, AuditEvent, AuditSink, Outcome, SinkFuture};
