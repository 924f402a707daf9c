//! The boundary checks of what an `authoring` export answers: each answer
//! is bounded, parsed and converted to the host's types here, or refused
//! with the reason ([`CallError::InvalidOutput`], [`CallError::OutputLimit`],
//! or a load error's detail for the kinds).

use serde_json::Value;
use toolhost_limits::CallBudget;

use super::{
    AuthoringKind, Change, ChangeOp, Current, MAX_AUTHORING_KINDS, MAX_CHANGES, MAX_PROBLEMS,
    MAX_VERSION_LEN, Problem,
};
use crate::bindings::exports::toolhost::plugin::authoring as wit_authoring;
use crate::error::CallError;
use crate::sandbox::{self, check_output};
use crate::spec::ToolSpec;

/// The listed kinds, or what is wrong with the first bad one: over
/// [`MAX_AUTHORING_KINDS`], a bad or repeated name, a subject kind the
/// plugin's entities do not list, a promoting tool it does not describe.
pub(super) fn checked_kinds(
    kinds: Vec<wit_authoring::AuthoringKind>,
    tools: &[ToolSpec],
    entity_kinds: &[String],
) -> Result<Vec<AuthoringKind>, String> {
    if kinds.len() > MAX_AUTHORING_KINDS {
        return Err(format!(
            "{} kinds, more than {MAX_AUTHORING_KINDS}",
            kinds.len()
        ));
    }
    let mut out: Vec<AuthoringKind> = Vec::with_capacity(kinds.len());
    for k in kinds {
        let name = &k.name;
        if !sandbox::valid_kind(name) {
            return Err(format!("kind {name:?} is not 1–64 of [a-z0-9_]"));
        }
        if out.iter().any(|o| o.name == *name) {
            return Err(format!("kind {name:?} is listed twice"));
        }
        if !sandbox::valid_kind(&k.subject_kind) || !entity_kinds.contains(&k.subject_kind) {
            return Err(format!(
                "kind {name:?}: subject kind {:?} is not an entity kind the plugin lists",
                k.subject_kind
            ));
        }
        if !tools.iter().any(|t| t.name.as_str() == k.promoted_by) {
            return Err(format!(
                "kind {name:?}: promoted by {:?}, a tool the plugin does not describe",
                k.promoted_by
            ));
        }
        out.push(AuthoringKind {
            name: k.name,
            description: k.description,
            subject_kind: k.subject_kind,
            promoted_by: k.promoted_by,
        });
    }
    Ok(out)
}

fn invalid(detail: String) -> CallError {
    CallError::InvalidOutput { detail }
}

fn json(what: &str, text: &str) -> Result<Value, CallError> {
    serde_json::from_str(text).map_err(|e| invalid(format!("{what} is not JSON: {e}")))
}

pub(super) fn current(
    state: wit_authoring::CurrentState,
    budget: &CallBudget,
) -> Result<Current, CallError> {
    check_output(state.version.len() + state.body.len(), budget)?;
    if state.version.is_empty() || state.version.len() > MAX_VERSION_LEN {
        return Err(invalid(format!(
            "the version is {} bytes, not 1 to {MAX_VERSION_LEN}",
            state.version.len()
        )));
    }
    Ok(Current {
        version: state.version,
        body: json("the current state's body", &state.body)?,
    })
}

pub(super) fn validated(
    answer: Result<String, Vec<wit_authoring::Problem>>,
    budget: &CallBudget,
) -> Result<Result<Value, Vec<Problem>>, CallError> {
    let problems = match answer {
        Ok(normalized) => {
            check_output(normalized.len(), budget)?;
            let value = json("the normalized proposal", &normalized)?;
            if !value.is_object() {
                return Err(invalid(
                    "the normalized proposal is not a JSON object".into(),
                ));
            }
            return Ok(Ok(value));
        }
        Err(problems) => problems,
    };
    let size = problems.iter().map(|p| p.path.len() + p.message.len());
    check_output(size.sum(), budget)?;
    match problems.len() {
        0 => {
            return Err(invalid(
                "the proposal is refused with no problem named".into(),
            ));
        }
        n if n > MAX_PROBLEMS => {
            return Err(invalid(format!("{n} problems, more than {MAX_PROBLEMS}")));
        }
        _ => {}
    }
    if let Some(bad) = problems
        .iter()
        .find(|p| !p.path.is_empty() && !p.path.starts_with('/'))
    {
        return Err(invalid(format!(
            "problem path {:?} is not a JSON pointer",
            bad.path
        )));
    }
    let problems = problems.into_iter().map(|p| Problem {
        path: p.path,
        message: p.message,
    });
    Ok(Err(problems.collect()))
}

pub(super) fn diffed(
    changes: Vec<wit_authoring::Change>,
    budget: &CallBudget,
) -> Result<Vec<Change>, CallError> {
    let side = |s: &Option<String>| s.as_ref().map_or(0, String::len);
    let size = changes
        .iter()
        .map(|c| c.item.len() + side(&c.before) + side(&c.after));
    check_output(size.sum(), budget)?;
    if changes.len() > MAX_CHANGES {
        return Err(invalid(format!(
            "{} changes, more than {MAX_CHANGES}",
            changes.len()
        )));
    }
    changes.into_iter().map(change).collect()
}

fn change(c: wit_authoring::Change) -> Result<Change, CallError> {
    let op = match c.op {
        wit_authoring::ChangeOp::Added => ChangeOp::Added,
        wit_authoring::ChangeOp::Changed => ChangeOp::Changed,
        wit_authoring::ChangeOp::Removed => ChangeOp::Removed,
    };
    let sides = (c.before.is_some(), c.after.is_some());
    let expected = match op {
        ChangeOp::Added => (false, true),
        ChangeOp::Changed => (true, true),
        ChangeOp::Removed => (true, false),
    };
    if sides != expected {
        return Err(invalid(format!(
            "change of {:?}: {op:?} with before {} and after {}",
            c.item,
            presence(sides.0),
            presence(sides.1)
        )));
    }
    let side = |what: &str, s: Option<String>| s.map(|t| json(what, &t)).transpose();
    Ok(Change {
        op,
        before: side("a change's before", c.before)?,
        after: side("a change's after", c.after)?,
        item: c.item,
    })
}

fn presence(present: bool) -> &'static str {
    if present { "present" } else { "absent" }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolhost_limits::ByteSize;

    use super::*;
    use crate::spec::Annotations;

    fn kind(name: &str, subject: &str, tool: &str) -> wit_authoring::AuthoringKind {
        wit_authoring::AuthoringKind {
            name: name.into(),
            description: "d".into(),
            subject_kind: subject.into(),
            promoted_by: tool.into(),
        }
    }

    fn tool(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.parse().expect("a tool name"),
            title: None,
            description: String::new(),
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: Annotations::default(),
            permission: toolhost_types::Permission::new("tb", "run").expect("valid"),
            risk: toolhost_types::Risk::Medium,
            mutating: true,
        }
    }

    #[test]
    fn kinds_are_refused_naming_the_first_problem() {
        let tools = [tool("apply_test_plan")];
        let entities = ["project".to_owned()];
        let ok = || kind("test_plan", "project", "apply_test_plan");
        let many: Vec<_> = (0..=MAX_AUTHORING_KINDS)
            .map(|i| kind(&format!("k{i}"), "project", "apply_test_plan"))
            .collect();
        let cases: Vec<(Vec<wit_authoring::AuthoringKind>, Option<&str>)> = vec![
            (vec![ok()], None),
            (vec![], None),
            (many, Some("65 kinds, more than 64")),
            (
                vec![kind("Test-Plan", "project", "apply_test_plan")],
                Some("\"Test-Plan\" is not"),
            ),
            (
                vec![kind("", "project", "apply_test_plan")],
                Some("\"\" is not"),
            ),
            (vec![ok(), ok()], Some("listed twice")),
            (
                vec![kind("test_plan", "scenario", "apply_test_plan")],
                Some("subject kind \"scenario\""),
            ),
            (
                vec![kind("test_plan", "project", "run_pipeline")],
                Some("\"run_pipeline\", a tool"),
            ),
        ];
        for (kinds, want) in cases {
            let n = kinds.len();
            match (checked_kinds(kinds, &tools, &entities), want) {
                (Ok(got), None) => assert_eq!(got.len(), n),
                (Err(e), Some(w)) => assert!(e.contains(w), "{e} should say {w}"),
                (got, want) => panic!("{got:?}, expected {want:?}"),
            }
        }
    }

    fn state(version: &str, body: &str) -> wit_authoring::CurrentState {
        wit_authoring::CurrentState {
            version: version.into(),
            body: body.into(),
        }
    }

    #[test]
    fn a_current_state_needs_a_short_version_and_a_json_body_within_the_budget() {
        let small = CallBudget {
            output: ByteSize::b(16),
            ..CallBudget::DEFAULT
        };
        let long = "v".repeat(MAX_VERSION_LEN + 1);
        let cases: [(wit_authoring::CurrentState, &CallBudget, Result<(), &str>); 5] = [
            (state("r1", r#"{"a":1}"#), &CallBudget::DEFAULT, Ok(())),
            (state("", "{}"), &CallBudget::DEFAULT, Err("INVALID_OUTPUT")),
            (
                state(&long, "{}"),
                &CallBudget::DEFAULT,
                Err("INVALID_OUTPUT"),
            ),
            (
                state("r1", "{not json"),
                &CallBudget::DEFAULT,
                Err("INVALID_OUTPUT"),
            ),
            (state("r1", &"1".repeat(20)), &small, Err("OUTPUT_LIMIT")),
        ];
        for (s, budget, want) in cases {
            let got = current(s, budget).map(drop).map_err(|e| e.code());
            assert_eq!(got, want);
        }
        let ok = current(state("r1", r#"{"a":1}"#), &CallBudget::DEFAULT).expect("fits");
        assert_eq!((ok.version.as_str(), ok.body), ("r1", json!({"a": 1})));
    }

    fn problem(path: &str) -> wit_authoring::Problem {
        wit_authoring::Problem {
            path: path.into(),
            message: "bad".into(),
        }
    }

    /// What a guest's `validate` answers.
    type GuestValidation = Result<String, Vec<wit_authoring::Problem>>;

    #[test]
    fn a_validation_is_a_json_object_or_some_pointed_problems() {
        let many: Vec<_> = (0..=MAX_PROBLEMS).map(|_| problem("")).collect();
        let cases: Vec<(GuestValidation, Result<&str, &str>)> = vec![
            (Ok(r#"{"project":1}"#.into()), Ok("normalized")),
            (Ok("[1]".into()), Err("INVALID_OUTPUT")),
            (Ok("{".into()), Err("INVALID_OUTPUT")),
            (
                Err(vec![problem(""), problem("/tests/0/name")]),
                Ok("problems"),
            ),
            (Err(vec![]), Err("INVALID_OUTPUT")),
            (Err(vec![problem("tests/0")]), Err("INVALID_OUTPUT")),
            (Err(many), Err("INVALID_OUTPUT")),
        ];
        for (answer, want) in cases {
            let got = validated(answer, &CallBudget::DEFAULT).map_err(|e| e.code());
            let got = got.map(|r| if r.is_ok() { "normalized" } else { "problems" });
            assert_eq!(got, want);
        }
    }

    fn change_of(
        op: wit_authoring::ChangeOp,
        before: Option<&str>,
        after: Option<&str>,
    ) -> wit_authoring::Change {
        wit_authoring::Change {
            op,
            item: "Cart".into(),
            before: before.map(Into::into),
            after: after.map(Into::into),
        }
    }

    #[test]
    fn a_change_carries_exactly_the_json_sides_its_op_has() {
        use wit_authoring::ChangeOp as Op;
        let cases = [
            (change_of(Op::Added, None, Some("{}")), Ok(())),
            (change_of(Op::Changed, Some("1"), Some("2")), Ok(())),
            (change_of(Op::Removed, Some("[]"), None), Ok(())),
            (
                change_of(Op::Added, Some("{}"), Some("{}")),
                Err("INVALID_OUTPUT"),
            ),
            (
                change_of(Op::Changed, None, Some("{}")),
                Err("INVALID_OUTPUT"),
            ),
            (change_of(Op::Removed, None, None), Err("INVALID_OUTPUT")),
            (
                change_of(Op::Added, None, Some("nope")),
                Err("INVALID_OUTPUT"),
            ),
        ];
        for (c, want) in cases {
            let got = diffed(vec![c], &CallBudget::DEFAULT)
                .map(drop)
                .map_err(|e| e.code());
            assert_eq!(got, want);
        }
        let many: Vec<_> = (0..=MAX_CHANGES)
            .map(|_| change_of(Op::Added, None, Some("1")))
            .collect();
        assert_eq!(
            diffed(many, &CallBudget::DEFAULT)
                .map(drop)
                .map_err(|e| e.code()),
            Err("INVALID_OUTPUT")
        );
    }

    #[test]
    fn changes_serialize_with_snake_case_ops_and_only_the_sides_they_have() {
        let c = Change {
            op: ChangeOp::Added,
            item: "Cart".into(),
            before: None,
            after: Some(json!({"name": "Cart"})),
        };
        assert_eq!(
            serde_json::to_value(&c).expect("JSON"),
            json!({"op": "added", "item": "Cart", "after": {"name": "Cart"}})
        );
    }
}
