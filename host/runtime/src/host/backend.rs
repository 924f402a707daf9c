//! `toolhost:plugin/backend`: HTTP to the backends the plugin's manifest
//! declares, through `toolhost-backend` (which owns the URL, path, header
//! and redaction rules). This module adds what belongs to one call: the
//! host-call budget, the caller's tenant, and quiet mode.

use std::collections::BTreeSet;
use std::sync::Arc;

use toolhost_backend::{Access, BackendError, Backends, Method, Request};

use super::HostCallMeter;
use super::client::Acted;
use super::exploration::Exploration;
use super::resolver::Quiet;
use crate::bindings::toolhost::plugin::backend as wit;

/// The backends a call may reach: the operator's configured backends and
/// the names the plugin's manifest declares.
#[derive(Debug, Clone)]
pub struct BackendGrant {
    /// The operator's backends (base URLs and credentials).
    pub backends: Backends,
    /// The names the plugin's manifest declares.
    pub declared: Arc<BTreeSet<String>>,
}

/// The backend capability of one call.
pub(crate) struct BackendCapability {
    grant: Option<BackendGrant>,
    tenant: String,
    meter: HostCallMeter,
    quiet: Quiet,
    run: Option<Exploration>,
    acted: Acted,
    /// Who acts, for the backends told so; none in a run.
    whom: Option<toolhost_backend::Acting>,
}

impl BackendCapability {
    pub(crate) fn new(
        grant: Option<BackendGrant>,
        tenant: &str,
        meter: HostCallMeter,
        quiet: Quiet,
    ) -> Self {
        Self {
            grant,
            tenant: tenant.into(),
            meter,
            quiet,
            run: None,
            acted: Acted::default(),
            whom: None,
        }
    }

    /// This capability telling the backends that ask that `whom` acts.
    pub(crate) fn for_whom(mut self, whom: Option<toolhost_backend::Acting>) -> Self {
        self.whom = whom;
        self
    }

    /// This capability marking `acted` when it sends a write.
    pub(crate) fn acting(mut self, acted: Acted) -> Self {
        self.acted = acted;
        self
    }

    /// This capability inside exploration run `run`: exploration backends
    /// only, safe methods only, every request and refusal written down.
    pub(crate) fn in_run(mut self, run: Option<Exploration>) -> Self {
        self.run = run;
        self
    }
}

fn method(m: wit::Method) -> Method {
    match m {
        wit::Method::Get => Method::Get,
        wit::Method::Head => Method::Head,
        wit::Method::Post => Method::Post,
        wit::Method::Put => Method::Put,
        wit::Method::Patch => Method::Patch,
        wit::Method::Delete => Method::Delete,
    }
}

impl BackendCapability {
    fn refused(&self, backend: &str, verb: Method, path: &str, why: &str) {
        if let Some(run) = &self.run {
            let what = if verb.is_safe() { "backend" } else { "method" };
            run.refused(what, format!("{} {backend} {path}: {why}", verb.as_str()));
        }
    }
}

/// Why a call stopped at a backend request: the person has not connected
/// the backend (a trap the sandbox turns into
/// [`CallError::ConnectionRequired`](crate::CallError::ConnectionRequired):
/// the plugin cannot go on without the connection, and the host, not the
/// plugin, asks the person for it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the person has not connected backend {backend:?}")]
pub(crate) struct ConnectionStop {
    pub(crate) backend: String,
    pub(crate) url: String,
}

fn error(e: BackendError) -> wit::Error {
    match e {
        BackendError::NotDeclared(n) => wit::Error::NotDeclared(n),
        BackendError::Refused(r) => wit::Error::Refused(r),
        BackendError::Timeout => wit::Error::Timeout,
        BackendError::TooLarge => wit::Error::TooLarge,
        BackendError::Unavailable(r) => wit::Error::Unavailable(r),
        // Stopped in `send` before it gets here; told as a refusal if not.
        e @ BackendError::ConnectionRequired { .. } => wit::Error::Refused(e.to_string()),
    }
}

impl wit::Host for BackendCapability {
    async fn send(
        &mut self,
        req: wit::Request,
    ) -> wasmtime::Result<Result<wit::Response, wit::Error>> {
        self.meter.charge()?;
        let (backend, verb, path) = (req.backend.clone(), method(req.method), req.path.clone());
        let Some(grant) = self.grant.clone() else {
            self.refused(&backend, verb, &path, "the plugin declares no backends");
            return Ok(Err(wit::Error::NotDeclared(req.backend)));
        };
        let access = Access {
            declared: grant.declared,
            tenant: self.tenant.clone(),
            safe_only: self.quiet.is_set() || self.run.is_some(),
            exploration: self.run.is_some(),
            // A run acts for nobody: its backends are never told a person.
            acting: self.whom.clone().filter(|_| self.run.is_none()),
        };
        let request = Request {
            backend: req.backend,
            method: verb,
            path: req.path,
            headers: req.headers,
            body: req.body,
        };
        let started = std::time::Instant::now();
        if !verb.is_safe() {
            // It may reach the backend whatever comes back.
            self.acted.set();
        }
        let sent = grant.backends.send(&access, request).await;
        if let Some(run) = &self.run {
            match &sent {
                Ok(r) => {
                    let bytes = r.body.len() as u64;
                    run.sent(
                        verb.as_str(),
                        &backend,
                        &path,
                        r.status,
                        bytes,
                        started.elapsed(),
                    );
                }
                Err(e @ (BackendError::Refused(_) | BackendError::NotDeclared(_))) => {
                    self.refused(&backend, verb, &path, &e.to_string());
                }
                Err(_) => run.sent(verb.as_str(), &backend, &path, 0, 0, started.elapsed()),
            }
        }
        if let Err(BackendError::ConnectionRequired { backend, url }) = sent {
            return Err(ConnectionStop { backend, url }.into());
        }
        Ok(match sent {
            Ok(r) => Ok(wit::Response {
                status: r.status,
                headers: r.headers,
                body: r.body,
            }),
            Err(e) => Err(error(e)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::toolhost::plugin::backend::Host;
    use toolhost_backend::BackendConfig;

    /// A backend on a port nothing listens on: a request that got through
    /// the host's checks would come back `unavailable`, never `refused`.
    fn grant(declared: &[&str]) -> BackendGrant {
        let url = url::Url::parse("http://127.0.0.1:9/").expect("a URL");
        let backends = Backends::new(vec![BackendConfig::new("testbench", url)]).expect("valid");
        BackendGrant {
            backends,
            declared: Arc::new(declared.iter().map(|s| s.to_string()).collect()),
        }
    }

    fn request(backend: &str, method: wit::Method) -> wit::Request {
        wit::Request {
            backend: backend.into(),
            method,
            path: "/api/executions".into(),
            headers: Vec::new(),
            body: None,
        }
    }

    fn capability(grant: Option<BackendGrant>, quiet: &Quiet) -> BackendCapability {
        BackendCapability::new(grant, "acme", HostCallMeter::new(10), quiet.clone())
    }

    #[tokio::test]
    async fn once_the_call_has_asked_a_question_it_may_not_write() {
        let quiet = Quiet::new(false);
        let mut cap = capability(Some(grant(&["testbench"])), &quiet);
        let before = cap
            .send(request("testbench", wit::Method::Post))
            .await
            .expect("no trap");
        assert!(
            matches!(before, Err(wit::Error::Unavailable(_))),
            "{before:?}"
        );
        quiet.set();
        let after = cap
            .send(request("testbench", wit::Method::Post))
            .await
            .expect("no trap");
        assert!(matches!(after, Err(wit::Error::Refused(_))), "{after:?}");
        let read = cap
            .send(request("testbench", wit::Method::Get))
            .await
            .expect("no trap");
        assert!(
            matches!(read, Err(wit::Error::Unavailable(_))),
            "reads still go: {read:?}"
        );
    }

    #[tokio::test]
    async fn a_backend_the_manifest_does_not_declare_is_refused() {
        let quiet = Quiet::new(false);
        for g in [None, Some(grant(&[])), Some(grant(&["other"]))] {
            let mut cap = capability(g, &quiet);
            let r = cap
                .send(request("testbench", wit::Method::Get))
                .await
                .expect("no trap");
            assert!(
                matches!(r, Err(wit::Error::NotDeclared(ref n)) if n == "testbench"),
                "{r:?}"
            );
        }
    }

    /// A connector for whom nobody has connected.
    struct NobodyConnected;

    impl toolhost_backend::Connector for NobodyConnected {
        fn token<'a>(
            &'a self,
            _: &'a str,
            _: &'a toolhost_backend::Identity,
        ) -> toolhost_backend::ConnectionFuture<'a> {
            Box::pin(async { Err(toolhost_backend::ConnectionError::NotConnected) })
        }
        fn connect_url(&self, backend: &str) -> String {
            format!("https://host.example/admin/connections/{backend}/connect")
        }
    }

    #[tokio::test]
    async fn a_person_without_a_connection_stops_the_call_instead_of_the_plugin_seeing_it() {
        let url = url::Url::parse("http://127.0.0.1:9/").expect("a URL");
        let mut config = BackendConfig::new("testbench", url);
        config.auth = toolhost_backend::BackendAuth::Connection;
        let backends = Backends::new(vec![config]).expect("valid");
        backends.connect_with(Arc::new(NobodyConnected));
        let grant = BackendGrant {
            backends,
            declared: Arc::new(["testbench".to_owned()].into()),
        };
        let ann = toolhost_backend::Acting::new(toolhost_backend::Identity {
            subject: "u_ann".into(),
            kind: "user",
            tenant: "acme".into(),
            client_id: "client-1".into(),
            tool: "list_environments".into(),
            call_id: "call-1".into(),
        });
        let quiet = Quiet::new(false);
        let mut cap = capability(Some(grant), &quiet).for_whom(Some(ann));
        let stopped = cap.send(request("testbench", wit::Method::Get)).await;
        let err = stopped.expect_err("the call stops");
        let stop = err
            .downcast_ref::<ConnectionStop>()
            .expect("a connection stop");
        assert_eq!(stop.backend, "testbench");
        assert!(stop.url.ends_with("/admin/connections/testbench/connect"));
    }

    #[tokio::test]
    async fn every_request_counts_against_the_host_call_budget() {
        let quiet = Quiet::new(false);
        let mut cap = BackendCapability::new(None, "acme", HostCallMeter::new(1), quiet);
        assert!(cap.send(request("x", wit::Method::Get)).await.is_ok());
        assert!(
            cap.send(request("x", wit::Method::Get)).await.is_err(),
            "the second traps"
        );
    }
}
