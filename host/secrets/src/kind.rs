//! What a finding is: its [`SecretKind`] and where it lies.

use std::fmt;
use std::ops::Range;

/// What kind of secret a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SecretKind {
    /// An HTTP bearer token (`Bearer …`), or basic credentials
    /// (`Authorization: Basic …`).
    Bearer,
    /// A JSON Web Token: signed, or unsigned (`alg: none`, empty signature).
    Jwt,
    /// One of the host's own prefixed tokens; see
    /// [`HOST_TOKEN_PREFIXES`](crate::HOST_TOKEN_PREFIXES).
    HostToken,
    /// An operator-configured credential; see
    /// [`Scanner::with_secret`](crate::Scanner::with_secret).
    BackendSecret,
    /// A private key: a PEM `BEGIN … PRIVATE KEY` block or a PuTTY key file.
    PrivateKey,
    /// An HTTP `Cookie:`/`Set-Cookie:` header, or one of the host's own cookies.
    Cookie,
    /// A cloud or SaaS API key: AWS, GitHub, Slack, Google, Stripe.
    CloudKey,
    /// A host filesystem path; see
    /// [`Scanner::with_host_path`](crate::Scanner::with_host_path).
    HostPath,
}

impl SecretKind {
    /// The stable lowercase name, e.g. `host_token`; it is what
    /// [`Scanner::redact`](crate::Scanner::redact) writes.
    pub fn as_str(&self) -> &'static str {
        match self {
            SecretKind::Bearer => "bearer",
            SecretKind::Jwt => "jwt",
            SecretKind::HostToken => "host_token",
            SecretKind::BackendSecret => "backend_secret",
            SecretKind::PrivateKey => "private_key",
            SecretKind::Cookie => "cookie",
            SecretKind::CloudKey => "cloud_key",
            SecretKind::HostPath => "host_path",
        }
    }
}

impl fmt::Display for SecretKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One hit: its kind and the byte range it covers in the scanned text.
///
/// It holds no text, so printing it (`Debug`) cannot leak the secret. The
/// range always lies on `char` boundaries of the scanned text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Finding {
    /// What was found.
    pub kind: SecretKind,
    /// Where, in bytes of the scanned text.
    pub range: Range<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_the_stable_name() {
        let table = [
            (SecretKind::Bearer, "bearer"),
            (SecretKind::Jwt, "jwt"),
            (SecretKind::HostToken, "host_token"),
            (SecretKind::BackendSecret, "backend_secret"),
            (SecretKind::PrivateKey, "private_key"),
            (SecretKind::Cookie, "cookie"),
            (SecretKind::CloudKey, "cloud_key"),
            (SecretKind::HostPath, "host_path"),
        ];
        for (kind, name) in table {
            assert_eq!(kind.as_str(), name);
            assert_eq!(kind.to_string(), name);
        }
    }
}
