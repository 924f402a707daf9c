//! Log lines pass a secret scanner before they reach stderr: a credential
//! that found its way into a message or a field (a plugin's log line, an
//! upstream's error text) is written as `[redacted:<kind>]`.
//!
//! The formatter writes each event into one writer and drops it; the
//! writer buffers the event's bytes and, on drop, writes them redacted in
//! one `write_all`. The scanner starts with the built-in credential
//! patterns and gains the configured backend secrets once `serve` knows
//! them ([`set`]). Host paths are not redacted here: in the host's own
//! logs they are the operator's information, not a leak.
//!
//! No line is longer than [`MAX_LINE_BYTES`]: a request can make a log
//! line carry its input (an unknown method, a name, a serde error quoting
//! a value), and a log is kept. A longer line is written as an excerpt of
//! its start and the count of bytes cut; a JSON line stays one JSON object
//! (`{"log_line_cut": N, "excerpt": "…"}`).

use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::{OnceLock, RwLock};

use toolhost_secrets::Scanner;

/// The longest log line written, in bytes: room for a full error chain
/// with its fields, far short of what a request could make a line carry.
pub(crate) const MAX_LINE_BYTES: usize = 8 * 1024;
/// How much of a cut line is kept.
const EXCERPT_BYTES: usize = 2 * 1024;

static SCANNER: OnceLock<RwLock<Scanner>> = OnceLock::new();

fn scanner() -> &'static RwLock<Scanner> {
    SCANNER.get_or_init(|| RwLock::new(Scanner::new()))
}

/// Makes every later log line be scanned with `with`.
pub(crate) fn set(with: Scanner) {
    let mut slot = scanner()
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    *slot = with;
}

/// One log event on its way to stderr.
#[derive(Default)]
pub(crate) struct RedactedLine(Vec<u8>);

impl Write for RedactedLine {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for RedactedLine {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.0);
        let scanner = scanner()
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let line = bounded(scanner.redact(&text));
        // Nowhere to report a failed log write.
        let _ = io::stderr().lock().write_all(line.as_bytes());
    }
}

/// `line` if it is at most [`MAX_LINE_BYTES`], else an excerpt of its start
/// and the count of bytes cut (one JSON object for a JSON line), ending in
/// a newline as `line` did.
fn bounded(line: Cow<'_, str>) -> Cow<'_, str> {
    if line.len() <= MAX_LINE_BYTES {
        return line;
    }
    let mut end = EXCERPT_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    let (excerpt, cut) = (&line[..end], line.len() - end);
    if line.starts_with('{') {
        let cut_line = serde_json::json!({"log_line_cut": cut, "excerpt": excerpt});
        Cow::Owned(format!("{cut_line}\n"))
    } else {
        Cow::Owned(format!("{excerpt} … [log line cut: {cut} more bytes]\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_cut_to_an_excerpt_and_a_json_line_stays_json() {
        let short = "a short line\n".to_owned();
        assert_eq!(bounded(Cow::Borrowed(&short)), short);
        let long = format!("WARN unknown method {}\n", "é".repeat(1 << 20));
        let cut = bounded(Cow::Owned(long));
        assert!(cut.len() <= EXCERPT_BYTES + 64, "{} bytes", cut.len());
        assert!(cut.starts_with("WARN unknown method"));
        assert!(cut.ends_with("more bytes]\n"), "{}", &cut[cut.len() - 40..]);
        let json_line = format!(
            "{}\n",
            serde_json::json!({"fields": {"message": "x".repeat(1 << 20)}})
        );
        let cut = bounded(Cow::Owned(json_line));
        let parsed: serde_json::Value = serde_json::from_str(cut.trim_end()).expect("still JSON");
        assert!(parsed["log_line_cut"].as_u64().expect("a count") > 1 << 19);
        assert!(
            cut.len() <= EXCERPT_BYTES * 2 + 64,
            "excerpt escaped at most twice over"
        );
    }

    #[test]
    fn a_line_is_redacted_with_the_scanner_of_the_moment() {
        let scanner = Scanner::new().with_secret("s3cret-backend-token");
        let line = "upstream said: s3cret-backend-token rejected";
        assert_eq!(
            scanner.redact(line),
            "upstream said: [redacted:backend_secret] rejected"
        );
        set(scanner);
        let mut out = RedactedLine::default();
        out.write_all(line.as_bytes()).expect("buffered");
        assert_eq!(
            out.0,
            line.as_bytes(),
            "buffered as written, redacted when dropped"
        );
    }
}
