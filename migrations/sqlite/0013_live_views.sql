-- Live views (host/storage/src/live.rs): the grant and role reads every
-- request makes are served from memory, and `live_generation.value` says
-- when memory is stale. Same number, same meaning as
-- migrations/postgres/0013_live_views.sql.
--
-- Every change a view depends on moves the generation by one, in the
-- transaction of the change, by trigger: whoever writes (this host, the
-- `toolhost` CLI in another process, another replica) cannot forget to.
-- The views depend on a grant's family, its client and its user
-- (`live_grant`) and on a subject's roles and their permissions
-- (`grants`). Columns no view reads (a client's `last_used_at`, a
-- password hash) do not move it, so signing in and using a client do not
-- empty the views. A new family is not in any view (a missing grant is
-- never remembered), so inserting one does not either.
CREATE TABLE live_generation (
    id    INTEGER NOT NULL PRIMARY KEY,
    value INTEGER NOT NULL,
    CONSTRAINT live_generation_one_row CHECK (id = 1)
) STRICT;
INSERT INTO live_generation (id, value) VALUES (1, 0);

CREATE TRIGGER live_users_update AFTER UPDATE OF tenant, username, disabled ON users
BEGIN UPDATE live_generation SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER live_users_delete AFTER DELETE ON users
BEGIN UPDATE live_generation SET value = value + 1 WHERE id = 1; END;

CREATE TRIGGER live_clients_update AFTER UPDATE OF kind, name, scope, tenant, revoked_at ON oauth_clients
BEGIN UPDATE live_generation SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER live_clients_delete AFTER DELETE ON oauth_clients
BEGIN UPDATE live_generation SET value = value + 1 WHERE id = 1; END;

CREATE TRIGGER live_families_update AFTER UPDATE ON token_families
BEGIN UPDATE live_generation SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER live_families_delete AFTER DELETE ON token_families
BEGIN UPDATE live_generation SET value = value + 1 WHERE id = 1; END;

CREATE TRIGGER live_roles_insert AFTER INSERT ON roles
BEGIN UPDATE live_generation SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER live_roles_update AFTER UPDATE ON roles
BEGIN UPDATE live_generation SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER live_roles_delete AFTER DELETE ON roles
BEGIN UPDATE live_generation SET value = value + 1 WHERE id = 1; END;

CREATE TRIGGER live_role_permissions_insert AFTER INSERT ON role_permissions
BEGIN UPDATE live_generation SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER live_role_permissions_update AFTER UPDATE ON role_permissions
BEGIN UPDATE live_generation SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER live_role_permissions_delete AFTER DELETE ON role_permissions
BEGIN UPDATE live_generation SET value = value + 1 WHERE id = 1; END;

CREATE TRIGGER live_role_assignments_insert AFTER INSERT ON role_assignments
BEGIN UPDATE live_generation SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER live_role_assignments_update AFTER UPDATE ON role_assignments
BEGIN UPDATE live_generation SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER live_role_assignments_delete AFTER DELETE ON role_assignments
BEGIN UPDATE live_generation SET value = value + 1 WHERE id = 1; END;
