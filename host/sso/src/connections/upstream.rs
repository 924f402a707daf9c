//! A connection backend's authorization server as its client sees it:
//! the metadata (RFC 8414, OpenID discovery as a fallback), the token
//! endpoint, and what of its answers is kept.

use std::time::{Duration, Instant};

use serde::Deserialize;
use tokio::sync::Mutex;
use toolhost_auth::upstream::UpstreamError;

use super::{ConnectError, ConnectionBackend, Tokens, now};
use crate::http::{self, TokenClient};

/// How long server metadata is used before it is fetched again.
const METADATA_TTL: Duration = Duration::from_secs(3600);
/// The longest token kept: a header, not a payload.
const MAX_TOKEN: usize = 8 * 1024;
/// The longest lifetime believed (a year).
const MAX_LIFETIME: u64 = 365 * 24 * 3600;

/// The token endpoint's answer (RFC 6749 §5.1).
#[derive(Deserialize)]
struct Issued {
    access_token: String,
    token_type: String,
    expires_in: Option<u64>,
    refresh_token: Option<String>,
}

/// The parts of the server's metadata (RFC 8414 §2) the client uses.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct Metadata {
    pub(super) issuer: String,
    pub(super) authorization_endpoint: String,
    token_endpoint: String,
    #[serde(default)]
    token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(super) authorization_response_iss_parameter_supported: bool,
}

/// One backend's settings and its server's metadata, once fetched.
pub(super) struct Upstream {
    pub(super) config: ConnectionBackend,
    metadata: Mutex<Option<(Instant, Metadata)>>,
}

impl Upstream {
    pub(super) fn new(config: ConnectionBackend) -> Self {
        Upstream {
            config,
            metadata: Mutex::new(None),
        }
    }

    /// The server's metadata: RFC 8414's document (OpenID discovery's if
    /// there is none), whose `issuer` must be the configured one, exactly,
    /// with fetchable endpoints and PKCE's S256 (if it lists its methods).
    pub(super) async fn metadata(
        &self,
        client: &reqwest::Client,
    ) -> Result<Metadata, ConnectError> {
        let mut cached = self.metadata.lock().await;
        if let Some((at, m)) = cached
            .as_ref()
            .filter(|(at, _)| at.elapsed() < METADATA_TTL)
        {
            let _ = at;
            return Ok(m.clone());
        }
        let issuer = &self.config.issuer;
        let mut doc = None;
        let mut failure = None;
        for url in metadata_urls(issuer) {
            match http::get_json::<Metadata>(client, "the server's metadata", &url).await {
                Ok(found) => {
                    doc = Some(found);
                    break;
                }
                Err(e) => failure = Some(e),
            }
        }
        let doc = match (doc, failure) {
            (Some(doc), _) => doc,
            (None, Some(e)) => return Err(upstream_error(e)),
            (None, None) => return Err(ConnectError::Unavailable("no metadata".into())),
        };
        if &doc.issuer != issuer {
            return Err(ConnectError::Refused(format!(
                "the metadata names issuer {:?}, not the configured {issuer:?}",
                doc.issuer
            )));
        }
        for endpoint in [&doc.authorization_endpoint, &doc.token_endpoint] {
            http::allowed_url(endpoint).map_err(ConnectError::Refused)?;
        }
        if (doc.code_challenge_methods_supported.as_ref())
            .is_some_and(|m| !m.iter().any(|m| m == "S256"))
        {
            return Err(ConnectError::Refused(
                "the server does not take PKCE's S256".into(),
            ));
        }
        *cached = Some((Instant::now(), doc.clone()));
        Ok(doc)
    }

    pub(super) fn token_client<'a>(&'a self, metadata: &'a Metadata) -> TokenClient<'a> {
        TokenClient {
            endpoint: &metadata.token_endpoint,
            auth_methods: metadata.token_endpoint_auth_methods_supported.as_deref(),
            client_id: &self.config.client_id,
            client_secret: &self.config.client_secret,
        }
    }
}

/// RFC 8414 §3's address for `issuer` (the well-known part inserted before
/// any path), then OpenID discovery's (appended).
fn metadata_urls(issuer: &str) -> [String; 2] {
    let trimmed = issuer.trim_end_matches('/');
    let rfc8414 = match url::Url::parse(trimmed) {
        Ok(u) if u.path() != "/" && !u.path().is_empty() => {
            let origin = u.origin().ascii_serialization();
            format!(
                "{origin}/.well-known/oauth-authorization-server{}",
                u.path()
            )
        }
        _ => format!("{trimmed}/.well-known/oauth-authorization-server"),
    };
    [
        rfc8414,
        format!("{trimmed}/.well-known/openid-configuration"),
    ]
}

/// The tokens of a token endpoint's answer, checked: a Bearer access token
/// of printable characters within [`MAX_TOKEN`], and its expiry; a refresh
/// answer without a new refresh token keeps `kept_refresh`.
pub(super) fn issued(
    body: &[u8],
    kept_refresh: Option<String>,
) -> Result<(Tokens, Option<i64>), ConnectError> {
    let issued: Issued = serde_json::from_slice(body)
        .map_err(|e| ConnectError::Refused(format!("the token answer is not one: {e}")))?;
    let printable =
        |t: &str| !t.is_empty() && t.len() <= MAX_TOKEN && t.bytes().all(|b| b.is_ascii_graphic());
    if !issued.token_type.eq_ignore_ascii_case("bearer") {
        return Err(ConnectError::Refused(format!(
            "the token is of type {:?}, not Bearer",
            issued.token_type.chars().take(20).collect::<String>()
        )));
    }
    if !printable(&issued.access_token)
        || issued
            .refresh_token
            .as_deref()
            .is_some_and(|t| !printable(t))
    {
        return Err(ConnectError::Refused(
            "the token is empty, too long or not printable".into(),
        ));
    }
    let expires_at = (issued.expires_in).map(|s| now() + s.min(MAX_LIFETIME) as i64);
    let tokens = Tokens {
        access_token: issued.access_token,
        refresh_token: issued.refresh_token.or(kept_refresh),
    };
    Ok((tokens, expires_at))
}

pub(super) fn upstream_error(e: UpstreamError) -> ConnectError {
    match e {
        UpstreamError::Unavailable(m) => ConnectError::Unavailable(m),
        other => ConnectError::Refused(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_for_where_rfc_8414_then_openid_put_it() {
        assert_eq!(
            metadata_urls("https://as.example"),
            [
                "https://as.example/.well-known/oauth-authorization-server".to_owned(),
                "https://as.example/.well-known/openid-configuration".to_owned(),
            ]
        );
        assert_eq!(
            metadata_urls("https://as.example/tenant1/"),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1".to_owned(),
                "https://as.example/tenant1/.well-known/openid-configuration".to_owned(),
            ]
        );
    }

    #[test]
    fn only_bearer_tokens_of_printable_characters_are_kept() {
        let ok = br#"{"access_token":"at-1","token_type":"bearer","expires_in":60,"refresh_token":"rt-1"}"#;
        let (tokens, expires) = issued(ok, None).expect("kept");
        assert_eq!(
            (
                tokens.access_token.as_str(),
                tokens.refresh_token.as_deref()
            ),
            ("at-1", Some("rt-1"))
        );
        assert!(expires.is_some_and(|e| e > now()));
        let kept = br#"{"access_token":"at-2","token_type":"Bearer"}"#;
        let (tokens, expires) = issued(kept, Some("rt-1".into())).expect("kept");
        assert_eq!(
            (tokens.refresh_token.as_deref(), expires),
            (Some("rt-1"), None)
        );
        for bad in [
            &br#"{"access_token":"at","token_type":"DPoP"}"#[..],
            br#"{"access_token":"a t","token_type":"Bearer"}"#,
            br#"{"access_token":"","token_type":"Bearer"}"#,
            br#"{"access_token":"at","token_type":"Bearer","refresh_token":"r\nt"}"#,
            br#"{"token_type":"Bearer"}"#,
        ] {
            assert!(
                issued(bad, None).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let long = format!(
            r#"{{"access_token":"{}","token_type":"Bearer"}}"#,
            "a".repeat(MAX_TOKEN + 1)
        );
        assert!(issued(long.as_bytes(), None).is_err());
    }
}
