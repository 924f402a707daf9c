//! What applying a normalized test plan changes: the `diff` of the
//! `test_plan` authoring kind.

use toolhost_sdk::authoring::Change;
use toolhost_sdk::prelude::*;

use super::{ApplyTestPlanArgs, CurrentPlan, named};

/// A test as a diff shows the plan's side of it.
#[derive(Debug, Serialize)]
struct Proposed<'a> {
    name: &'a str,
    tags: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    steps: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    start_url: Option<&'a str>,
}

/// What applying `normalized` changes relative to `current`, in the plan's
/// order: a test no current test is named like is `added`; one whose
/// namesake has other tags, or that describes steps or a start URL (the
/// backend's current tests carry neither), is `changed`; one with the same
/// tags and nothing more changes nothing and is left out. Nothing is ever
/// `removed`.
///
/// `invalid-arguments` when `normalized` does not fit `current`: another
/// project, or a `replaces` other than the namesake's (it was validated
/// against another state: validate it again).
pub fn diff(
    current: &CurrentPlan,
    normalized: &ApplyTestPlanArgs,
) -> Result<Vec<Change>, ToolError> {
    if normalized.project != Some(NameOrId::Id(current.project.id)) {
        return Err(ToolError::InvalidArguments(format!(
            "the plan is for project {:?}, the current state is project {}'s",
            normalized.project, current.project.id
        )));
    }
    let mut changes = Vec::new();
    for t in &normalized.tests {
        let namesakes = named(current, t.name.trim());
        let found = namesakes.first().map(|c| c.id);
        if namesakes.len() > 1 || found != t.replaces {
            return Err(ToolError::InvalidArguments(format!(
                "test {:?} replaces {:?}, but the current test of that name is {found:?}: validate the proposal again",
                t.name, t.replaces
            )));
        }
        let after = Proposed {
            name: &t.name,
            tags: &t.tags,
            steps: &t.steps,
            start_url: t.start_url.as_deref(),
        };
        let describes = !t.steps.is_empty() || t.start_url.is_some();
        match namesakes.first() {
            None => changes.push(Change::added(&t.name, &after)),
            Some(c) if describes || !same_tags(&c.tags, &t.tags) => {
                changes.push(Change::changed(&t.name, c, &after))
            }
            Some(_) => {}
        }
    }
    Ok(changes)
}

/// Whether two tag lists hold the same tags, order and repeats aside.
fn same_tags(a: &[String], b: &[String]) -> bool {
    let set = |tags: &[String]| {
        let mut v = tags.to_vec();
        v.sort();
        v.dedup();
        v
    };
    set(a) == set(b)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use toolhost_sdk::authoring::ChangeOp;

    use super::*;
    use crate::test_plan::sample as current;
    use crate::test_plan::validate;

    #[test]
    fn the_diff_adds_new_names_changes_other_tags_and_skips_the_same_in_plan_order() {
        let proposal = json!({"environment": "dev", "tests": [
            {"name": "Refund partial", "tags": ["regression"]},
            {"name": "Cart", "tags": ["smoke"]},
            {"name": "Login flow", "tags": ["smoke", "auth"]},
        ]});
        let args = validate(&current(), &proposal).expect("valid");
        let changes = diff(&current(), &args).expect("fits");
        let got: Vec<(ChangeOp, &str, Option<Value>, Option<Value>)> = (changes.iter())
            .map(|c| {
                let side = |s: &Option<String>| {
                    s.as_deref().map(|t| serde_json::from_str(t).expect("JSON"))
                };
                (c.op, c.item.as_str(), side(&c.before), side(&c.after))
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    ChangeOp::Added,
                    "Refund partial",
                    None,
                    Some(json!({"name": "Refund partial", "tags": ["regression"]}))
                ),
                (
                    ChangeOp::Changed,
                    "Login flow",
                    Some(json!({"id": 204, "name": "Login flow", "tags": ["smoke"]})),
                    Some(json!({"name": "Login flow", "tags": ["auth", "smoke"]}))
                ),
            ]
        );
    }

    #[test]
    fn a_normalized_plan_of_another_state_is_refused_by_the_diff() {
        let args = validate(
            &current(),
            &json!({"environment": 1, "tests": [{"name": "Cart"}]}),
        )
        .expect("valid");
        let mut other_project = current();
        other_project.project.id = 2;
        let mut renamed = current();
        renamed.tests[1].name = "Basket".into();
        for state in [other_project, renamed] {
            assert!(matches!(
                diff(&state, &args),
                Err(ToolError::InvalidArguments(_))
            ));
        }
    }
}
