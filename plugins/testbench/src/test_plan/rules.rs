//! The rules a test-plan proposal must meet, and its normalization (see
//! the parent module for the rules themselves).

use serde_json::{Map, Value};
use toolhost_sdk::authoring::Problem;
use toolhost_sdk::prelude::*;

use super::{
    ApplyTestPlanArgs, CurrentPlan, MAX_NAME_CHARS, MAX_PROBLEMS, MAX_STEP_CHARS, MAX_STEPS,
    MAX_TAG_CHARS, MAX_TAGS, MAX_TESTS, MAX_URL_CHARS, PlannedTest, named,
};

/// Problems, at most [`MAX_PROBLEMS`] of them and then one saying so.
#[derive(Debug, Default)]
struct Problems {
    found: Vec<Problem>,
    dropped: usize,
}

impl Problems {
    fn add(&mut self, path: impl Into<String>, message: impl Into<String>) {
        match self.found.len() < MAX_PROBLEMS {
            true => self.found.push(Problem::new(path, message)),
            false => self.dropped += 1,
        }
    }

    fn into_result<T>(mut self, ok: impl FnOnce() -> T) -> Result<T, Vec<Problem>> {
        if self.dropped > 0 {
            let more = format!("{} more problems not listed: fix these first", self.dropped);
            self.found.push(Problem::whole(more));
        }
        match self.found.is_empty() {
            true => Ok(ok()),
            false => Err(self.found),
        }
    }
}

/// What is wrong with a name (already trimmed), if anything.
fn name_problem(name: &str) -> Option<String> {
    match name.chars().count() {
        0 => Some("must not be blank".into()),
        n if n > MAX_NAME_CHARS => Some(format!("is longer than {MAX_NAME_CHARS} characters")),
        _ => None,
    }
}

/// What is wrong with a tag, if anything.
fn tag_problem(tag: &str) -> Option<String> {
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-';
    let fits = (1..=MAX_TAG_CHARS).contains(&tag.len()) && tag.chars().all(allowed);
    (!fits).then(|| format!("must be 1 to {MAX_TAG_CHARS} of [a-z0-9_-]"))
}

/// What is wrong with a step, if anything.
fn step_problem(step: &str) -> Option<String> {
    let n = step.trim().chars().count();
    (n == 0 || n > MAX_STEP_CHARS).then(|| format!("must be 1 to {MAX_STEP_CHARS} characters"))
}

/// What is wrong with a start URL's length, if anything (the host judges
/// where it points).
fn url_problem(url: &str) -> Option<String> {
    let n = url.chars().count();
    (n == 0 || n > MAX_URL_CHARS).then(|| format!("must be 1 to {MAX_URL_CHARS} characters"))
}

/// What is wrong with the number of tests, if anything.
fn count_problem(n: usize) -> Option<String> {
    match n {
        0 => Some("must hold at least one test".into()),
        n if n > MAX_TESTS => Some(format!("holds {n} tests, more than {MAX_TESTS}")),
        _ => None,
    }
}

/// `proposal` checked against `current`: the arguments of
/// `apply_test_plan`, or every problem (at most [`MAX_PROBLEMS`] and one
/// more), each at its JSON pointer.
pub fn validate(
    current: &CurrentPlan,
    proposal: &Value,
) -> Result<ApplyTestPlanArgs, Vec<Problem>> {
    let Some(fields) = proposal.as_object() else {
        let whole = "a test plan is a JSON object {environment, tests}";
        return Err(vec![Problem::whole(whole)]);
    };
    let mut problems = Problems::default();
    unknown_fields(&mut problems, "", fields, &["environment", "tests"]);
    let environment = environment(&mut problems, fields.get("environment"));
    let tests = match fields.get("tests") {
        None => {
            problems.add("/tests", "is required: 1 to 200 tests {name, tags}");
            Vec::new()
        }
        Some(Value::Array(items)) => {
            if let Some(m) = count_problem(items.len()) {
                problems.add("/tests", m);
            }
            planned_tests(&mut problems, current, items)
        }
        Some(_) => {
            problems.add("/tests", "must be an array of tests {name, tags}");
            Vec::new()
        }
    };
    problems.into_result(|| ApplyTestPlanArgs {
        project: Some(NameOrId::Id(current.project.id)),
        environment,
        tests,
    })
}

fn unknown_fields(problems: &mut Problems, at: &str, fields: &Map<String, Value>, known: &[&str]) {
    for key in fields.keys().filter(|k| !known.contains(&k.as_str())) {
        let path = format!("{at}/{}", toolhost_sdk::authoring::escape(key));
        problems.add(path, format!("is not a field: the fields are {known:?}"));
    }
}

fn environment(problems: &mut Problems, value: Option<&Value>) -> Option<NameOrId> {
    let at = "/environment";
    match value {
        None => problems.add(at, "is required: the environment's name or id"),
        Some(Value::String(s)) if s.trim().is_empty() => problems.add(at, "must not be blank"),
        Some(Value::String(s)) => return Some(NameOrId::Name(s.clone())),
        Some(v) => match v.as_i64() {
            Some(id) => return Some(NameOrId::Id(id)),
            None => problems.add(at, "must be a name (a string) or an id (an integer)"),
        },
    }
    None
}

/// Each item checked and normalized; the problems of bad ones recorded.
fn planned_tests(
    problems: &mut Problems,
    current: &CurrentPlan,
    items: &[Value],
) -> Vec<PlannedTest> {
    let mut seen: Vec<(String, usize)> = Vec::new();
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("/tests/{i}");
        let Some(fields) = item.as_object() else {
            problems.add(at, "a test is a JSON object {name, tags}");
            continue;
        };
        unknown_fields(
            problems,
            &at,
            fields,
            &["name", "tags", "steps", "start_url"],
        );
        let name = test_name(problems, &at, fields.get("name"), current, &seen);
        let tags = test_tags(problems, &at, fields.get("tags"));
        let steps = test_steps(problems, &at, fields.get("steps"));
        let start_url = start_url(problems, &at, fields.get("start_url"));
        if let Some(name) = name {
            seen.push((name.clone(), i));
            let replaces = named(current, &name).first().map(|t| t.id);
            out.push(PlannedTest {
                name,
                tags,
                replaces,
                steps,
                start_url,
            });
        }
    }
    out
}

/// The trimmed name, if it is one the plan can hold; else its problem.
fn test_name(
    problems: &mut Problems,
    at: &str,
    value: Option<&Value>,
    current: &CurrentPlan,
    seen: &[(String, usize)],
) -> Option<String> {
    match checked_name(value, current, seen) {
        Ok(name) => Some(name),
        Err(m) => {
            problems.add(format!("{at}/name"), m);
            None
        }
    }
}

fn checked_name(
    value: Option<&Value>,
    current: &CurrentPlan,
    seen: &[(String, usize)],
) -> Result<String, String> {
    let name = match value {
        None => return Err("is required".into()),
        Some(Value::String(s)) => s.trim(),
        Some(_) => return Err("must be a string".into()),
    };
    if let Some(m) = name_problem(name) {
        return Err(m);
    }
    if let Some((_, j)) = seen.iter().find(|(n, _)| n == name) {
        return Err(format!("repeats the name of /tests/{j}"));
    }
    let namesakes = named(current, name);
    if namesakes.len() > 1 {
        let ids: Vec<i64> = namesakes.iter().map(|t| t.id).collect();
        return Err(format!(
            "matches {} current tests ({ids:?}): rename it, a plan cannot tell which it replaces",
            ids.len()
        ));
    }
    Ok(name.to_owned())
}

/// The tags sorted and deduped; problems for bad ones.
fn test_tags(problems: &mut Problems, at: &str, value: Option<&Value>) -> Vec<String> {
    let at = format!("{at}/tags");
    let items = match value {
        None => return Vec::new(),
        Some(Value::Array(items)) => items,
        Some(_) => {
            problems.add(at, "must be an array of tags");
            return Vec::new();
        }
    };
    if items.len() > MAX_TAGS {
        problems.add(
            &at,
            format!("holds {} tags, more than {MAX_TAGS}", items.len()),
        );
    }
    let mut tags = Vec::with_capacity(items.len());
    for (k, tag) in items.iter().enumerate() {
        match tag.as_str() {
            None => problems.add(format!("{at}/{k}"), "must be a string"),
            Some(t) => match tag_problem(t) {
                Some(m) => problems.add(format!("{at}/{k}"), m),
                None => tags.push(t.to_owned()),
            },
        }
    }
    tags.sort();
    tags.dedup();
    tags
}

/// The steps, trimmed; problems for bad ones.
fn test_steps(problems: &mut Problems, at: &str, value: Option<&Value>) -> Vec<String> {
    let at = format!("{at}/steps");
    let items = match value {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(items)) => items,
        Some(_) => {
            problems.add(at, "must be an array of steps (strings)");
            return Vec::new();
        }
    };
    if items.len() > MAX_STEPS {
        let m = format!("holds {} steps, more than {MAX_STEPS}", items.len());
        problems.add(&at, m);
    }
    let mut steps = Vec::with_capacity(items.len());
    for (k, step) in items.iter().enumerate() {
        match step.as_str() {
            None => problems.add(format!("{at}/{k}"), "must be a string"),
            Some(s) => match step_problem(s) {
                Some(m) => problems.add(format!("{at}/{k}"), m),
                None => steps.push(s.trim().to_owned()),
            },
        }
    }
    steps
}

/// The start URL, trimmed, if one is given; a problem if it is not a
/// string of the right length.
fn start_url(problems: &mut Problems, at: &str, value: Option<&Value>) -> Option<String> {
    let at = format!("{at}/start_url");
    match value {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => match url_problem(s.trim()) {
            Some(m) => {
                problems.add(at, m);
                None
            }
            None => Some(s.trim().to_owned()),
        },
        Some(_) => {
            problems.add(at, "must be a string (an http or https URL)");
            None
        }
    }
}

/// The arguments' own shape, for a direct call of `apply_test_plan`: the
/// first problem with the tests, if any (the backend checks `replaces`).
pub fn check(args: &ApplyTestPlanArgs) -> Result<(), ToolError> {
    let invalid = |m: String| Err(ToolError::InvalidArguments(m));
    if let Some(m) = count_problem(args.tests.len()) {
        return invalid(format!("tests {m}"));
    }
    for (i, t) in args.tests.iter().enumerate() {
        let name = t.name.trim();
        if let Some(m) = name_problem(name) {
            return invalid(format!("tests/{i}/name {m}"));
        }
        if let Some(j) = args.tests[..i].iter().position(|u| u.name.trim() == name) {
            return invalid(format!("tests/{i}/name repeats the name of tests/{j}"));
        }
        if t.tags.len() > MAX_TAGS {
            return invalid(format!("tests/{i}/tags holds more than {MAX_TAGS} tags"));
        }
        if let Some((k, m)) =
            (t.tags.iter().enumerate()).find_map(|(k, g)| Some((k, tag_problem(g)?)))
        {
            return invalid(format!("tests/{i}/tags/{k} {m}"));
        }
        if t.steps.len() > MAX_STEPS {
            return invalid(format!("tests/{i}/steps holds more than {MAX_STEPS} steps"));
        }
        if let Some((k, m)) =
            (t.steps.iter().enumerate()).find_map(|(k, s)| Some((k, step_problem(s)?)))
        {
            return invalid(format!("tests/{i}/steps/{k} {m}"));
        }
        if let Some(m) = t.start_url.as_deref().and_then(url_problem) {
            return invalid(format!("tests/{i}/start_url {m}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::test_plan::sample as current;

    fn paths(proposal: Value) -> Vec<String> {
        match validate(&current(), &proposal) {
            Ok(args) => panic!("valid: {args:?}"),
            Err(problems) => problems.into_iter().map(|p| p.path).collect(),
        }
    }

    #[test]
    fn each_broken_rule_is_a_problem_at_its_pointer() {
        let long = "x".repeat(MAX_NAME_CHARS + 1);
        let many_tags: Vec<String> = (0..=MAX_TAGS).map(|i| format!("t{i}")).collect();
        let many_tests: Vec<Value> = (0..=MAX_TESTS)
            .map(|i| json!({"name": format!("n{i}")}))
            .collect();
        let many_steps: Vec<String> = (0..=MAX_STEPS).map(|i| format!("step {i}")).collect();
        let long_step = "s".repeat(MAX_STEP_CHARS + 1);
        let long_url = format!("https://shop.example/{}", "p".repeat(MAX_URL_CHARS));
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (json!([]), vec![""]),
            (json!({"tests": [{"name": "A"}]}), vec!["/environment"]),
            (
                json!({"environment": " ", "tests": [{"name": "A"}]}),
                vec!["/environment"],
            ),
            (
                json!({"environment": 1.5, "tests": [{"name": "A"}]}),
                vec!["/environment"],
            ),
            (json!({"environment": "dev"}), vec!["/tests"]),
            (json!({"environment": "dev", "tests": []}), vec!["/tests"]),
            (json!({"environment": "dev", "tests": {}}), vec!["/tests"]),
            (
                json!({"environment": "dev", "tests": many_tests}),
                vec!["/tests"],
            ),
            (
                json!({"environment": "dev", "tests": [{"name": "A"}], "a/b": 1}),
                vec!["/a~1b"],
            ),
            (
                json!({"environment": "dev", "tests": ["A"]}),
                vec!["/tests/0"],
            ),
            (
                json!({"environment": "dev", "tests": [{"name": "A", "replaces": 204}]}),
                vec!["/tests/0/replaces"],
            ),
            (
                json!({"environment": "dev", "tests": [{"tags": []}]}),
                vec!["/tests/0/name"],
            ),
            (
                json!({"environment": "dev", "tests": [{"name": 3}]}),
                vec!["/tests/0/name"],
            ),
            (
                json!({"environment": "dev", "tests": [{"name": "A"}, {"name": "  "}]}),
                vec!["/tests/1/name"],
            ),
            (
                json!({"environment": "dev", "tests": [{"name": long}]}),
                vec!["/tests/0/name"],
            ),
            (
                json!({"environment": "dev", "tests": [{"name": "A"}, {"name": "B"}, {"name": " A"}]}),
                vec!["/tests/2/name"],
            ),
            (
                json!({"environment": "dev", "tests": [{"name": "Twin"}]}),
                vec!["/tests/0/name"],
            ),
            (
                json!({"environment": "dev", "tests": [{"name": "A", "tags": "smoke"}]}),
                vec!["/tests/0/tags"],
            ),
            (
                json!({"environment": "dev", "tests": [{"name": "A", "tags": many_tags}]}),
                vec!["/tests/0/tags"],
            ),
            (
                json!({"environment": "dev", "tests": [{"name": "A", "tags": ["ok", "Smoke", 3, ""]}]}),
                vec!["/tests/0/tags/1", "/tests/0/tags/2", "/tests/0/tags/3"],
            ),
            (
                json!({"environment": "dev", "tests": [{"name": "A", "steps": "open it"}]}),
                vec!["/tests/0/steps"],
            ),
            (
                json!({"environment": "dev", "tests": [{"name": "A", "steps": many_steps}]}),
                vec!["/tests/0/steps"],
            ),
            (
                json!({"environment": "dev", "tests": [{"name": "A", "steps": ["ok", " ", 4, long_step]}]}),
                vec!["/tests/0/steps/1", "/tests/0/steps/2", "/tests/0/steps/3"],
            ),
            (
                json!({"environment": "dev", "tests": [{"name": "A", "start_url": 8080}]}),
                vec!["/tests/0/start_url"],
            ),
            (
                json!({"environment": "dev", "tests": [{"name": "A", "start_url": long_url}]}),
                vec!["/tests/0/start_url"],
            ),
        ];
        for (proposal, want) in cases {
            assert_eq!(paths(proposal.clone()), want, "{proposal}");
        }
    }

    #[test]
    fn problems_stop_at_the_bound_and_say_how_many_more() {
        let tests: Vec<Value> = (0..150).map(|_| json!({"name": " "})).collect();
        let problems =
            validate(&current(), &json!({"environment": 1, "tests": tests})).expect_err("blank");
        assert_eq!(problems.len(), MAX_PROBLEMS + 1);
        assert_eq!(problems[MAX_PROBLEMS].path, "");
        assert!(
            problems[MAX_PROBLEMS]
                .message
                .starts_with("50 more problems")
        );
    }

    #[test]
    fn a_valid_proposal_normalizes_to_the_arguments_of_apply_test_plan() {
        let proposal = json!({"environment": "staging", "tests": [
            {"name": " Login flow ", "tags": ["smoke", "auth", "smoke"]},
            {"name": "Refund partial"},
        ]});
        let args = validate(&current(), &proposal).expect("valid");
        assert_eq!(
            serde_json::to_value(&args).expect("JSON"),
            json!({"project": 1, "environment": "staging", "tests": [
                {"name": "Login flow", "tags": ["auth", "smoke"], "replaces": 204},
                {"name": "Refund partial", "tags": []},
            ]})
        );
        assert_eq!(check(&args), Ok(()));
        let by_id = validate(
            &current(),
            &json!({"environment": 12, "tests": [{"name": "X"}]}),
        );
        assert_eq!(by_id.expect("valid").environment, Some(NameOrId::Id(12)));
    }

    #[test]
    fn steps_and_a_start_url_are_kept_as_written_and_shown_in_the_diff() {
        let sha = "9fceb02d0ae598e95dc970b74767f19372d61af8";
        let steps = [
            "open https://shop.example/login".to_owned(),
            "POST /api/login as a shopper".to_owned(),
            format!("expect the build of commit {sha}"),
        ];
        let proposal = json!({"environment": "staging", "tests": [
            {"name": "Login flow", "tags": ["smoke"], "steps": steps,
             "start_url": " https://shop.example/login "},
        ]});
        let args = validate(&current(), &proposal).expect("valid");
        let planned = &args.tests[0];
        assert_eq!(planned.steps, steps);
        assert_eq!(
            planned.start_url.as_deref(),
            Some("https://shop.example/login")
        );
        assert_eq!(check(&args), Ok(()));
        let changes = super::super::diff(&current(), &args).expect("fits");
        assert_eq!(changes.len(), 1, "same tags, but steps: changed");
        let after: Value =
            serde_json::from_str(changes[0].after.as_deref().expect("after")).expect("JSON");
        assert_eq!(after["steps"][0], "open https://shop.example/login");
    }

    #[test]
    fn the_start_url_is_declared_a_location_in_the_promoting_schema() {
        let schema = serde_json::to_value(schemars::schema_for!(ApplyTestPlanArgs)).expect("JSON");
        let test = &schema["$defs"]["PlannedTest"]["properties"]["start_url"];
        assert_eq!(test["format"], "uri", "{schema}");
        assert_eq!(test["x-toolhost-authority"], "location", "{schema}");
    }

    #[test]
    fn a_direct_call_is_checked_like_a_proposal() {
        let args = |tests: Value| -> ApplyTestPlanArgs {
            serde_json::from_value(json!({"project": 1, "environment": 12, "tests": tests}))
                .expect("fits")
        };
        let cases = [
            (json!([]), Some("tests must hold at least one test")),
            (
                json!([{"name": "A"}, {"name": "A "}]),
                Some("tests/1/name repeats the name of tests/0"),
            ),
            (
                json!([{"name": "A", "tags": ["x y"]}]),
                Some("tests/0/tags/0 must be"),
            ),
            (json!([{"name": "A", "tags": ["x"], "replaces": 9}]), None),
        ];
        for (tests, want) in cases {
            match (check(&args(tests.clone())), want) {
                (Ok(()), None) => {}
                (Err(ToolError::InvalidArguments(m)), Some(w)) => assert!(m.starts_with(w), "{m}"),
                (got, want) => panic!("{tests}: {got:?}, expected {want:?}"),
            }
        }
        assert!(serde_json::from_value::<ApplyTestPlanArgs>(json!({"tests": [], "x": 1})).is_err());
    }
}
