//! Secret scanning: finds credentials and host filesystem paths in the text
//! the host is about to show, log or store (plugin outputs, log lines, audit
//! rows, artifact refs).
//!
//! This room owns what counts as a secret: the built-in shapes (bearer and
//! basic credentials, JWTs, the host's own `th??_` tokens, private keys,
//! cookies, cloud API keys; see [`SecretKind`]), plus the literals the
//! operator configures: backend credentials ([`Scanner::with_secret`]) and
//! the host's own paths ([`Scanner::with_host_path`]). It is pure: it reads
//! no configuration, logs nothing and decides nothing. What to do with a
//! finding (refuse an output, redact a log line) is the caller's choice.
//!
//! ```
//! use std::path::Path;
//! use toolhost_secrets::{Scanner, SecretKind};
//!
//! let scanner = Scanner::new().with_host_path(Path::new("/srv/toolhost"));
//! let line = "loaded /srv/toolhost/plugins/echo.wasm with Bearer abcdefghijklmnop0123";
//! assert_eq!(scanner.find(line).map(|f| f.kind), Some(SecretKind::HostPath));
//! assert_eq!(
//!     scanner.redact(line),
//!     "loaded [redacted:host_path]/plugins/echo.wasm with [redacted:bearer]"
//! );
//! assert!(scanner.is_clean("Hello, Ada!"));
//! ```

mod builtin;
mod json;
mod kind;
mod literals;
mod refine;
mod scanner;
#[cfg(test)]
mod tests;

pub use builtin::HOST_TOKEN_PREFIXES;
pub use kind::{Finding, SecretKind};
pub use literals::{MIN_HOST_PATH_LEN, MIN_SECRET_LEN};
pub use scanner::{MAX_REDACTION_PASSES, Scanner};
