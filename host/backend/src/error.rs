//! What can go wrong with a plugin's request, in words a plugin may read.

/// The WIT `backend::error`: every message is safe to hand to the plugin.
/// None carries a secret, the base URL, or the underlying client error (the
/// host logs that at debug level).
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum BackendError {
    /// The plugin's manifest does not declare this backend, or the operator
    /// configured none of that name. The plugin cannot tell which, on purpose.
    #[error("backend {0:?} is not declared by this plugin or not configured")]
    NotDeclared(String),
    /// The host refused the request before sending it: a bad path or
    /// header, or a side-effecting method while the call must have none.
    #[error("request refused: {0}")]
    Refused(String),
    /// The backend did not answer, body included, within its timeout.
    #[error("the backend did not answer in time")]
    Timeout,
    /// The request body or the response was larger than the host accepts.
    #[error("the request or the response is larger than the host accepts")]
    TooLarge,
    /// The backend could not be reached, or the exchange broke off.
    #[error("backend unavailable: {0}")]
    Unavailable(String),
    /// The backend acts with each person's own connection, and the caller
    /// has not connected it (or their connection was revoked or expired).
    /// The call stops here: the host asks the person to connect at `url`,
    /// a page of the host's own, and the call can then run again.
    #[error(
        "backend {backend:?} acts with each person's own connection, and you have not \
         connected it: connect at {url}, then call again"
    )]
    ConnectionRequired {
        /// The backend.
        backend: String,
        /// The host's page where the person connects it.
        url: String,
    },
}
