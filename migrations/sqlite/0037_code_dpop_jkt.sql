-- An authorization code bound to the client's DPoP key (RFC 9449 §10, the
-- `dpop_jkt` authorization request parameter; issue 47): the JWK SHA-256
-- thumbprint the token request's proof must be made with, or NULL when the
-- request named none. Same number, same meaning on both engines.
ALTER TABLE auth_codes ADD COLUMN dpop_jkt TEXT;
