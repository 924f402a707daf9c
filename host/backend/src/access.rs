//! Who is asking: what the calling plugin may reach, for which tenant.

use std::collections::BTreeSet;
use std::sync::Arc;

/// What one call may do with the backends, built by the runtime per call.
///
/// The runtime fills this from the plugin's manifest and the caller's
/// principal; this crate never looks anything up. A backend is reachable
/// only if it is both in `declared` and configured by the operator.
#[derive(Debug, Clone)]
pub struct Access {
    /// Backend names the plugin's manifest declares (`[backends.<name>]`).
    /// Shared, since every call of a plugin has the same set.
    pub declared: Arc<BTreeSet<String>>,
    /// The caller's tenant, sent as `X-Tenant`. The plugin cannot set or
    /// override it: the header is dropped from what the plugin sends.
    pub tenant: String,
    /// Set while the call may not have side effects (planning, a dry run,
    /// a tool marked read-only): only [`crate::Method::is_safe`] methods pass.
    pub safe_only: bool,
    /// Set inside an exploration run: only backends the operator marked
    /// `exploration = true` are reachable, and only with safe methods.
    pub exploration: bool,
    /// Who acts in this call, for the backends told so
    /// ([`crate::BackendAuth::CredentialAndAssertion`]); none (a run, the
    /// command line): requests to those backends are refused.
    pub acting: Option<crate::Acting>,
}
