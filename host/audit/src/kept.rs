//! What a row keeps of a caller-chosen text: a tool name as called, a gate
//! id presented, a client id. The audit trail is kept for good, so each is
//! bounded before it is kept: a text longer than [`MAX_KEPT_TEXT_BYTES`] is
//! kept as its start and the SHA-256 of the whole, which still tells two
//! long names apart and matches a name one holds, in a few hundred bytes.

use std::borrow::Cow;

use toolhost_types::Digest;

/// The longest caller-chosen text a row keeps whole: every name the
/// catalog serves (64 bytes), ids the host issues and MCP's 128-byte tool
/// names fit.
pub const MAX_KEPT_TEXT_BYTES: usize = 128;
/// How much of a longer text's start is kept beside its digest.
const KEPT_START_BYTES: usize = 64;

/// `text` as a row keeps it: whole up to [`MAX_KEPT_TEXT_BYTES`], else
/// `<start>…(<n> bytes, sha256:<hex>)`.
///
/// ```
/// use toolhost_audit::kept_text;
/// assert_eq!(kept_text("greet"), "greet");
/// let long = "x".repeat(4 << 20);
/// let kept = kept_text(&long);
/// assert!(kept.len() < 200);
/// assert!(kept.starts_with("xxxx") && kept.contains("4194304 bytes, sha256:"));
/// ```
pub fn kept_text(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_KEPT_TEXT_BYTES {
        return Cow::Borrowed(text);
    }
    let mut end = KEPT_START_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let digest = Digest::of(text.as_bytes());
    Cow::Owned(format!(
        "{}…({} bytes, sha256:{digest})",
        &text[..end],
        text.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_keeps_its_start_and_a_digest_that_tells_it_apart() {
        let a = format!("{}a", "é".repeat(1000));
        let b = format!("{}b", "é".repeat(1000));
        let (ka, kb) = (kept_text(&a), kept_text(&b));
        assert_ne!(ka, kb, "same start, different digests");
        assert!(ka.len() <= MAX_KEPT_TEXT_BYTES + 64, "{} bytes", ka.len());
        assert!(ka.starts_with("éé"));
        let at_bound = "y".repeat(MAX_KEPT_TEXT_BYTES);
        assert_eq!(kept_text(&at_bound), at_bound.as_str());
    }
}
