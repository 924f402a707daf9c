//! Outbound HTTP for plugins: a plugin names a backend its manifest
//! declares and a path; the operator's config holds the base URL and the
//! credential; the host adds the credential and the caller's tenant.
//!
//! This room owns the policy (which backend, which method, which path and
//! headers, how large) and the HTTP client that applies it. It does not own
//! the WIT glue (`runtime` calls [`Backends::send`] from the `backend`
//! import), the manifest's declarations (`catalog`), parsing the
//! operator's config file (`server`), or signing the identity assertions a
//! backend may ask for (an [`Asserter`]; the host's lives in `auth`), or
//! exchanging a person's identity for a backend's token at the identity
//! provider (an [`Exchanger`]; the host's lives in `sso`), or keeping each
//! person's own connections (a [`Connector`]; the host's lives in `sso`).
//!
//! ```
//! use toolhost_backend::{BackendConfig, Backends, Secret};
//! let mut crm = BackendConfig::new("crm", "http://127.0.0.1:8081/api".parse()?);
//! crm.credential = Some(Secret::new("s3cret".to_owned()));
//! let backends = Backends::new(vec![crm])?;
//! assert!(backends.is_configured("crm"));
//! assert_eq!(format!("{:?}", backends.secrets()), "[[redacted]]");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod access;
mod backends;
mod config;
mod connection;
mod error;
mod exchange;
#[doc(hidden)]
pub mod fuzzing;
mod headers;
mod identity;
mod message;
mod method;
mod path;
mod redact;
mod secret;
mod target;
mod token_exchange;

pub use access::Access;
pub use backends::{Backends, MAX_REQUEST_BODY};
pub use config::{
    BackendAuth, BackendConfig, ConfigError, DEFAULT_CREDENTIAL_HEADER, DEFAULT_MAX_RESPONSE,
    DEFAULT_TIMEOUT, MAX_NAME,
};
pub use connection::{ConnectionError, ConnectionFuture, Connector};
pub use error::BackendError;
pub use headers::{MAX_HEADER_BYTES, MAX_HEADERS, TENANT_HEADER};
pub use identity::{ASSERTION_HEADER, ASSERTION_REUSE, Acting, Asserter, Identity};
pub use message::{Request, Response};
pub use method::Method;
pub use path::MAX_PATH;
pub use secret::{REDACTED, Secret};
pub use token_exchange::{
    EXCHANGE_MARGIN, ExchangeError, ExchangeFuture, Exchanged, Exchanger, MAX_EXCHANGED,
    REFUSAL_MEMORY, TokenExchange,
};
