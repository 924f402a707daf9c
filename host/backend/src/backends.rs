//! The configured backends and the one path every plugin request takes.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use reqwest::header::{HeaderMap, HeaderValue};

use crate::headers::{self, TENANT_HEADER};
use crate::target::{Credential, Target};
use crate::token_exchange::ExchangedTokens;
use crate::{
    ASSERTION_HEADER, Access, Asserter, BackendAuth, BackendConfig, BackendError, ConfigError,
    ConnectionError, Connector, Exchanger, Identity, Method, Request, Response, Secret,
};

/// Largest request body a plugin may send. Tool arguments are small JSON;
/// 1 MiB bounds what one call can push at a backend.
pub const MAX_REQUEST_BODY: usize = 1024 * 1024;

/// Every backend the operator configured, checked once at start-up.
/// Cloning is cheap (an `Arc`); share one value across calls so each
/// backend keeps its connection pool.
#[derive(Clone)]
pub struct Backends {
    targets: Arc<BTreeMap<String, Target>>,
    /// Signs identity assertions, once the host installs its signer
    /// ([`Backends::assert_with`]); shared by every clone.
    asserter: Arc<OnceLock<Arc<dyn Asserter>>>,
    /// Exchanges people's identities for backends' tokens, once the host
    /// installs its exchanger ([`Backends::exchange_with`]).
    exchanger: Arc<OnceLock<Arc<dyn Exchanger>>>,
    /// The tokens exchanged so far, shared by every clone.
    exchanged: Arc<ExchangedTokens>,
    /// Keeps each person's own connections, once the host installs its
    /// connector ([`Backends::connect_with`]).
    connector: Arc<OnceLock<Arc<dyn Connector>>>,
}

impl Backends {
    /// Checks every config: names (`[a-z0-9_-]{1,64}`, unique), base URLs
    /// (`http`/`https`, no userinfo, query or fragment), credential header
    /// and value. The first problem found is returned, naming the value
    /// (never the credential).
    pub fn new(configs: Vec<BackendConfig>) -> Result<Self, ConfigError> {
        let mut targets = BTreeMap::new();
        for config in configs {
            let name = config.name.clone();
            let target = Target::new(config)?;
            if targets.insert(name.clone(), target).is_some() {
                return Err(ConfigError::Duplicate(name));
            }
        }
        Ok(Backends {
            targets: Arc::new(targets),
            asserter: Arc::default(),
            exchanger: Arc::default(),
            exchanged: Arc::default(),
            connector: Arc::default(),
        })
    }

    /// Installs the signer of identity assertions, for this value and
    /// every clone of it (the call path holds one, made before the
    /// authorization server that owns the keys). The first signer
    /// installed stays. Until one is, a request to a backend told who acts
    /// is refused, never sent without the assertion.
    pub fn assert_with(&self, asserter: Arc<dyn Asserter>) {
        if self.asserter.set(asserter).is_err() {
            tracing::warn!("an identity-assertion signer was installed already; kept the first");
        }
    }

    /// Installs the exchanger of people's identities for backends' tokens
    /// (RFC 8693), for this value and every clone. The first stays. Until
    /// one is, a request to a token-exchange backend is refused.
    pub fn exchange_with(&self, exchanger: Arc<dyn Exchanger>) {
        if self.exchanger.set(exchanger).is_err() {
            tracing::warn!("a token exchanger was installed already; kept the first");
        }
    }

    /// Installs the keeper of people's own connections, for this value and
    /// every clone. The first stays. Until one is, a request to a
    /// connection backend is refused.
    pub fn connect_with(&self, connector: Arc<dyn Connector>) {
        if self.connector.set(connector).is_err() {
            tracing::warn!("a connector was installed already; kept the first");
        }
    }

    /// The backends that act with each person's own connection.
    pub fn connection_backends(&self) -> Vec<String> {
        let targets = self.targets.iter();
        targets
            .filter(|(_, t)| t.auth == BackendAuth::Connection)
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Whether `who` has a usable connection to `backend` (a connection
    /// backend; false for any other, for a service, and while the store
    /// or the backend's authorization server does not answer).
    pub async fn connected(&self, backend: &str, who: &Identity) -> bool {
        let is_connection =
            (self.targets.get(backend)).is_some_and(|t| t.auth == BackendAuth::Connection);
        let Some(connector) = self
            .connector
            .get()
            .filter(|_| is_connection && who.kind == "user")
        else {
            return false;
        };
        connector.token(backend, who).await.is_ok()
    }

    /// Whether the operator asked for the identity of who acts to be sent
    /// to backend `name` (an assertion, or a token exchanged for them).
    pub fn asserts_identity(&self, name: &str) -> bool {
        (self.targets.get(name)).is_some_and(|t| t.auth != BackendAuth::Credential)
    }

    /// Each token-exchange backend and what it asks its provider for.
    pub fn exchanges(&self) -> Vec<(String, crate::TokenExchange)> {
        let exchanges = self.targets.iter();
        exchanges
            .filter_map(|(name, t)| Some((name.clone(), t.exchange.clone()?)))
            .collect()
    }

    /// No backends: every request is [`BackendError::NotDeclared`].
    pub fn empty() -> Self {
        Backends {
            targets: Arc::new(BTreeMap::new()),
            asserter: Arc::default(),
            exchanger: Arc::default(),
            exchanged: Arc::default(),
            connector: Arc::default(),
        }
    }

    /// Whether the operator configured a backend of this name (whether a
    /// plugin may use it is a question for its manifest too).
    pub fn is_configured(&self, name: &str) -> bool {
        self.targets.contains_key(name)
    }

    /// The configured names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.targets.keys().cloned().collect()
    }

    /// Every configured credential, for scanning outputs and logs for them.
    pub fn secrets(&self) -> Vec<Secret> {
        let credentials = self.targets.values().filter_map(|t| t.credential.as_ref());
        credentials.map(|c| c.secret.clone()).collect()
    }

    /// Sends a plugin's request to a backend it declared, adding the
    /// operator's credential and the caller's tenant, and, where the
    /// operator asked for it ([`BackendAuth::CredentialAndAssertion`]),
    /// the signed assertion of who acts ([`ASSERTION_HEADER`]).
    ///
    /// Checks run in this order and a refusal sends nothing: the backend is
    /// declared and configured ([`BackendError::NotDeclared`]); the method
    /// is safe if `access.safe_only` ([`BackendError::Refused`]); the path
    /// stays under the base URL and the headers are valid and within
    /// bounds (`Refused`); the body is at most [`MAX_REQUEST_BODY`]
    /// ([`BackendError::TooLarge`]); a backend told who acts gets an
    /// assertion, or nothing is sent (`Refused`: no identity in this call,
    /// or none could be signed). Then the exchange, body included, must
    /// finish within the backend's timeout ([`BackendError::Timeout`]) and
    /// its response cap (`TooLarge`); an unreachable backend is
    /// [`BackendError::Unavailable`]. Logs one debug line per request.
    ///
    /// Needs a Tokio runtime with the time driver (the deadline is a
    /// `tokio::time::timeout` around the whole exchange).
    pub async fn send(&self, access: &Access, req: Request) -> Result<Response, BackendError> {
        let started = Instant::now();
        let (backend, method) = (req.backend.clone(), req.method);
        let route = route_for_log(&req.path).to_owned();
        let outcome = self.dispatch(access, req).await;
        let status = outcome.as_ref().map_or(0, |r| r.status);
        let error = outcome.as_ref().err().map(ToString::to_string);
        tracing::debug!(
            backend = %backend, method = method.as_str(), path = ?route,
            tenant = %access.tenant, status, error, elapsed_ms = started.elapsed().as_millis(),
            "backend request"
        );
        outcome
    }

    /// The checks, in order, then the exchange.
    async fn dispatch(&self, access: &Access, req: Request) -> Result<Response, BackendError> {
        let target = self.target(access, &req.backend)?;
        permit(access, req.method)?;
        let url = target.base.join(&req.path).map_err(BackendError::Refused)?;
        let credential = target.credential.as_ref();
        let mut headers = headers::outbound(&req.headers, credential.map(|c| &c.header))
            .map_err(BackendError::Refused)?;
        within_body_cap(req.body.as_deref())?;
        add_host_headers(&mut headers, &access.tenant, credential)?;
        let mut sent = Vec::new();
        if let Some(value) = self.assertion(access, &req.backend, target)? {
            headers.insert(ASSERTION_HEADER, value.clone());
            sent.push(value);
        }
        if let Some(value) = self.person_token(access, &req.backend, target).await? {
            headers.insert(reqwest::header::AUTHORIZATION, value.clone());
            // An echo of the bare token is scrubbed too, not only the header.
            sent.extend(value.as_bytes().strip_prefix(b"Bearer ").and_then(|t| {
                let mut bare = HeaderValue::from_bytes(t).ok()?;
                bare.set_sensitive(true);
                Some(bare)
            }));
            sent.push(value);
        }
        target
            .exchange(req.method, url, (headers, sent), req.body)
            .await
    }

    /// The person's token for `name` as an `Authorization` value, if it
    /// is a token-exchange or a connection backend.
    async fn person_token(
        &self,
        access: &Access,
        name: &str,
        target: &Target,
    ) -> Result<Option<HeaderValue>, BackendError> {
        match target.auth {
            BackendAuth::TokenExchange => self.exchanged_token(access, name, target).await,
            BackendAuth::Connection => self.connection_token(access, name).await.map(Some),
            BackendAuth::Credential | BackendAuth::CredentialAndAssertion => Ok(None),
        }
    }

    /// The person's own token at connection backend `name`, from the
    /// connector; a person who has not connected stops the call with
    /// [`BackendError::ConnectionRequired`].
    async fn connection_token(
        &self,
        access: &Access,
        name: &str,
    ) -> Result<HeaderValue, BackendError> {
        let acting = access.acting.as_ref();
        let (Some(acting), Some(connector)) = (acting, self.connector.get()) else {
            return Err(crate::identity::unsendable(name));
        };
        let who = acting.identity();
        if who.kind != "user" {
            return Err(crate::connection::services_stay_services(name));
        }
        let token = match connector.token(name, who).await {
            Ok(token) => token,
            Err(ConnectionError::NotConnected) => {
                return Err(crate::connection::required(name, connector.as_ref()));
            }
            Err(ConnectionError::Unavailable(reason)) => {
                tracing::warn!(backend = name, %reason, "a person's connection could not be read");
                return Err(BackendError::Unavailable(format!(
                    "the connection to backend {name:?} could not be read or refreshed"
                )));
            }
        };
        let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| crate::identity::unsendable(name))?;
        value.set_sensitive(true);
        Ok(value)
    }

    /// The person's token for `name`, if it is a token-exchange backend:
    /// kept from an earlier call or exchanged now.
    async fn exchanged_token(
        &self,
        access: &Access,
        name: &str,
        target: &Target,
    ) -> Result<Option<HeaderValue>, BackendError> {
        let Some(spec) = target.exchange.as_ref() else {
            return Ok(None);
        };
        let acting = access.acting.as_ref();
        let (Some(acting), Some(exchanger)) = (acting, self.exchanger.get()) else {
            return Err(crate::identity::unsendable(name));
        };
        let who = acting.identity();
        let value = self.exchanged.header(name, who, spec, exchanger.as_ref());
        value.await.map(Some)
    }

    /// The identity assertion for `name`, if its operator asked for one:
    /// the call's own (signed once per call and backend, see
    /// [`crate::Acting`]).
    fn assertion(
        &self,
        access: &Access,
        name: &str,
        target: &Target,
    ) -> Result<Option<HeaderValue>, BackendError> {
        if target.auth != BackendAuth::CredentialAndAssertion {
            return Ok(None);
        }
        let acting = access.acting.as_ref();
        let (Some(acting), Some(asserter)) = (acting, self.asserter.get()) else {
            return Err(crate::identity::unsendable(name));
        };
        acting.header(name, asserter.as_ref()).map(Some)
    }

    fn target(&self, access: &Access, name: &str) -> Result<&Target, BackendError> {
        let target = self
            .targets
            .get(name)
            .filter(|_| access.declared.contains(name));
        let target = target.ok_or_else(|| BackendError::NotDeclared(name.to_owned()))?;
        if access.exploration && !target.exploration {
            return Err(BackendError::Refused(format!(
                "backend {name:?} is not an exploration backend: a run reaches only backends \
                 the operator marks exploration = true"
            )));
        }
        Ok(target)
    }

    /// Whether the operator marked `name` an exploration backend.
    pub fn is_exploration(&self, name: &str) -> bool {
        self.targets.get(name).is_some_and(|t| t.exploration)
    }
}

impl fmt::Debug for Backends {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Backends")
            .field("names", &self.names())
            .finish()
    }
}

fn permit(access: &Access, method: Method) -> Result<(), BackendError> {
    if access.exploration && !method.is_safe() {
        return Err(BackendError::Refused(format!(
            "{} is not allowed in an exploration run: runs read (GET, HEAD) and never write",
            method.as_str()
        )));
    }
    if access.safe_only && !method.is_safe() {
        return Err(BackendError::Refused(format!(
            "{} is not allowed while the call may not have side effects",
            method.as_str()
        )));
    }
    Ok(())
}

fn within_body_cap(body: Option<&[u8]>) -> Result<(), BackendError> {
    match body {
        Some(body) if body.len() > MAX_REQUEST_BODY => Err(BackendError::TooLarge),
        _ => Ok(()),
    }
}

/// `X-Tenant` and the credential, replacing anything of the same name.
fn add_host_headers(
    headers: &mut HeaderMap,
    tenant: &str,
    credential: Option<&Credential>,
) -> Result<(), BackendError> {
    let tenant = HeaderValue::from_str(tenant).map_err(|_| {
        BackendError::Refused("the caller's tenant cannot be sent as a header".to_owned())
    })?;
    headers.insert(TENANT_HEADER, tenant);
    if let Some(credential) = credential {
        headers.insert(credential.header.clone(), credential.value.clone());
    }
    Ok(())
}

/// The path without its query (which may carry values), cut to a bound a
/// log line can afford.
fn route_for_log(path: &str) -> &str {
    let route = path.split_once('?').map_or(path, |(route, _query)| route);
    let mut end = route.len().min(crate::MAX_PATH);
    while !route.is_char_boundary(end) {
        end -= 1;
    }
    &route[..end]
}
