-- Live views (host/storage/src/live.rs): the grant and role reads every
-- request makes are served from memory, and `live_generation.value` says
-- when memory is stale. Same number, same meaning as
-- migrations/sqlite/0013_live_views.sql.
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
--
-- The bump also notifies channel `toolhost_live`, which every host
-- listens on (at commit: a rolled-back change notifies no one), so another
-- replica's change reaches this one's views without waiting for its poll.
-- The triggers run per statement: a statement that changes no row still
-- moves the generation, which only costs a re-read.
CREATE TABLE live_generation (
    id    INTEGER NOT NULL PRIMARY KEY,
    value BIGINT  NOT NULL,
    CONSTRAINT live_generation_one_row CHECK (id = 1)
);
INSERT INTO live_generation (id, value) VALUES (1, 0);

CREATE FUNCTION live_generation_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE live_generation SET value = value + 1 WHERE id = 1;
    PERFORM pg_notify('toolhost_live', '');
    RETURN NULL;
END;
$$;

CREATE TRIGGER live_users AFTER UPDATE OF tenant, username, disabled OR DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION live_generation_bump();
CREATE TRIGGER live_clients AFTER UPDATE OF kind, name, scope, tenant, revoked_at OR DELETE ON oauth_clients
    FOR EACH STATEMENT EXECUTE FUNCTION live_generation_bump();
CREATE TRIGGER live_families AFTER UPDATE OR DELETE ON token_families
    FOR EACH STATEMENT EXECUTE FUNCTION live_generation_bump();
CREATE TRIGGER live_roles AFTER INSERT OR UPDATE OR DELETE ON roles
    FOR EACH STATEMENT EXECUTE FUNCTION live_generation_bump();
CREATE TRIGGER live_role_permissions AFTER INSERT OR UPDATE OR DELETE ON role_permissions
    FOR EACH STATEMENT EXECUTE FUNCTION live_generation_bump();
CREATE TRIGGER live_role_assignments AFTER INSERT OR UPDATE OR DELETE ON role_assignments
    FOR EACH STATEMENT EXECUTE FUNCTION live_generation_bump();
