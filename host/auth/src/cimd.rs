//! Fetching Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document)
//! without becoming an SSRF proxy: a client that names an https URL as its
//! `client_id` makes us GET that URL, so the URL is checked, every address
//! its host resolves to must be public, and the response is bounded in time
//! and size. What the document may say is [`crate::client_metadata`]'s job;
//! caching fetched documents is the caller's.

use std::error::Error as StdError;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{Response, StatusCode, redirect};
use url::{Host, Url};

use crate::client_metadata::{self, ClientMetadata, MetadataError, clip};
pub use toolhost_types::is_public_address;

/// Default cap on a document's body. Real documents are under 2 KiB; this is
/// also [`client_metadata::MAX_REGISTRATION_BYTES`], so raising it past that
/// gains nothing.
pub const DEFAULT_MAX_BYTES: usize = 16 * 1024;

/// Default bound on a whole fetch (DNS, connect, TLS, headers, body): the
/// user is waiting on the authorization page while we fetch.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Default bound on one TCP connect; a host that does not answer in 2 s will
/// not answer usefully in 5.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Sent with every fetch, so document hosts can tell who is asking.
const USER_AGENT: &str = concat!(
    "toolhost/",
    env!("CARGO_PKG_VERSION"),
    " (OAuth client ID metadata fetcher)"
);

/// Bounds on one document fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchLimits {
    /// Largest body read; the fetch fails as soon as more arrives, whatever
    /// `Content-Length` said. Default [`DEFAULT_MAX_BYTES`].
    pub max_bytes: usize,
    /// Bound on the whole fetch. Default [`DEFAULT_TIMEOUT`].
    pub timeout: Duration,
    /// Bound on connecting to one address. Default [`DEFAULT_CONNECT_TIMEOUT`].
    pub connect_timeout: Duration,
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits {
            max_bytes: DEFAULT_MAX_BYTES,
            timeout: DEFAULT_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        }
    }
}

/// Why a metadata document could not be used. Every case means the
/// `client_id` does not identify a usable client.
#[derive(Debug, thiserror::Error)]
pub enum CimdError {
    /// The HTTP client could not be built (TLS setup); a start-up failure.
    #[error("cannot build the metadata document HTTP client: {0}")]
    Client(String),
    /// The `client_id` is not a URL we will fetch.
    #[error("client_id {url:?} {reason}")]
    InvalidUrl {
        /// The `client_id`, cut to about 100 characters.
        url: String,
        /// The rule it breaks.
        reason: &'static str,
    },
    /// The `client_id` parses, but not to itself; the document's own
    /// `client_id` could never match it exactly.
    #[error("client_id {url:?} is not in canonical form (it reads as {canonical:?})")]
    NotCanonical {
        /// The `client_id` as given.
        url: String,
        /// How the URL parser writes it.
        canonical: String,
    },
    /// The host resolves to at least one address that is not public.
    #[error("host {host} resolves to {ip}, a private address; refusing to fetch")]
    PrivateAddress {
        /// The DNS name.
        host: String,
        /// The first non-public address found.
        ip: IpAddr,
    },
    /// The host name did not resolve.
    #[error("host {host} could not be resolved: {detail}")]
    Unresolvable {
        /// The DNS name.
        host: String,
        /// The resolver's reason.
        detail: String,
    },
    /// The fetch did not finish within [`FetchLimits::timeout`].
    #[error("fetching {url} took longer than {after:?}")]
    Timeout {
        /// The document URL.
        url: String,
        /// The limit that was hit.
        after: Duration,
    },
    /// Connecting, TLS or HTTP failed.
    #[error("fetching {url} failed: {detail}")]
    Request {
        /// The document URL.
        url: String,
        /// The error and its causes.
        detail: String,
    },
    /// Any status but 200; redirects are not followed, so 3xx lands here.
    #[error("fetching {url} returned HTTP {status}; expected 200 (redirects are not followed)")]
    Status {
        /// The document URL.
        url: String,
        /// The status received.
        status: u16,
    },
    /// The response is not JSON.
    #[error("{url} has content type {found:?}; expected application/json")]
    ContentType {
        /// The document URL.
        url: String,
        /// The `Content-Type` received, cut to about 100 characters.
        found: String,
    },
    /// The body is longer than [`FetchLimits::max_bytes`].
    #[error("the document at {url} is larger than {limit} bytes")]
    TooLarge {
        /// The document URL.
        url: String,
        /// The limit that was hit.
        limit: usize,
    },
    /// The document was fetched but its contents break a metadata rule.
    #[error("the document at {url} is not valid client metadata: {source}")]
    Invalid {
        /// The document URL.
        url: String,
        /// The rule it breaks.
        source: MetadataError,
    },
}

impl CimdError {
    /// The OAuth `error` code: the `client_id` names no usable client.
    pub fn error_code(&self) -> &'static str {
        "invalid_client"
    }

    /// What an unauthenticated caller may be told: the rule a document
    /// broke, but nothing about our network. A name that resolves to a
    /// private address, one that does not resolve, and a connection that
    /// fails or times out all read the same, with no address, resolver or
    /// socket detail, so the page is no oracle for internal names. The
    /// full error (the [`Display`](std::fmt::Display) form) is for the
    /// operator's log.
    pub fn public_message(&self) -> String {
        match self {
            CimdError::Client(_)
            | CimdError::PrivateAddress { .. }
            | CimdError::Unresolvable { .. }
            | CimdError::Timeout { .. }
            | CimdError::Request { .. } => {
                "the metadata document could not be fetched (it must be served over https \
                 from a public address, quickly)"
                    .to_owned()
            }
            CimdError::InvalidUrl { .. }
            | CimdError::NotCanonical { .. }
            | CimdError::Status { .. }
            | CimdError::ContentType { .. }
            | CimdError::TooLarge { .. }
            | CimdError::Invalid { .. } => self.to_string(),
        }
    }
}

/// Fetches and validates metadata documents. Holds one HTTP client (and its
/// connection pool); build it once and share it.
#[derive(Debug, Clone)]
pub struct MetadataFetcher {
    client: reqwest::Client,
    limits: FetchLimits,
}

impl MetadataFetcher {
    /// An https-only client with no proxy, no redirects, no retries, the
    /// given timeouts and a resolver that refuses non-public addresses.
    /// Fails only if TLS cannot be set up.
    pub fn new(limits: FetchLimits) -> Result<Self, CimdError> {
        Self::with_resolver(limits, Arc::new(PublicOnlyResolver))
    }

    /// [`MetadataFetcher::new`] with another resolver; tests use it to reach
    /// a local server, which the real resolver refuses.
    fn with_resolver(limits: FetchLimits, resolver: Arc<dyn Resolve>) -> Result<Self, CimdError> {
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(redirect::Policy::none())
            .retry(reqwest::retry::never())
            .https_only(true)
            .timeout(limits.timeout)
            .connect_timeout(limits.connect_timeout)
            .user_agent(USER_AGENT)
            .dns_resolver(resolver)
            .build()
            .map_err(|e| CimdError::Client(chain(&e)))?;
        Ok(MetadataFetcher { client, limits })
    }

    /// Fetches the document at `client_id_url` and checks it with
    /// [`client_metadata::validate_document`]. Never takes longer than
    /// [`FetchLimits::timeout`].
    pub async fn fetch(
        &self,
        client_id_url: &str,
        allowed_scopes: &[&str],
        default_scope: &str,
    ) -> Result<ClientMetadata, CimdError> {
        let url = document_url(client_id_url)?;
        let body = tokio::time::timeout(self.limits.timeout, self.get(&url))
            .await
            .map_err(|_| CimdError::Timeout {
                url: url.to_string(),
                after: self.limits.timeout,
            })??;
        client_metadata::validate_document(client_id_url, &body, allowed_scopes, default_scope)
            .map_err(|source| CimdError::Invalid {
                url: url.to_string(),
                source,
            })
    }

    /// One GET: status 200, a JSON content type, a bounded body.
    async fn get(&self, url: &Url) -> Result<Vec<u8>, CimdError> {
        let response = self
            .client
            .get(url.clone())
            .header(ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| request_error(url, self.limits.timeout, &e))?;
        if response.status() != StatusCode::OK {
            return Err(CimdError::Status {
                url: url.to_string(),
                status: response.status().as_u16(),
            });
        }
        check_content_type(url, &response)?;
        read_capped(url, response, self.limits).await
    }
}

/// Whether `client_id` looks like a metadata document URL (https, a host, a
/// path other than `/`): the cheap test for "try CIMD". [`MetadataFetcher::fetch`]
/// applies the full rules.
pub fn is_document_url(client_id: &str) -> bool {
    Url::parse(client_id)
        .is_ok_and(|url| url.scheme() == "https" && url.host().is_some() && url.path() != "/")
}

/// The `client_id` as a URL we will fetch: https, no user info, no fragment,
/// a path, a DNS-name host (IP literals bypass the resolver, so they are
/// refused here) and already in canonical form.
fn document_url(client_id: &str) -> Result<Url, CimdError> {
    let refuse = |reason| CimdError::InvalidUrl {
        url: clip(client_id),
        reason,
    };
    let url = Url::parse(client_id).map_err(|_| refuse("is not a URL"))?;
    if url.scheme() != "https" {
        return Err(refuse("must use https"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(refuse("must not contain a user name or password"));
    }
    if url.fragment().is_some() {
        return Err(refuse("must not contain a fragment"));
    }
    if url.path() == "/" {
        return Err(refuse("must have a path"));
    }
    if !matches!(url.host(), Some(Host::Domain(_))) {
        return Err(refuse("must name its host by DNS name, not IP address"));
    }
    check_canonical(client_id, &url)?;
    Ok(url)
}

/// Refuses a `client_id` the parser rewrites (upper-case host, `:443`,
/// dot segments, unescaped characters): we would fetch one URL while the
/// document has to name another.
fn check_canonical(client_id: &str, url: &Url) -> Result<(), CimdError> {
    if url.as_str() == client_id {
        return Ok(());
    }
    Err(CimdError::NotCanonical {
        url: clip(client_id),
        canonical: clip(url.as_str()),
    })
}

/// `application/json` or an `application/…+json` type, parameters ignored.
fn check_content_type(url: &Url, response: &Response) -> Result<(), CimdError> {
    let found = response
        .headers()
        .get(CONTENT_TYPE)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        .unwrap_or_default();
    if is_json_content_type(&found) {
        return Ok(());
    }
    Err(CimdError::ContentType {
        url: url.to_string(),
        found: clip(&found),
    })
}

fn is_json_content_type(value: &str) -> bool {
    let essence = value.split(';').next().unwrap_or_default();
    let essence = essence.trim().to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// Reads the body chunk by chunk, failing as soon as it passes the limit.
/// A large `Content-Length` fails early; a small one is not trusted.
async fn read_capped(
    url: &Url,
    mut response: Response,
    limits: FetchLimits,
) -> Result<Vec<u8>, CimdError> {
    let too_large = || CimdError::TooLarge {
        url: url.to_string(),
        limit: limits.max_bytes,
    };
    if response
        .content_length()
        .is_some_and(|n| n > limits.max_bytes as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| request_error(url, limits.timeout, &e))?
    {
        if body.len() + chunk.len() > limits.max_bytes {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Maps a reqwest error to what went wrong, finding our resolver's refusal
/// among its causes when there is one.
fn request_error(url: &Url, timeout: Duration, error: &reqwest::Error) -> CimdError {
    if let Some(refusal) = find_cause::<ResolveRefusal>(error) {
        return refusal.clone().into();
    }
    if error.is_timeout() {
        return CimdError::Timeout {
            url: url.to_string(),
            after: timeout,
        };
    }
    CimdError::Request {
        url: url.to_string(),
        detail: chain(error),
    }
}

/// The first error of type `T` in `error`'s cause chain.
fn find_cause<'a, T: StdError + 'static>(error: &'a (dyn StdError + 'static)) -> Option<&'a T> {
    let mut cause = Some(error);
    while let Some(current) = cause {
        if let Some(found) = current.downcast_ref::<T>() {
            return Some(found);
        }
        cause = current.source();
    }
    None
}

/// An error and its causes, joined by `: ` (reqwest's own message is only
/// "error sending request").
fn chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(current) = cause {
        text.push_str(": ");
        text.push_str(&current.to_string());
        cause = current.source();
    }
    text
}

/// Resolves with the system resolver and fails if any address is not
/// public. reqwest connects only to the addresses returned here, so a name
/// cannot resolve to a public address for the check and a private one for
/// the connection (DNS rebinding).
struct PublicOnlyResolver;

impl Resolve for PublicOnlyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs = public_addresses(&host).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// All of `host`'s addresses, or the reason not to connect to any of them.
/// Refusing the whole name (rather than dropping private addresses) makes a
/// misconfigured or hostile name fail loudly.
async fn public_addresses(host: &str) -> Result<Vec<SocketAddr>, ResolveRefusal> {
    let unresolvable = |detail: String| ResolveRefusal::Unresolvable {
        host: host.to_owned(),
        detail,
    };
    // Port 0: reqwest substitutes the URL's port.
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 0))
        .await
        .map_err(|e| unresolvable(e.to_string()))?
        .collect();
    if addrs.is_empty() {
        return Err(unresolvable("no addresses".into()));
    }
    if let Some(private) = addrs.iter().find(|addr| !is_public_address(addr.ip())) {
        return Err(ResolveRefusal::Private {
            host: host.to_owned(),
            ip: private.ip(),
        });
    }
    Ok(addrs)
}

/// What [`PublicOnlyResolver`] hands reqwest; recovered from the error chain
/// by [`request_error`].
#[derive(Debug, Clone, thiserror::Error)]
enum ResolveRefusal {
    #[error("{host} resolves to non-public address {ip}")]
    Private { host: String, ip: IpAddr },
    #[error("{host} could not be resolved: {detail}")]
    Unresolvable { host: String, detail: String },
}

impl From<ResolveRefusal> for CimdError {
    fn from(refusal: ResolveRefusal) -> Self {
        match refusal {
            ResolveRefusal::Private { host, ip } => CimdError::PrivateAddress { host, ip },
            ResolveRefusal::Unresolvable { host, detail } => {
                CimdError::Unresolvable { host, detail }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCOPES: &[&str] = &["tools:read"];

    fn fetcher() -> MetadataFetcher {
        MetadataFetcher::new(FetchLimits::default()).expect("the TLS client builds")
    }

    async fn fetch(url: &str) -> CimdError {
        let result = fetcher().fetch(url, SCOPES, "tools:read").await;
        result.expect_err("no document is reachable offline")
    }

    #[test]
    fn document_urls_are_recognised_cheaply() {
        let cases = [
            ("https://app.example.com/client.json", true),
            ("https://app.example.com/a?b=c", true),
            ("https://app.example.com/", false),
            ("https://app.example.com", false),
            ("http://app.example.com/client.json", false),
            ("my-client-id", false),
            ("3f2a9c", false),
        ];
        for (client_id, expected) in cases {
            assert_eq!(is_document_url(client_id), expected, "{client_id}");
        }
    }

    #[test]
    fn json_content_types_are_recognised() {
        let cases = [
            ("application/json", true),
            ("application/json; charset=utf-8", true),
            ("Application/JSON", true),
            ("application/oauth-client+json", true),
            ("text/json", false),
            ("text/html", false),
            ("application/jsonp", false),
            ("", false),
        ];
        for (value, expected) in cases {
            assert_eq!(is_json_content_type(value), expected, "{value:?}");
        }
    }

    #[tokio::test]
    async fn urls_breaking_a_rule_are_refused_before_any_request() {
        let cases = [
            ("http://app.example.com/client.json", "must use https"),
            (
                "https://user:pw@app.example.com/c.json",
                "must not contain a user name or password",
            ),
            (
                "https://user@app.example.com/c.json",
                "must not contain a user name or password",
            ),
            (
                "https://app.example.com/c.json#frag",
                "must not contain a fragment",
            ),
            ("https://app.example.com/", "must have a path"),
            ("https://app.example.com", "must have a path"),
            (
                "https://127.0.0.1/x",
                "must name its host by DNS name, not IP address",
            ),
            (
                "https://[::1]/x",
                "must name its host by DNS name, not IP address",
            ),
            (
                "https://169.254.169.254/latest",
                "must name its host by DNS name, not IP address",
            ),
            (
                "https://0x7f.1/x",
                "must name its host by DNS name, not IP address",
            ),
            ("not a url", "is not a URL"),
        ];
        for (url, reason) in cases {
            match fetch(url).await {
                CimdError::InvalidUrl { reason: got, .. } => assert_eq!(got, reason, "{url}"),
                other => panic!("{url}: expected InvalidUrl, got {other:?}"),
            }
        }
    }

    #[tokio::test]
    async fn urls_the_parser_would_rewrite_are_refused() {
        for url in [
            "https://App.Example.com/c.json",
            "https://a.example.com:443/c.json",
            "https://a.example.com/x/../c.json",
        ] {
            let error = fetch(url).await;
            assert!(
                matches!(error, CimdError::NotCanonical { .. }),
                "{url}: {error:?}"
            );
        }
    }

    #[tokio::test]
    async fn a_name_resolving_to_loopback_is_refused_by_the_resolver() {
        let error = fetch("https://localhost/client.json").await;
        match &error {
            CimdError::PrivateAddress { host, ip } => {
                assert_eq!(host, "localhost");
                assert!(ip.is_loopback(), "{ip}");
            }
            other => panic!("expected PrivateAddress, got {other:?}"),
        }
        assert!(error.to_string().contains("private address"), "{error}");
        assert_eq!(error.error_code(), "invalid_client");
    }

    #[tokio::test]
    async fn a_name_that_does_not_resolve_fails_promptly() {
        let started = std::time::Instant::now();
        let error = fetch("https://nonexistent.invalid/client.json").await;
        assert!(
            matches!(
                error,
                CimdError::Unresolvable { .. } | CimdError::Timeout { .. }
            ),
            "{error:?}"
        );
        assert!(error.to_string().contains("nonexistent.invalid"), "{error}");
        assert!(started.elapsed() < DEFAULT_TIMEOUT + Duration::from_secs(1));
    }

    #[tokio::test]
    async fn a_private_name_and_an_unknown_name_read_the_same_and_name_no_address() {
        let private = fetch("https://localhost/client.json").await;
        let unknown = fetch("https://nonexistent.invalid/client.json").await;
        assert_eq!(private.public_message(), unknown.public_message());
        for leak in ["127.0.0.1", "::1", "resolve", "localhost", "private"] {
            assert!(!private.public_message().contains(leak), "{leak}");
        }
        // The operator's log keeps the detail.
        assert!(private.to_string().contains("private address"), "{private}");
    }

    /// Resolves every name to 127.0.0.1 (the port comes from the URL).
    struct Loopback;

    impl Resolve for Loopback {
        fn resolve(&self, _: Name) -> Resolving {
            let addr = SocketAddr::from(([127, 0, 0, 1], 0));
            Box::pin(async move { Ok(Box::new(std::iter::once(addr)) as Addrs) })
        }
    }

    #[tokio::test]
    async fn a_server_that_never_answers_is_cut_off_at_the_timeout() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("bound").port();
        // Accept connections and hold them open without a TLS handshake.
        let server = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
            }
        });
        let limits = FetchLimits {
            timeout: Duration::from_millis(300),
            ..FetchLimits::default()
        };
        let fetcher = MetadataFetcher::with_resolver(limits, Arc::new(Loopback)).expect("builds");
        let started = std::time::Instant::now();
        let url = format!("https://stall.example:{port}/client.json");
        let error = fetcher
            .fetch(&url, SCOPES, "tools:read")
            .await
            .expect_err("stalls");
        assert!(matches!(error, CimdError::Timeout { .. }), "{error:?}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        server.abort();
    }
}
