//! Who is calling, as the host established it.

use crate::bindings::toolhost::plugin::types::CallContext;

/// The caller of one `plan` or `call`, as the host established it.
///
/// Never a credential: a plugin learns who is calling, not how they proved
/// it. Everything a tool returns must belong to [`Ctx::tenant`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Ctx {
    /// Unique per call; the host's logs and audit trail carry the same id.
    pub call_id: String,
    /// The caller's tenant.
    pub tenant: String,
    /// The caller, as an opaque stable id.
    pub principal: String,
}

impl Ctx {
    /// A context by hand, for unit tests of tool functions.
    pub fn new(
        call_id: impl Into<String>,
        tenant: impl Into<String>,
        principal: impl Into<String>,
    ) -> Self {
        Ctx {
            call_id: call_id.into(),
            tenant: tenant.into(),
            principal: principal.into(),
        }
    }
}

impl From<CallContext> for Ctx {
    fn from(c: CallContext) -> Self {
        Ctx {
            call_id: c.call_id,
            tenant: c.tenant,
            principal: c.principal,
        }
    }
}
