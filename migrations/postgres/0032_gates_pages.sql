-- The pages of list_pending_approvals (host/storage/src/gates.rs).
-- Same number, same meaning as migrations/sqlite/0032_gates_pages.sql.
--
-- A listing is newest first by (created_at, id), a page at a time from a
-- cursor on that pair, in any set of states and of one tool or all. Before,
-- a listing read the newest 100 gates and filtered their tool in memory, so
-- a tool's older gates were never found; `gates_tenant_state_created`
-- still serves a listing of one state.
CREATE INDEX gates_tenant_created ON gates (tenant, created_at, id);
CREATE INDEX gates_tenant_tool_created ON gates (tenant, tool, created_at, id);
