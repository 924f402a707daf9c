//! The HTTP/1.1 listener: accepts connections and serves the router on each,
//! bounding what a client may hold before its request is read.
//!
//! `axum::serve` sets no timer, so hyper would wait forever for a request
//! head: a client sending one header byte a second (slowloris) would keep
//! its connection, and its file descriptor, as long as it liked. Here every
//! request head must arrive within [`ConnectionLimits::header_read_timeout`]
//! (an idle keep-alive connection is closed after the same time), and a head
//! larger than [`ConnectionLimits::max_header_bytes`] is answered 431 and the
//! connection closed. Request framing is hyper's: conflicting
//! `Content-Length`s and a `Transfer-Encoding` other than chunked are 400,
//! and a request carrying both a length and chunked framing is read as
//! chunked and its connection closed after the answer (RFC 9112 §6.3), so
//! nothing after it on the connection is read as another request.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// How long a client has to send a whole request head, by default.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest request head (request line and headers) accepted, in bytes.
pub const MAX_HEADER_BYTES: usize = 32 * 1024;

/// The most header lines a request may carry.
pub const MAX_HEADERS: usize = 100;

/// How long the loop waits after an accept error that is not the peer's
/// (out of file descriptors, say) before accepting again.
const ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// What one connection may hold before its request is read.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub header_read_timeout: Duration,
    pub max_header_bytes: usize,
    pub max_headers: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            max_header_bytes: MAX_HEADER_BYTES,
            max_headers: MAX_HEADERS,
        }
    }
}

/// Serves `app` on `listener` until `closing` is cancelled, then stops
/// accepting, asks every open connection to close once its request in
/// flight is answered, and returns when the last one has closed.
/// Each request carries its peer's address as [`ConnectInfo`], and every
/// connection is set `TCP_NODELAY` (replies are written in pieces, SSE:
/// without it each waits for the peer's delayed ACK, ~40 ms).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    closing: CancellationToken,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_header_size(limits.max_header_bytes)
        .max_headers(limits.max_headers);
    let connections = GracefulShutdown::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = closing.cancelled() => break,
        };
        let (tcp, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                tracing::error!(error = %e, "accepting a connection failed; retrying");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!(error = %e, "could not set TCP_NODELAY");
        }
        // The router, each request told its peer's address.
        let service = app
            .clone()
            .map_request(move |req: hyper::Request<Incoming>| {
                let mut req = req.map(Body::new);
                req.extensions_mut().insert(ConnectInfo(peer));
                req
            });
        let conn = http.serve_connection(TokioIo::new(tcp), TowerToHyperService::new(service));
        let served = connections.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = served.await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    connections.shutdown().await;
}

/// Errors of one connection (the peer went away before it was accepted);
/// the listener itself is fine.
fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}
