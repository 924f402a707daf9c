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
    /// What to ask the provider for, with [`crate::BackendAuth::TokenExchange`].
    pub(crate) exchange: Option<crate::TokenExchange>,
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
        check_auth(&config, &header)?;
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
            exchange: config.exchange,
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
        (headers, sent): (HeaderMap, Vec<HeaderValue>),
        body: Option<Vec<u8>>,
    ) -> Result<Response, BackendError> {
        let mut request = self.client.request(method.to_http(), url).headers(headers);
        if let Some(body) = body {
            request = request.body(body);
        }
        let redactor = self
            .redactor
            .and_each(sent.iter().map(|v| v.as_bytes().to_vec()));
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

/// A token-exchange backend names what to ask for, and its token owns
/// `Authorization`; no other mode takes exchange settings.
fn check_auth(config: &BackendConfig, credential_header: &HeaderName) -> Result<(), ConfigError> {
    let bad = |reason| ConfigError::BadAuth {
        name: config.name.clone(),
        reason,
    };
    let exchanging = config.auth == crate::BackendAuth::TokenExchange;
    match &config.exchange {
        None if exchanging => Err(bad(
            "auth = \"token-exchange\" needs exchange_provider and exchange_audience",
        )),
        Some(_) if !exchanging => Err(bad(
            "exchange_provider and exchange_audience apply only with auth = \"token-exchange\"",
        )),
        Some(x) if x.provider.is_empty() || x.audience.is_empty() => Err(bad(
            "exchange_provider and exchange_audience must not be empty",
        )),
        _ if (exchanging || config.auth == crate::BackendAuth::Connection)
            && config.credential.is_some()
            && credential_header == reqwest::header::AUTHORIZATION =>
        {
            Err(bad(
                "the person's token is sent in Authorization: the credential needs \
                 another credential_header",
            ))
        }
        _ => Ok(()),
    }
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
