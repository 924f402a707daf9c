//! The `authoring` export: one kind, `test_plan`, a project's tests as a
//! plan. Its subject is a `project`; a proposal names an environment and
//! the tests; `apply_test_plan` promotes it, drafting every test in one
//! request. The rules and the diff are [`crate::test_plan`]'s (pure).
//!
//! `current` is one GET (`/api/projects/{id}/tests`), whose version the
//! backend moves whenever the project's tests or drafts change.

use serde_json::Value;
use toolhost_sdk::authoring::{Author, Authoring, AuthoringKind, Change, Current, Problem};
use toolhost_sdk::prelude::*;

use crate::api;
use crate::test_plan::{self, ApplyTestPlanArgs, CurrentPlan, CurrentTest, ProjectRef};

/// The kind's name.
pub const TEST_PLAN: &str = "test_plan";

/// The tool that promotes a test plan.
pub const APPLY_TEST_PLAN: &str = "apply_test_plan";

/// The export, for `export_plugin!`.
pub fn authoring() -> Authoring {
    Authoring::new(
        AuthoringKind::new(
            TEST_PLAN,
            "A project's tests as a plan: propose {environment, tests: [{name, tags}]}; \
             applying it drafts every test (a test named like a current one replaces it, \
             untouched until put into service). A plan never removes tests.",
        )
        .subject_kind("project")
        .promoted_by(APPLY_TEST_PLAN),
        TestPlans,
    )
}

/// The `test_plan` kind.
struct TestPlans;

impl Author for TestPlans {
    type Current = CurrentPlan;
    type Normalized = ApplyTestPlanArgs;

    fn current(&self, ctx: &Ctx, subject: i64) -> Result<Current<CurrentPlan>, ToolError> {
        let row = api::project_tests(ctx, subject)?;
        let mut tests: Vec<CurrentTest> = (row.tests.into_iter())
            .map(|t| CurrentTest {
                id: t.id,
                name: t.name,
                tags: t.tags,
            })
            .collect();
        tests.sort_by_key(|t| t.id);
        let project = ProjectRef {
            id: row.project.id,
            name: row.project.name,
        };
        Ok(Current::new(row.version, CurrentPlan { project, tests }))
    }

    fn validate(
        &self,
        _ctx: &Ctx,
        current: &CurrentPlan,
        proposal: &Value,
    ) -> Result<ApplyTestPlanArgs, Vec<Problem>> {
        test_plan::validate(current, proposal)
    }

    fn diff(
        &self,
        _ctx: &Ctx,
        current: &CurrentPlan,
        normalized: &ApplyTestPlanArgs,
    ) -> Result<Vec<Change>, ToolError> {
        test_plan::diff(current, normalized)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_is_a_test_plan_of_a_project_promoted_by_apply_test_plan() {
        let kinds = toolhost_sdk::__private::authoring_kinds(authoring());
        assert_eq!(kinds.len(), 1);
        let k = &kinds[0];
        assert_eq!(
            (
                k.name.as_str(),
                k.subject_kind.as_str(),
                k.promoted_by.as_str()
            ),
            (TEST_PLAN, "project", APPLY_TEST_PLAN)
        );
    }

    #[test]
    fn current_outside_wasm_fails_instead_of_reaching_a_backend() {
        let ctx = Ctx::new("c1", "demo", "alice");
        assert!(TestPlans.current(&ctx, 1).is_err());
    }
}
