//! An audit event for the crate's own tests: a call of tool `x` that ran.

use toolhost_audit::{AuditEvent, argument_digest};

/// A call `call_id` of tool `x` by `p` in tenant `t`, executed.
pub(crate) fn test_event(call_id: &str) -> AuditEvent {
    let digest = argument_digest(&serde_json::json!({}));
    AuditEvent {
        call_id: call_id.into(),
        at: std::time::UNIX_EPOCH,
        ..AuditEvent::new("t", "p", "x", digest)
    }
}
