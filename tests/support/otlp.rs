//! An OTLP/HTTP collector for tests: it takes `POST /v1/traces` (JSON, as
//! `--otlp-endpoint` exports) on 127.0.0.1 and keeps every span it was sent.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::Value;

/// The collector; it serves until the test process ends.
pub struct Collector {
    /// `http://127.0.0.1:PORT`, for `--otlp-endpoint`.
    pub url: String,
    spans: Arc<Mutex<Vec<Value>>>,
}

impl Collector {
    pub fn start() -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let spans = Arc::new(Mutex::new(Vec::new()));
        let kept = spans.clone();
        thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let kept = kept.clone();
                thread::spawn(move || serve(stream, &kept));
            }
        });
        Collector { url, spans }
    }

    /// Every span received so far, each an OTLP/JSON `Span` object.
    pub fn spans(&self) -> Vec<Value> {
        self.spans.lock().expect("spans").clone()
    }
}

/// Answers each request of one kept-alive connection.
fn serve(stream: TcpStream, kept: &Mutex<Vec<Value>>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut writer = stream;
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((name, value)) = l.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        if let Ok(export) = serde_json::from_slice::<Value>(&body) {
            let mut kept = kept.lock().expect("spans");
            for rs in export["resourceSpans"].as_array().into_iter().flatten() {
                for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
                    kept.extend(ss["spans"].as_array().into_iter().flatten().cloned());
                }
            }
        }
        let answer =
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}
