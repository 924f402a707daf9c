-- The console's runs pages and `list_explorations` (host/storage/src/runs/page.rs).
-- Same number, same meaning as migrations/sqlite/0029_runs_pages.sql.
--
-- A listing is newest first by (created_at, id), a page at a time from a
-- cursor on that pair. The indexes of migration 0011 order a tenant's (or
-- a principal's) runs by created_at alone, so each page sorted the runs of
-- its last millisecond by id and the planner weighed a sort against them;
-- with the id in the index, a page is one walk from the cursor to its end.
DROP INDEX runs_tenant_created;
DROP INDEX runs_principal_created;
CREATE INDEX runs_tenant_created ON runs (tenant, created_at, id);
CREATE INDEX runs_principal_created ON runs (tenant, principal, created_at, id);
