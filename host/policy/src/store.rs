//! [`PolicyStore`]: roles, their permissions and their members, per tenant.
//! `storage` implements it for SQLite and PostgreSQL.

use std::future::Future;
use std::pin::Pin;

use toolhost_types::Permission;

use crate::{Grants, Toolset};

/// A boxed future, so stores can be used as trait objects.
pub type PolicyFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, PolicyStoreError>> + Send + 'a>>;

/// Why a policy store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum PolicyStoreError {
    /// The role exists already.
    #[error("{what} already exists")]
    Conflict {
        /// What collided.
        what: String,
    },
    /// The tenant, role or principal does not exist.
    #[error("{what} does not exist")]
    NotFound {
        /// What is missing.
        what: String,
    },
    /// The database failed.
    #[error("policy store: {0}")]
    Database(String),
    /// The database could not be reached: the request may be tried again.
    #[error(transparent)]
    Unavailable(#[from] toolhost_types::StoreUnavailable),
}

/// A role as the store holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Role {
    /// The role's tenant.
    pub tenant: String,
    /// Its name, unique in the tenant.
    pub name: String,
    /// An admin role allows every tool.
    pub admin: bool,
    /// Its permissions, sorted.
    pub permissions: Vec<Permission>,
    /// The subjects (user ids) holding it, sorted.
    pub members: Vec<String>,
}

/// Roles, permissions and assignments. Every method is one transaction.
pub trait PolicyStore: Send + Sync {
    /// The grants of `subject` in `tenant`: one read, on every request.
    fn grants<'a>(&'a self, tenant: &'a str, subject: &'a str) -> PolicyFuture<'a, Grants>;
    /// Creates a role; `NotFound` without the tenant, `Conflict` if it exists.
    fn create_role<'a>(
        &'a self,
        tenant: &'a str,
        name: &'a str,
        admin: bool,
    ) -> PolicyFuture<'a, ()>;
    /// Deletes a role and its assignments; false if there was none.
    fn delete_role<'a>(&'a self, tenant: &'a str, name: &'a str) -> PolicyFuture<'a, bool>;
    /// Adds a permission to a role; false if it had it already.
    fn permit<'a>(
        &'a self,
        tenant: &'a str,
        role: &'a str,
        permission: &'a Permission,
    ) -> PolicyFuture<'a, bool>;
    /// Removes a permission from a role; false if it did not have it.
    fn forbid<'a>(
        &'a self,
        tenant: &'a str,
        role: &'a str,
        permission: &'a Permission,
    ) -> PolicyFuture<'a, bool>;
    /// Gives a role to a subject of the same tenant; false if it held it already.
    fn assign<'a>(
        &'a self,
        tenant: &'a str,
        role: &'a str,
        subject: &'a str,
    ) -> PolicyFuture<'a, bool>;
    /// Takes a role from a subject; false if it did not hold it.
    fn unassign<'a>(
        &'a self,
        tenant: &'a str,
        role: &'a str,
        subject: &'a str,
    ) -> PolicyFuture<'a, bool>;
    /// Every role of a tenant, by name.
    fn roles<'a>(&'a self, tenant: &'a str) -> PolicyFuture<'a, Vec<Role>>;
    /// The toolsets of `tenant` among `names` (those it defines, by name):
    /// one read, on every request of a principal bound to a toolset.
    fn toolsets<'a>(
        &'a self,
        tenant: &'a str,
        names: &'a [String],
    ) -> PolicyFuture<'a, Vec<Toolset>>;
    /// Every toolset of a tenant, by name.
    fn all_toolsets<'a>(&'a self, tenant: &'a str) -> PolicyFuture<'a, Vec<Toolset>>;
    /// Defines `toolset` in `tenant`, replacing one of the same name; true
    /// if it is new. `NotFound` without the tenant, `Conflict` when the
    /// tenant defines [`MAX_TOOLSETS`](crate::MAX_TOOLSETS) already. The
    /// caller checks the definition ([`Toolset::check`]).
    fn define_toolset<'a>(
        &'a self,
        tenant: &'a str,
        toolset: &'a Toolset,
    ) -> PolicyFuture<'a, bool>;
    /// Deletes a toolset; false if there was none. Tokens bound to it
    /// reach nothing from then on.
    fn delete_toolset<'a>(&'a self, tenant: &'a str, name: &'a str) -> PolicyFuture<'a, bool>;
}

/// A read-only store giving every principal the same grants: for tests,
/// benchmarks and `toolhost call`, where there is no database of roles.
#[derive(Debug, Clone, Default)]
pub struct FixedGrants(pub Grants);

impl PolicyStore for FixedGrants {
    fn grants<'a>(&'a self, _tenant: &'a str, _subject: &'a str) -> PolicyFuture<'a, Grants> {
        Box::pin(async move { Ok(self.0.clone()) })
    }
    fn create_role<'a>(&'a self, _: &'a str, _: &'a str, _: bool) -> PolicyFuture<'a, ()> {
        Box::pin(async { Err(read_only()) })
    }
    fn delete_role<'a>(&'a self, _: &'a str, _: &'a str) -> PolicyFuture<'a, bool> {
        Box::pin(async { Err(read_only()) })
    }
    fn permit<'a>(&'a self, _: &'a str, _: &'a str, _: &'a Permission) -> PolicyFuture<'a, bool> {
        Box::pin(async { Err(read_only()) })
    }
    fn forbid<'a>(&'a self, _: &'a str, _: &'a str, _: &'a Permission) -> PolicyFuture<'a, bool> {
        Box::pin(async { Err(read_only()) })
    }
    fn assign<'a>(&'a self, _: &'a str, _: &'a str, _: &'a str) -> PolicyFuture<'a, bool> {
        Box::pin(async { Err(read_only()) })
    }
    fn unassign<'a>(&'a self, _: &'a str, _: &'a str, _: &'a str) -> PolicyFuture<'a, bool> {
        Box::pin(async { Err(read_only()) })
    }
    fn roles<'a>(&'a self, _: &'a str) -> PolicyFuture<'a, Vec<Role>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn toolsets<'a>(&'a self, _: &'a str, _: &'a [String]) -> PolicyFuture<'a, Vec<Toolset>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn all_toolsets<'a>(&'a self, _: &'a str) -> PolicyFuture<'a, Vec<Toolset>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn define_toolset<'a>(&'a self, _: &'a str, _: &'a Toolset) -> PolicyFuture<'a, bool> {
        Box::pin(async { Err(read_only()) })
    }
    fn delete_toolset<'a>(&'a self, _: &'a str, _: &'a str) -> PolicyFuture<'a, bool> {
        Box::pin(async { Err(read_only()) })
    }
}

fn read_only() -> PolicyStoreError {
    PolicyStoreError::Database("this policy store is fixed and read-only".into())
}
