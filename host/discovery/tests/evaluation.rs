//! The evaluation of `find_tools`' ranking over catalog-300 (the 300
//! tools of `plugins/catalog-300/tools.json`) with the fixed queries of
//! `evaluation.toml`: the right tool must be in the top 3 for at least
//! 90% of them. Each miss is printed with what ranked instead, and the
//! share is reported (`cargo test -p toolhost-discovery --test evaluation
//! -- --nocapture`), so a change to the tokenizer or the weights is judged
//! by the same set.

use std::path::Path;
use std::time::Instant;

use serde::Deserialize;
use toolhost_discovery::{Entry, Index};

/// The share of queries whose tool must rank in the top 3.
const REQUIRED: f64 = 0.9;

#[derive(Deserialize)]
struct Row {
    name: String,
    title: String,
    description: String,
    tags: Vec<String>,
    arguments: serde_json::Map<String, serde_json::Value>,
}

#[derive(Deserialize)]
struct Set {
    query: Vec<Query>,
}

#[derive(Deserialize)]
struct Query {
    text: String,
    tool: String,
}

fn catalog() -> Vec<Entry> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugins/catalog-300/tools.json");
    let text = std::fs::read_to_string(&path).expect("plugins/catalog-300/tools.json");
    let rows: Vec<Row> = serde_json::from_str(&text).expect("the generator's JSON");
    rows.into_iter()
        .map(|r| Entry {
            name: r.name,
            title: r.title,
            description: r.description,
            tags: r.tags,
            arguments: r.arguments.keys().cloned().collect(),
        })
        .collect()
}

fn queries() -> Vec<Query> {
    let text = include_str!("evaluation.toml");
    toml::from_str::<Set>(text).expect("evaluation.toml").query
}

#[test]
fn the_right_tool_is_in_the_top_3_for_at_least_90_percent_of_the_evaluation_set() {
    let catalog = catalog();
    assert_eq!(catalog.len(), 300);
    let index = Index::new(&catalog);
    let queries = queries();
    assert!(queries.len() >= 50, "at least 50 queries");
    for q in &queries {
        assert!(
            catalog.iter().any(|e| e.name == q.tool),
            "{} is no tool",
            q.tool
        );
    }
    let mut found = 0;
    for q in &queries {
        let top: Vec<String> = index
            .search(&q.text, 3)
            .into_iter()
            .map(|h| h.name)
            .collect();
        if top.contains(&q.tool) {
            found += 1;
        } else {
            println!("miss: {:?} wants {}, ranked {top:?}", q.text, q.tool);
        }
    }
    let share = found as f64 / queries.len() as f64;
    println!(
        "find_tools evaluation: {found} of {} queries ({:.1}%) have their tool in the top 3",
        queries.len(),
        share * 100.0
    );
    assert!(share >= REQUIRED, "{share:.3} < {REQUIRED}");
}

#[test]
fn a_search_over_300_tools_reports_its_cost() {
    let catalog = catalog();
    let started = Instant::now();
    let index = Index::new(&catalog);
    let built = started.elapsed();
    let queries = queries();
    let started = Instant::now();
    let rounds = 20;
    for _ in 0..rounds {
        for q in &queries {
            std::hint::black_box(index.search(&q.text, 5));
        }
    }
    let each = started.elapsed() / (rounds * queries.len() as u32);
    println!("index of 300 tools built in {built:?}; one search {each:?}");
}
