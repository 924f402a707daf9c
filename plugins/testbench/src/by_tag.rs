//! `run_by_tag`: every API scenario and UI test with any of some tags, run
//! in one environment for one project. The contract conversation:
//!
//! 1. no `environment` → "Which environment do you want to run these tests
//!    in? Available: dev, staging, prod." (the host fills the names);
//! 2. tagged tests runnable there span several projects and no `project`
//!    → "Tag(s) ['smoke'] match tests across multiple projects: payments,
//!    auth. Which project do you want to run in?";
//! 3. both known → one execution per test, API scenarios first, each by id.
//!
//! The plan walks steps 1–2 with GET requests only and names the
//! environment (with its tags), the project and every test. Names of the
//! environment and project are the resolver's; the backend is asked only
//! for the environment's scope and tags (`GET /api/environments`) and the
//! tagged tests (`GET /api/scenarios?tag=…`, `GET /api/ui-tests?tag=…`).

use toolhost_sdk::prelude::*;

use crate::api;
use crate::kind::TestKind;
use crate::selection::{
    BY_TAG_ENVIRONMENT_QUESTION, ByTagRun, Environment, Queued, Skipped, Test, environment_target,
    of_project, project_ids, project_question, risk, split, tags_repr, test_target,
};

/// Arguments of `run_by_tag`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunByTagArgs {
    /// The tags: a test runs when it has any of them. At least one.
    #[schemars(length(min = 1))]
    pub tags: Vec<String>,
    /// The environment to run in, by name or id. When omitted, ambiguous or
    /// unknown, the answer is a question listing the environments.
    #[serde(default)]
    pub environment: Option<NameOrId>,
    /// The project whose tests run, by name or id. Needed only when the
    /// tagged tests span several projects; the answer then asks.
    #[serde(default)]
    pub project: Option<NameOrId>,
    /// List what would run without queuing anything (default false).
    #[serde(default)]
    pub dry_run: bool,
}

/// A run with every name resolved.
struct Prepared {
    environment: Environment,
    project: Resolved,
    /// What runs, in queueing order.
    run: Vec<Test>,
    /// Tagged tests the environment cannot run.
    skipped: Vec<Test>,
}

/// Queues the tests (or, in a dry run, lists them).
pub fn run_by_tag(ctx: &Ctx, args: RunByTagArgs) -> Result<ByTagRun, ToolError> {
    let p = prepare(ctx, &args)?;
    let mut queued = Vec::with_capacity(p.run.len());
    for (done, test) in p.run.iter().enumerate() {
        queued.push(if args.dry_run {
            Queued::dry_run(test)
        } else {
            let q = api::queue(test, p.environment.id)?;
            progress::report((done + 1) as f64, Some(p.run.len() as f64), None);
            Queued::new(test, q.execution_id, q.status)
        });
    }
    let skipped = (p.skipped.iter())
        .map(|t| Skipped::new(t, &p.environment.name))
        .collect();
    Ok(ByTagRun {
        dry_run: args.dry_run,
        tags: args.tags,
        environment: p.environment.name,
        project: p.project.name,
        queued,
        skipped,
    })
}

/// Names the environment, the project and the tests, without side effects.
pub fn plan(ctx: &Ctx, args: &RunByTagArgs) -> Result<Plan, ToolError> {
    let p = prepare(ctx, args)?;
    let summary = format!(
        "{} {} test(s) tagged {} of project {} in environment {}",
        if args.dry_run { "Dry run: list" } else { "Run" },
        p.run.len(),
        tags_repr(&args.tags),
        p.project.name,
        p.environment.name
    );
    let project = Target::new("project", p.project.id.to_string(), &p.project.name);
    let plan = Plan::new(risk(&p.environment.tags), summary)
        .target(environment_target(&p.environment))
        .target(project);
    Ok(p.run
        .iter()
        .fold(plan, |plan, t| plan.target(test_target(t))))
}

/// Steps 1–2 of the conversation, and the tests of the chosen project.
fn prepare(ctx: &Ctx, args: &RunByTagArgs) -> Result<Prepared, ToolError> {
    check_tags(&args.tags)?;
    let environment = resolve(
        Query::new("environment", "environment", args.environment.clone())
            .question(BY_TAG_ENVIRONMENT_QUESTION),
    )?;
    let row = api::environment(ctx, environment.id)?;
    let environment = Environment::new(environment, row);
    let tagged = tagged(ctx, &args.tags)?;
    if tagged.is_empty() {
        return Err(ToolError::NotFound(format!(
            "no API scenario or UI test is tagged {}",
            tags_repr(&args.tags)
        )));
    }
    let split = split(tagged, environment.project_id);
    if split.runnable.is_empty() {
        return Err(ToolError::NotFound(format!(
            "no test tagged {} can run in environment {}: it is scoped to another project",
            tags_repr(&args.tags),
            environment.name
        )));
    }
    let project = resolve(
        Query::new("project", "project", args.project.clone())
            .within(project_ids(&split.runnable))
            .question(project_question(&args.tags)),
    )?;
    let run = of_project(split.runnable, project.id);
    if run.is_empty() {
        return Err(ToolError::NotFound(format!(
            "project {} has no test tagged {} that can run in environment {}",
            project.id,
            tags_repr(&args.tags),
            environment.name
        )));
    }
    Ok(Prepared {
        project,
        environment,
        run,
        skipped: split.skipped,
    })
}

/// The caller's API scenarios and UI tests with any of `tags`, any project.
fn tagged(ctx: &Ctx, tags: &[String]) -> Result<Vec<Test>, ToolError> {
    let mut tests = Vec::new();
    for kind in [TestKind::ApiScenario, TestKind::UiTest] {
        let rows = api::tests(ctx, kind, None, tags)?;
        tests.extend(rows.into_iter().map(|r| Test::new(kind, r)));
    }
    Ok(tests)
}

/// At least one tag, none blank.
fn check_tags(tags: &[String]) -> Result<(), ToolError> {
    if tags.is_empty() {
        return Err(ToolError::InvalidArguments(
            "tags must name at least one tag".into(),
        ));
    }
    if tags.iter().any(|t| t.trim().is_empty()) {
        return Err(ToolError::InvalidArguments("tags must not be blank".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_must_be_given_and_not_blank() {
        assert!(check_tags(&[]).is_err());
        assert!(check_tags(&[" ".into()]).is_err());
        assert!(check_tags(&["smoke".into(), "fast".into()]).is_ok());
    }

    #[test]
    fn only_tags_are_required_and_dry_run_defaults_to_false() {
        let a: RunByTagArgs = serde_json::from_str(r#"{"tags": ["smoke"]}"#).expect("fits");
        assert!(!a.dry_run && a.environment.is_none() && a.project.is_none());
        let schema = serde_json::to_value(schemars::schema_for!(RunByTagArgs)).expect("JSON");
        assert_eq!(schema["required"], serde_json::json!(["tags"]));
        assert_eq!(schema["properties"]["tags"]["minItems"], 1);
    }

    #[test]
    fn an_id_given_as_a_number_or_as_digits_is_accepted() {
        let a: RunByTagArgs =
            serde_json::from_str(r#"{"tags": ["smoke"], "environment": 12, "project": "1"}"#)
                .expect("fits");
        assert_eq!(a.environment, Some(NameOrId::Id(12)));
        assert_eq!(a.project, Some(NameOrId::Name("1".into())));
    }
}
