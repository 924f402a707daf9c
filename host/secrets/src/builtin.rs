//! The built-in patterns: credentials whose shape alone gives them away.
//!
//! All rules are compiled into one regex, each as a capture group, so a scan
//! is one pass of the lazy DFA whatever the number of rules; the capture
//! engine only runs over a match to tell which rule it was. The patterns are
//! ASCII (`(?-u:\b)`, explicit classes): a Unicode word boundary would make
//! the DFA give up on the first non-ASCII byte and fall back to a slow engine.

use std::sync::LazyLock;

use regex::{CaptureLocations, Regex};

use crate::kind::{Finding, SecretKind};
use crate::refine::Refine;

/// The prefixes of the host's own opaque tokens. Each is followed by 43
/// base64url characters (32 random bytes, unpadded), so a leaked token is
/// recognisable by shape alone:
///
/// - `thrt_`: an OAuth refresh token;
/// - `thac_`: an OAuth authorization code;
/// - `thcs_`: an OAuth client secret;
/// - `thss_`: a web session cookie's value.
pub const HOST_TOKEN_PREFIXES: [&str; 4] = ["thrt_", "thac_", "thcs_", "thss_"];

/// One built-in rule: what it finds, its pattern (without capture groups),
/// and how a match is checked or widened.
struct Rule {
    kind: SecretKind,
    pattern: &'static str,
    refine: Refine,
}

const fn rule(kind: SecretKind, pattern: &'static str, refine: Refine) -> Rule {
    Rule {
        kind,
        pattern,
        refine,
    }
}

/// The rules, in priority order for matches that start at the same byte.
/// A cookie value is an RFC 6265 cookie-octet: printable ASCII but for `"`,
/// `,`, `;` and `\`, so a value ends at a JSON string's quote or escape.
const RULES: &[Rule] = &[
    rule(
        SecretKind::Bearer,
        r"(?i-u:bearer)[ \t]+[A-Za-z0-9._~+/-]{16,}=*",
        Refine::NotAWord,
    ),
    rule(
        SecretKind::Bearer,
        r#"(?i-u:authorization)"?[ \t]*:[ \t]*"?(?i-u:basic)[ \t]+[A-Za-z0-9+/]{8,}=*"#,
        Refine::Keep,
    ),
    rule(
        SecretKind::Jwt,
        r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
        Refine::Keep,
    ),
    rule(
        SecretKind::HostToken,
        r"(?-u:\b)th(?:rt|ac|cs|ss)_[A-Za-z0-9_-]{43,}",
        Refine::Keep,
    ),
    rule(
        SecretKind::PrivateKey,
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
        Refine::PemBlock,
    ),
    rule(
        SecretKind::PrivateKey,
        r"PuTTY-User-Key-File-[0-9]*",
        Refine::PuttyBlock,
    ),
    rule(
        SecretKind::Cookie,
        concat!(
            r#"(?i-u:(?:set-)?cookie)"?[ \t]*:[ \t]*"?"#,
            r"(?:[A-Za-z0-9!#$%&'*+.^_`|~-]+=[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*;[ \t]*)*",
            r"[A-Za-z0-9!#$%&'*+.^_`|~-]+=[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]{8,}",
            r"(?:;[ \t]*[A-Za-z0-9!#$%&'*+.^_`|~-]+=[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*)*",
        ),
        Refine::Keep,
    ),
    rule(
        SecretKind::Cookie,
        r"toolhost_(?:session|browser)=[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]{8,}",
        Refine::Keep,
    ),
    rule(
        SecretKind::CloudKey,
        r"(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)",
        Refine::Keep,
    ),
    rule(
        SecretKind::CloudKey,
        r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{36,}",
        Refine::Keep,
    ),
    rule(
        SecretKind::CloudKey,
        r"github_pat_[A-Za-z0-9_]{22,}",
        Refine::Keep,
    ),
    rule(
        SecretKind::CloudKey,
        r"(?-u:\b)xox[abprs]-[A-Za-z0-9-]{10,}",
        Refine::Keep,
    ),
    rule(
        SecretKind::CloudKey,
        r"(?-u:\b)AIza[0-9A-Za-z_-]{35}",
        Refine::Keep,
    ),
    rule(
        SecretKind::CloudKey,
        r"(?-u:\b)[sr]k_live_[0-9A-Za-z]{16,}",
        Refine::Keep,
    ),
];

/// All rules as one alternation, rule `i` being capture group `i + 1`.
static COMBINED: LazyLock<Regex> = LazyLock::new(|| {
    let alternation: Vec<String> = RULES.iter().map(|r| format!("({})", r.pattern)).collect();
    // The patterns are constants, and `tests::every_rule_compiles_alone`
    // and every scanning test compile them: this cannot fail at run time.
    Regex::new(&alternation.join("|")).expect("the built-in patterns compile")
});

/// Compiles the built-in patterns now rather than on the first scan.
pub(crate) fn warm_up() {
    LazyLock::force(&COMBINED);
}

/// The built-in hits in `text`, in order of their start; a hit never
/// overlaps the one before it.
pub(crate) fn hits(text: &str) -> Hits<'_> {
    Hits {
        text,
        at: 0,
        slots: COMBINED.capture_locations(),
    }
}

/// Iterator over the built-in hits; see [`hits`].
pub(crate) struct Hits<'t> {
    text: &'t str,
    at: usize,
    slots: CaptureLocations,
}

impl Iterator for Hits<'_> {
    type Item = Finding;

    fn next(&mut self) -> Option<Finding> {
        while self.at <= self.text.len() {
            let m = COMBINED.captures_read_at(&mut self.slots, self.text, self.at)?;
            // Every alternative is a group, so a rule is always found.
            let rule = (RULES.iter().enumerate())
                .find_map(|(i, rule)| self.slots.get(i + 1).map(|_| rule));
            match rule.and_then(|r| r.refine.apply(self.text, m.range()).map(|hit| (r, hit))) {
                Some((rule, range)) => {
                    self.at = range.end.max(next_char(self.text, m.start()));
                    return Some(Finding {
                        kind: rule.kind,
                        range,
                    });
                }
                // Rejected: look again from the next character, as another
                // rule's match may start inside this one.
                None => self.at = next_char(self.text, m.start()),
            }
        }
        None
    }
}

/// The byte after the character at `at` (or `at + 1` at the end).
fn next_char(text: &str, at: usize) -> usize {
    text.get(at..)
        .and_then(|rest| rest.chars().next())
        .map_or(at + 1, |c| at + c.len_utf8())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_compiles_alone_without_capture_groups() {
        for rule in RULES {
            let re = Regex::new(rule.pattern).expect(rule.pattern);
            // Group 0 only: another group would shift the rule numbering.
            assert_eq!(re.captures_len(), 1, "{}", rule.pattern);
        }
        assert_eq!(COMBINED.captures_len(), RULES.len() + 1);
    }

    #[test]
    fn the_host_token_rule_covers_every_prefix() {
        for prefix in HOST_TOKEN_PREFIXES {
            let token = format!("{prefix}{}", "A-_9".repeat(11).get(..43).unwrap_or(""));
            let hit = hits(&token).next().expect(prefix);
            assert_eq!((hit.kind, hit.range), (SecretKind::HostToken, 0..48));
        }
    }

    #[test]
    fn a_rejected_match_does_not_hide_a_hit_inside_it() {
        // "bearer" + a hyphenated word is rejected as prose, but a Slack
        // token (letters and hyphens too) starting inside it is still found.
        let text = format!("bearer somewhat-long-{}-abcdefghijk", "xoxb");
        let hit = hits(&text).next().expect("the token");
        assert_eq!(hit.kind, SecretKind::CloudKey);
        assert_eq!(hit.range, "bearer somewhat-long-".len()..text.len());
    }

    #[test]
    fn next_char_steps_over_multibyte_characters() {
        assert_eq!(next_char("é!", 0), 2);
        assert_eq!(next_char("a", 1), 2);
    }
}
