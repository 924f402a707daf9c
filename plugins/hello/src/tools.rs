//! The reference plugin's tools, one builder and one function each. The
//! `hello-next`, `hello-rename` and `hello-injected` test fixtures (later
//! revisions of `hello` for the catalog's tests) list them too, through
//! `#[path]`.

use std::collections::HashMap;

use toolhost_sdk::prelude::*;

/// `greet`.
pub(crate) fn greet_tool() -> Tool {
    Tool::new(
        "greet",
        "Greets someone by name, in English, French or German.",
        greet,
    )
    .title("Greet")
    .permission("hello", "read")
    .read_only()
    .idempotent()
}

/// `add`.
pub(crate) fn add_tool() -> Tool {
    Tool::new(
        "add",
        "Adds a list of numbers; also returns their count and mean.",
        add,
    )
    .title("Add numbers")
    .permission("hello", "read")
    .read_only()
    .idempotent()
}

/// `word_stats`, under `name` (a later revision renames it).
pub(crate) fn word_stats_tool(name: &str) -> Tool {
    Tool::new(
        name,
        "Counts the words, characters and lines of a text.",
        word_stats,
    )
    .title("Word statistics")
    .permission("hello", "read")
    .read_only()
    .idempotent()
}

/// Arguments of `greet`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GreetArgs {
    /// Who to greet.
    pub(crate) name: String,
    /// The language of the greeting (default English).
    #[serde(default)]
    pub(crate) language: Language,
}

/// A language `greet` speaks.
#[derive(Debug, Default, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Language {
    #[default]
    En,
    Fr,
    De,
}

/// The answer of `greet`.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
pub(crate) struct Greeting {
    /// The greeting, ready to show.
    message: String,
}

pub(crate) fn greet(_ctx: &Ctx, args: GreetArgs) -> Result<Output<Greeting>, ToolError> {
    let name = args.name.trim();
    if name.is_empty() {
        return Err(ToolError::InvalidArguments("name must not be blank".into()));
    }
    let message = match args.language {
        Language::En => format!("Hello, {name}!"),
        Language::Fr => format!("Bonjour, {name} !"),
        Language::De => format!("Hallo, {name}!"),
    };
    Ok(Output::new(Greeting {
        message: message.clone(),
    })
    .with_text(message))
}

/// Arguments of `add`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddArgs {
    /// The numbers to add (may be empty).
    numbers: Vec<f64>,
}

/// The answer of `add`.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
struct Sum {
    /// The sum of the numbers (0 for none).
    sum: f64,
    /// How many numbers there were.
    count: usize,
    /// The arithmetic mean; absent for no numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    mean: Option<f64>,
}

fn add(_ctx: &Ctx, args: AddArgs) -> Result<Sum, ToolError> {
    let sum: f64 = args.numbers.iter().sum();
    if !sum.is_finite() {
        return Err(ToolError::Failed(
            "the sum does not fit a 64-bit float".into(),
        ));
    }
    let count = args.numbers.len();
    let mean = (count > 0).then(|| sum / count as f64);
    Ok(Sum { sum, count, mean })
}

/// Arguments of `word_stats`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WordStatsArgs {
    /// The text to analyse.
    text: String,
    /// How many of the most frequent words to return (default 5, at most 100).
    #[serde(default = "default_top")]
    #[schemars(range(max = 100))]
    top: usize,
}

fn default_top() -> usize {
    5
}

/// The answer of `word_stats`.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
struct WordStats {
    /// Whitespace-separated words.
    words: usize,
    /// Unicode scalar values, whitespace included.
    characters: usize,
    /// Lines (a trailing newline does not start another).
    lines: usize,
    /// The most frequent words, lower-cased, most frequent first (ties alphabetical).
    top_words: Vec<WordCount>,
}

/// One word and how often it occurs.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
struct WordCount {
    word: String,
    count: usize,
}

fn word_stats(_ctx: &Ctx, args: WordStatsArgs) -> Result<WordStats, ToolError> {
    if args.top > 100 {
        return Err(ToolError::InvalidArguments(format!(
            "top is {}, at most 100",
            args.top
        )));
    }
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut words = 0;
    for raw in args.text.split_whitespace() {
        words += 1;
        let word = raw
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        if !word.is_empty() {
            *counts.entry(word).or_default() += 1;
        }
    }
    let mut top_words: Vec<WordCount> = counts
        .into_iter()
        .map(|(word, count)| WordCount { word, count })
        .collect();
    top_words.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.word.cmp(&b.word)));
    top_words.truncate(args.top);
    Ok(WordStats {
        words,
        characters: args.text.chars().count(),
        lines: args.text.lines().count(),
        top_words,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx {
        Ctx::new("call-1", "tenant-a", "alice")
    }

    #[test]
    fn greet_speaks_the_requested_language() {
        let args = GreetArgs {
            name: "Ada".into(),
            language: Language::Fr,
        };
        let out = greet(&ctx(), args).expect("greets");
        assert_eq!(
            out,
            Output::new(Greeting {
                message: "Bonjour, Ada !".into()
            })
            .with_text("Bonjour, Ada !")
        );
    }

    #[test]
    fn add_returns_sum_count_and_mean_and_no_mean_for_nothing() {
        let sum = add(
            &ctx(),
            AddArgs {
                numbers: vec![1.0, 2.0, 4.5],
            },
        )
        .expect("adds");
        assert_eq!(
            sum,
            Sum {
                sum: 7.5,
                count: 3,
                mean: Some(2.5)
            }
        );
        let none = add(&ctx(), AddArgs { numbers: vec![] }).expect("adds nothing");
        assert_eq!(
            none,
            Sum {
                sum: 0.0,
                count: 0,
                mean: None
            }
        );
    }

    #[test]
    fn word_stats_counts_and_ranks_words_case_and_punctuation_blind() {
        let args = WordStatsArgs {
            text: "The cat. the DOG!\nA cat\n".into(),
            top: 2,
        };
        let stats = word_stats(&ctx(), args).expect("counts");
        assert_eq!((stats.words, stats.characters, stats.lines), (6, 24, 2));
        let top: Vec<_> = stats
            .top_words
            .iter()
            .map(|w| (w.word.as_str(), w.count))
            .collect();
        assert_eq!(top, [("cat", 2), ("the", 2)]);
    }
}
