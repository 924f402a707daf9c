-- The console's People and Service clients pages (host/storage/src/auth/people.rs).
-- Same number, same meaning as migrations/postgres/0030_people_pages.sql.
--
-- A tenant's users are listed by username, a page at a time from a cursor
-- (and found by the start of a name); its service clients newest first by
-- (created_at, client_id). Before, the console read every user of the
-- tenant and every client of the host to show them.
CREATE INDEX users_tenant_name ON users (tenant, username);
CREATE INDEX oauth_clients_tenant_created ON oauth_clients (tenant, created_at, client_id);
