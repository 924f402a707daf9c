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

use std::io::{self, Write};
use std::sync::{OnceLock, RwLock};

use toolhost_secrets::Scanner;

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
        let line = scanner.redact(&text);
        // Nowhere to report a failed log write.
        let _ = io::stderr().lock().write_all(line.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
