-- Same number as migrations/sqlite/0018_audit_client_rounds_null.sql, which
-- rebuilds SQLite's audit table so that `audit_client_rounds_array` lets a
-- NULL pass in every SQLite version. PostgreSQL's constraint already does
-- (json_typeof(NULL) is NULL): nothing to change.
SELECT 1;
