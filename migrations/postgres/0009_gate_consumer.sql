-- The call that consumed a gate (host/storage/src/gates.rs). Same number,
-- same meaning as migrations/sqlite/0009_gate_consumer.sql.
--
-- A gate is consumed before its call runs (that is what stops a second
-- run), so it commits before the call's audit row. `consumed_by` names the
-- call's id: `toolhost audit verify` lists consumed gates whose call has no
-- audit row (a host stopped mid-call). NULL on gates consumed before this
-- migration.
ALTER TABLE gates ADD COLUMN consumed_by TEXT;
