//! [`ToolsetEffect`]: a change an admin makes to their tenant's toolsets,
//! written with its audit row.

/// A change to a tenant's toolsets, applied in the transaction of the
/// audit row that records it. A definition past the tenant's bound, or a
/// deletion that finds the toolset gone, fails the whole transaction as
/// lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolsetEffect {
    /// Toolset `name` of `tenant` defined as `definition` (the JSON the
    /// policy room reads, checked before), replacing one of that name.
    Define {
        /// The toolset's tenant.
        tenant: String,
        /// Its name.
        name: String,
        /// Its definition, as stored.
        definition: String,
        /// When, in unix milliseconds.
        at_ms: i64,
        /// The most toolsets the tenant may define.
        bound: i64,
    },
    /// Toolset `name` of `tenant` deleted: tokens bound to it reach
    /// nothing from the next request on.
    Delete {
        /// The toolset's tenant.
        tenant: String,
        /// Its name.
        name: String,
    },
}
