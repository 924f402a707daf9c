//! [`Operators`]: who governs what every tenant shares.
//!
//! The catalog is one for the whole host: a revision approved is served
//! to every tenant, a rollback takes every tenant back. Deciding it is
//! therefore no tenant's business but the host's, and the host's
//! operators are the people (and services) of one tenant the host names,
//! the *operator tenant* (`operator_tenant` in the configuration).
//!
//! A permission on the `catalog` resource is *host-level*
//! ([`host_level`]): `catalog:submit`, `catalog:review`, and whatever the
//! catalog grows later (`catalog:signers`). It is held only in the
//! operator tenant, through that tenant's roles (its admin role included)
//! or a service's scopes. Anywhere else it is never held: not by an admin
//! role's "everything", not by `catalog:*`, not even by a role that was
//! permitted `catalog:review` by name. A host that names no operator
//! tenant has no operator: nobody decides its catalog over MCP or in the
//! console (the command line's bootstrap, `plugin sync --activate`, still
//! does, as the holder of the store's credentials).
//!
//! Why a tenant and not a host-wide role held by people of any tenant: a
//! person belongs to one tenant, whose admin disables them, resets their
//! roles and reads their audit rows. An operator living in `acme` would
//! be governed by `acme`'s admin; the operators' own decisions would be
//! rows in `acme`'s trail. In a tenant of their own, the operators are
//! managed by their own admin with the roles and pages every tenant has,
//! and no tenant admin can make, unmake or watch one.
//!
//! ```
//! use toolhost_policy::{Grants, Operators};
//! let operators = Operators::tenant("ops");
//! let admin = || Grants::new(true, []);
//! let review = "catalog:review".parse().unwrap();
//! assert!(operators.standing("ops", admin()).allows(&review));
//! assert!(!operators.standing("acme", admin()).allows(&review));
//! assert!(operators.standing("acme", admin()).allows(&"hello:read".parse().unwrap()));
//! ```

use toolhost_types::Permission;

use crate::Grants;

/// The resource whose permissions are the host's, not a tenant's: the
/// catalog every tenant is served.
pub const HOST_RESOURCE: &str = "catalog";

/// True when `permission` governs what every tenant shares (a permission
/// on [`HOST_RESOURCE`], or a resource under it): held only in the
/// operator tenant.
pub fn host_level(permission: &Permission) -> bool {
    let resource = permission.resource();
    resource == HOST_RESOURCE
        || resource
            .strip_prefix(HOST_RESOURCE)
            .is_some_and(|rest| rest.starts_with(':'))
}

/// The host's operators: the tenant the host names as theirs, or nobody.
/// Default: nobody (host-level permissions are held by no principal).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Operators {
    tenant: Option<String>,
}

impl Operators {
    /// The people and services of `tenant` are the host's operators.
    pub fn tenant(tenant: impl Into<String>) -> Self {
        Self {
            tenant: Some(tenant.into()),
        }
    }

    /// No operator tenant.
    pub fn none() -> Self {
        Self::default()
    }

    /// The operator tenant's name, if the host names one.
    pub fn name(&self) -> Option<&str> {
        self.tenant.as_deref()
    }

    /// Whether `tenant` is the operator tenant.
    pub fn include(&self, tenant: &str) -> bool {
        self.tenant.as_deref() == Some(tenant)
    }

    /// `grants`, read in `tenant`, with the standing the host gives that
    /// tenant: in the operator tenant they reach host-level permissions,
    /// elsewhere never.
    pub fn standing(&self, tenant: &str, grants: Grants) -> Grants {
        grants.operating(self.include(tenant))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn perm(s: &str) -> Permission {
        s.parse().expect("a permission")
    }

    #[test]
    fn host_level_permissions_are_the_catalogs_and_nothing_else() {
        for (p, host) in [
            ("catalog:review", true),
            ("catalog:submit", true),
            ("catalog:signers", true),
            ("catalog:*", true),
            ("catalog:lineage:read", true),
            ("catalogue:read", false),
            ("revisions:read", false),
            ("hello:read", false),
            ("audit:read", false),
        ] {
            assert_eq!(host_level(&perm(p)), host, "{p}");
        }
    }

    #[test]
    fn only_the_operator_tenants_grants_reach_the_catalog() {
        let ops = Operators::tenant("ops");
        let review = perm("catalog:review");
        let named = || Grants::new(false, [perm("catalog:review")]);
        let wildcard = || Grants::new(false, [perm("catalog:*")]);
        let admin = || Grants::new(true, []);
        let rows = [
            (&ops, "ops", admin(), true),
            (&ops, "ops", named(), true),
            (&ops, "ops", wildcard(), true),
            (&ops, "ops", Grants::new(false, [perm("hello:read")]), false),
            // Another tenant's admin, its `catalog:*`, even `catalog:review` by name.
            (&ops, "acme", admin(), false),
            (&ops, "acme", wildcard(), false),
            (&ops, "acme", named(), false),
        ];
        let nobody = Operators::none();
        for (operators, tenant, grants, want) in rows {
            let standing = operators.standing(tenant, grants);
            assert_eq!(standing.allows(&review), want, "{tenant} {standing:?}");
        }
        assert!(!nobody.standing("ops", admin()).allows(&review));
        assert!(!nobody.include(""));
        // A tenant's own permissions are untouched.
        let acme = ops.standing("acme", admin());
        assert!(acme.allows(&perm("hello:read")) && acme.is_admin());
    }
}
