//! The words a tool is found by: the tokenizer both the index and each
//! query go through, so a query word meets the same stem in a document.
//!
//! Tool names are identifiers (`create_invoice`, `listOpenTickets`), so
//! text is cut at anything not a letter or digit and at a lower-to-upper
//! case change; every piece is lower-cased, the commonest English words
//! are dropped (they match everything and rank nothing), and the rest are
//! reduced to their Snowball English stem ("invoices" and "invoiced" both
//! become "invoic").
//!
//! Then the verbs of the four things nearly every tool does are folded
//! into one word each ([`VERBS`]): catalogs name tools `create_`,
//! `list_`, `update_`, `delete_`, while people ask to "book", "cancel",
//! "which …" or "mark as done". Without it, a query that names the right
//! kind of thing ranks its five actions by accident of their descriptions'
//! lengths.

use std::collections::HashMap;

use rust_stemmers::{Algorithm, Stemmer};

/// The action verbs folded into one word each: what a catalog names its
/// tools by, first, then the words people use for it. Generic CRUD
/// vocabulary, not any catalog's. Words as often nouns of a catalog as
/// verbs are left out, since a tool's own words fold too: "open" (open a
/// ticket, or the open tickets?), "issue", "log", "file", "post", "run",
/// "build", "switch", "schedule"; so are "show" (a list or one thing?)
/// and "close" (ended or removed?).
pub const VERBS: &[(&str, &[&str])] = &[
    (
        "create",
        &[
            "add", "new", "make", "start", "launch", "book", "draft", "submit", "declare", "send",
            "record", "print", "register", "raise", "generate", "define", "compose", "place",
            "begin", "invite",
        ],
    ),
    (
        "delete",
        &[
            "remove",
            "cancel",
            "revoke",
            "disable",
            "drop",
            "deactivate",
            "erase",
            "purge",
            "terminate",
            "destroy",
            "discard",
            "withdraw",
            "unsubscribe",
        ],
    ),
    (
        "update",
        &[
            "change",
            "edit",
            "modify",
            "set",
            "move",
            "mark",
            "rename",
            "turn",
            "toggle",
            "adjust",
            "enable",
            "reassign",
            "reschedule",
            "correct",
            "amend",
        ],
    ),
    (
        "list",
        &[
            "which", "who", "all", "find", "search", "browse", "filter", "every",
        ],
    ),
    (
        "get",
        &[
            "look", "lookup", "view", "detail", "details", "inspect", "fetch", "read",
        ],
    ),
];

/// Words too common to rank by: a query in natural language ("show me all
/// the invoices for a customer") keeps its nouns and verbs. "Which" and
/// "who" stay: they ask for a list.
const STOP_WORDS: &[&str] = &[
    "a", "about", "an", "and", "any", "are", "as", "at", "be", "by", "can", "could", "do", "does",
    "for", "from", "give", "has", "have", "how", "i", "in", "into", "is", "it", "its", "let", "me",
    "my", "need", "of", "on", "one", "or", "our", "please", "some", "that", "the", "their", "them",
    "there", "this", "to", "tool", "tools", "up", "want", "was", "we", "what", "will", "with",
    "would", "you", "your",
];

/// The longest word kept: longer runs are noise (ids, digests), and a
/// bound keeps a hostile description from costing the index much.
const MAX_WORD: usize = 40;

/// The tokenizer (see the module docs).
pub struct Words {
    stemmer: Stemmer,
    /// The stem of each verb of [`VERBS`] → the stem it folds into.
    verbs: HashMap<String, String>,
}

impl Default for Words {
    fn default() -> Self {
        let stemmer = Stemmer::create(Algorithm::English);
        let verbs = (VERBS.iter())
            .flat_map(|(into, words)| {
                let into = stemmer.stem(into).into_owned();
                let stem = |w: &&str| stemmer.stem(w).into_owned();
                words.iter().map(move |w| (stem(w), into.clone()))
            })
            .collect();
        Words { stemmer, verbs }
    }
}

impl Words {
    /// The stems of `text`'s words, in order, stop words left out.
    pub fn of(&self, text: &str) -> Vec<String> {
        pieces(text)
            .into_iter()
            .filter(|w| w.len() <= MAX_WORD && !STOP_WORDS.contains(&w.as_str()))
            .map(|w| {
                let stem = self.stemmer.stem(&w).into_owned();
                self.verbs.get(&stem).cloned().unwrap_or(stem)
            })
            .collect()
    }
}

impl bm25::Tokenizer for Words {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        self.of(input_text)
    }
}

/// `text` cut into lower-case words at non-alphanumerics and at a
/// lower-to-upper case change.
fn pieces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut last_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            flush(&mut word, &mut out);
            last_lower = false;
            continue;
        }
        if c.is_uppercase() && last_lower {
            flush(&mut word, &mut out);
        }
        last_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    flush(&mut word, &mut out);
    out
}

fn flush(word: &mut String, out: &mut Vec<String>) {
    if !word.is_empty() {
        out.push(std::mem::take(word));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split_into_their_words_and_words_into_stems() {
        let w = Words::default();
        let cases: &[(&str, &[&str])] = &[
            ("create_invoice", &["creat", "invoic"]),
            ("listOpenTickets", &["list", "open", "ticket"]),
            ("Show me all the invoices", &["show", "list", "invoic"]),
            ("cancel the booking", &["delet", "creat"]),
            ("refund-payment v2", &["refund", "payment", "v2"]),
            ("", &[]),
        ];
        for (text, stems) in cases {
            assert_eq!(w.of(text), *stems, "{text}");
        }
    }

    #[test]
    fn an_overlong_run_is_not_a_word() {
        let w = Words::default();
        assert_eq!(w.of(&format!("{} invoice", "x".repeat(41))), ["invoic"]);
    }
}
