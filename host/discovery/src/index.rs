//! [`Index`]: the caller's tools ranked for one query with Okapi BM25.
//!
//! An index is built over the tools one caller may see (never over a
//! wider set filtered afterwards: a term's weight depends on every
//! document in the index, so a hidden tool would move the ranking of the
//! visible ones). Each tool is one document whose fields are weighted by
//! repetition: its name three times, its title and tags twice, its
//! description and its arguments' names once, ranked with BM25's usual
//! parameters (k1 = 1.2, b = 0.75). Ties are broken by name, so
//! the same query over the same tools ranks the same on every replica.

use std::cmp::Ordering;

use bm25::{Embedder, EmbedderBuilder, Scorer};

use crate::words::Words;

/// What a tool is found by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    /// Its name, which a hit answers.
    pub name: String,
    /// Its display title.
    pub title: String,
    /// Its description.
    pub description: String,
    /// Its manifest's tags.
    pub tags: Vec<String>,
    /// The names of its arguments (its input schema's properties).
    pub arguments: Vec<String>,
}

impl Entry {
    /// The document the entry is ranked as (see the module docs).
    fn document(&self) -> String {
        let tags = self.tags.join(" ");
        let arguments = self.arguments.join(" ");
        let n = &self.name;
        let t = &self.title;
        let d = &self.description;
        format!("{n} {n} {n} {t} {t} {tags} {tags} {d} {arguments}")
    }
}

/// One tool found, with its score (higher ranks first; only comparable
/// within one answer).
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The tool's name.
    pub name: String,
    /// Its BM25 score for the query.
    pub score: f32,
}

/// The tools of one caller, ready to rank.
pub struct Index {
    embedder: Embedder<u32, Words>,
    scorer: Scorer<usize, u32>,
    names: Vec<String>,
}

impl Index {
    /// An index of `entries`.
    pub fn new(entries: &[Entry]) -> Self {
        let documents: Vec<String> = entries.iter().map(Entry::document).collect();
        let corpus: Vec<&str> = documents.iter().map(String::as_str).collect();
        let embedder = EmbedderBuilder::<u32, Words>::with_tokenizer_and_fit_to_corpus(
            Words::default(),
            &corpus,
        )
        .build();
        let mut scorer = Scorer::new();
        for (i, doc) in corpus.iter().enumerate() {
            scorer.upsert(&i, embedder.embed(doc));
        }
        Index {
            embedder,
            scorer,
            names: entries.iter().map(|e| e.name.clone()).collect(),
        }
    }

    /// The tools `query` matches, best first (ties by name), at most
    /// `limit`. A query of only common words matches nothing.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let query = self.embedder.embed(query);
        let mut hits: Vec<Hit> = (self.scorer.matches(&query).into_iter())
            .filter(|m| m.score > 0.0)
            .map(|m| Hit {
                name: self.names[m.id].clone(),
                score: m.score,
            })
            .collect();
        hits.sort_by(|a, b| {
            (b.score.partial_cmp(&a.score))
                .unwrap_or(Ordering::Equal)
                .then_with(|| a.name.cmp(&b.name))
        });
        hits.truncate(limit);
        hits
    }

    /// How many tools it holds.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, description: &str, tags: &[&str]) -> Entry {
        Entry {
            name: name.into(),
            title: String::new(),
            description: description.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            arguments: Vec::new(),
        }
    }

    fn index() -> Index {
        Index::new(&[
            entry(
                "create_invoice",
                "Creates an invoice for a customer.",
                &["billing"],
            ),
            entry(
                "list_invoices",
                "Lists a customer's invoices.",
                &["billing"],
            ),
            entry(
                "open_ticket",
                "Opens a support ticket.",
                &["helpdesk", "issue"],
            ),
            entry("greet", "Greets someone by name.", &[]),
        ])
    }

    #[test]
    fn the_best_match_ranks_first_and_tags_find_synonyms() {
        let i = index();
        let names =
            |q: &str| -> Vec<String> { i.search(q, 3).into_iter().map(|h| h.name).collect() };
        assert_eq!(names("make a new invoice")[0], "create_invoice");
        assert_eq!(names("report an issue")[0], "open_ticket");
        assert_eq!(names("say hello to Ada"), Vec::<String>::new());
        assert_eq!(names("greeting")[0], "greet");
    }

    #[test]
    fn ties_rank_by_name_and_the_limit_caps() {
        let i = Index::new(&[
            entry("b_tool", "same words", &[]),
            entry("a_tool", "same words", &[]),
        ]);
        let hits = i.search("same words", 5);
        assert_eq!(
            hits.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(),
            ["a_tool", "b_tool"]
        );
        assert_eq!(i.search("same words", 1).len(), 1);
        assert!(
            i.search("of the", 5).is_empty(),
            "stop words alone match nothing"
        );
    }
}
