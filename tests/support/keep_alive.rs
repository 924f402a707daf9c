//! A blocking HTTP/1.1 client that keeps its connection open between
//! requests, as an MCP client does: for load whose cost per call must not
//! include a TCP handshake and a connection's setup on the server
//! ([`super::try_exchange`] opens a connection per request).
//!
//! It speaks only what the host and the ceiling answer: a status line,
//! headers, then a body framed by `Content-Length` or chunked. A
//! connection the server closed while it sat idle is reopened once; any
//! other failure is an error, never retried (a retried call could run
//! twice).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

use super::bench::Stateless;

/// Longest wait for an answer: far past any call's latency under load.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

/// One keep-alive connection to a server's `/mcp`.
pub struct KeepAlive {
    authority: String,
    open: Option<BufReader<TcpStream>>,
}

impl KeepAlive {
    /// A client of the endpoint `url` (`http://HOST:PORT/mcp`); it
    /// connects on its first request.
    pub fn new(url: &str) -> KeepAlive {
        let authority = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .expect("an authority")
            .to_owned();
        KeepAlive {
            authority,
            open: None,
        }
    }

    /// A stateless `tools/call` of `tool` with `arguments` and `token`:
    /// the JSON-RPC answer. Panics unless it is HTTP 200 with JSON.
    pub fn call(&mut self, token: &str, tool: &str, arguments: Value) -> Value {
        let params = serde_json::json!({"name": tool, "arguments": arguments});
        let request = Stateless::new(token, "tools/call", tool, params);
        let (status, body) = self
            .post(&request)
            .unwrap_or_else(|e| panic!("tools/call {tool} to {}: {e}", self.authority));
        assert_eq!(status, 200, "tools/call {tool}: {body}");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("tools/call {tool}: {e}: {body}"))
    }

    /// `request` POSTed to `/mcp`: the status and the body.
    pub fn post(&mut self, request: &Stateless) -> Result<(u16, String), String> {
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n",
            self.authority,
            request.body.len()
        );
        for (name, value) in request.headers() {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        head.push_str(&request.body);
        let reused = self.open.is_some();
        let answer = match self.exchange(head.as_bytes()) {
            Err(Unanswered::Closed) if reused => self.exchange(head.as_bytes()),
            other => other,
        };
        answer.map_err(|e| e.to_string())
    }

    /// Sends `request` and reads one answer, on the open connection or a
    /// new one; the connection is kept unless the server said `close`.
    fn exchange(&mut self, request: &[u8]) -> Result<(u16, String), Unanswered> {
        let mut conn = match self.open.take() {
            Some(conn) => conn,
            None => self.connect()?,
        };
        conn.get_mut()
            .write_all(request)
            .map_err(|_| Unanswered::Closed)?;
        let answer = read_answer(&mut conn)?;
        if !answer.close {
            self.open = Some(conn);
        }
        Ok((answer.status, answer.body))
    }

    fn connect(&self) -> Result<BufReader<TcpStream>, Unanswered> {
        let tcp = TcpStream::connect(&self.authority)
            .map_err(|e| Unanswered::Failed(format!("connect: {e}")))?;
        tcp.set_nodelay(true).expect("TCP_NODELAY");
        tcp.set_read_timeout(Some(ANSWER_TIMEOUT))
            .expect("a read timeout");
        Ok(BufReader::new(tcp))
    }
}

/// Why a request got no answer.
enum Unanswered {
    /// The connection was closed before any of the answer arrived.
    Closed,
    /// Anything else: a timeout, a malformed answer.
    Failed(String),
}

impl std::fmt::Display for Unanswered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unanswered::Closed => f.write_str("the connection closed before an answer"),
            Unanswered::Failed(why) => f.write_str(why),
        }
    }
}

/// One answer read off a connection.
struct Reply {
    status: u16,
    body: String,
    /// The server closes the connection after it.
    close: bool,
}

fn read_answer(conn: &mut BufReader<TcpStream>) -> Result<Reply, Unanswered> {
    let failed = |what: &str, e: std::io::Error| Unanswered::Failed(format!("{what}: {e}"));
    let mut line = String::new();
    if conn
        .read_line(&mut line)
        .map_err(|e| failed("status line", e))?
        == 0
    {
        return Err(Unanswered::Closed);
    }
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| Unanswered::Failed(format!("not a status line: {line:?}")))?;
    let (mut length, mut chunked, mut close) = (None, false, false);
    loop {
        line.clear();
        conn.read_line(&mut line).map_err(|e| failed("header", e))?;
        let Some((name, value)) = line.trim_end().split_once(':') else {
            break;
        };
        let value = value.trim().to_ascii_lowercase();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.parse::<usize>().ok(),
            "transfer-encoding" => chunked = value.contains("chunked"),
            "connection" => close = value.contains("close"),
            _ => {}
        }
    }
    let body = match (length, chunked) {
        (_, true) => read_chunked(conn)?,
        (Some(n), false) => read_exact(conn, n)?,
        (None, false) => return Err(Unanswered::Failed("an answer without a length".into())),
    };
    let body = String::from_utf8(body).map_err(|e| Unanswered::Failed(e.to_string()))?;
    Ok(Reply {
        status,
        body,
        close,
    })
}

fn read_exact(conn: &mut BufReader<TcpStream>, n: usize) -> Result<Vec<u8>, Unanswered> {
    let mut body = vec![0; n];
    conn.read_exact(&mut body)
        .map_err(|e| Unanswered::Failed(format!("body: {e}")))?;
    Ok(body)
}

/// A chunked body: each chunk's size line, its bytes and a CRLF, until
/// the empty chunk and the (empty) trailer.
fn read_chunked(conn: &mut BufReader<TcpStream>) -> Result<Vec<u8>, Unanswered> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        conn.read_line(&mut line)
            .map_err(|e| Unanswered::Failed(format!("chunk size: {e}")))?;
        let size = line.trim_end().split(';').next().unwrap_or_default();
        let size = usize::from_str_radix(size, 16)
            .map_err(|_| Unanswered::Failed(format!("not a chunk size: {line:?}")))?;
        if size == 0 {
            line.clear();
            conn.read_line(&mut line)
                .map_err(|e| Unanswered::Failed(format!("trailer: {e}")))?;
            return Ok(body);
        }
        let mut chunk = read_exact(conn, size + 2)?;
        chunk.truncate(size);
        body.extend(chunk);
    }
}
