//! `apply_test_plan`: drafts every test of a test plan in a project, in one
//! request, and its plan. Its arguments are a normalized `test_plan`
//! proposal ([`crate::test_plan`]): promoting a proposal is this call.
//!
//! The project is resolved first and pins the environment (its own or a
//! shared one). The plan names both, the environment with its tags, so a
//! `prod` environment makes the call high risk (and the manifest's risk
//! rule asks for approval). Drafts are never run; a replaced test is
//! untouched.

use toolhost_sdk::prelude::*;

use crate::api::{self, DraftRow};
use crate::listing::resolve_project;
use crate::selection::{
    Environment, ONE_ENVIRONMENT_QUESTION, environment_target, risk, runnable_in,
};
use crate::test_plan::{self, ApplyTestPlanArgs};

/// The answer of `apply_test_plan`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Applied {
    /// The project's name.
    pub project: String,
    /// The environment's name.
    pub environment: String,
    /// The batch the drafts share.
    pub batch: i64,
    /// The drafts, in the plan's order, each `status: "draft"`.
    pub drafts: Vec<DraftRow>,
}

/// A plan with both names resolved and checked.
struct Prepared {
    project: Resolved,
    environment: Environment,
}

/// Drafts the tests: exactly one `POST /api/projects/{id}/test-drafts`.
pub fn apply(ctx: &Ctx, args: ApplyTestPlanArgs) -> Result<Applied, ToolError> {
    test_plan::check(&args)?;
    let p = prepare(ctx, &args)?;
    let batch = api::create_drafts(p.project.id, p.environment.id, &args.tests)?;
    Ok(Applied {
        project: p.project.name,
        environment: p.environment.name,
        batch: batch.batch,
        drafts: batch.drafts,
    })
}

/// Names the project and the environment (with its tags), without side
/// effects; high risk in a `prod` environment.
pub fn plan(ctx: &Ctx, args: &ApplyTestPlanArgs) -> Result<Plan, ToolError> {
    test_plan::check(args)?;
    let p = prepare(ctx, args)?;
    let replacing = args.tests.iter().filter(|t| t.replaces.is_some()).count();
    let summary = format!(
        "Draft {} tests ({replacing} replacing current ones) in project {} for environment {}",
        args.tests.len(),
        p.project.name,
        p.environment.name
    );
    let project = Target::new("project", p.project.id.to_string(), &p.project.name);
    Ok(Plan::new(risk(&p.environment.tags), summary)
        .target(environment_target(&p.environment))
        .target(project))
}

fn prepare(ctx: &Ctx, args: &ApplyTestPlanArgs) -> Result<Prepared, ToolError> {
    let project = resolve_project(args.project.clone())?;
    let environment = resolve(
        Query::new("environment", "environment", args.environment.clone())
            .pin("project", project.id)
            .question(ONE_ENVIRONMENT_QUESTION),
    )?;
    let row = api::environment(ctx, environment.id)?;
    let environment = Environment::new(environment, row);
    if !runnable_in(environment.project_id, project.id) {
        return Err(ToolError::InvalidArguments(format!(
            "environment {} is scoped to another project than {}",
            environment.name, project.name
        )));
    }
    Ok(Prepared {
        project,
        environment,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arguments_take_names_or_ids_and_refuse_unknown_fields() {
        let a: ApplyTestPlanArgs = serde_json::from_str(
            r#"{"project": 1, "environment": "staging", "tests": [{"name": "A", "replaces": 204}]}"#,
        )
        .expect("fits");
        assert_eq!(
            (a.project, a.environment),
            (Some(NameOrId::Id(1)), Some(NameOrId::from("staging")))
        );
        assert_eq!((a.tests[0].tags.len(), a.tests[0].replaces), (0, Some(204)));
        assert!(
            serde_json::from_str::<ApplyTestPlanArgs>(r#"{"tests": [], "dry_run": true}"#).is_err()
        );
    }

    #[test]
    fn outside_wasm_a_valid_plan_fails_at_the_resolver_and_a_bad_one_before() {
        let ctx = Ctx::new("c1", "demo", "alice");
        let parse = |json: &str| serde_json::from_str::<ApplyTestPlanArgs>(json).expect("fits");
        let bad = parse(r#"{"project": 1, "environment": 12, "tests": []}"#);
        assert!(matches!(
            plan(&ctx, &bad),
            Err(ToolError::InvalidArguments(_))
        ));
        let good = parse(r#"{"project": 1, "environment": 12, "tests": [{"name": "A"}]}"#);
        assert!(matches!(plan(&ctx, &good), Err(ToolError::Failed(_))));
    }
}
