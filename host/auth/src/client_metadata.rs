//! Client metadata: the JSON a client sends to register itself (RFC 7591) or
//! publishes at its `client_id` URL (a Client ID Metadata Document,
//! draft-ietf-oauth-client-id-metadata-document), checked and turned into a
//! [`ClientMetadata`]. Pure: no I/O, no clock; fetching documents is
//! [`crate::cimd`]'s job, storing clients is the store's.

use serde_json::{Map, Value};
use url::{Host, Url};

/// Largest registration body or metadata document we parse. Real client
/// metadata is well under 2 KiB; 16 KiB leaves room for ten long redirect
/// URIs while bounding what an anonymous caller can make us parse.
pub const MAX_REGISTRATION_BYTES: usize = 16 * 1024;

/// Most redirect URIs one client may register: enough for a native app plus a
/// few loopback variants, few enough to keep exact matching cheap.
pub const MAX_REDIRECT_URIS: usize = 10;

/// Longest redirect URI accepted, in characters (browsers and proxies start
/// truncating URLs not far above this).
pub const MAX_REDIRECT_URI_CHARS: usize = 2000;

/// Longest `client_name`, in characters; it is shown on the consent page.
pub const MAX_CLIENT_NAME_CHARS: usize = 200;

/// The name a client gets when it gives none.
pub const DEFAULT_CLIENT_NAME: &str = "unnamed client";

/// Offending values are cut to this many characters in error messages, so a
/// hostile body cannot make us echo or log kilobytes.
const ECHO_CHARS: usize = 100;

/// How a client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuthMethod {
    /// A public client (native app, CLI, browser app): no secret, PKCE only.
    None,
    /// A secret in the HTTP `Authorization: Basic` header.
    ClientSecretBasic,
    /// A secret in the form body.
    ClientSecretPost,
}

impl AuthMethod {
    /// The RFC 7591 name, as it appears in `token_endpoint_auth_method`.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMethod::None => "none",
            AuthMethod::ClientSecretBasic => "client_secret_basic",
            AuthMethod::ClientSecretPost => "client_secret_post",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        [Self::None, Self::ClientSecretBasic, Self::ClientSecretPost]
            .into_iter()
            .find(|method| method.as_str() == name)
    }
}

/// A grant a client may use. Only the two that go through a user's consent
/// exist: `client_credentials`, `implicit` and `password` are refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GrantType {
    /// `authorization_code`, with PKCE.
    AuthorizationCode,
    /// `refresh_token`.
    RefreshToken,
}

impl GrantType {
    /// The RFC 6749 name, as it appears in `grant_types`.
    pub fn as_str(self) -> &'static str {
        match self {
            GrantType::AuthorizationCode => "authorization_code",
            GrantType::RefreshToken => "refresh_token",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        [Self::AuthorizationCode, Self::RefreshToken]
            .into_iter()
            .find(|grant| grant.as_str() == name)
    }
}

/// Client metadata that passed every rule below; nothing downstream re-checks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientMetadata {
    /// Display name for the consent page: at most 200 characters, no control
    /// characters; [`DEFAULT_CLIENT_NAME`] when none was given.
    pub client_name: String,
    /// 1 to 10 URIs, each accepted by [`validate_redirect_uri`], kept exactly
    /// as sent (they are later compared by exact string match).
    pub redirect_uris: Vec<String>,
    /// Always contains [`GrantType::AuthorizationCode`]; no duplicates.
    pub grant_types: Vec<GrantType>,
    /// Always [`AuthMethod::None`] for a metadata document.
    pub auth_method: AuthMethod,
    /// Space-separated scopes, each one allowed, deduplicated, in request order.
    pub scope: String,
}

/// Why client metadata was refused. Messages name the offending value, cut
/// to about 100 characters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    /// The body exceeds [`MAX_REGISTRATION_BYTES`].
    #[error("client metadata is {size} bytes, over the {MAX_REGISTRATION_BYTES}-byte limit")]
    TooLarge {
        /// Size of the refused body.
        size: usize,
    },
    /// The body does not parse as JSON.
    #[error("client metadata is not valid JSON: {0}")]
    NotJson(String),
    /// The body is JSON but not an object.
    #[error("client metadata must be a JSON object, not {0}")]
    NotAnObject(&'static str),
    /// A known field has the wrong JSON type.
    #[error("client metadata field {field} must be {expected}")]
    WrongType {
        /// The field's name.
        field: &'static str,
        /// What it should have been, e.g. "an array of strings".
        expected: &'static str,
    },
    /// `redirect_uris` is absent or empty.
    #[error("redirect_uris is required and must list at least one URI")]
    MissingRedirectUris,
    /// `redirect_uris` has more than [`MAX_REDIRECT_URIS`] entries.
    #[error("redirect_uris lists {count} URIs; at most {MAX_REDIRECT_URIS} are allowed")]
    TooManyRedirectUris {
        /// How many were sent.
        count: usize,
    },
    /// One redirect URI breaks a rule of [`validate_redirect_uri`].
    #[error("redirect URI {uri:?} {reason}")]
    InvalidRedirectUri {
        /// The URI, cut to about 100 characters.
        uri: String,
        /// The rule it breaks.
        reason: &'static str,
    },
    /// `client_name` is too long or contains control characters.
    #[error("client_name {name:?} {reason}")]
    InvalidClientName {
        /// The name, cut to about 100 characters.
        name: String,
        /// The rule it breaks.
        reason: &'static str,
    },
    /// `response_types` is present and is not exactly `["code"]`.
    #[error("response_types must be [\"code\"], not {0}")]
    UnsupportedResponseTypes(String),
    /// A grant other than `authorization_code` and `refresh_token`.
    #[error("grant type {0:?} is not supported (only authorization_code and refresh_token)")]
    UnsupportedGrantType(String),
    /// `grant_types` leaves out `authorization_code`.
    #[error("grant_types must include authorization_code")]
    MissingAuthorizationCode,
    /// An unknown or refused `token_endpoint_auth_method`.
    #[error(
        "token_endpoint_auth_method {0:?} is not supported \
         (none, client_secret_basic or client_secret_post)"
    )]
    UnsupportedAuthMethod(String),
    /// A requested scope this server does not offer.
    #[error("scope {0:?} is not offered by this server")]
    UnknownScope(String),
    /// A metadata document without a string `client_id`.
    #[error("the metadata document has no client_id")]
    MissingClientId,
    /// A metadata document whose `client_id` is not the URL it was fetched from.
    #[error("the metadata document's client_id {found:?} is not its URL {expected:?}")]
    ClientIdMismatch {
        /// The document's URL.
        expected: String,
        /// The `client_id` it claims.
        found: String,
    },
    /// A metadata document asking for a secret-based auth method.
    #[error(
        "a client ID metadata document describes a public client: \
         token_endpoint_auth_method must be \"none\", not {0:?}"
    )]
    DocumentNotPublic(String),
    /// A metadata document carrying a client secret (the draft forbids it:
    /// a public document cannot hold a secret).
    #[error("a client ID metadata document must not contain {0}")]
    SecretInDocument(&'static str),
}

impl MetadataError {
    /// The RFC 7591 §3.2.2 `error` code for this refusal.
    pub fn error_code(&self) -> &'static str {
        match self {
            MetadataError::MissingRedirectUris
            | MetadataError::TooManyRedirectUris { .. }
            | MetadataError::InvalidRedirectUri { .. }
            | MetadataError::WrongType {
                field: "redirect_uris",
                ..
            } => "invalid_redirect_uri",
            _ => "invalid_client_metadata",
        }
    }
}

/// Checks an RFC 7591 registration body. Unknown fields are ignored and
/// `null` counts as absent; defaults: grant types `authorization_code` and
/// `refresh_token`, auth method `none`, scope `default_scope`.
pub fn validate_registration(
    body: &[u8],
    allowed_scopes: &[&str],
    default_scope: &str,
) -> Result<ClientMetadata, MetadataError> {
    let fields = Fields::parse(body)?;
    fields.metadata(allowed_scopes, default_scope)
}

/// Checks a Client ID Metadata Document fetched from `url`: the rules of
/// [`validate_registration`], plus `client_id` equal to `url` (exact string
/// comparison), auth method `none` and no `client_secret`.
pub fn validate_document(
    url: &str,
    body: &[u8],
    allowed_scopes: &[&str],
    default_scope: &str,
) -> Result<ClientMetadata, MetadataError> {
    let fields = Fields::parse(body)?;
    fields.check_document_identity(url)?;
    let metadata = fields.metadata(allowed_scopes, default_scope)?;
    match metadata.auth_method {
        AuthMethod::None => Ok(metadata),
        other => Err(MetadataError::DocumentNotPublic(other.as_str().into())),
    }
}

/// Checks one redirect URI: at most 2000 characters, no whitespace or control
/// characters, no fragment, no user info; `https` to any host, `http` only to
/// a loopback host (127.0.0.0/8, `[::1]`, `localhost`), or a private-use
/// scheme containing a dot (RFC 8252 §7.1, e.g. `com.example.app:/cb`).
pub fn validate_redirect_uri(uri: &str) -> Result<(), MetadataError> {
    let refuse = |reason| MetadataError::InvalidRedirectUri {
        uri: clip(uri),
        reason,
    };
    if uri.chars().count() > MAX_REDIRECT_URI_CHARS {
        return Err(refuse("is longer than 2000 characters"));
    }
    // The URL parser silently drops tabs and newlines; refuse them instead,
    // so what we store is what we later compare against.
    if uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(refuse("contains whitespace or control characters"));
    }
    let parsed = Url::parse(uri).map_err(|_| refuse("is not an absolute URI"))?;
    if parsed.fragment().is_some() {
        return Err(refuse("must not contain a fragment"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(refuse("must not contain a user name or password"));
    }
    check_redirect_scheme(&parsed).map_err(refuse)
}

/// The scheme rules of [`validate_redirect_uri`], on a parsed URI.
fn check_redirect_scheme(uri: &Url) -> Result<(), &'static str> {
    match uri.scheme() {
        "https" => Ok(()),
        "http" if is_loopback_host(uri.host()) => Ok(()),
        "http" => Err("uses http with a host that is not loopback"),
        "javascript" | "data" | "file" | "about" | "blob" | "vbscript" => {
            Err("uses a scheme that is never a redirect target")
        }
        scheme if scheme.contains('.') => Ok(()),
        _ => Err("uses a scheme that is neither https, loopback http, nor private-use"),
    }
}

/// 127.0.0.0/8, `::1` or the name `localhost` (the parser lower-cases it).
fn is_loopback_host(host: Option<Host<&str>>) -> bool {
    match host {
        Some(Host::Domain(name)) => name == "localhost",
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Whether `requested` (an authorization request's `redirect_uri`) names
/// the `registered` redirect URI: the same string, or, for a loopback IP
/// literal over `http`, the same URI on any port (RFC 8252 §7.3: a native
/// app opens its listener on whatever port the system gives it).
///
/// Only the port may differ: scheme, host, path and query must match
/// exactly, and `requested` must be in canonical form (what the URL parser
/// would write back), so no normalisation can make two different strings
/// match. The name `localhost` keeps the exact match: RFC 8252 §8.3 calls it
/// NOT RECOMMENDED (the name may resolve off the machine or be reached by
/// another app), so its port is not relaxed.
pub fn redirect_uri_matches(registered: &str, requested: &str) -> bool {
    if registered == requested {
        return true;
    }
    let (Ok(registered), Ok(mut requested_url)) = (Url::parse(registered), Url::parse(requested))
    else {
        return false;
    };
    let loopback_literal = |u: &Url| {
        u.scheme() == "http"
            && match u.host() {
                Some(Host::Ipv4(ip)) => ip.is_loopback(),
                Some(Host::Ipv6(ip)) => ip.is_loopback(),
                _ => false,
            }
    };
    if !loopback_literal(&registered)
        || !loopback_literal(&requested_url)
        || requested_url.as_str() != requested
        || requested_url.fragment().is_some()
        || !requested_url.username().is_empty()
        || requested_url.password().is_some()
    {
        return false;
    }
    if requested_url.set_port(registered.port()).is_err() {
        return false;
    }
    requested_url.as_str() == registered.as_str()
}

/// The body's top-level JSON object, read field by field so errors can name
/// the field (serde's derive errors name only a line and column).
struct Fields(Map<String, Value>);

impl Fields {
    /// Bounds the size, then requires a JSON object.
    fn parse(body: &[u8]) -> Result<Self, MetadataError> {
        if body.len() > MAX_REGISTRATION_BYTES {
            return Err(MetadataError::TooLarge { size: body.len() });
        }
        let value: Value = serde_json::from_slice(body)
            .map_err(|e| MetadataError::NotJson(clip(&e.to_string())))?;
        match value {
            Value::Object(map) => Ok(Fields(map)),
            other => Err(MetadataError::NotAnObject(json_kind(&other))),
        }
    }

    /// The rules shared by registrations and documents, in field order.
    fn metadata(
        &self,
        allowed_scopes: &[&str],
        default_scope: &str,
    ) -> Result<ClientMetadata, MetadataError> {
        let redirect_uris = self.redirect_uris()?;
        let client_name = self.client_name()?;
        self.check_response_types()?;
        Ok(ClientMetadata {
            client_name,
            redirect_uris,
            grant_types: self.grant_types()?,
            auth_method: self.auth_method()?,
            scope: self.scope(allowed_scopes, default_scope)?,
        })
    }

    /// A document names itself: its `client_id` is exactly its URL, and it
    /// holds no secret.
    fn check_document_identity(&self, url: &str) -> Result<(), MetadataError> {
        for secret in ["client_secret", "client_secret_expires_at"] {
            if self.get(secret).is_some() {
                return Err(MetadataError::SecretInDocument(secret));
            }
        }
        let client_id = self
            .string("client_id")?
            .ok_or(MetadataError::MissingClientId)?;
        if client_id != url {
            return Err(MetadataError::ClientIdMismatch {
                expected: clip(url),
                found: clip(client_id),
            });
        }
        Ok(())
    }

    fn redirect_uris(&self) -> Result<Vec<String>, MetadataError> {
        let uris = self.strings("redirect_uris")?.unwrap_or_default();
        if uris.is_empty() {
            return Err(MetadataError::MissingRedirectUris);
        }
        if uris.len() > MAX_REDIRECT_URIS {
            return Err(MetadataError::TooManyRedirectUris { count: uris.len() });
        }
        for uri in &uris {
            validate_redirect_uri(uri)?;
        }
        Ok(uris.into_iter().map(str::to_owned).collect())
    }

    fn client_name(&self) -> Result<String, MetadataError> {
        let name = match self.string("client_name")? {
            None | Some("") => return Ok(DEFAULT_CLIENT_NAME.to_owned()),
            Some(name) => name,
        };
        let refuse = |reason| MetadataError::InvalidClientName {
            name: clip(name),
            reason,
        };
        if name.chars().count() > MAX_CLIENT_NAME_CHARS {
            return Err(refuse("is longer than 200 characters"));
        }
        if name.chars().any(char::is_control) {
            return Err(refuse("contains control characters"));
        }
        Ok(name.to_owned())
    }

    /// Only the code flow exists, so `response_types` is optional but, if
    /// present, exactly `["code"]`.
    fn check_response_types(&self) -> Result<(), MetadataError> {
        match self.strings("response_types")? {
            None => Ok(()),
            Some(types) if types == ["code"] => Ok(()),
            Some(types) => Err(MetadataError::UnsupportedResponseTypes(clip(&format!(
                "{types:?}"
            )))),
        }
    }

    fn grant_types(&self) -> Result<Vec<GrantType>, MetadataError> {
        let Some(names) = self.strings("grant_types")? else {
            return Ok(vec![GrantType::AuthorizationCode, GrantType::RefreshToken]);
        };
        let mut grants = Vec::new();
        for name in names {
            let grant = GrantType::parse(name)
                .ok_or_else(|| MetadataError::UnsupportedGrantType(clip(name)))?;
            if !grants.contains(&grant) {
                grants.push(grant);
            }
        }
        if !grants.contains(&GrantType::AuthorizationCode) {
            return Err(MetadataError::MissingAuthorizationCode);
        }
        Ok(grants)
    }

    fn auth_method(&self) -> Result<AuthMethod, MetadataError> {
        match self.string("token_endpoint_auth_method")? {
            None => Ok(AuthMethod::None),
            Some(name) => AuthMethod::parse(name)
                .ok_or_else(|| MetadataError::UnsupportedAuthMethod(clip(name))),
        }
    }

    /// Every requested scope must be allowed, or bind the client to a
    /// toolset (`toolset:NAME`, which only narrows); an absent or empty
    /// scope means `default_scope` (trusted configuration, so only
    /// normalised).
    fn scope(&self, allowed: &[&str], default_scope: &str) -> Result<String, MetadataError> {
        let requested = self.string("scope")?.unwrap_or_default();
        if requested.trim_matches(' ').is_empty() {
            return Ok(normalise_scope(default_scope));
        }
        let offered = |s: &str| {
            allowed.contains(&s)
                || (s.strip_prefix(toolhost_policy::TOOLSET_SCOPE))
                    .is_some_and(toolhost_policy::is_toolset_name)
        };
        if let Some(unknown) = scope_tokens(requested).find(|s| !offered(s)) {
            return Err(MetadataError::UnknownScope(clip(unknown)));
        }
        Ok(normalise_scope(requested))
    }

    /// A field, with `null` treated as absent.
    fn get(&self, field: &str) -> Option<&Value> {
        self.0.get(field).filter(|value| !value.is_null())
    }

    fn string(&self, field: &'static str) -> Result<Option<&str>, MetadataError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(MetadataError::WrongType {
                field,
                expected: "a string",
            }),
        }
    }

    fn strings(&self, field: &'static str) -> Result<Option<Vec<&str>>, MetadataError> {
        let wrong = MetadataError::WrongType {
            field,
            expected: "an array of strings",
        };
        let Some(value) = self.get(field) else {
            return Ok(None);
        };
        let items = value.as_array().ok_or_else(|| wrong.clone())?;
        let strings: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
        strings.map(Some).ok_or(wrong)
    }
}

/// Scope tokens (RFC 6749 §3.3: separated by single spaces; we tolerate runs).
fn scope_tokens(scope: &str) -> impl Iterator<Item = &str> {
    scope.split(' ').filter(|token| !token.is_empty())
}

/// Tokens deduplicated, first occurrence kept, joined by single spaces.
fn normalise_scope(scope: &str) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for token in scope_tokens(scope) {
        if !seen.contains(&token) {
            seen.push(token);
        }
    }
    seen.join(" ")
}

/// The JSON type name of a value, for error messages.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `value` cut to [`ECHO_CHARS`] characters, marked with `…` when cut.
pub(crate) fn clip(value: &str) -> String {
    match value.char_indices().nth(ECHO_CHARS) {
        Some((end, _)) => format!("{}…", &value[..end]),
        None => value.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ALLOWED: &[&str] = &["tools:read", "tools:call", "offline_access"];
    const DEFAULT: &str = "tools:read";
    const DOC_URL: &str = "https://app.example.com/oauth/client.json";

    fn register(body: Value) -> Result<ClientMetadata, MetadataError> {
        validate_registration(body.to_string().as_bytes(), ALLOWED, DEFAULT)
    }

    fn document(body: Value) -> Result<ClientMetadata, MetadataError> {
        validate_document(DOC_URL, body.to_string().as_bytes(), ALLOWED, DEFAULT)
    }

    /// A minimal valid registration with `field` set to `value`.
    fn with(field: &str, value: Value) -> Value {
        let mut body = json!({ "redirect_uris": ["https://app.example.com/cb"] });
        body[field] = value;
        body
    }

    #[test]
    fn a_minimal_registration_gets_the_defaults() {
        let metadata = register(with("client_name", Value::Null)).expect("valid");
        assert_eq!(
            metadata,
            ClientMetadata {
                client_name: DEFAULT_CLIENT_NAME.into(),
                redirect_uris: vec!["https://app.example.com/cb".into()],
                grant_types: vec![GrantType::AuthorizationCode, GrantType::RefreshToken],
                auth_method: AuthMethod::None,
                scope: DEFAULT.into(),
            }
        );
    }

    #[test]
    fn a_full_registration_is_kept_and_unknown_fields_are_ignored() {
        let body = json!({
            "client_name": "Claude Desktop",
            "redirect_uris": ["http://127.0.0.1:9/cb", "com.example.app:/cb"],
            "response_types": ["code"],
            "grant_types": ["authorization_code"],
            "token_endpoint_auth_method": "client_secret_post",
            "scope": "tools:call  tools:read tools:call",
            "application_type": "native",
            "logo_uri": 7,
        });
        let metadata = register(body).expect("valid");
        assert_eq!(metadata.client_name, "Claude Desktop");
        assert_eq!(metadata.redirect_uris.len(), 2);
        assert_eq!(metadata.grant_types, [GrantType::AuthorizationCode]);
        assert_eq!(metadata.auth_method, AuthMethod::ClientSecretPost);
        assert_eq!(metadata.scope, "tools:call tools:read");
    }

    #[test]
    fn registrations_breaking_a_rule_are_refused() {
        let long_name = "n".repeat(201);
        let eleven: Vec<String> = (0..11).map(|i| format!("https://a.example/{i}")).collect();
        let cases: Vec<(Value, MetadataError)> = vec![
            (json!({}), MetadataError::MissingRedirectUris),
            (
                with("redirect_uris", json!([])),
                MetadataError::MissingRedirectUris,
            ),
            (
                with("redirect_uris", json!("https://a.example/cb")),
                MetadataError::WrongType {
                    field: "redirect_uris",
                    expected: "an array of strings",
                },
            ),
            (
                with("redirect_uris", json!([1])),
                MetadataError::WrongType {
                    field: "redirect_uris",
                    expected: "an array of strings",
                },
            ),
            (
                with("redirect_uris", json!(eleven)),
                MetadataError::TooManyRedirectUris { count: 11 },
            ),
            (
                with("client_name", json!(long_name)),
                MetadataError::InvalidClientName {
                    name: clip(&long_name),
                    reason: "is longer than 200 characters",
                },
            ),
            (
                with("client_name", json!("evil\u{1b}[31m")),
                MetadataError::InvalidClientName {
                    name: "evil\u{1b}[31m".into(),
                    reason: "contains control characters",
                },
            ),
            (
                with("client_name", json!(["x"])),
                MetadataError::WrongType {
                    field: "client_name",
                    expected: "a string",
                },
            ),
            (
                with("response_types", json!(["token"])),
                MetadataError::UnsupportedResponseTypes("[\"token\"]".into()),
            ),
            (
                with("response_types", json!(["code", "token"])),
                MetadataError::UnsupportedResponseTypes("[\"code\", \"token\"]".into()),
            ),
            (
                with(
                    "grant_types",
                    json!(["authorization_code", "client_credentials"]),
                ),
                MetadataError::UnsupportedGrantType("client_credentials".into()),
            ),
            (
                with("grant_types", json!(["implicit"])),
                MetadataError::UnsupportedGrantType("implicit".into()),
            ),
            (
                with("grant_types", json!(["password"])),
                MetadataError::UnsupportedGrantType("password".into()),
            ),
            (
                with("grant_types", json!(["refresh_token"])),
                MetadataError::MissingAuthorizationCode,
            ),
            (
                with("grant_types", json!([])),
                MetadataError::MissingAuthorizationCode,
            ),
            (
                with("token_endpoint_auth_method", json!("private_key_jwt")),
                MetadataError::UnsupportedAuthMethod("private_key_jwt".into()),
            ),
            (
                with("scope", json!("tools:read admin")),
                MetadataError::UnknownScope("admin".into()),
            ),
            (
                with("scope", json!("tools:read toolset:Not_A_Name")),
                MetadataError::UnknownScope("toolset:Not_A_Name".into()),
            ),
            (
                with("scope", json!(["tools:read"])),
                MetadataError::WrongType {
                    field: "scope",
                    expected: "a string",
                },
            ),
        ];
        for (body, expected) in cases {
            assert_eq!(register(body.clone()), Err(expected), "{body}");
        }
        // A binding to a toolset only narrows: any client may register one.
        let bound = register(with("scope", json!("tools:read toolset:crm"))).expect("a binding");
        assert_eq!(bound.scope, "tools:read toolset:crm");
    }

    #[test]
    fn bodies_that_are_not_small_json_objects_are_refused() {
        let huge = vec![b' '; MAX_REGISTRATION_BYTES + 1];
        let too_large = validate_registration(&huge, ALLOWED, DEFAULT);
        assert_eq!(
            too_large,
            Err(MetadataError::TooLarge {
                size: MAX_REGISTRATION_BYTES + 1
            })
        );
        for (body, expected) in [("[]", "an array"), ("\"x\"", "a string"), ("null", "null")] {
            let result = validate_registration(body.as_bytes(), ALLOWED, DEFAULT);
            assert_eq!(result, Err(MetadataError::NotAnObject(expected)), "{body}");
        }
        let result = validate_registration(b"{\"redirect_uris\":", ALLOWED, DEFAULT);
        assert!(
            matches!(result, Err(MetadataError::NotJson(_))),
            "{result:?}"
        );
    }

    #[test]
    fn an_empty_scope_means_the_default_scope() {
        let metadata = register(with("scope", json!(" "))).expect("valid");
        assert_eq!(metadata.scope, DEFAULT);
    }

    #[test]
    fn redirect_uris_are_checked_one_rule_at_a_time() {
        let long = format!("https://a.example/{}", "p".repeat(2000));
        let cases: &[(&str, Option<&str>)] = &[
            ("https://app.example.com/cb", None),
            ("https://app.example.com:8443/cb?x=1", None),
            ("http://127.0.0.1:33418/callback", None),
            ("http://127.9.9.9/cb", None),
            ("http://[::1]:8080/cb", None),
            ("http://localhost:3000/cb", None),
            ("http://LOCALHOST/cb", None),
            ("com.example.app:/oauth2redirect", None),
            ("com.example.app://callback", None),
            (
                "http://example.com/cb",
                Some("uses http with a host that is not loopback"),
            ),
            (
                "http://localhost.evil.com/cb",
                Some("uses http with a host that is not loopback"),
            ),
            (
                "http://10.0.0.1/cb",
                Some("uses http with a host that is not loopback"),
            ),
            (
                "https://app.example.com/cb#x",
                Some("must not contain a fragment"),
            ),
            (
                "https://app.example.com/cb#",
                Some("must not contain a fragment"),
            ),
            (
                "https://user@app.example.com/cb",
                Some("must not contain a user name or password"),
            ),
            (
                "https://:pw@app.example.com/cb",
                Some("must not contain a user name or password"),
            ),
            (
                "javascript:alert(1)",
                Some("uses a scheme that is never a redirect target"),
            ),
            (
                "data:text/html,hi",
                Some("uses a scheme that is never a redirect target"),
            ),
            (
                "file:///etc/passwd",
                Some("uses a scheme that is never a redirect target"),
            ),
            (
                "about:blank",
                Some("uses a scheme that is never a redirect target"),
            ),
            (
                "blob:https://a.example/1",
                Some("uses a scheme that is never a redirect target"),
            ),
            (
                "vbscript:msgbox",
                Some("uses a scheme that is never a redirect target"),
            ),
            (
                "myapp:/cb",
                Some("uses a scheme that is neither https, loopback http, nor private-use"),
            ),
            (
                "ftp://a.example/cb",
                Some("uses a scheme that is neither https, loopback http, nor private-use"),
            ),
            ("/relative/cb", Some("is not an absolute URI")),
            (
                "https://a.example/c\tb",
                Some("contains whitespace or control characters"),
            ),
            (
                "https://a.example/c b",
                Some("contains whitespace or control characters"),
            ),
            (long.as_str(), Some("is longer than 2000 characters")),
        ];
        for &(uri, reason) in cases {
            let expected = reason.map(|reason| MetadataError::InvalidRedirectUri {
                uri: clip(uri),
                reason,
            });
            assert_eq!(validate_redirect_uri(uri).err(), expected, "{uri}");
        }
    }

    #[test]
    fn a_loopback_ip_redirect_matches_on_any_port_and_everything_else_exactly() {
        let cases: &[(&str, &str, bool)] = &[
            (
                "https://app.example.com/cb",
                "https://app.example.com/cb",
                true,
            ),
            (
                "https://app.example.com/cb",
                "https://app.example.com:444/cb",
                false,
            ),
            ("http://127.0.0.1/cb", "http://127.0.0.1:51234/cb", true),
            ("http://127.0.0.1:9/cb", "http://127.0.0.1:51234/cb", true),
            (
                "http://127.0.0.1:9/cb?x=1",
                "http://127.0.0.1:5/cb?x=1",
                true,
            ),
            ("http://[::1]:9/cb", "http://[::1]:61000/cb", true),
            ("http://[::1]/cb", "http://[::1]:61000/cb", true),
            // Path, query, host and scheme still match exactly.
            ("http://127.0.0.1:9/cb", "http://127.0.0.1:5/cb2", false),
            ("http://127.0.0.1:9/cb", "http://127.0.0.1:5/CB", false),
            (
                "http://127.0.0.1:9/cb?x=1",
                "http://127.0.0.1:5/cb?x=2",
                false,
            ),
            ("http://127.0.0.1:9/cb", "http://127.0.0.1:5/cb?x=1", false),
            ("http://127.0.0.1:9/cb", "http://127.0.0.2:9/cb", false),
            ("http://127.0.0.1:9/cb", "http://[::1]:9/cb", false),
            ("http://127.0.0.1:9/cb", "https://127.0.0.1:9/cb", false),
            ("http://127.0.0.1:9/cb", "http://127.0.0.1:5/cb#f", false),
            ("http://127.0.0.1:9/cb", "http://u@127.0.0.1:5/cb", false),
            // No normalisation: the request must be in canonical form.
            ("http://127.0.0.1:9/cb", "http://127.0.0.1:5/x/../cb", false),
            (
                "http://127.0.0.1:9/cb",
                "http://127.000.000.001:5/cb",
                false,
            ),
            // `localhost` is not an IP literal (RFC 8252 §8.3): exact only.
            ("http://localhost:9/cb", "http://localhost:9/cb", true),
            ("http://localhost:9/cb", "http://localhost:5/cb", false),
            ("http://localhost:9/cb", "http://127.0.0.1:5/cb", false),
            // Private-use schemes: exact only.
            ("com.example.app:/cb", "com.example.app:/cb", true),
            ("com.example.app:/cb", "com.example.app:/cb2", false),
        ];
        for &(registered, requested, expected) in cases {
            assert_eq!(
                redirect_uri_matches(registered, requested),
                expected,
                "{registered} vs {requested}"
            );
        }
    }

    #[test]
    fn a_bad_redirect_uri_refuses_the_whole_registration() {
        let body = json!({ "redirect_uris": ["https://a.example/cb", "http://a.example/cb"] });
        let error = register(body).expect_err("http to a public host");
        assert_eq!(error.error_code(), "invalid_redirect_uri");
        assert!(error.to_string().contains("http://a.example/cb"), "{error}");
    }

    #[test]
    fn error_codes_separate_redirect_problems_from_the_rest() {
        let redirect = [
            MetadataError::MissingRedirectUris,
            MetadataError::TooManyRedirectUris { count: 11 },
            MetadataError::WrongType {
                field: "redirect_uris",
                expected: "an array of strings",
            },
        ];
        for error in redirect {
            assert_eq!(error.error_code(), "invalid_redirect_uri", "{error}");
        }
        let other = [
            MetadataError::TooLarge { size: 1 },
            MetadataError::UnknownScope("x".into()),
            MetadataError::WrongType {
                field: "scope",
                expected: "a string",
            },
            MetadataError::ClientIdMismatch {
                expected: "a".into(),
                found: "b".into(),
            },
        ];
        for error in other {
            assert_eq!(error.error_code(), "invalid_client_metadata", "{error}");
        }
    }

    #[test]
    fn messages_name_the_value_but_cut_it_short() {
        let scope = "x".repeat(500);
        let error = register(with("scope", json!(scope))).expect_err("unknown scope");
        let message = error.to_string();
        assert!(message.contains(&"x".repeat(100)), "{message}");
        assert!(message.len() < 200, "{message}");
    }

    #[test]
    fn a_document_naming_its_own_url_is_a_public_client() {
        let body = json!({
            "client_id": DOC_URL,
            "client_name": "Example App",
            "redirect_uris": ["https://app.example.com/cb"],
        });
        let metadata = document(body).expect("valid");
        assert_eq!(metadata.auth_method, AuthMethod::None);
        assert_eq!(metadata.client_name, "Example App");
    }

    #[test]
    fn documents_breaking_a_document_rule_are_refused() {
        let base =
            || json!({ "client_id": DOC_URL, "redirect_uris": ["https://app.example.com/cb"] });
        let set = |field: &str, value: Value| {
            let mut body = base();
            body[field] = value;
            body
        };
        let cases: Vec<(Value, MetadataError)> = vec![
            (
                set("client_id", Value::Null),
                MetadataError::MissingClientId,
            ),
            (
                set("client_id", json!(7)),
                MetadataError::WrongType {
                    field: "client_id",
                    expected: "a string",
                },
            ),
            (
                set(
                    "client_id",
                    json!("https://app.example.com/oauth/client.json/"),
                ),
                MetadataError::ClientIdMismatch {
                    expected: DOC_URL.into(),
                    found: "https://app.example.com/oauth/client.json/".into(),
                },
            ),
            (
                set("token_endpoint_auth_method", json!("client_secret_basic")),
                MetadataError::DocumentNotPublic("client_secret_basic".into()),
            ),
            (
                set("token_endpoint_auth_method", json!("client_secret_post")),
                MetadataError::DocumentNotPublic("client_secret_post".into()),
            ),
            (
                set("client_secret", json!("s3cret")),
                MetadataError::SecretInDocument("client_secret"),
            ),
            (
                set("client_secret_expires_at", json!(0)),
                MetadataError::SecretInDocument("client_secret_expires_at"),
            ),
            (
                set("redirect_uris", json!([])),
                MetadataError::MissingRedirectUris,
            ),
            (
                set("scope", json!("root")),
                MetadataError::UnknownScope("root".into()),
            ),
        ];
        for (body, expected) in cases {
            assert_eq!(document(body.clone()), Err(expected), "{body}");
        }
    }

    #[test]
    fn names_round_trip_through_as_str() {
        for method in [
            AuthMethod::None,
            AuthMethod::ClientSecretBasic,
            AuthMethod::ClientSecretPost,
        ] {
            assert_eq!(AuthMethod::parse(method.as_str()), Some(method));
        }
        for grant in [GrantType::AuthorizationCode, GrantType::RefreshToken] {
            assert_eq!(GrantType::parse(grant.as_str()), Some(grant));
        }
    }
}
