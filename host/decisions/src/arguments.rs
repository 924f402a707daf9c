//! What every decision tool checks first: that a person decides, and that
//! the arguments and the reason are well formed.

use serde::de::DeserializeOwned;
use serde_json::Value;
use toolhost_invoke::{InvokeError, invalid};
use toolhost_runtime::ToolSpec;
use toolhost_types::{Principal, PrincipalKind};

/// The longest reason accepted.
pub(crate) const MAX_REASON: usize = 1000;

/// Refuses a service: decisions are people's.
pub(crate) fn people_only(who: &Principal, spec: &ToolSpec) -> Result<(), InvokeError> {
    if who.kind != PrincipalKind::User {
        return Err(InvokeError::PermissionDenied {
            tool: spec.name.to_string(),
        });
    }
    Ok(())
}

/// `args` as the tool's arguments.
pub(crate) fn parsed<T: DeserializeOwned>(args: &Value) -> Result<T, InvokeError> {
    serde_json::from_value(args.clone()).map_err(|e| invalid(e.to_string()))
}

/// `args` as a listing's arguments; none at all is the default listing.
pub(crate) fn listing<T: DeserializeOwned + Default>(args: &Value) -> Result<T, InvokeError> {
    if args.is_null() {
        return Ok(T::default());
    }
    parsed(args)
}

/// A reason of at most [`MAX_REASON`] bytes (whether one is required is
/// each decision's own rule).
pub(crate) fn bounded(reason: &str) -> Result<(), InvokeError> {
    if reason.len() > MAX_REASON {
        return Err(invalid(format!("reason is longer than {MAX_REASON} bytes")));
    }
    Ok(())
}
