-- The signing keys of identity assertions sent to backends (issue 46;
-- host/auth/src/assertion.rs). Same number, same meaning as
-- migrations/postgres/0034_backend_assertion_keys.sql.
--
-- The same columns as signing_keys (migration 0002), in a table of their
-- own: an assertion key never signs an access token nor is published in
-- /oauth/jwks, and a host of an older build, which reads signing_keys
-- alone, never takes one for its access-token key.
CREATE TABLE backend_assertion_keys (
    kid         TEXT    NOT NULL PRIMARY KEY,
    alg         TEXT    NOT NULL,
    -- PKCS#8 DER.
    private_der BLOB    NOT NULL,
    created_at  INTEGER NOT NULL,
    retired_at  INTEGER
) STRICT;
