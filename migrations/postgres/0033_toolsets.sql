-- Toolsets: named subsets of a tenant's tools a client is bound to
-- (host/policy/src/toolsets.rs, host/storage/src/policy.rs).
-- Same number, same meaning as migrations/sqlite/0033_toolsets.sql.
--
-- A toolset is read by (tenant, name) on every request of a principal
-- bound to it, and listed by tenant: the primary key serves both. Its
-- definition (tools, plugins, tags, exclusions) is one JSON document the
-- host checked before writing (at most 500 names a list). A tenant
-- defines at most 100 (the store's insert counts them).
CREATE TABLE toolsets (
    tenant     TEXT    NOT NULL REFERENCES tenants (id),
    name       TEXT    NOT NULL,
    definition TEXT    NOT NULL,
    updated_at BIGINT  NOT NULL,
    PRIMARY KEY (tenant, name)
);
