-- The console's People and Service clients pages (host/storage/src/auth/people.rs).
-- Same number, same meaning as migrations/sqlite/0030_people_pages.sql.
--
-- A tenant's users are listed by username, a page at a time from a cursor
-- (and found by the start of a name); its service clients newest first by
-- (created_at, client_id). Usernames are ordered in byte order (the "C"
-- collation), whatever the database's own: a name's prefix is then a
-- range, and the pages are the same as on SQLite.
CREATE INDEX users_tenant_name ON users (tenant, username COLLATE "C");
CREATE INDEX oauth_clients_tenant_created ON oauth_clients (tenant, created_at, client_id);
