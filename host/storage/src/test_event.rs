//! An audit event for the crate's own tests: a call of tool `x` that ran.

use toolhost_audit::{AuditEvent, Outcome, argument_digest};

/// A call `call_id` of tool `x` by `p` in tenant `t`, executed.
pub(crate) fn test_event(call_id: &str) -> AuditEvent {
    AuditEvent {
        call_id: call_id.into(),
        at: std::time::UNIX_EPOCH,
        principal: "p".into(),
        tenant: "t".into(),
        client_id: None,
        tool: "x".into(),
        plugin: None,
        catalog_version: None,
        plugin_digest: None,
        argument_digest: argument_digest(&serde_json::json!({})),
        outcome: Outcome::Executed,
        error_code: None,
        duration: std::time::Duration::ZERO,
        gate_id: None,
        receipt_sha256: None,
        client_rounds: Vec::new(),
    }
}
