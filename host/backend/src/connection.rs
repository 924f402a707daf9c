//! Each person's own connection to a backend (issue 46): the backend is an
//! OAuth resource with an authorization server of its own, where each
//! person connects their account once, in their browser; the host then
//! sends that person's token on that person's calls, and only theirs.
//!
//! This room owns when a person's token is asked for (the backend's
//! [`BackendAuth::Connection`](crate::BackendAuth)), who may have one
//! (people, never services), the header it travels in, and what a call
//! without a connection is told ([`BackendError::ConnectionRequired`]).
//! It does not own the connections: a [`Connector`] does (the host's is
//! `toolhost_sso::Connections`, which keeps them sealed in the store,
//! refreshes them and runs the connect flow).

use std::future::Future;
use std::pin::Pin;

use crate::{BackendError, Identity};

/// Why a person's token could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionError {
    /// The person has no connection to the backend, or it was revoked, or
    /// it expired and could not be refreshed: they connect (again).
    #[error("the person has not connected this backend")]
    NotConnected,
    /// The store or the backend's authorization server could not be
    /// reached. Words for the log.
    #[error("unavailable: {0}")]
    Unavailable(String),
}

/// The connector's future: the person's access token.
pub type ConnectionFuture<'a> =
    Pin<Box<dyn Future<Output = Result<String, ConnectionError>> + Send + 'a>>;

/// Keeps each person's connections, and hands out their tokens.
pub trait Connector: Send + Sync {
    /// The access token of `who` at `backend`, refreshed first if it has
    /// expired; never called for a service.
    fn token<'a>(&'a self, backend: &'a str, who: &'a Identity) -> ConnectionFuture<'a>;
    /// The host's page where a person connects `backend`.
    fn connect_url(&self, backend: &str) -> String;
}

/// A person's call could not go on: they have not connected `backend`.
pub(crate) fn required(backend: &str, connector: &dyn Connector) -> BackendError {
    BackendError::ConnectionRequired {
        backend: backend.to_owned(),
        url: connector.connect_url(backend),
    }
}

/// The refusal a service client (or a call with no person) gets from a
/// backend that acts with people's own connections.
pub(crate) fn services_stay_services(backend: &str) -> BackendError {
    BackendError::Refused(format!(
        "backend {backend:?} acts with each person's own connection: a service client is \
         never given a person's token"
    ))
}
