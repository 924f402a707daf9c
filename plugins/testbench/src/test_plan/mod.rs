//! Test plans, the pure part of the `test_plan` authoring kind: the shapes
//! of a project's current tests, of a proposal and of its normalized form
//! (the arguments of `apply_test_plan`), the rules a proposal must meet,
//! and what applying it changes. No host calls: all of it is unit-tested
//! natively.
//!
//! A proposal is `{"environment": <name or id>, "tests": [{"name", "tags",
//! "steps", "start_url"}]}` (`steps` and `start_url` optional). The rules,
//! each reported as a problem at its JSON pointer:
//!
//! - no fields but those; 1 to [`MAX_TESTS`] tests;
//! - a name is not blank, at most [`MAX_NAME_CHARS`] characters, and unique
//!   in the plan once trimmed; a name shared by several current tests is
//!   refused (the plan could not say which one it replaces);
//! - at most [`MAX_TAGS`] tags, each 1 to [`MAX_TAG_CHARS`] of `[a-z0-9_-]`;
//! - at most [`MAX_STEPS`] steps, each 1 to [`MAX_STEP_CHARS`] characters:
//!   words a person reads, which may name a URL, an API path or a commit;
//! - `start_url` a string of at most [`MAX_URL_CHARS`] characters. It is
//!   the plan's one location: the promoting tool's schema declares it one
//!   (`format: uri` and `x-toolhost-authority: location`), so the host
//!   takes it only as a public `http(s)` address.
//!
//! Normalizing trims names, sorts and dedupes tags, and links each test to
//! the current test of the same name (`replaces`). A plan never removes
//! tests: a current test it does not name stays as it is.

use toolhost_sdk::prelude::*;

mod diff;
mod rules;

pub use diff::diff;
pub use rules::{check, validate};

/// Most tests one plan may hold: a person reads it before it is applied
/// (and the backend drafts at most this many in one request).
pub const MAX_TESTS: usize = 200;
/// Longest test name, in characters (the backend's limit).
pub const MAX_NAME_CHARS: usize = 200;
/// Most tags a planned test may carry: tags are filter words, not data.
pub const MAX_TAGS: usize = 16;
/// Longest tag, in characters (the backend's limit).
pub const MAX_TAG_CHARS: usize = 50;
/// Most steps a planned test may describe.
pub const MAX_STEPS: usize = 50;
/// Longest step, in characters.
pub const MAX_STEP_CHARS: usize = 500;
/// Longest `start_url`, in characters.
pub const MAX_URL_CHARS: usize = 2048;
/// Most problems one validation reports; past it, one more says so. A
/// person fixes the first ones first, and the host bounds the list.
pub const MAX_PROBLEMS: usize = 100;

/// The project a current state is of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectRef {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
}

/// A test of the project as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurrentTest {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its tags, as the backend has them.
    pub tags: Vec<String>,
}

/// The current state of a project's test plan: its tests, by id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurrentPlan {
    /// The project.
    pub project: ProjectRef,
    /// Its API scenarios and UI tests, by id.
    pub tests: Vec<CurrentTest>,
}

/// Arguments of `apply_test_plan`: a normalized test plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyTestPlanArgs {
    /// The project the tests are drafted in, by name or id. Required: when
    /// omitted, ambiguous or unknown, the answer is a question.
    #[serde(default)]
    pub project: Option<NameOrId>,
    /// The environment the plan is for, by name or id (the project's own
    /// or a shared one). Required, as `project`.
    #[serde(default)]
    pub environment: Option<NameOrId>,
    /// The tests to draft, 1 to 200, names unique.
    pub tests: Vec<PlannedTest>,
}

/// One test of a normalized plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlannedTest {
    /// Its name.
    pub name: String,
    /// Its tags, each 1 to 50 of `[a-z0-9_-]`, at most 16.
    #[serde(default)]
    pub tags: Vec<String>,
    /// The id of the project's test this one replaces (same name), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<i64>,
    /// What the test does, step by step, in words (at most 50, each up to
    /// 500 characters): data, kept as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<String>,
    /// Where the test starts: a public http(s) address (a location the
    /// host checks when a proposal names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(url, extend("x-toolhost-authority" = "location"))]
    pub start_url: Option<String>,
}

/// The current tests named `name` (trimmed on both sides).
fn named<'a>(current: &'a CurrentPlan, name: &str) -> Vec<&'a CurrentTest> {
    (current.tests.iter())
        .filter(|t| t.name.trim() == name)
        .collect()
}

/// The current state the tests of `rules` and `diff` check against:
/// project 1 with five tests, two of them namesakes once trimmed.
#[cfg(test)]
fn sample() -> CurrentPlan {
    let test = |id, name: &str, tags: &[&str]| CurrentTest {
        id,
        name: name.into(),
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
    };
    CurrentPlan {
        project: ProjectRef {
            id: 1,
            name: "payments".into(),
        },
        tests: vec![
            test(204, "Login flow", &["smoke"]),
            test(205, "Cart", &["smoke"]),
            test(206, "Refund", &["regression"]),
            test(208, "Twin", &[]),
            test(209, "Twin ", &[]),
        ],
    }
}
