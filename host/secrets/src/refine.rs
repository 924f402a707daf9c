//! What a built-in match needs beyond its regex: rejecting prose that looks
//! like a token, and widening a private key's header to the whole key.

use std::ops::Range;

/// How far past a private key's header its end is looked for. An 8192-bit
/// RSA key in PEM is under 7 KiB; 64 KiB leaves room for comments and
/// escaping while bounding the work per header.
pub(crate) const KEY_BLOCK_LIMIT: usize = 64 * 1024;

/// What to do with a built-in match.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Refine {
    /// The match is the hit.
    Keep,
    /// `bearer <token>`: a hit unless the token is an ordinary word
    /// ("bearer responsibilities").
    NotAWord,
    /// A PEM header: the hit runs to the end of its `-----END …-----` line.
    PemBlock,
    /// A PuTTY header: the hit runs to the end of its `Private-MAC:` value.
    PuttyBlock,
}

impl Refine {
    /// The hit for a match at `range`, or `None` when it is not one.
    pub(crate) fn apply(self, text: &str, range: Range<usize>) -> Option<Range<usize>> {
        match self {
            Refine::Keep => Some(range),
            Refine::NotAWord => {
                let token = text.get(range.clone())?.get("bearer".len()..)?;
                (!is_word(token.trim_start_matches([' ', '\t']))).then_some(range)
            }
            Refine::PemBlock => Some(range.start..pem_end(text, range.end)),
            Refine::PuttyBlock => Some(range.start..putty_end(text, range.end)),
        }
    }
}

/// Whether `token` reads as a word (`Responsibilities.`, `well-known`)
/// rather than a credential: letters, lowercase after the first, hyphens.
/// A random 16-character base64 token has this shape with odds under 1e-6.
fn is_word(token: &str) -> bool {
    let mut bytes = token.trim_end_matches(['.', '=']).bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_lowercase() || b == b'-')
}

/// Where the PEM block whose header ends at `from` ends: after its
/// `-----END …-----` line if the next `-----` in reach starts one, else after
/// the base64 body (with raw or JSON-escaped line breaks) that follows.
///
/// Each header searches only up to the next `-----`, so many headers in a
/// row cost no more than one pass over the text.
fn pem_end(text: &str, from: usize) -> usize {
    let reach = within_reach(text, from);
    if let Some(dashes) = reach.find("-----") {
        let line = &reach[dashes..];
        if line.starts_with("-----END ")
            && let Some(close) = line[5..].find("-----")
        {
            return from + dashes + 5 + close + 5;
        }
    }
    from + run_len(reach, |b| {
        b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'\r' | b'\n' | b'\\')
    })
}

/// Where the PuTTY key file whose header ends at `from` ends: after its
/// `Private-MAC:` value if one comes before the next key file, else `from`
/// (the header alone).
fn putty_end(text: &str, from: usize) -> usize {
    const MAC: &str = "Private-MAC:";
    let reach = within_reach(text, from);
    let reach = &reach[..reach.find("PuTTY-User-Key-File-").unwrap_or(reach.len())];
    match reach.find(MAC) {
        Some(at) => {
            let value = at + MAC.len();
            from + value + run_len(&reach[value..], |b| b == b' ' || b.is_ascii_hexdigit())
        }
        None => from,
    }
}

/// `text[from..]`, cut at [`KEY_BLOCK_LIMIT`] bytes (on a char boundary).
fn within_reach(text: &str, from: usize) -> &str {
    let mut to = text.len().min(from.saturating_add(KEY_BLOCK_LIMIT));
    while !text.is_char_boundary(to) {
        to -= 1;
    }
    text.get(from..to).unwrap_or("")
}

/// The length of the ASCII prefix of `s` whose bytes satisfy `keep`.
fn run_len(s: &str, keep: impl Fn(u8) -> bool) -> usize {
    s.bytes().take_while(|&b| keep(b)).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_not_tokens() {
        let table = [
            ("responsibilities", true),
            ("Responsibilities.", true),
            ("well-established-practice", true),
            ("abcDEF0123456789xyz", false),
            ("mF_9.B5f-4.1JqM", false),
            ("dGhpcyBpcyBhIHRva2Vu==", false),
            ("0123456789abcdef", false),
        ];
        for (token, word) in table {
            assert_eq!(is_word(token), word, "{token}");
        }
    }

    #[test]
    fn a_pem_block_runs_to_its_end_line_or_its_body() {
        let header = concat!("-----BEGIN ", "PRIVATE KEY-----");
        let table = [
            ("\nMIIBVQ==\n-----END PRIVATE KEY-----\ntail", "\ntail"),
            ("\\nMIIBVQ==\\n-----END PRIVATE KEY-----\",", "\","),
            ("\nMIIBVQ==\n\nThe key above", " key above"),
            (" and then nothing", " and then nothing"),
        ];
        for (after, left) in table {
            let text = format!("{header}{after}");
            let end = pem_end(&text, header.len());
            assert_eq!(&text[end..], left, "{after:?}");
        }
    }

    #[test]
    fn a_putty_key_runs_to_its_mac() {
        let text = "-File-3: ssh-ed25519\nPrivate-Lines: 1\nAAAA\nPrivate-MAC: 0a1b2c\nnext";
        assert_eq!(&text[putty_end(text, 6)..], "\nnext");
        assert_eq!(putty_end("-File-3: ssh-ed25519\n", 6), 6);
    }
}
