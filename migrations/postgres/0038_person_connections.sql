-- Each person's own connection to a backend that acts with it
-- (`auth = "connection"`; issue 46; host/sso/src/connections.rs).
-- Same number, same meaning as migrations/sqlite/0038_person_connections.sql.
--
-- A connection: the person's tokens at the backend's authorization server
-- (access token, refresh token, expiry), sealed with an AEAD key from the
-- host's configuration (`key_id` names it; base64 of nonce and sealed
-- bytes), bound to the tenant, the user and the backend it is for, so a
-- row moved to another person does not open. Never in a log or an answer.
CREATE TABLE person_connections (
    tenant       TEXT    NOT NULL,
    user_id      TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    backend      TEXT    NOT NULL,
    key_id       TEXT    NOT NULL,
    sealed       TEXT    NOT NULL,
    connected_at BIGINT  NOT NULL,
    expires_at   BIGINT,
    PRIMARY KEY (tenant, user_id, backend)
);

-- A connect flow under way: the digest of the `state` sent to the
-- backend's authorization server, who started it and for which backend,
-- and the PKCE verifier. Taken once, at the callback.
CREATE TABLE connection_attempts (
    state_hash    TEXT    NOT NULL PRIMARY KEY,
    tenant        TEXT    NOT NULL,
    user_id       TEXT    NOT NULL,
    backend       TEXT    NOT NULL,
    code_verifier TEXT    NOT NULL,
    expires_at    BIGINT  NOT NULL
);
