//! The provider's endpoints over HTTP: https only (plain http to a loopback
//! address, for a provider on the same machine), no redirects followed,
//! every answer bounded in time and size.

use std::time::Duration;

use toolhost_auth::upstream::UpstreamError;

/// The largest discovery document, JWKS or token answer read.
const MAX_ANSWER: usize = 256 * 1024;
/// How long one request to the provider may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// `url` if it may be fetched: https, or http to a loopback address.
pub(crate) fn allowed_url(url: &str) -> Result<url::Url, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    let loopback = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        None => false,
    };
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if loopback => Ok(parsed),
        _ => Err(format!(
            "{url:?} must be https (plain http only to a loopback address)"
        )),
    }
}

/// The client every request of a provider goes through.
pub(crate) fn client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(TIMEOUT)
        .build()
        .map_err(|e| e.to_string())
}

/// An answer's status and body, read up to [`MAX_ANSWER`] bytes.
pub(crate) struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

/// Sends `request`; an unreachable provider, a timeout or an oversized
/// answer is [`UpstreamError::Unavailable`].
pub(crate) async fn send(
    what: &str,
    request: reqwest::RequestBuilder,
) -> Result<Answer, UpstreamError> {
    let unavailable = |e: String| UpstreamError::Unavailable(format!("{what}: {e}"));
    let mut response = request
        .send()
        .await
        .map_err(|e| unavailable(e.to_string()))?;
    let status = response.status().as_u16();
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| unavailable(e.to_string()))?
    {
        if body.len() + chunk.len() > MAX_ANSWER {
            return Err(unavailable(format!(
                "the answer is over {MAX_ANSWER} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Answer { status, body })
}

/// GETs `url` as JSON: a 2xx answer that parses as `T`.
pub(crate) async fn get_json<T: serde::de::DeserializeOwned>(
    http: &reqwest::Client,
    what: &str,
    url: &str,
) -> Result<T, UpstreamError> {
    let url = allowed_url(url).map_err(|e| UpstreamError::Refused(format!("{what}: {e}")))?;
    let answer = send(what, http.get(url).header("accept", "application/json")).await?;
    if !(200..300).contains(&answer.status) {
        return Err(UpstreamError::Unavailable(format!(
            "{what}: status {}",
            answer.status
        )));
    }
    serde_json::from_slice(&answer.body)
        .map_err(|e| UpstreamError::Refused(format!("{what} is not what it should be: {e}")))
}

/// The token endpoint's refusal (RFC 6749 §5.2).
#[derive(serde::Deserialize)]
struct TokenRefusal {
    error: String,
}

/// A token endpoint and this host's client there.
pub(crate) struct TokenClient<'a> {
    /// The endpoint (checked by [`allowed_url`] before anything is sent).
    pub endpoint: &'a str,
    /// `token_endpoint_auth_methods_supported`, if the server said.
    pub auth_methods: Option<&'a [String]>,
    pub client_id: &'a str,
    pub client_secret: &'a crate::ClientSecret,
}

impl TokenClient<'_> {
    /// POSTs `form` to the token endpoint as this host's client
    /// (client_secret_basic unless the server supports only _post): a 2xx
    /// answer, a 4xx as [`UpstreamError::Refused`] with its error code
    /// (`what` is what was refused), anything else
    /// [`UpstreamError::Unavailable`].
    pub(crate) async fn post(
        &self,
        http: &reqwest::Client,
        form: &[(&str, &str)],
        what: &str,
    ) -> Result<Answer, UpstreamError> {
        let answer = self.send(http, form).await?;
        match answer.status {
            200..=299 => Ok(answer),
            400..=499 => Err(UpstreamError::Refused(format!(
                "the token endpoint refused {what}: {}",
                refusal(&answer)
            ))),
            status => Err(UpstreamError::Unavailable(format!(
                "the token endpoint answered status {status}"
            ))),
        }
    }

    /// POSTs `form` as this host's client and returns whatever answer came.
    pub(crate) async fn send(
        &self,
        http: &reqwest::Client,
        form: &[(&str, &str)],
    ) -> Result<Answer, UpstreamError> {
        let endpoint = allowed_url(self.endpoint).map_err(UpstreamError::Refused)?;
        let mut form = form.to_vec();
        // RFC 8414 §2 (and Discovery §3): basic is the default when the
        // list is absent.
        let methods = self.auth_methods.unwrap_or_default();
        let basic = methods.is_empty() || methods.iter().any(|m| m == "client_secret_basic");
        let mut request = http.post(endpoint);
        if basic {
            // RFC 6749 §2.3.1: each part form-encoded before base64.
            let encode =
                |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            request = request.basic_auth(
                encode(self.client_id),
                Some(encode(self.client_secret.expose())),
            );
        } else if methods.iter().any(|m| m == "client_secret_post") {
            form.push(("client_id", self.client_id));
            form.push(("client_secret", self.client_secret.expose()));
        } else {
            return Err(UpstreamError::Refused(format!(
                "the token endpoint takes none of client_secret_basic, client_secret_post ({methods:?})"
            )));
        }
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(&form)
            .finish();
        send(
            "the token endpoint",
            request
                .header("content-type", "application/x-www-form-urlencoded")
                .header("accept", "application/json")
                .body(body),
        )
        .await
    }
}

/// A 4xx answer's error code (RFC 6749 §5.2), at most 100 characters, or
/// its status.
pub(crate) fn refusal(answer: &Answer) -> String {
    let error = serde_json::from_slice::<TokenRefusal>(&answer.body)
        .map(|r| r.error)
        .unwrap_or_else(|_| format!("status {}", answer.status));
    error.chars().take(100).collect()
}

#[cfg(test)]
mod tests {
    use super::allowed_url;

    #[test]
    fn only_https_or_loopback_http_is_fetched() {
        for ok in [
            "https://login.example.com/tenant/v2.0",
            "http://127.0.0.1:8080",
            "http://[::1]:9/x",
            "http://localhost:3000",
        ] {
            assert!(allowed_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://login.example.com",
            "http://10.0.0.1",
            "ftp://127.0.0.1",
            "file:///etc/passwd",
            "not a url",
        ] {
            assert!(allowed_url(bad).is_err(), "{bad}");
        }
    }
}
