-- Per-tenant catalogs (issue 40). Same number, same meaning in both engines
-- (migrations/sqlite and migrations/postgres).
--
-- plugin_revisions.audience: the tenants a revision is served to while it
-- is active, as a JSON array of tenant ids (host/review/src/audience.rs);
-- NULL serves every tenant, as every revision before this migration was.
-- Set by the approval that activates it; a rollback keeps the audience the
-- revision had.
ALTER TABLE plugin_revisions ADD COLUMN audience TEXT;

-- A tenant held to one revision of a plugin while the others follow the
-- catalog: it is served that revision (while its signature verifies)
-- instead of the plugin's active one. One pin per tenant and plugin;
-- written and removed only by operators' decisions, with their audit row
-- (host/storage/src/effects.rs).
CREATE TABLE catalog_pins (
    tenant TEXT NOT NULL,
    plugin TEXT NOT NULL,
    revision TEXT NOT NULL REFERENCES plugin_revisions (id),
    pinned_by TEXT NOT NULL,
    pinned_at BIGINT NOT NULL,
    PRIMARY KEY (tenant, plugin)
);
