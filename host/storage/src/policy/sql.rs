//! The policy store's SQL: one text per operation, valid on both engines
//! (SQLite reads `$n` as PostgreSQL does, a repeated `$1` being one value).

// The one read on every MCP request, served by `role_assignments_subject`:
// a row per (assigned role, permission), with a NULL permission for a role
// that has none, so an admin role without permissions still shows.
pub(super) const GRANTS: &str = "SELECT a.role, r.admin, p.permission \
     FROM role_assignments a \
     JOIN roles r ON r.tenant = a.tenant AND r.name = a.role \
     LEFT JOIN role_permissions p ON p.tenant = a.tenant AND p.role = a.role \
     WHERE a.tenant = $1 AND a.subject = $2";

// A missing tenant is a foreign-key violation, a taken name a unique one.
pub(super) const CREATE_ROLE: &str = "INSERT INTO roles (tenant, name, admin) VALUES ($1, $2, $3)";
// Permissions and assignments go by ON DELETE CASCADE.
pub(super) const DELETE_ROLE: &str = "DELETE FROM roles WHERE tenant = $1 AND name = $2";

// A missing role is a foreign-key violation; a permission held already, no row.
pub(crate) const PERMIT: &str = "INSERT INTO role_permissions (tenant, role, permission) \
     VALUES ($1, $2, $3) ON CONFLICT (tenant, role, permission) DO NOTHING";
pub(crate) const FORBID: &str = "DELETE FROM role_permissions \
     WHERE tenant = $1 AND role = $2 AND permission = $3";

// A missing role, or a subject who is not a user of this tenant, is a
// foreign-key violation: the database refuses a cross-tenant assignment.
pub(crate) const ASSIGN: &str = "INSERT INTO role_assignments (tenant, role, subject) \
     VALUES ($1, $2, $3) ON CONFLICT (tenant, role, subject) DO NOTHING";
pub(crate) const UNASSIGN: &str = "DELETE FROM role_assignments \
     WHERE tenant = $1 AND role = $2 AND subject = $3";
// After a refused assignment: which of the two references was missing.
pub(super) const ASSIGN_REFERENCES: &str = "SELECT \
     (SELECT COUNT(*) FROM roles WHERE tenant = $1 AND name = $2) AS roles, \
     (SELECT COUNT(*) FROM users WHERE tenant = $1 AND id = $3) AS users";

// A tenant's roles, permissions and members in one statement (one snapshot):
// a row per role (with `admin`), per permission and per member, each naming
// its role; the store assembles and sorts them.
pub(super) const ROLES: &str = "\
     SELECT name AS role, admin, NULL AS permission, NULL AS subject \
     FROM roles WHERE tenant = $1 \
     UNION ALL SELECT role, NULL, permission, NULL FROM role_permissions WHERE tenant = $1 \
     UNION ALL SELECT role, NULL, NULL, subject FROM role_assignments WHERE tenant = $1";

pub(super) const TENANTS: &str = "SELECT id FROM tenants ORDER BY id";
// The operators' page of tenants: by id from a cursor (the primary key's
// index), each with its users and its service clients not revoked (the
// `users_tenant` index; the clients counted per tenant, few).
macro_rules! tenants_counted {
    ($page:literal) => {
        concat!(
            "SELECT t.id, t.created_at, \
             (SELECT COUNT(*) FROM users u WHERE u.tenant = t.id) AS users, \
             (SELECT COUNT(*) FROM users u WHERE u.tenant = t.id AND u.disabled) AS disabled, \
             (SELECT COUNT(*) FROM oauth_clients c WHERE c.tenant = t.id \
              AND c.kind = 'service' AND c.revoked_at IS NULL) AS services \
             FROM tenants t ",
            $page
        )
    };
}
/// The tenants after an id (`''`: from the first), by id.
pub(super) const TENANTS_COUNTED_AFTER: &str =
    tenants_counted!("WHERE t.id > $1 ORDER BY t.id ASC LIMIT $2");
/// The tenants before an id, read from it toward the first.
pub(super) const TENANTS_COUNTED_BEFORE: &str =
    tenants_counted!("WHERE t.id < $1 ORDER BY t.id DESC LIMIT $2");

// Toolsets (migration 0033): one row each, its definition a JSON document.
pub(super) const TOOLSET: &str = "SELECT definition FROM toolsets WHERE tenant = $1 AND name = $2";
pub(super) const TOOLSETS: &str = "SELECT definition FROM toolsets WHERE tenant = $1 ORDER BY name";
// A replacement always writes; a new one only while the tenant defines
// fewer than $5 (no row affected: at the bound). A missing tenant is a
// foreign-key violation.
pub(crate) const DEFINE_TOOLSET: &str = "INSERT INTO toolsets (tenant, name, definition, updated_at) \
     SELECT $1, $2, $3, $4 \
     WHERE (SELECT COUNT(*) FROM toolsets WHERE tenant = $1) < $5 \
        OR EXISTS (SELECT 1 FROM toolsets WHERE tenant = $1 AND name = $2) \
     ON CONFLICT (tenant, name) DO UPDATE \
     SET definition = excluded.definition, updated_at = excluded.updated_at";
pub(crate) const DELETE_TOOLSET: &str = "DELETE FROM toolsets WHERE tenant = $1 AND name = $2";
