//! [`PolicyStore`] for [`Store`]: roles, their permissions and their
//! members, each operation one statement from `sql.rs` on either engine.
//!
//! The database keeps the invariants, not a read followed by a write: a
//! role's tenant must exist and its name be free (`create_role`), a
//! permission or an assignment must name an existing role, and an
//! assignment's subject must be a user *of the role's tenant* (a foreign key
//! on `(tenant, subject)`), so a role can never be given across tenants.
//! Deleting a role cascades to its permissions and assignments.

pub(crate) mod sql;

use std::collections::BTreeMap;

use sqlx::Row as _;
use toolhost_policy::{
    Grants, MAX_TOOLSETS, PolicyFuture, PolicyStore, PolicyStoreError, Role, Toolset,
};
use toolhost_types::Permission;

use crate::connect::{execute, fetch_all, fetch_optional};
use crate::fields::Fields;
use crate::{PageFrom, StorageError, Store};

/// Maps a driver error met while doing `operation`. The driver's message
/// names tables and constraints, never bound values.
fn failed(operation: &'static str) -> impl FnOnce(sqlx::Error) -> PolicyStoreError {
    move |e| match crate::error::unreachable(operation, &e) {
        Some(down) => PolicyStoreError::Unavailable(down),
        None => PolicyStoreError::Database(format!("{operation}: {e}")),
    }
}

/// True if `e` is the database refusing a reference to a missing row.
fn is_missing_reference(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .is_some_and(|db| db.is_foreign_key_violation())
}

/// `value`, read back from `role_permissions`, as a [`Permission`]; a value
/// this build cannot read is a database error naming it (written by hand,
/// or by a build with other rules), never silently dropped.
fn stored_permission(
    tenant: &str,
    role: &str,
    value: &str,
) -> Result<Permission, PolicyStoreError> {
    value.parse().map_err(|_| {
        PolicyStoreError::Database(format!(
            "role_permissions of role {role:?} in tenant {tenant:?}: \
             {value:?} is not a `resource:action` permission"
        ))
    })
}

/// One row of [`sql::ROLES`]: a role (with its admin flag), one of its
/// permissions, or one of its members.
type RoleRow = (String, Option<bool>, Option<String>, Option<String>);

impl Store {
    /// Every tenant's id, sorted. Tenants are created by `ensure_tenant`
    /// (adding a user, a service client or a tenant by hand) and never
    /// deleted.
    pub async fn tenants(&self) -> Result<Vec<String>, StorageError> {
        fetch_all!(&self.pools, |row| row.try_get("id"), sql::TENANTS)
            .map_err(StorageError::query("select tenants"))
    }

    /// Makes tenant `tenant` require DPoP-bound tokens of its clients (RFC
    /// 9449; its token requests without a proof are refused), or stop
    /// requiring them. False if there is no such tenant.
    pub async fn set_tenant_dpop(
        &self,
        tenant: &str,
        required: bool,
    ) -> Result<bool, StorageError> {
        let statement = crate::auth::sql::SET_TENANT_DPOP;
        let changed = execute!(&self.pools, statement, required, tenant)
            .map_err(StorageError::query("set a tenant's DPoP requirement"))?;
        Ok(changed == 1)
    }

    /// At most `limit` tenants from `from` (after or before an id), by
    /// id, each with what it holds: a page of the host's operators' list
    /// of tenants.
    pub async fn tenants_counted(
        &self,
        from: &PageFrom<String>,
        limit: u32,
    ) -> Result<Vec<TenantCounts>, StorageError> {
        let (statement, id) = match from {
            PageFrom::Start => (sql::TENANTS_COUNTED_AFTER, ""),
            PageFrom::After(id) => (sql::TENANTS_COUNTED_AFTER, id.as_str()),
            PageFrom::Before(id) => (sql::TENANTS_COUNTED_BEFORE, id.as_str()),
        };
        let mut page = fetch_all!(&self.pools, tenant_counts, statement, id, i64::from(limit))
            .map_err(StorageError::query("count each tenant's people"))?;
        if matches!(from, PageFrom::Before(_)) {
            page.reverse();
        }
        Ok(page)
    }

    /// The error for an assignment the database refused: which of the role
    /// and the user (of this tenant) is missing.
    async fn missing_for_assign(
        &self,
        tenant: &str,
        role: &str,
        subject: &str,
    ) -> PolicyStoreError {
        let counts = fetch_all!(
            &self.pools,
            |row| Ok((
                row.try_get::<i64, _>("roles")?,
                row.try_get::<i64, _>("users")?
            )),
            sql::ASSIGN_REFERENCES,
            tenant,
            role,
            subject
        );
        let what = match counts {
            Ok(rows) if rows.first().is_some_and(|&(roles, _)| roles == 0) => {
                format!("role {role:?} in tenant {tenant:?}")
            }
            Ok(_) => format!("user {subject:?} in tenant {tenant:?}"),
            Err(e) => return failed("look up a refused assignment")(e),
        };
        PolicyStoreError::NotFound { what }
    }
    /// The grants of `subject` in `tenant`, read from the database.
    async fn read_grants(&self, tenant: &str, subject: &str) -> Result<Grants, PolicyStoreError> {
        let rows = fetch_all!(
            &self.pools,
            |row| Ok((
                row.try_get::<String, _>("role")?,
                row.try_get::<bool, _>("admin")?,
                row.try_get::<Option<String>, _>("permission")?,
            )),
            sql::GRANTS,
            tenant,
            subject
        )
        .map_err(failed("select grants"))?;
        let admin = rows.iter().any(|&(_, admin, _)| admin);
        let permissions = rows
            .iter()
            .filter_map(|(role, _, p)| p.as_deref().map(|p| (role, p)))
            .map(|(role, p)| stored_permission(tenant, role, p))
            .collect::<Result<Vec<_>, _>>()?;
        // No rows at all is `Grants::none()`: no admin, no permissions.
        Ok(Grants::new(admin, permissions))
    }
}

impl PolicyStore for Store {
    /// Served from the live views while nothing they depend on changed
    /// (`src/live.rs`).
    fn grants<'a>(&'a self, tenant: &'a str, subject: &'a str) -> PolicyFuture<'a, Grants> {
        Box::pin(async move {
            let ticket = match self.live.roles(tenant, subject) {
                Ok(remembered) => return Ok(remembered),
                Err(ticket) => ticket,
            };
            let grants = self.read_grants(tenant, subject).await?;
            self.live.keep_roles(ticket, tenant, subject, &grants);
            Ok(grants)
        })
    }

    fn create_role<'a>(
        &'a self,
        tenant: &'a str,
        name: &'a str,
        admin: bool,
    ) -> PolicyFuture<'a, ()> {
        Box::pin(async move {
            let created = execute!(&self.pools, sql::CREATE_ROLE, tenant, name, admin);
            self.live.refresh(&self.pools).await;
            created.map(drop).map_err(|e| match e.as_database_error() {
                Some(db) if db.is_unique_violation() => PolicyStoreError::Conflict {
                    what: format!("role {name:?} in tenant {tenant:?}"),
                },
                Some(db) if db.is_foreign_key_violation() => PolicyStoreError::NotFound {
                    what: format!("tenant {tenant:?}"),
                },
                _ => failed("create role")(e),
            })
        })
    }

    fn delete_role<'a>(&'a self, tenant: &'a str, name: &'a str) -> PolicyFuture<'a, bool> {
        Box::pin(async move {
            let deleted = execute!(&self.pools, sql::DELETE_ROLE, tenant, name)
                .map_err(failed("delete role"))?;
            self.live.refresh(&self.pools).await;
            Ok(deleted == 1)
        })
    }

    fn permit<'a>(
        &'a self,
        tenant: &'a str,
        role: &'a str,
        permission: &'a Permission,
    ) -> PolicyFuture<'a, bool> {
        Box::pin(async move {
            let permission = permission.to_string();
            match execute!(&self.pools, sql::PERMIT, tenant, role, permission.as_str()) {
                Ok(added) => {
                    self.live.refresh(&self.pools).await;
                    Ok(added == 1)
                }
                Err(e) if is_missing_reference(&e) => Err(PolicyStoreError::NotFound {
                    what: format!("role {role:?} in tenant {tenant:?}"),
                }),
                Err(e) => Err(failed("permit")(e)),
            }
        })
    }

    fn forbid<'a>(
        &'a self,
        tenant: &'a str,
        role: &'a str,
        permission: &'a Permission,
    ) -> PolicyFuture<'a, bool> {
        Box::pin(async move {
            let permission = permission.to_string();
            let removed = execute!(&self.pools, sql::FORBID, tenant, role, permission.as_str())
                .map_err(failed("forbid"))?;
            self.live.refresh(&self.pools).await;
            Ok(removed == 1)
        })
    }

    fn assign<'a>(
        &'a self,
        tenant: &'a str,
        role: &'a str,
        subject: &'a str,
    ) -> PolicyFuture<'a, bool> {
        Box::pin(async move {
            match execute!(&self.pools, sql::ASSIGN, tenant, role, subject) {
                Ok(added) => {
                    self.live.refresh(&self.pools).await;
                    Ok(added == 1)
                }
                // Refused as a whole: no row was written.
                Err(e) if is_missing_reference(&e) => {
                    Err(self.missing_for_assign(tenant, role, subject).await)
                }
                Err(e) => Err(failed("assign role")(e)),
            }
        })
    }

    fn unassign<'a>(
        &'a self,
        tenant: &'a str,
        role: &'a str,
        subject: &'a str,
    ) -> PolicyFuture<'a, bool> {
        Box::pin(async move {
            let removed = execute!(&self.pools, sql::UNASSIGN, tenant, role, subject)
                .map_err(failed("unassign role"))?;
            self.live.refresh(&self.pools).await;
            Ok(removed == 1)
        })
    }

    fn roles<'a>(&'a self, tenant: &'a str) -> PolicyFuture<'a, Vec<Role>> {
        Box::pin(async move {
            let rows: Vec<RoleRow> = fetch_all!(
                &self.pools,
                |row| Ok((
                    row.try_get("role")?,
                    row.try_get("admin")?,
                    row.try_get("permission")?,
                    row.try_get("subject")?,
                )),
                sql::ROLES,
                tenant
            )
            .map_err(failed("select roles"))?;
            assemble(tenant, rows)
        })
    }

    fn toolsets<'a>(
        &'a self,
        tenant: &'a str,
        names: &'a [String],
    ) -> PolicyFuture<'a, Vec<Toolset>> {
        Box::pin(async move {
            let mut found = Vec::new();
            for name in names {
                let definition = fetch_optional!(
                    &self.pools,
                    |row| row.try_get::<String, _>("definition"),
                    sql::TOOLSET,
                    tenant,
                    name.as_str()
                )
                .map_err(failed("select toolset"))?;
                if let Some(d) = definition {
                    found.push(stored_toolset(tenant, &d)?);
                }
            }
            Ok(found)
        })
    }

    fn all_toolsets<'a>(&'a self, tenant: &'a str) -> PolicyFuture<'a, Vec<Toolset>> {
        Box::pin(async move {
            let rows = fetch_all!(
                &self.pools,
                |row| row.try_get::<String, _>("definition"),
                sql::TOOLSETS,
                tenant
            )
            .map_err(failed("select toolsets"))?;
            rows.iter().map(|d| stored_toolset(tenant, d)).collect()
        })
    }

    fn define_toolset<'a>(
        &'a self,
        tenant: &'a str,
        toolset: &'a Toolset,
    ) -> PolicyFuture<'a, bool> {
        Box::pin(async move {
            let name = toolset.name.as_str();
            let existed = !self.toolsets(tenant, &[name.to_owned()]).await?.is_empty();
            let definition = serde_json::to_string(toolset)
                .map_err(|e| PolicyStoreError::Database(format!("toolset {name:?}: {e}")))?;
            let now = crate::record::unix_millis(std::time::SystemTime::now());
            let bound = i64::try_from(MAX_TOOLSETS).unwrap_or(i64::MAX);
            let written = execute!(
                &self.pools,
                sql::DEFINE_TOOLSET,
                tenant,
                name,
                definition.as_str(),
                now,
                bound
            )
            .map_err(|e| match e.as_database_error() {
                Some(db) if db.is_foreign_key_violation() => PolicyStoreError::NotFound {
                    what: format!("tenant {tenant:?}"),
                },
                _ => failed("define toolset")(e),
            })?;
            if written == 0 {
                return Err(PolicyStoreError::Conflict {
                    what: format!(
                        "a {}th toolset in tenant {tenant:?} (at most {MAX_TOOLSETS})",
                        MAX_TOOLSETS + 1
                    ),
                });
            }
            Ok(!existed)
        })
    }

    fn delete_toolset<'a>(&'a self, tenant: &'a str, name: &'a str) -> PolicyFuture<'a, bool> {
        Box::pin(async move {
            let deleted = execute!(&self.pools, sql::DELETE_TOOLSET, tenant, name)
                .map_err(failed("delete toolset"))?;
            Ok(deleted == 1)
        })
    }
}

/// A toolset's stored definition; one this build cannot read is a database
/// error naming its tenant, never silently dropped (it would widen a
/// binding to nothing, which fails closed, but unseen).
fn stored_toolset(tenant: &str, definition: &str) -> Result<Toolset, PolicyStoreError> {
    serde_json::from_str(definition).map_err(|e| {
        PolicyStoreError::Database(format!(
            "toolsets of tenant {tenant:?}: a definition this build cannot read ({e})"
        ))
    })
}

/// The rows of [`sql::ROLES`] as roles sorted by name, each with sorted
/// permissions and members.
fn assemble(tenant: &str, rows: Vec<RoleRow>) -> Result<Vec<Role>, PolicyStoreError> {
    let mut roles: BTreeMap<String, Role> = BTreeMap::new();
    for (name, admin, permission, subject) in rows {
        let role = roles.entry(name.clone()).or_insert_with(|| Role {
            tenant: tenant.to_owned(),
            name: name.clone(),
            admin: false,
            permissions: Vec::new(),
            members: Vec::new(),
        });
        role.admin |= admin.unwrap_or(false);
        if let Some(p) = permission {
            role.permissions.push(stored_permission(tenant, &name, &p)?);
        }
        role.members.extend(subject);
    }
    Ok(roles
        .into_values()
        .map(|mut role| {
            role.permissions.sort();
            role.members.sort();
            role
        })
        .collect())
}

/// A row of [`sql::TENANTS_COUNTED`].
fn tenant_counts(row: &impl Fields) -> Result<TenantCounts, sqlx::Error> {
    let count = |column| row.int(column).map(|n| u64::try_from(n).unwrap_or(0));
    Ok(TenantCounts {
        id: row.text("id")?,
        created_at: row.int("created_at")?,
        users: count("users")?,
        disabled: count("disabled")?,
        services: count("services")?,
    })
}

/// A tenant as the operators' list shows it ([`Store::tenants_counted`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantCounts {
    /// Its id.
    pub id: String,
    /// When it was created (unix seconds).
    pub created_at: i64,
    /// Its users, disabled ones included.
    pub users: u64,
    /// Of those, disabled.
    pub disabled: u64,
    /// Its service clients not revoked.
    pub services: u64,
}
