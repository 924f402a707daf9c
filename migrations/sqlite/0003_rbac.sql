-- Roles, their permissions and their members, per tenant
-- (toolhost_policy::PolicyStore). Same number, same meaning as
-- migrations/postgres/0003_rbac.sql.
--
-- A permission is stored as its `resource:action` text. A role's name is
-- unique in its tenant only, so every key starts with the tenant, and the
-- permissions and assignments reach their role through (tenant, role):
-- deleting a role cascades to both.
--
-- An assignment also names its member through (tenant, subject) → users
-- (tenant, id), so the database itself refuses a role given to a user of
-- another tenant, and a deleted user takes their assignments along.
-- SQLite enforces foreign keys because the store turns them on for every
-- connection (host/storage/src/connect.rs). Booleans are 0/1 integers.

-- The parent key of the assignments' user reference: `id` is unique
-- already, so this only gives the pair an index to point at.
CREATE UNIQUE INDEX users_tenant_id ON users (tenant, id);

CREATE TABLE roles (
    tenant TEXT    NOT NULL REFERENCES tenants (id),
    name   TEXT    NOT NULL,
    admin  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, name),
    CONSTRAINT roles_admin_bool CHECK (admin IN (0, 1))
) STRICT;

CREATE TABLE role_permissions (
    tenant     TEXT NOT NULL,
    role       TEXT NOT NULL,
    permission TEXT NOT NULL,
    PRIMARY KEY (tenant, role, permission),
    FOREIGN KEY (tenant, role) REFERENCES roles (tenant, name) ON DELETE CASCADE
) STRICT;

CREATE TABLE role_assignments (
    tenant  TEXT NOT NULL,
    role    TEXT NOT NULL,
    subject TEXT NOT NULL,
    PRIMARY KEY (tenant, role, subject),
    FOREIGN KEY (tenant, role) REFERENCES roles (tenant, name) ON DELETE CASCADE,
    FOREIGN KEY (tenant, subject) REFERENCES users (tenant, id) ON DELETE CASCADE
) STRICT;
-- `grants` runs on every MCP request: a subject's roles in its tenant.
CREATE INDEX role_assignments_subject ON role_assignments (tenant, subject);
