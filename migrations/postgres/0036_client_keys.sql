-- Service clients that authenticate with a signed assertion instead of a
-- secret (RFC 7523 `private_key_jwt`; issue 47; host/auth/src/client_assertion.rs).
-- Same number, same meaning as migrations/sqlite/0036_client_keys.sql.
--
-- The single-use JWTs seen (a DPoP proof, a client assertion), so that one
-- is accepted once across every replica sharing this database: keyed by a
-- digest naming what kind it is, who made it and its jti, kept until it
-- would be refused as expired anyway. Renamed from dpop_proofs, which held
-- only the first kind.
ALTER TABLE dpop_proofs RENAME TO spent_jwts;
ALTER TABLE spent_jwts RENAME COLUMN proof_key TO jwt_key;

-- A service client's public keys (a JWK Set, as JSON), set by the operator
-- (`toolhost client add-service --jwks FILE`, `toolhost client keys`): a
-- client with keys authenticates only with an assertion one of them signed.
CREATE TABLE client_keys (
    client_id  TEXT    NOT NULL PRIMARY KEY REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    jwks       TEXT    NOT NULL,
    updated_at BIGINT  NOT NULL
);
