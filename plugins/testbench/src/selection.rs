//! The pure part of running tests: which tests can run in an environment,
//! the projects they span, the order they are queued in, the questions the
//! resolver asks about them, and the shape of the answers. No host calls:
//! all of it is unit-tested natively.
//!
//! A resolved thing's name is the resolver's ([`Resolved`]); the backend is
//! asked only for what the resolver does not say (scopes, tags, which tests
//! carry a tag).

use toolhost_sdk::backend;
use toolhost_sdk::prelude::*;

use crate::api::{EnvironmentRow, TestRow};
use crate::kind::TestKind;

/// `run_by_tag`'s question for its `environment` (the contract's words).
pub const BY_TAG_ENVIRONMENT_QUESTION: &str =
    "Which environment do you want to run these tests in? Available: {names}.";

/// The question for the `environment` of a single run.
pub const ONE_ENVIRONMENT_QUESTION: &str =
    "Which environment do you want to run this in? Available: {names}.";

/// `run_by_tag`'s question for its `project` (the contract's words):
/// `Tag(s) ['smoke'] match tests across multiple projects: {names}. …`.
pub fn project_question(tags: &[String]) -> String {
    format!(
        "Tag(s) {} match tests across multiple projects: {{names}}. Which project do you want to run in?",
        tags_repr(tags)
    )
}

/// `tags` as Python's `repr` of a list of strings: `['smoke', 'fast']`.
pub fn tags_repr(tags: &[String]) -> String {
    let items: Vec<String> = tags.iter().map(|t| py_str_repr(t)).collect();
    format!("[{}]", items.join(", "))
}

/// Python's `repr` of a string: single quotes unless the text holds a
/// single quote and no double quote; backslash, the quote, `\n`, `\r`, `\t`
/// and other control or non-space whitespace characters escaped. (Python
/// also escapes format and unassigned characters; tags do not hold them.)
fn py_str_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() || (c.is_whitespace() && c != ' ') => {
                let escaped = match u32::from(c) {
                    n @ 0..=0xff => format!("\\x{n:02x}"),
                    n @ 0x100..=0xffff => format!("\\u{n:04x}"),
                    n => format!("\\U{n:08x}"),
                };
                out.push_str(&escaped);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// The `tag=` query value: each tag escaped, joined by `,` (any-of).
pub fn tag_query(tags: &[String]) -> String {
    let escaped: Vec<String> = tags.iter().map(|t| backend::escape(t)).collect();
    escaped.join(",")
}

/// A runnable test (or pipeline), as the run tools handle it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Test {
    /// What kind of execution runs it.
    pub kind: TestKind,
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// The project it belongs to.
    pub project_id: i64,
}

impl Test {
    /// The test a backend row of `kind` describes.
    pub fn new(kind: TestKind, row: TestRow) -> Self {
        Test {
            kind,
            id: row.id,
            name: row.name,
            project_id: row.project_id,
        }
    }

    /// The test of `kind` the resolver answered, in project `project_id`.
    pub fn resolved(kind: TestKind, test: Resolved, project_id: i64) -> Self {
        Test {
            kind,
            id: test.id,
            name: test.name,
            project_id,
        }
    }
}

/// An environment as the run tools handle it: the resolver's id and name,
/// the backend's scope and tags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// Its id.
    pub id: i64,
    /// Its name, as the caller's tenant sees it.
    pub name: String,
    /// The project it is scoped to; `None`: shared by the instance.
    pub project_id: Option<i64>,
    /// Its tags (`prod` raises a run's risk).
    pub tags: Vec<String>,
}

impl Environment {
    /// The environment the resolver answered, scoped and tagged as its
    /// backend `row` says.
    pub fn new(resolved: Resolved, row: EnvironmentRow) -> Self {
        Environment {
            id: resolved.id,
            name: resolved.name,
            project_id: row.project_id,
            tags: row.tags,
        }
    }
}

/// Whether a test of `test_project` can run in an environment scoped to
/// `environment_project`: a shared environment (`None`) runs everything,
/// a scoped one only its own project's tests.
pub fn runnable_in(environment_project: Option<i64>, test_project: i64) -> bool {
    environment_project.is_none_or(|p| p == test_project)
}

/// Tests split by whether they can run in an environment, each part in
/// queueing order (API scenarios by id, then UI tests by id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Those that can run there.
    pub runnable: Vec<Test>,
    /// Those scoped out: another project's environment.
    pub skipped: Vec<Test>,
}

/// Splits `tests` for an environment scoped to `environment_project`.
pub fn split(tests: Vec<Test>, environment_project: Option<i64>) -> Split {
    let (mut runnable, mut skipped): (Vec<Test>, Vec<Test>) =
        (tests.into_iter()).partition(|t| runnable_in(environment_project, t.project_id));
    runnable.sort_by_key(|t| (t.kind, t.id));
    skipped.sort_by_key(|t| (t.kind, t.id));
    Split { runnable, skipped }
}

/// The distinct projects of `tests`, ascending: the `within` of the
/// project question.
pub fn project_ids(tests: &[Test]) -> Vec<i64> {
    let mut ids: Vec<i64> = tests.iter().map(|t| t.project_id).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The tests of `project`, order kept.
pub fn of_project(tests: Vec<Test>, project: i64) -> Vec<Test> {
    tests
        .into_iter()
        .filter(|t| t.project_id == project)
        .collect()
}

/// The risk of running in an environment: high in one tagged `prod`.
pub fn risk(environment_tags: &[String]) -> Risk {
    if environment_tags
        .iter()
        .any(|t| t.eq_ignore_ascii_case("prod"))
    {
        Risk::High
    } else {
        Risk::Medium
    }
}

/// The plan target naming an environment, with its tags.
pub fn environment_target(env: &Environment) -> Target {
    (env.tags.iter()).fold(
        Target::new("environment", env.id.to_string(), &env.name),
        |t, tag| t.tag(tag),
    )
}

/// The plan target naming a test.
pub fn test_target(test: &Test) -> Target {
    Target::new(test.kind.entity(), test.id.to_string(), &test.name)
}

/// One execution queued (or, in a dry run, that would be).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Queued {
    /// `api_scenario`, `ui_test` or `pipeline`.
    pub kind: TestKind,
    /// The test's id.
    pub id: i64,
    /// The test's name.
    pub name: String,
    /// The execution's id, for `get_execution_status`; null in a dry run.
    #[serde(rename = "executionId")]
    pub execution_id: Option<String>,
    /// `QUEUED` as the backend said, or `DRY_RUN`.
    pub status: String,
}

impl Queued {
    /// `test`, queued as execution `execution_id` with `status`.
    pub fn new(test: &Test, execution_id: String, status: String) -> Self {
        Queued {
            kind: test.kind,
            id: test.id,
            name: test.name.clone(),
            execution_id: Some(execution_id),
            status,
        }
    }

    /// `test`, which a dry run would queue.
    pub fn dry_run(test: &Test) -> Self {
        Queued {
            kind: test.kind,
            id: test.id,
            name: test.name.clone(),
            execution_id: None,
            status: "DRY_RUN".into(),
        }
    }
}

/// A tagged test that cannot run in the chosen environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Skipped {
    /// `api_scenario` or `ui_test`.
    pub kind: TestKind,
    /// The test's id.
    pub id: i64,
    /// The test's name.
    pub name: String,
    /// Why it did not run.
    pub reason: String,
}

impl Skipped {
    /// `test`, scoped out of environment `environment`.
    pub fn new(test: &Test, environment: &str) -> Self {
        Skipped {
            kind: test.kind,
            id: test.id,
            name: test.name.clone(),
            reason: format!("environment {environment} is scoped to another project"),
        }
    }
}

/// The answer of `run_by_tag`, keys in the contract's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ByTagRun {
    /// Whether nothing was queued.
    pub dry_run: bool,
    /// The tags, as given.
    pub tags: Vec<String>,
    /// The environment's name.
    pub environment: String,
    /// The project's name.
    pub project: String,
    /// What was queued (or would be), API scenarios first, each by id.
    pub queued: Vec<Queued>,
    /// Tagged tests the environment cannot run.
    pub skipped: Vec<Skipped>,
}

/// The answer of a single run (`execute_scenario`, `run_ui_test`, `run_pipeline`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct OneRun {
    /// The environment's name.
    pub environment: String,
    /// The name of the project the test belongs to.
    pub project: String,
    /// The one execution queued.
    pub queued: Vec<Queued>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| (*s).to_owned()).collect()
    }

    fn test(kind: TestKind, id: i64, project_id: i64) -> Test {
        Test {
            kind,
            id,
            name: format!("t{id}"),
            project_id,
        }
    }

    #[test]
    fn tags_print_as_pythons_repr_of_a_list() {
        let cases: &[(&[&str], &str)] = &[
            (&["smoke"], "['smoke']"),
            (&["smoke", "fast"], "['smoke', 'fast']"),
            (&[], "[]"),
            (&["it's"], r#"["it's"]"#),
            (&[r#"it's "x""#], r#"['it\'s "x"']"#),
            (&[r"a\b"], r"['a\\b']"),
            (&["a\nb\tc\u{1}"], r"['a\nb\tc\x01']"),
            (&["café"], "['café']"),
        ];
        for (given, want) in cases {
            assert_eq!(tags_repr(&tags(given)), *want, "{given:?}");
        }
    }

    #[test]
    fn the_project_question_is_the_contracts_sentence() {
        assert_eq!(
            project_question(&tags(&["smoke"])),
            "Tag(s) ['smoke'] match tests across multiple projects: {names}. Which project do you want to run in?"
        );
    }

    #[test]
    fn the_tag_query_escapes_each_tag_and_joins_with_commas() {
        assert_eq!(tag_query(&tags(&["smoke"])), "smoke");
        assert_eq!(tag_query(&tags(&["smoke", "a b&c"])), "smoke,a%20b%26c");
    }

    #[test]
    fn a_shared_environment_runs_every_test_and_a_scoped_one_only_its_projects() {
        let all = vec![
            test(TestKind::UiTest, 9, 1),
            test(TestKind::ApiScenario, 205, 1),
            test(TestKind::ApiScenario, 301, 2),
            test(TestKind::ApiScenario, 204, 1),
        ];
        let shared = split(all.clone(), None);
        let order: Vec<i64> = shared.runnable.iter().map(|t| t.id).collect();
        assert_eq!((order, shared.skipped.len()), (vec![204, 205, 301, 9], 0));
        let scoped = split(all, Some(2));
        assert_eq!(scoped.runnable, vec![test(TestKind::ApiScenario, 301, 2)]);
        let skipped: Vec<i64> = scoped.skipped.iter().map(|t| t.id).collect();
        assert_eq!(skipped, [204, 205, 9]);
    }

    #[test]
    fn project_ids_are_distinct_and_ascending() {
        let t = [
            test(TestKind::ApiScenario, 1, 2),
            test(TestKind::ApiScenario, 2, 1),
            test(TestKind::UiTest, 3, 2),
        ];
        assert_eq!(project_ids(&t), [1, 2]);
        assert!(project_ids(&[]).is_empty());
    }

    #[test]
    fn of_project_keeps_the_projects_tests_in_order() {
        let t = vec![
            test(TestKind::ApiScenario, 204, 1),
            test(TestKind::ApiScenario, 301, 2),
            test(TestKind::UiTest, 7, 1),
        ];
        let ids: Vec<i64> = of_project(t, 1).iter().map(|t| t.id).collect();
        assert_eq!(ids, [204, 7]);
    }

    #[test]
    fn prod_environments_are_high_risk_and_others_medium() {
        assert_eq!(risk(&tags(&["eu", "prod"])), Risk::High);
        assert_eq!(risk(&tags(&["staging"])), Risk::Medium);
        assert_eq!(risk(&[]), Risk::Medium);
    }

    #[test]
    fn a_run_by_tag_answer_serializes_in_the_contracts_shape_and_key_order() {
        let login = Test {
            kind: TestKind::ApiScenario,
            id: 204,
            name: "Login flow".into(),
            project_id: 1,
        };
        let answer = ByTagRun {
            dry_run: false,
            tags: tags(&["smoke"]),
            environment: "staging".into(),
            project: "payments".into(),
            queued: vec![Queued::new(&login, "ex-1".into(), "QUEUED".into())],
            skipped: Vec::new(),
        };
        assert_eq!(
            serde_json::to_string(&answer).expect("JSON"),
            r#"{"dry_run":false,"tags":["smoke"],"environment":"staging","project":"payments","queued":[{"kind":"api_scenario","id":204,"name":"Login flow","executionId":"ex-1","status":"QUEUED"}],"skipped":[]}"#
        );
    }

    #[test]
    fn a_dry_run_entry_has_a_null_execution_id_and_skips_carry_a_reason() {
        let t = test(TestKind::UiTest, 9, 2);
        assert_eq!(
            serde_json::to_value(Queued::dry_run(&t)).expect("JSON"),
            serde_json::json!({"kind": "ui_test", "id": 9, "name": "t9", "executionId": null, "status": "DRY_RUN"})
        );
        assert_eq!(
            serde_json::to_value(Skipped::new(&t, "staging")).expect("JSON"),
            serde_json::json!({"kind": "ui_test", "id": 9, "name": "t9",
                "reason": "environment staging is scoped to another project"})
        );
    }

    #[test]
    fn an_environment_takes_its_name_from_the_resolver_and_its_scope_and_tags_from_the_backend() {
        let row = EnvironmentRow {
            id: 13,
            name: "production (backend)".into(),
            project_id: Some(2),
            tenant: "demo".into(),
            tags: tags(&["prod"]),
        };
        let resolved = Resolved {
            id: 13,
            name: "prod".into(),
        };
        let env = Environment::new(resolved, row);
        assert_eq!((env.name.as_str(), env.project_id), ("prod", Some(2)));
        let t = environment_target(&env);
        assert_eq!(
            (t.kind.as_str(), t.id.as_str(), t.name.as_str(), t.tags),
            ("environment", "13", "prod", tags(&["prod"]))
        );
    }

    #[test]
    fn a_resolved_test_keeps_the_resolvers_name_and_the_given_project() {
        let resolved = Resolved {
            id: 204,
            name: "Login flow".into(),
        };
        let t = Test::resolved(TestKind::ApiScenario, resolved, 1);
        assert_eq!(
            t,
            Test {
                kind: TestKind::ApiScenario,
                id: 204,
                name: "Login flow".into(),
                project_id: 1,
            }
        );
        assert_eq!(test_target(&t).name, "Login flow");
    }
}
