//! What the operator configures per backend, and the checks on it.

use std::time::Duration;

use url::Url;

use crate::Secret;

/// Default time for one exchange, from connecting to the last body byte.
/// Backends are services the operator runs next to the host; ten seconds
/// is generous for them and still well inside a tool call's own deadline.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Default cap on a response body. Tools hand JSON back to a model; 4 MiB is
/// far more than a model can use and bounds what a chatty backend costs.
pub const DEFAULT_MAX_RESPONSE: u64 = 4 * 1024 * 1024;

/// The header that carries the credential unless the operator names
/// another. With this header the value sent is `Bearer <secret>`.
pub const DEFAULT_CREDENTIAL_HEADER: &str = "authorization";

/// Longest backend name: names appear in manifests, logs and metrics.
pub const MAX_NAME: usize = 64;

/// One backend as the operator configures it. Parsed from the host's config
/// by the server; this crate takes it typed and checks it in
/// [`crate::Backends::new`].
///
/// `Debug` is safe to log: the credential prints as `[redacted]`.
#[derive(Debug, Clone)]
pub struct BackendConfig {
    /// The name plugins use: 1 to [`MAX_NAME`] characters of `a-z`, `0-9`,
    /// `_` and `-`.
    pub name: String,
    /// The base URL: `http` or `https`, no query, fragment or userinfo. A
    /// path prefix is kept (`http://127.0.0.1:8081/base` + `/x` →
    /// `/base/x`), and plugins cannot climb out of it.
    pub url: Url,
    /// Sent with every request, if set. Never shown to the plugin: echoes
    /// of it in a response are redacted.
    pub credential: Option<Secret>,
    /// Which header carries the credential (default
    /// [`DEFAULT_CREDENTIAL_HEADER`]). With `authorization` the value is
    /// `Bearer <secret>`; with any other header, the raw secret. Must be a
    /// valid header name and not one the host controls (`Host`, `X-Tenant`,
    /// `Content-Length`, hop-by-hop headers).
    pub credential_header: String,
    /// The deadline for one exchange, body included (default
    /// [`DEFAULT_TIMEOUT`]). Past it the plugin gets
    /// [`crate::BackendError::Timeout`].
    pub timeout: Duration,
    /// The largest response body accepted, in bytes (default
    /// [`DEFAULT_MAX_RESPONSE`]). Past it the plugin gets
    /// [`crate::BackendError::TooLarge`].
    pub max_response: u64,
    /// Whether exploration runs may reach it (`exploration = true`): a
    /// sandbox or test instance, never a production one. A run's requests
    /// to any other backend are refused before anything is sent.
    pub exploration: bool,
    /// How the host authenticates to it (default
    /// [`BackendAuth::Credential`]).
    pub auth: BackendAuth,
    /// What to ask the identity provider for, with
    /// [`BackendAuth::TokenExchange`] (required then, refused otherwise).
    pub exchange: Option<crate::TokenExchange>,
}

/// How the host authenticates to a backend: the operator chooses, per
/// backend.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BackendAuth {
    /// The operator's credential alone (`auth = "credential"`): the backend
    /// learns the tenant (`X-Tenant`), not who acts.
    #[default]
    Credential,
    /// The operator's credential and a signed identity assertion
    /// (`auth = "credential+assertion"`): every request also carries
    /// [`crate::ASSERTION_HEADER`], a short-lived JWT naming the person or
    /// service, the tenant, the client, the tool and the call. A request
    /// of a call with no identity to send (an exploration run, the command
    /// line) is refused, never sent without it.
    CredentialAndAssertion,
    /// A token the organisation's identity provider issues for the person
    /// (`auth = "token-exchange"`, RFC 8693): on each person's calls the
    /// host exchanges a subject token it signs for that person for a
    /// token of the backend's audience, sends it as `Authorization:
    /// Bearer`, and keeps it until shortly before it expires. A service
    /// client, an exploration run or `toolhost call` never reaches such a
    /// backend; a person with no sign-in through the provider is told to
    /// sign in. The operator's credential, if any, goes in another header.
    TokenExchange,
    /// Each person's own connection (`auth = "connection"`): the backend
    /// is an OAuth resource with an authorization server of its own, where
    /// each person connects their account once; the host sends that
    /// person's token, as `Authorization: Bearer`, on their calls only. A
    /// person who has not connected is asked to
    /// ([`crate::BackendError::ConnectionRequired`]); a service client,
    /// an exploration run or `toolhost call` never reaches such a backend.
    Connection,
}

impl BackendAuth {
    /// The name in the configuration file.
    pub fn as_str(self) -> &'static str {
        match self {
            BackendAuth::Credential => "credential",
            BackendAuth::CredentialAndAssertion => "credential+assertion",
            BackendAuth::TokenExchange => "token-exchange",
            BackendAuth::Connection => "connection",
        }
    }

    /// The mode named `s` in the configuration file.
    pub fn parse(s: &str) -> Option<Self> {
        let modes = [
            BackendAuth::Credential,
            BackendAuth::CredentialAndAssertion,
            BackendAuth::TokenExchange,
            BackendAuth::Connection,
        ];
        modes.into_iter().find(|a| a.as_str() == s)
    }
}

impl BackendConfig {
    /// A backend with no credential and the default header, timeout and
    /// response cap. Nothing is checked until [`crate::Backends::new`].
    pub fn new(name: &str, url: Url) -> Self {
        BackendConfig {
            name: name.to_owned(),
            url,
            credential: None,
            credential_header: DEFAULT_CREDENTIAL_HEADER.to_owned(),
            timeout: DEFAULT_TIMEOUT,
            max_response: DEFAULT_MAX_RESPONSE,
            exploration: false,
            auth: BackendAuth::Credential,
            exchange: None,
        }
    }
}

/// Why [`crate::Backends::new`] refused the configuration. Each message
/// names the backend and the offending value, except a credential's.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// The name is empty, too long, or uses other characters.
    #[error("backend name {0:?} must be 1 to 64 characters of a-z, 0-9, '_' and '-'")]
    BadName(String),
    /// Two backends share a name.
    #[error("backend {0:?} is configured twice")]
    Duplicate(String),
    /// The base URL is not one the host will send to.
    #[error("backend {name:?}: base URL {url} {reason}")]
    BadUrl {
        /// The backend.
        name: String,
        /// The URL, with any userinfo removed so a password is not echoed.
        url: String,
        /// The rule it breaks.
        reason: &'static str,
    },
    /// The credential header is not a header name the host can set.
    #[error("backend {name:?}: credential header {header:?} {reason}")]
    BadCredentialHeader {
        /// The backend.
        name: String,
        /// The configured header name.
        header: String,
        /// The rule it breaks.
        reason: &'static str,
    },
    /// The credential is empty or cannot be sent as a header value (a line
    /// break, say). The value itself is never shown.
    #[error("backend {0:?}: the credential is empty or not a valid header value")]
    BadCredential(String),
    /// The authentication mode and its settings do not fit together.
    #[error("backend {name:?}: {reason}")]
    BadAuth {
        /// The backend.
        name: String,
        /// What does not fit.
        reason: &'static str,
    },
    /// The HTTP client could not be built (TLS setup); a start-up failure.
    #[error("backend {name:?}: cannot build the HTTP client: {reason}")]
    Client {
        /// The backend.
        name: String,
        /// The client's error.
        reason: String,
    },
}

/// Checks a backend name against `[a-z0-9_-]{1,64}`.
pub(crate) fn check_name(name: &str) -> Result<(), ConfigError> {
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-';
    if name.is_empty() || name.len() > MAX_NAME || !name.chars().all(allowed) {
        return Err(ConfigError::BadName(name.to_owned()));
    }
    Ok(())
}

/// The URL as it may appear in an error: without user name or password.
pub(crate) fn shown(url: &Url) -> String {
    let mut url = url.clone();
    // Both fail only for URLs that cannot have userinfo, which have none.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lower_case_words_of_at_most_64_characters() {
        for good in ["crm", "a", "billing_v2", "k8s-api", &"x".repeat(64)] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        for bad in ["", "CRM", "crm.internal", "a b", "ü", &"x".repeat(65)] {
            assert_eq!(check_name(bad), Err(ConfigError::BadName(bad.to_owned())));
        }
    }

    #[test]
    fn auth_modes_are_named_as_in_the_configuration_file() {
        for mode in [
            BackendAuth::Credential,
            BackendAuth::CredentialAndAssertion,
            BackendAuth::TokenExchange,
            BackendAuth::Connection,
        ] {
            assert_eq!(BackendAuth::parse(mode.as_str()), Some(mode));
        }
        assert_eq!(BackendAuth::parse("assertion"), None);
        assert_eq!(BackendAuth::default(), BackendAuth::Credential);
    }

    #[test]
    fn a_shown_url_has_no_userinfo() {
        let url: Url = "http://bob:pw@127.0.0.1:8081/base".parse().expect("valid");
        assert_eq!(shown(&url), "http://127.0.0.1:8081/base");
    }

    #[test]
    fn debug_of_a_config_never_shows_the_credential() {
        let url: Url = "http://127.0.0.1:8081".parse().expect("valid");
        let mut config = BackendConfig::new("crm", url);
        config.credential = Some(Secret::new("hunter2".to_owned()));
        let printed = format!("{config:?}");
        assert!(!printed.contains("hunter2"), "{printed}");
        assert!(printed.contains("[redacted]"), "{printed}");
    }
}
