-- Single sign-on through OpenID Connect providers (toolhost_auth::AuthStore,
-- host/sso). Same number, same meaning as migrations/postgres/0014_sso.sql.
--
-- An attempt is one trip to a provider and back: the `state` sent (stored
-- as its SHA-256), the browser that started it, the nonce the ID token must
-- echo and the PKCE verifier the code is redeemed with. The callback takes
-- it (a DELETE that one request wins), so a state is good once.
CREATE TABLE sso_attempts (
    state_hash    TEXT    NOT NULL PRIMARY KEY,
    provider      TEXT    NOT NULL,
    pending_id    TEXT    NOT NULL,
    browser_hash  TEXT    NOT NULL,
    nonce         TEXT    NOT NULL,
    code_verifier TEXT    NOT NULL,
    expires_at    INTEGER NOT NULL
) STRICT;
CREATE INDEX sso_attempts_expires ON sso_attempts (expires_at);

-- A provider's subject, once linked to a local user, stays with that user:
-- an email address reassigned at the provider cannot take over the account,
-- and a user is linked to at most one subject per provider. Deleting the
-- user deletes the link.
CREATE TABLE sso_links (
    provider  TEXT    NOT NULL,
    subject   TEXT    NOT NULL,
    user_id   TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    linked_at INTEGER NOT NULL,
    PRIMARY KEY (provider, subject),
    CONSTRAINT sso_links_one_per_user UNIQUE (provider, user_id)
) STRICT;
