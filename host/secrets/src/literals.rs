//! The operator's literals: backend credentials and host paths, matched
//! verbatim by one Aho-Corasick automaton.

use aho_corasick::{AhoCorasick, MatchKind};

use crate::kind::{Finding, SecretKind};

/// Credentials shorter than this many bytes are not scanned for: a short
/// value (`admin`, `1234`) would match ordinary text everywhere.
pub const MIN_SECRET_LEN: usize = 8;

/// Host paths shorter than this many characters are not scanned for
/// (`/`, `/tmp`, `/srv`): they would match most paths a tool mentions.
pub const MIN_HOST_PATH_LEN: usize = 5;

/// One string to find, and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Needle {
    kind: SecretKind,
    text: String,
}

/// The configured literals and their automaton.
#[derive(Clone, Default)]
pub(crate) struct Literals {
    secrets: usize,
    paths: usize,
    needles: Vec<Needle>,
    /// Rebuilt on each addition (done at startup). `None` with needles only
    /// if the automaton could not be built, then a plain search is used.
    automaton: Option<AhoCorasick>,
    longest: usize,
}

impl Literals {
    /// How many credentials and host paths are configured.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.secrets, self.paths)
    }

    /// Adds `value` (and its JSON-escaped form, if different) as `kind`.
    /// Returns whether it was new.
    pub(crate) fn add(&mut self, kind: SecretKind, value: &str) -> bool {
        let mut forms = vec![value.to_owned()];
        // In serialized JSON a value with quotes, backslashes or control
        // characters appears escaped.
        if let Ok(quoted) = serde_json::to_string(value) {
            let escaped = &quoted[1..quoted.len() - 1];
            if escaped != value {
                forms.push(escaped.to_owned());
            }
        }
        let before = self.needles.len();
        for text in forms {
            let needle = Needle { kind, text };
            if !self.needles.contains(&needle) {
                self.needles.push(needle);
            }
        }
        if self.needles.len() == before {
            return false;
        }
        match kind {
            SecretKind::HostPath => self.paths += 1,
            _ => self.secrets += 1,
        }
        self.rebuild();
        true
    }

    fn rebuild(&mut self) {
        let texts = self.needles.iter().map(|n| n.text.as_str());
        // Standard semantics: the only kind that reports overlapping matches,
        // so a path rejected at its boundary does not hide a shorter one.
        self.automaton = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .build(texts)
            .ok();
        self.longest = self.needles.iter().map(|n| n.text.len()).max().unwrap_or(0);
    }

    /// The hit starting earliest, if it starts before `before`.
    pub(crate) fn first(&self, text: &str, before: usize) -> Option<Finding> {
        let Some(automaton) = &self.automaton else {
            return self
                .plain(text)
                .into_iter()
                .filter(|f| f.range.start < before)
                .min_by_key(|f| f.range.start);
        };
        let mut best = None;
        let mut before = before;
        // Overlapping matches come in order of their end: once one ends too
        // far on to start before the best so far, none after it can either.
        for m in automaton.find_overlapping_iter(text) {
            if m.end().saturating_sub(self.longest) >= before {
                break;
            }
            if m.start() < before
                && let Some(hit) = self.accept(text, m.pattern().as_usize(), m.range())
            {
                before = hit.range.start;
                best = Some(hit);
            }
        }
        best
    }

    /// Every hit, overlapping ones included, in no particular order.
    pub(crate) fn all(&self, text: &str) -> Vec<Finding> {
        let Some(automaton) = &self.automaton else {
            return self.plain(text);
        };
        automaton
            .find_overlapping_iter(text)
            .filter_map(|m| self.accept(text, m.pattern().as_usize(), m.range()))
            .collect()
    }

    /// Every hit, by `str::match_indices` per needle: the fallback for an
    /// automaton that could not be built.
    fn plain(&self, text: &str) -> Vec<Finding> {
        let mut hits = Vec::new();
        for (i, needle) in self.needles.iter().enumerate() {
            for (at, found) in text.match_indices(needle.text.as_str()) {
                hits.extend(self.accept(text, i, at..at + found.len()));
            }
        }
        hits
    }

    /// Needle `i` found at `range` as a finding, unless a host path found
    /// there is only the start of a longer name.
    fn accept(&self, text: &str, i: usize, range: std::ops::Range<usize>) -> Option<Finding> {
        let kind = self.needles.get(i)?.kind;
        if kind == SecretKind::HostPath && continues_name(&text[range.end..]) {
            return None;
        }
        Some(Finding { kind, range })
    }
}

/// Whether `rest`, the text right after a path, continues its last name:
/// `/srv/toolhost` is not in `/srv/toolhostile`, `/srv/toolhost-old` or
/// `/srv/toolhost.db`, but is in `/srv/toolhost/db`, `/srv/toolhost"` and
/// at the end of the sentence `… in /srv/toolhost.`
pub(crate) fn continues_name(rest: &str) -> bool {
    let is_name = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    let mut chars = rest.chars();
    match chars.next() {
        Some('.') => chars.next().is_some_and(|c| is_name(c) || c == '.'),
        Some(c) => is_name(c),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_continues_past_letters_digits_and_inner_dots() {
        let table = [
            ("", false),
            ("/plugins", false),
            ("\"", false),
            (") and", false),
            (".", false),
            (". Next", false),
            ("ile", true),
            ("-old", true),
            ("_2", true),
            (".db", true),
            ("..", true),
            ("é", true),
        ];
        for (rest, continues) in table {
            assert_eq!(continues_name(rest), continues, "{rest:?}");
        }
    }

    #[test]
    fn a_value_is_added_once_with_its_escaped_form() {
        let mut literals = Literals::default();
        assert!(literals.add(SecretKind::BackendSecret, "pa\"ss-word-1"));
        assert!(!literals.add(SecretKind::BackendSecret, "pa\"ss-word-1"));
        assert_eq!(literals.needles.len(), 2);
        assert_eq!(literals.counts(), (1, 0));
        let hit = literals.first(r#"{"k":"pa\"ss-word-1"}"#, usize::MAX);
        assert_eq!(hit.map(|f| f.range), Some(6..19));
    }

    #[test]
    fn the_plain_fallback_finds_what_the_automaton_finds() {
        let mut literals = Literals::default();
        literals.add(SecretKind::HostPath, "/home/ada");
        literals.add(SecretKind::HostPath, "/home/ada/cache");
        literals.add(SecretKind::BackendSecret, "s3cr3t-value");
        let text = "x /home/ada/cachex s3cr3t-value /home/adam";
        let mut fast = literals.all(text);
        literals.automaton = None;
        let mut plain = literals.all(text);
        fast.sort_by_key(|f| f.range.start);
        plain.sort_by_key(|f| f.range.start);
        assert_eq!(fast, plain);
        assert_eq!(fast.len(), 2);
        assert_eq!(
            literals.first(text, usize::MAX).map(|f| f.range),
            Some(2..11)
        );
    }
}
