//! The tools that run one thing in an environment: `execute_scenario`,
//! `run_ui_test` and `run_pipeline`, with their plans.
//!
//! A given `project` is resolved first and pins the other two names (`Login
//! flow` in `payments`); then the test, then the environment. The plan does
//! the same with GET requests only and names the environment (with its
//! tags), the test and its project; a `prod` environment makes it high risk.
//!
//! Names come from the resolver. The backend is asked for the environment's
//! scope and tags (`GET /api/environments`) and, only when no `project` was
//! given, for the test's project (`GET` of the test's kind, unfiltered).

use toolhost_sdk::prelude::*;

use crate::api;
use crate::kind::TestKind;
use crate::selection::{
    Environment, ONE_ENVIRONMENT_QUESTION, OneRun, Queued, Test, environment_target, risk,
    runnable_in, test_target,
};

/// Arguments of `execute_scenario`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ExecuteScenarioArgs {
    /// The API scenario, by name or id. Required: when omitted, ambiguous or
    /// unknown, the answer is a question listing the scenarios to choose from.
    pub scenario: Option<NameOrId>,
    /// The environment to run in, by name or id. Required: when omitted,
    /// ambiguous or unknown, the answer is a question listing the environments.
    pub environment: Option<NameOrId>,
    /// The project the scenario belongs to, by name or id: optional, it
    /// narrows the scenario and the environment to that project's.
    pub project: Option<NameOrId>,
}

/// Arguments of `run_ui_test`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RunUiTestArgs {
    /// The UI test, by name or id. Required: when omitted, ambiguous or
    /// unknown, the answer is a question listing the UI tests to choose from.
    pub test: Option<NameOrId>,
    /// The environment to run in, by name or id. Required: when omitted,
    /// ambiguous or unknown, the answer is a question listing the environments.
    pub environment: Option<NameOrId>,
    /// The project the UI test belongs to, by name or id: optional, it
    /// narrows the test and the environment to that project's.
    pub project: Option<NameOrId>,
}

/// Arguments of `run_pipeline`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RunPipelineArgs {
    /// The pipeline, by name or id. Required: when omitted, ambiguous or
    /// unknown, the answer is a question listing the pipelines to choose from.
    pub pipeline: Option<NameOrId>,
    /// The environment to run in, by name or id. Required: when omitted,
    /// ambiguous or unknown, the answer is a question listing the environments.
    pub environment: Option<NameOrId>,
    /// The project the pipeline belongs to, by name or id: optional, it
    /// narrows the pipeline and the environment to that project's.
    pub project: Option<NameOrId>,
}

/// What the three tools' arguments have in common.
pub struct OneRequest {
    kind: TestKind,
    /// The argument naming the test, echoed by a clarification.
    field: &'static str,
    target: Option<NameOrId>,
    environment: Option<NameOrId>,
    project: Option<NameOrId>,
}

impl From<ExecuteScenarioArgs> for OneRequest {
    fn from(a: ExecuteScenarioArgs) -> Self {
        OneRequest {
            kind: TestKind::ApiScenario,
            field: "scenario",
            target: a.scenario,
            environment: a.environment,
            project: a.project,
        }
    }
}

impl From<RunUiTestArgs> for OneRequest {
    fn from(a: RunUiTestArgs) -> Self {
        OneRequest {
            kind: TestKind::UiTest,
            field: "test",
            target: a.test,
            environment: a.environment,
            project: a.project,
        }
    }
}

impl From<RunPipelineArgs> for OneRequest {
    fn from(a: RunPipelineArgs) -> Self {
        OneRequest {
            kind: TestKind::Pipeline,
            field: "pipeline",
            target: a.pipeline,
            environment: a.environment,
            project: a.project,
        }
    }
}

/// A run with every name resolved and checked.
struct Prepared {
    test: Test,
    environment: Environment,
    /// The test's project.
    project: Resolved,
}

/// Queues the test in the environment.
pub fn run<A: Into<OneRequest>>(ctx: &Ctx, args: A) -> Result<OneRun, ToolError> {
    let p = prepare(ctx, args.into())?;
    let queued = api::queue(&p.test, p.environment.id)?;
    Ok(OneRun {
        environment: p.environment.name,
        project: p.project.name,
        queued: vec![Queued::new(&p.test, queued.execution_id, queued.status)],
    })
}

/// Names what the run would act on, without side effects.
pub fn plan<A: Clone + Into<OneRequest>>(ctx: &Ctx, args: &A) -> Result<Plan, ToolError> {
    let p = prepare(ctx, args.clone().into())?;
    let summary = format!(
        "Run {} {:?} of project {} in environment {}",
        p.test.kind.noun(),
        p.test.name,
        p.project.name,
        p.environment.name
    );
    Ok(Plan::new(risk(&p.environment.tags), summary)
        .target(environment_target(&p.environment))
        .target(test_target(&p.test))
        .target(Target::new(
            "project",
            p.project.id.to_string(),
            &p.project.name,
        )))
}

/// Resolves the project (if given, pinning the rest), the test and the
/// environment, and checks that the environment can run the test.
fn prepare(ctx: &Ctx, req: OneRequest) -> Result<Prepared, ToolError> {
    let pinned = (req.project)
        .map(|p| resolve(Query::new("project", "project", Some(p))))
        .transpose()?;
    let pin = pinned.as_ref().map(|p| p.id);
    let target =
        resolve(Query::new(req.kind.entity(), req.field, req.target).pin_opt("project", pin))?;
    let environment = resolve(
        Query::new("environment", "environment", req.environment)
            .pin_opt("project", pin)
            .question(ONE_ENVIRONMENT_QUESTION),
    )?;
    // A pinned test is the pinned project's: tests always have a project.
    let project = match pinned {
        Some(project) => project,
        None => project_of(ctx, req.kind, target.id)?,
    };
    let test = Test::resolved(req.kind, target, project.id);
    let row = api::environment(ctx, environment.id)?;
    let environment = Environment::new(environment, row);
    if !runnable_in(environment.project_id, test.project_id) {
        return Err(ToolError::InvalidArguments(format!(
            "environment {} is scoped to another project than {} {:?}",
            environment.name,
            test.kind.noun(),
            test.name
        )));
    }
    Ok(Prepared {
        test,
        environment,
        project,
    })
}

/// The project of test `id` of `kind`, when the caller named none: its id
/// from the backend's row, its name from the resolver (which answers an
/// absent value with the one id `within` allows, from the snapshot).
fn project_of(ctx: &Ctx, kind: TestKind, id: i64) -> Result<Resolved, ToolError> {
    let row = api::test(ctx, kind, id)?;
    resolve(Query::new("project", "project", None).within([row.project_id]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tools_arguments_name_their_kind_and_field() {
        let cases: [(OneRequest, TestKind, &str); 3] = [
            (
                serde_json::from_str::<ExecuteScenarioArgs>(r#"{"scenario": 204}"#)
                    .expect("fits")
                    .into(),
                TestKind::ApiScenario,
                "scenario",
            ),
            (
                serde_json::from_str::<RunUiTestArgs>(r#"{"test": "Checkout"}"#)
                    .expect("fits")
                    .into(),
                TestKind::UiTest,
                "test",
            ),
            (
                serde_json::from_str::<RunPipelineArgs>(r#"{"pipeline": "nightly"}"#)
                    .expect("fits")
                    .into(),
                TestKind::Pipeline,
                "pipeline",
            ),
        ];
        for (req, kind, field) in cases {
            assert_eq!((req.kind, req.field), (kind, field));
            assert!(req.target.is_some() && req.environment.is_none() && req.project.is_none());
        }
    }

    #[test]
    fn unknown_arguments_are_refused() {
        assert!(serde_json::from_str::<ExecuteScenarioArgs>(r#"{"scenaro": 1}"#).is_err());
    }
}
