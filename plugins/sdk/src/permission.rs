//! The permission every tool, prompt, resource and template declares: set
//! by its builder's `.permission(resource, action)`, required when the host
//! asks for its spec.

use crate::bindings::toolhost::plugin::types::Permission;

/// `resource:action` as the WIT record.
pub(crate) fn of(resource: impl Into<String>, action: impl Into<String>) -> Permission {
    Permission {
        resource: resource.into(),
        action: action.into(),
    }
}

/// The permission `kind` `name` declared. Panics without one: the host
/// refuses a plugin whose export panics, so the author finds out at once.
pub(crate) fn required(permission: Option<&Permission>, kind: &str, name: &str) -> Permission {
    permission.cloned().unwrap_or_else(|| {
        panic!("{kind} {name:?} has no permission: add .permission(resource, action)")
    })
}
