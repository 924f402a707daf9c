//! The wire: the HTTP client's settings, and reading an answer within the
//! size cap into what the plugin may see.

use reqwest::header::{CONTENT_LENGTH, HeaderMap, HeaderName};

use crate::redact::Redactor;
use crate::{BackendError, Response};

/// Response headers the plugin never sees: a backend's cookies belong to
/// the host's session with it, if anything, not to one plugin call.
const DROPPED: [&str; 2] = ["set-cookie", "set-cookie2"];

/// A client for one backend: redirects are returned, not followed (a 3xx
/// could point anywhere); no proxy from the environment; no retries, since
/// a request may have side effects. The deadline is applied per exchange
/// by the caller, around the body as well.
pub(crate) fn client() -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .retry(reqwest::retry::never())
        .build()
}

/// Sends the request and reads the whole answer, refusing a body past
/// `max_response` bytes as soon as it is announced or reached.
pub(crate) async fn run(
    request: reqwest::RequestBuilder,
    max_response: u64,
    redactor: &Redactor,
) -> Result<Response, BackendError> {
    let mut response = request.send().await.map_err(classify)?;
    if response.content_length().is_some_and(|n| n > max_response) {
        return Err(BackendError::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(classify)? {
        if (body.len() + chunk.len()) as u64 > max_response {
            return Err(BackendError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    let received = body.len();
    let body = redactor.scrub(body);
    let resized = (body.len() != received).then_some(body.len());
    let headers = for_plugin(response.headers(), redactor, resized);
    let status = response.status().as_u16();
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// The response headers minus cookies, scrubbed; `Content-Length` follows
/// the body if redaction changed its length.
fn for_plugin(
    headers: &HeaderMap,
    redactor: &Redactor,
    resized: Option<usize>,
) -> Vec<(String, String)> {
    let shown = |name: &&HeaderName| !DROPPED.contains(&name.as_str());
    headers
        .iter()
        .filter(|(name, _)| shown(name))
        .map(|(name, value)| {
            let value = match resized {
                Some(len) if name == CONTENT_LENGTH => len.to_string().into_bytes(),
                _ => redactor.scrub(value.as_bytes().to_vec()),
            };
            (text(redactor.scrub(name.as_str().into())), text(value))
        })
        .collect()
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The client's error in words safe for the plugin: no URL, no detail.
/// The detail goes to the host's log.
fn classify(err: reqwest::Error) -> BackendError {
    tracing::debug!(error = %err, "backend exchange failed");
    if err.is_timeout() {
        BackendError::Timeout
    } else if err.is_connect() {
        BackendError::Unavailable("connection failed".to_owned())
    } else if err.is_body() || err.is_decode() {
        BackendError::Unavailable("the response broke off".to_owned())
    } else {
        BackendError::Unavailable("the request failed".to_owned())
    }
}
