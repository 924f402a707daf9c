//! The [`Scanner`]: the built-in patterns plus the operator's literals.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::builtin;
use crate::kind::{Finding, SecretKind};
use crate::literals::{Literals, MIN_HOST_PATH_LEN, MIN_SECRET_LEN};

/// How many times [`Scanner::redact`] scans its own output before it
/// withholds the whole text: each pass removes at least one finding, and
/// one made by a replacement is rare.
pub const MAX_REDACTION_PASSES: usize = 4;

/// What a text still holding a finding after every pass becomes.
const WITHHELD: &str = "[redacted]";

/// Finds credentials and host paths in text.
///
/// Cheap to clone and share across threads: the compiled patterns are
/// shared. Its `Debug` shows only how many literals it holds, never them.
///
/// A scan is one pass of a lazy DFA over the text for the built-in patterns
/// and one of an Aho-Corasick automaton for the configured literals: linear
/// in the text's length, so it suits multi-MiB tool outputs as well as log
/// lines.
#[derive(Clone)]
pub struct Scanner {
    literals: Arc<Literals>,
}

impl Scanner {
    /// The built-in patterns only (compiled now, once per process).
    pub fn new() -> Self {
        builtin::warm_up();
        Scanner {
            literals: Arc::default(),
        }
    }

    /// Adds an operator-configured credential (a backend token), matched
    /// verbatim and, if escaping changes it, as it appears inside a JSON
    /// string. Values shorter than [`MIN_SECRET_LEN`] bytes are ignored: they
    /// would match ordinary text.
    ///
    /// Each call rebuilds the literal automaton; meant for startup.
    pub fn with_secret(mut self, value: &str) -> Self {
        if value.len() >= MIN_SECRET_LEN {
            Arc::make_mut(&mut self.literals).add(SecretKind::BackendSecret, value);
        }
        self
    }

    /// Adds a host filesystem path (plugin dir, cache dir, database file,
    /// working dir, home). Any occurrence of it is a
    /// [`HostPath`](SecretKind::HostPath) hit unless it is only the start of a
    /// longer name: `/srv/toolhost` is found in `/srv/toolhost/a.db`,
    /// `"/srv/toolhost"` and `… in /srv/toolhost.`, not in `/srv/toolhostile`,
    /// `/srv/toolhost-old` or `/srv/toolhost.db`. What comes before it does not
    /// matter (`file:///srv/toolhost` is a hit).
    ///
    /// Trailing separators are dropped. Ignored: relative paths, paths that
    /// are not UTF-8, and paths shorter than [`MIN_HOST_PATH_LEN`] characters
    /// (`/`, `/tmp`). Paths are matched as given, without touching the disk:
    /// add both forms if a configured path and its canonical form differ.
    pub fn with_host_path(mut self, path: &Path) -> Self {
        let Some(text) = path.to_str().filter(|_| path.is_absolute()) else {
            return self;
        };
        let text = text.trim_end_matches(std::path::is_separator);
        if text.chars().count() >= MIN_HOST_PATH_LEN {
            Arc::make_mut(&mut self.literals).add(SecretKind::HostPath, text);
        }
        self
    }

    /// The finding that starts earliest in `text`, if any. Where a built-in
    /// hit and a literal start at the same byte, the built-in one is given.
    pub fn find(&self, text: &str) -> Option<Finding> {
        let builtin = builtin::hits(text).next();
        let before = builtin.as_ref().map_or(usize::MAX, |f| f.range.start);
        self.literals.first(text, before).or(builtin)
    }

    /// Whether `text` holds no secret at all.
    pub fn is_clean(&self, text: &str) -> bool {
        self.find(text).is_none()
    }

    /// `text` with every finding replaced by `[redacted:<kind>]` (e.g.
    /// `[redacted:jwt]`); borrowed when there is none. Overlapping findings
    /// are replaced together, named for the one that starts first.
    ///
    /// The answer holds no finding: a replacement changes the context of
    /// what precedes it (in `/srv/appBearer x…` the host path `/srv/app`
    /// is no finding, a longer path goes on past it; in
    /// `/srv/app[redacted:bearer]` it is), so the output is scanned again
    /// until it is clean; after [`MAX_REDACTION_PASSES`] the whole text is
    /// withheld.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = match self.redact_once(text) {
            Cow::Borrowed(clean) => return Cow::Borrowed(clean),
            Cow::Owned(out) => out,
        };
        for _ in 1..MAX_REDACTION_PASSES {
            match self.redact_once(&out) {
                Cow::Borrowed(_) => return Cow::Owned(out),
                Cow::Owned(again) => out = again,
            }
        }
        if self.is_clean(&out) {
            Cow::Owned(out)
        } else {
            Cow::Owned(WITHHELD.to_owned())
        }
    }

    /// One pass of [`Scanner::redact`]: the findings of `text` replaced.
    fn redact_once<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut hits: Vec<Finding> = builtin::hits(text).collect();
        hits.extend(self.literals.all(text));
        if hits.is_empty() {
            return Cow::Borrowed(text);
        }
        hits.sort_by_key(|f| (f.range.start, Reverse(f.range.end)));
        let mut out = String::with_capacity(text.len());
        let mut done = 0;
        for hit in hits {
            if hit.range.end <= done {
                continue; // inside a hit already replaced
            }
            if hit.range.start < done {
                // Overlaps the last replacement: widen it by what is left.
                done = hit.range.end;
                continue;
            }
            out.push_str(&text[done..hit.range.start]);
            out.push_str("[redacted:");
            out.push_str(hit.kind.as_str());
            out.push(']');
            done = hit.range.end;
        }
        out.push_str(&text[done..]);
        Cow::Owned(out)
    }
}

impl Default for Scanner {
    fn default() -> Self {
        Scanner::new()
    }
}

impl fmt::Debug for Scanner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (secrets, paths) = self.literals.counts();
        f.debug_struct("Scanner")
            .field("secrets", &secrets)
            .field("paths", &paths)
            .finish()
    }
}
