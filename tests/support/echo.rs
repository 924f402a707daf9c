//! A backend that shows a plugin whatever the host sent it, for the
//! byte-grep tests of issue 46: what the host adds to a request (an
//! assertion, a person's token) must reach the backend and nowhere else.

use serde_json::{Value, json};

use super::Server;
use super::bench::answer;

/// A backend that answers every request with the request's own head (so
/// a plugin would read back whatever the host sent) and keeps each head.
pub struct Echo {
    /// Its base URL.
    pub url: String,
    heads: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Echo {
    /// An echo on a free port of 127.0.0.1.
    pub fn start() -> Echo {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let heads = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = heads.clone();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().map_while(Result::ok) {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\nx-echo: {}\r\n\r\n{head}",
                    head.len(),
                    head.lines()
                        .filter(|l| l.contains(':'))
                        .collect::<Vec<_>>()
                        .join(" | "),
                );
                let _ = stream.write_all(answer.as_bytes());
                kept.lock().expect("heads").push(head);
            }
        });
        Echo { url, heads }
    }

    /// Every value the host sent in `header`, without a `Bearer ` prefix.
    pub fn sent(&self, header: &str) -> Vec<String> {
        let heads = self.heads.lock().expect("heads");
        let prefix = format!("{header}: ");
        let values = heads
            .iter()
            .flat_map(|h| h.lines().map(str::to_owned).collect::<Vec<_>>());
        let values = values.filter_map(|l| {
            let lower = l.to_ascii_lowercase();
            lower
                .starts_with(&prefix)
                .then(|| l[prefix.len()..].trim().to_owned())
        });
        values
            .map(|v| v.strip_prefix("Bearer ").map(str::to_owned).unwrap_or(v))
            .collect()
    }
}

/// The plugin asks the echo backend `decoy` to show what it was sent,
/// forging the header the host owns: the report, checked for what the
/// plugin may never hold.
pub fn reach_echo(server: &Server, token: &str, forged: &str) -> Value {
    let args = json!({"backend": "decoy", "path": "/echo", "headers": [[forged, "forged"]]});
    let got = answer(server, token, "reach", args);
    assert_eq!(got["ok"], json!(true), "{got}");
    assert!(
        got["body"].as_str().expect("a body").contains("[redacted]"),
        "{got}"
    );
    assert_eq!(
        got["jwts_in_memory"],
        json!(0),
        "a JWT in the plugin's memory: {got}"
    );
    got
}

/// None of `secrets` is in the answers, the host's log or its store (the
/// database file and its write-ahead log, byte for byte).
pub fn nowhere(server: &Server, secrets: &[String], answers: &[String]) {
    assert!(!secrets.is_empty(), "something was sent");
    let database = server.database_path();
    let mut store = std::fs::read(&database).expect("the database");
    let wal = format!("{}-wal", database.display());
    store.extend(std::fs::read(wal).unwrap_or_default());
    let log = server.log();
    for secret in secrets {
        let jwt = secret.starts_with("eyJ0eXAi") || secret.starts_with("eyJhbGci");
        assert!(
            secret.len() > 40 && jwt,
            "a JWT the plugin's count would see: {secret}"
        );
        for (place, text) in answers
            .iter()
            .map(|a| ("an answer", a))
            .chain([("the log", &log)])
        {
            assert!(
                !text.contains(secret.as_str()),
                "{place} holds what was sent"
            );
        }
        let found = store.windows(secret.len()).any(|w| w == secret.as_bytes());
        assert!(!found, "the store holds what was sent");
    }
}
