//! One configured backend, checked and ready: its base, credential, limits
//! and HTTP client.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use url::Url;

use crate::config::{ConfigError, check_name, shown};
use crate::path::Base;
use crate::redact::Redactor;
use crate::{BackendConfig, BackendError, Method, Response, Secret, exchange};

/// A backend as `Backends` holds it. Built only from a checked
/// [`BackendConfig`].
#[derive(Debug)]
pub(crate) struct Target {
    pub(crate) base: Base,
    pub(crate) credential: Option<Credential>,
    redactor: Redactor,
    timeout: Duration,
    max_response: u64,
    pub(crate) exploration: bool,
    pub(crate) auth: crate::BackendAuth,
    client: reqwest::Client,
}

/// The credential as a ready header, and the secret it came from.
#[derive(Debug)]
pub(crate) struct Credential {
    pub(crate) header: HeaderName,
    /// Marked sensitive, so the client never logs it.
    pub(crate) value: HeaderValue,
    pub(crate) secret: Secret,
}

impl Target {
    /// Checks the config; every error names the backend.
    pub(crate) fn new(config: BackendConfig) -> Result<Target, ConfigError> {
        check_name(&config.name)?;
        let base = Base::new(&config.url).map_err(|reason| ConfigError::BadUrl {
            name: config.name.clone(),
            url: shown(&config.url),
            reason,
        })?;
        let header = credential_header(&config)?;
        let credential = match &config.credential {
            Some(secret) => Some(Credential::new(&config, header, secret)?),
            None => None,
        };
        let redactor = Redactor::new(credential.iter().flat_map(|c| {
            [
                c.value.as_bytes().to_vec(),
                c.secret.expose().as_bytes().to_vec(),
            ]
        }));
        let client = exchange::client().map_err(|e| ConfigError::Client {
            name: config.name.clone(),
            reason: e.to_string(),
        })?;
        let (timeout, max_response) = (config.timeout, config.max_response);
        Ok(Target {
            base,
            credential,
            redactor,
            timeout,
            max_response,
            exploration: config.exploration,
            auth: config.auth,
            client,
        })
    }

    /// Sends a request that has passed every check, and reads the answer
    /// within this backend's timeout and size cap. An echo of the
    /// credential, or of the identity assertion sent (`asserted`), comes
    /// back redacted.
    pub(crate) async fn exchange(
        &self,
        method: Method,
        url: Url,
        (headers, asserted): (HeaderMap, Option<HeaderValue>),
        body: Option<Vec<u8>>,
    ) -> Result<Response, BackendError> {
        let mut request = self.client.request(method.to_http(), url).headers(headers);
        if let Some(body) = body {
            request = request.body(body);
        }
        let redactor = match asserted {
            Some(value) => self.redactor.and(value.as_bytes().to_vec()),
            None => self.redactor.clone(),
        };
        let exchange = exchange::run(request, self.max_response, &redactor);
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_elapsed| BackendError::Timeout)?
    }
}

/// The configured credential header, checked even when no credential is
/// set, so a config that gains one later does not start failing.
fn credential_header(config: &BackendConfig) -> Result<HeaderName, ConfigError> {
    let bad_header = |reason| ConfigError::BadCredentialHeader {
        name: config.name.clone(),
        header: config.credential_header.clone(),
        reason,
    };
    let header = HeaderName::from_bytes(config.credential_header.as_bytes())
        .map_err(|_| bad_header("is not a valid header name"))?;
    if crate::headers::host_controlled(&header) {
        return Err(bad_header("is one the host sets itself"));
    }
    Ok(header)
}

impl Credential {
    /// `Bearer <secret>` for `Authorization`, the raw secret otherwise.
    fn new(
        config: &BackendConfig,
        header: HeaderName,
        secret: &Secret,
    ) -> Result<Credential, ConfigError> {
        let raw = if header == reqwest::header::AUTHORIZATION {
            format!("Bearer {}", secret.expose())
        } else {
            secret.expose().to_owned()
        };
        let mut value = HeaderValue::from_str(&raw)
            .ok()
            .filter(|_| !secret.expose().is_empty())
            .ok_or_else(|| ConfigError::BadCredential(config.name.clone()))?;
        value.set_sensitive(true);
        Ok(Credential {
            header,
            value,
            secret: secret.clone(),
        })
    }
}
