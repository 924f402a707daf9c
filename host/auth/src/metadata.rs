//! Discovery documents: RFC 8414 authorization-server metadata (also served
//! as OpenID discovery) and RFC 9728 protected-resource metadata.

use serde_json::{Value, json};

use crate::config::{AuthConfig, TOOLSET_PATH};
use crate::{client_assertion, dpop, scope};

/// How a client authenticates at the token and revocation endpoints:
/// public clients name themselves, others send their secret or (service
/// clients with registered keys) a signed assertion.
const AUTH_METHODS: [&str; 4] = [
    "none",
    "client_secret_basic",
    "client_secret_post",
    "private_key_jwt",
];

/// RFC 8414 metadata. One issuer string everywhere: here, in the resource
/// metadata, in the `iss` of authorization responses and tokens. The same
/// document answers at the OpenID discovery path for clients that only look
/// there; it claims no OpenID Connect features (no ID tokens, no userinfo).
pub fn authorization_server(config: &AuthConfig) -> Value {
    let i = &config.issuer;
    json!({
        "issuer": i,
        "authorization_endpoint": format!("{i}/oauth/authorize"),
        "token_endpoint": format!("{i}/oauth/token"),
        "registration_endpoint": format!("{i}/oauth/register"),
        "revocation_endpoint": format!("{i}/oauth/revoke"),
        "jwks_uri": format!("{i}/oauth/jwks"),
        "scopes_supported": scope::FIRST_PARTY,
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": [
            "authorization_code", "refresh_token", "client_credentials", crate::grant::JWT_BEARER_GRANT,
        ],
        "token_endpoint_auth_methods_supported": AUTH_METHODS,
        "token_endpoint_auth_signing_alg_values_supported": client_assertion::ALGORITHMS,
        "revocation_endpoint_auth_methods_supported": AUTH_METHODS,
        "revocation_endpoint_auth_signing_alg_values_supported": client_assertion::ALGORITHMS,
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": true,
        "dpop_signing_alg_values_supported": dpop::ALGORITHMS,
    })
}

/// RFC 9728 metadata for `/mcp`, or for toolset `toolset`'s endpoint
/// under it (`/mcp/toolsets/NAME`: RFC 9728 §3.3, the resource named is
/// the one whose path the document was asked for).
pub fn protected_resource(config: &AuthConfig, toolset: Option<&str>) -> Value {
    let endpoint = toolset.map_or_else(String::new, |t| format!("{TOOLSET_PATH}{t}"));
    json!({
        "resource": format!("{}{endpoint}", config.resource()),
        "authorization_servers": [config.issuer],
        "scopes_supported": scope::FIRST_PARTY,
        "bearer_methods_supported": ["header"],
        "dpop_signing_alg_values_supported": dpop::ALGORITHMS,
        "resource_name": "toolhost",
    })
}
