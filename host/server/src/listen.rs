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
//!
//! A body has its own deadline ([`ConnectionLimits::body_read_timeout`],
//! counted from the moment its head was read): a client that sends a head
//! declaring 100,000 bytes and then a byte every few seconds is answered
//! `408` and its connection closed when the deadline passes, whichever
//! route it was sent to. And before anything of a connection is read, it
//! must find a place under the caps of [`crate::connections`].

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::connections::{Connections, Refused};

/// How long a client has to send a whole request head, by default.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a client has to send a whole request body, by default, from
/// the moment its head was read: the largest body the host takes (a 32 MiB
/// component) arrives in time at a little over 1 MB/s.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

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
    /// How long a request head may take (and an idle connection wait).
    pub header_read_timeout: Duration,
    /// How long a request body may take, from the end of its head.
    pub body_read_timeout: Duration,
    /// The largest request head.
    pub max_header_bytes: usize,
    /// The most header lines.
    pub max_headers: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
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
    connections: Connections,
    closing: CancellationToken,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_header_size(limits.max_header_bytes)
        .max_headers(limits.max_headers);
    let watcher = GracefulShutdown::new();
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
        let place = match connections.admit(peer.ip()) {
            Ok(place) => place,
            Err(why) => {
                refuse(&tcp, why);
                continue;
            }
        };
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!(error = %e, "could not set TCP_NODELAY");
        }
        // The router, each request told its peer's address and its body
        // given its deadline.
        let (app, body_timeout) = (app.clone(), limits.body_read_timeout);
        let service = tower::service_fn(move |req: hyper::Request<Incoming>| {
            let app = app.clone();
            async move {
                let late = Arc::new(AtomicBool::new(false));
                let body = DeadlineBody::new(req.into_parts(), body_timeout, late.clone());
                let (parts, body) = body;
                let mut req = hyper::Request::from_parts(parts, Body::new(body));
                req.extensions_mut().insert(ConnectInfo(peer));
                let answer = app.oneshot(req).await;
                if late.load(Ordering::Relaxed) {
                    return Ok(body_too_slow(body_timeout));
                }
                answer
            }
        });
        let conn = http.serve_connection(TokioIo::new(tcp), TowerToHyperService::new(service));
        let served = watcher.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = served.await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
            drop(place);
        });
    }
    drop(listener);
    watcher.shutdown().await;
}

/// Answers a connection the caps refuse, without reading it: `503` with
/// `Retry-After`, written only if the socket takes it at once (a peer that
/// does not read is closed all the same).
fn refuse(tcp: &tokio::net::TcpStream, why: Refused) {
    metrics::counter!("toolhost_connections_refused_total", "cap" => match why {
        Refused::Full => "total",
        Refused::SourceShare => "source",
    })
    .increment(1);
    let _ = tcp.try_write(REFUSAL);
}

/// The whole answer to a refused connection.
const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// The answer to a request whose body missed its deadline (whatever its
/// route made of the cut body): `408`, and the connection closed.
fn body_too_slow(timeout: Duration) -> Response {
    let mut answer = (
        StatusCode::REQUEST_TIMEOUT,
        format!("the request body did not arrive within {timeout:?}\n"),
    )
        .into_response();
    answer
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    answer
}

/// A request body that fails once its deadline passes, and says so in
/// `late` (so the answer can be a 408 whatever the route made of the
/// error). The clock starts with the head; an empty body has none.
struct DeadlineBody {
    inner: Incoming,
    timeout: Duration,
    /// When the head arrived: the deadline is `timeout` after it.
    head_at: tokio::time::Instant,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
    late: Arc<AtomicBool>,
}

/// The error a body past its deadline reads as.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?}")]
struct BodyTooSlow(Duration);

impl DeadlineBody {
    /// `parts`' body with `timeout` to arrive, flagging `late` if it does not.
    fn new(
        (parts, inner): (hyper::http::request::Parts, Incoming),
        timeout: Duration,
        late: Arc<AtomicBool>,
    ) -> (hyper::http::request::Parts, DeadlineBody) {
        let body = DeadlineBody {
            inner,
            timeout,
            head_at: tokio::time::Instant::now(),
            deadline: None,
            late,
        };
        (parts, body)
    }
}

impl hyper::body::Body for DeadlineBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        if this.inner.is_end_stream() {
            return Poll::Pending;
        }
        // Armed only once the body keeps us waiting: one that came with
        // its head (most do) never touches the timer.
        let (head_at, timeout) = (this.head_at, this.timeout);
        let deadline = this
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(head_at + timeout)));
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => {
                this.late.store(true, Ordering::Relaxed);
                Poll::Ready(Some(Err(Box::new(BodyTooSlow(this.timeout)))))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
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
