//! Scrubbing a backend's credential out of what the plugin will read.
//!
//! A backend that echoes its request (a debug endpoint, an error page
//! quoting headers) would otherwise hand the credential to the plugin.
//! This catches the credential as sent, byte for byte; an encoded echo
//! (base64, JSON escapes) is not caught.

use crate::secret::REDACTED;

/// The byte strings to replace, longest first, so the full header value
/// (`Bearer <secret>`) becomes `[redacted]` rather than `Bearer [redacted]`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Redactor {
    needles: Vec<Vec<u8>>,
}

impl Redactor {
    /// A redactor for these values; empty ones are ignored.
    pub(crate) fn new(needles: impl IntoIterator<Item = Vec<u8>>) -> Self {
        let mut needles: Vec<_> = needles.into_iter().filter(|n| !n.is_empty()).collect();
        needles.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        needles.dedup();
        Redactor { needles }
    }

    /// This redactor with more values to replace (the identity assertion
    /// or the exchanged token one request carried). With none, a clone.
    pub(crate) fn and_each(&self, needles: impl IntoIterator<Item = Vec<u8>>) -> Self {
        let mut needles = needles.into_iter().peekable();
        if needles.peek().is_none() {
            return self.clone();
        }
        Redactor::new(self.needles.iter().cloned().chain(needles))
    }

    /// The bytes with every occurrence of every needle replaced.
    pub(crate) fn scrub(&self, bytes: Vec<u8>) -> Vec<u8> {
        self.needles
            .iter()
            .fold(bytes, |bytes, needle| replace(bytes, needle))
    }
}

/// Replaces every non-overlapping occurrence of `needle`, left to right.
fn replace(haystack: Vec<u8>, needle: &[u8]) -> Vec<u8> {
    if haystack.len() < needle.len() {
        return haystack;
    }
    let mut out = Vec::with_capacity(haystack.len());
    let mut rest = &haystack[..];
    while let Some(at) = find(rest, needle) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(REDACTED.as_bytes());
        rest = &rest[at + needle.len()..];
    }
    out.extend_from_slice(rest);
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor() -> Redactor {
        Redactor::new([b"Bearer s3cret".to_vec(), b"s3cret".to_vec(), Vec::new()])
    }

    #[test]
    fn every_occurrence_is_replaced_and_the_full_value_first() {
        let cases: [(&[u8], &[u8]); 5] = [
            (b"auth=Bearer s3cret", b"auth=[redacted]"),
            (b"s3crets3cret", b"[redacted][redacted]"),
            (b"a s3cret b s3cret", b"a [redacted] b [redacted]"),
            (b"s3cre", b"s3cre"),
            (b"", b""),
        ];
        for (input, want) in cases {
            assert_eq!(redactor().scrub(input.to_vec()), want);
        }
    }

    #[test]
    fn a_value_added_for_one_request_is_replaced_too() {
        let scrubbed = redactor()
            .and_each([b"eyJ.assertion".to_vec()])
            .scrub(b"s3cret eyJ.assertion".to_vec());
        assert_eq!(scrubbed, b"[redacted] [redacted]");
    }

    #[test]
    fn a_redactor_without_needles_changes_nothing() {
        let bytes = b"anything".to_vec();
        assert_eq!(Redactor::default().scrub(bytes.clone()), bytes);
    }
}
