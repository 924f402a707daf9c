-- The authorization server's state (toolhost_auth::AuthStore). Same number,
-- same meaning as migrations/postgres/0002_auth.sql.
--
-- Times are Unix seconds. Codes, refresh tokens, client secrets and session
-- ids are stored only as SHA-256 hex digests, passwords as argon2 PHC
-- strings. Kinds and origins are the `as_str()` names of their Rust enums.
--
-- Foreign keys cascade from a client to its grants, codes, refresh tokens
-- and consents, so deleting an idle client takes its tokens with it. SQLite
-- enforces them only with `PRAGMA foreign_keys = ON`, which the store sets
-- on every connection (host/storage/src/connect.rs).
-- STRICT makes SQLite refuse a value of the wrong type, as PostgreSQL does;
-- booleans are 0/1 integers.

CREATE TABLE tenants (
    id         TEXT    NOT NULL PRIMARY KEY,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE users (
    id            TEXT    NOT NULL PRIMARY KEY,
    tenant        TEXT    NOT NULL REFERENCES tenants (id),
    username      TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,
    disabled      INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    CONSTRAINT users_username_unique UNIQUE (username),
    CONSTRAINT users_disabled_bool CHECK (disabled IN (0, 1))
) STRICT;
CREATE INDEX users_tenant ON users (tenant);

CREATE TABLE oauth_clients (
    client_id     TEXT    NOT NULL PRIMARY KEY,
    secret_hash   TEXT,
    kind          TEXT    NOT NULL,
    origin        TEXT    NOT NULL,
    name          TEXT    NOT NULL,
    -- A JSON array of exact redirect URIs.
    redirect_uris TEXT    NOT NULL,
    scope         TEXT    NOT NULL,
    tenant        TEXT    REFERENCES tenants (id),
    owner         TEXT,
    created_at    INTEGER NOT NULL,
    last_used_at  INTEGER,
    revoked_at    INTEGER,
    refresh_at    INTEGER,
    CONSTRAINT oauth_clients_kind_known CHECK (kind IN ('public', 'confidential', 'service')),
    CONSTRAINT oauth_clients_origin_known CHECK (origin IN ('dcr', 'cimd', 'admin'))
) STRICT;

-- One grant; `subject` is a user id or a service client's id, so it has no
-- foreign key of its own.
CREATE TABLE token_families (
    id           TEXT    NOT NULL PRIMARY KEY,
    client_id    TEXT    NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    subject      TEXT    NOT NULL,
    subject_kind TEXT    NOT NULL,
    scope        TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    revoked_at   INTEGER,
    CONSTRAINT token_families_subject_kind_known CHECK (subject_kind IN ('user', 'service'))
) STRICT;
CREATE INDEX token_families_client ON token_families (client_id);
CREATE INDEX token_families_subject ON token_families (subject);

-- `family_id` names the family the code's redemption creates: no foreign key,
-- the family does not exist yet. `used_at` is set once, by the redemption
-- that wins (a conditional update).
CREATE TABLE auth_codes (
    code_hash      TEXT    NOT NULL PRIMARY KEY,
    family_id      TEXT    NOT NULL,
    client_id      TEXT    NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    user_id        TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    redirect_uri   TEXT    NOT NULL,
    code_challenge TEXT    NOT NULL,
    scope          TEXT    NOT NULL,
    resource       TEXT    NOT NULL,
    expires_at     INTEGER NOT NULL,
    used_at        INTEGER
) STRICT;
CREATE INDEX auth_codes_client ON auth_codes (client_id);

CREATE TABLE refresh_tokens (
    token_hash TEXT    NOT NULL PRIMARY KEY,
    family_id  TEXT    NOT NULL REFERENCES token_families (id) ON DELETE CASCADE,
    client_id  TEXT    NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    scope      TEXT    NOT NULL,
    resource   TEXT    NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
) STRICT;
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_client ON refresh_tokens (client_id);

CREATE TABLE signing_keys (
    kid         TEXT    NOT NULL PRIMARY KEY,
    alg         TEXT    NOT NULL,
    -- PKCS#8 DER.
    private_der BLOB    NOT NULL,
    created_at  INTEGER NOT NULL,
    retired_at  INTEGER
) STRICT;

CREATE TABLE web_sessions (
    id_hash    TEXT    NOT NULL PRIMARY KEY,
    user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX web_sessions_user ON web_sessions (user_id);

CREATE TABLE pending_authorizations (
    id           TEXT    NOT NULL PRIMARY KEY,
    browser_hash TEXT    NOT NULL,
    csrf         TEXT    NOT NULL,
    -- The validated authorization request, JSON.
    request      TEXT    NOT NULL,
    expires_at   INTEGER NOT NULL
) STRICT;

CREATE TABLE consents (
    user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id  TEXT    NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    scope      TEXT    NOT NULL,
    granted_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, client_id)
) STRICT;
CREATE INDEX consents_client ON consents (client_id);

-- Security events outlive the clients and users they name: no foreign keys.
-- AUTOINCREMENT: an id is never reused, so "newest first" is by id.
CREATE TABLE auth_events (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    at        INTEGER NOT NULL,
    kind      TEXT    NOT NULL,
    client_id TEXT,
    subject   TEXT,
    source    TEXT,
    detail    TEXT    NOT NULL
) STRICT;
