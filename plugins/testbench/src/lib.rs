//! `testbench`: the test platform's projects, environments, API scenarios,
//! UI tests, pipelines and executions, behind one backend (`testbench` in
//! the manifest; the host adds its URL, credential and the caller's tenant).
//!
//! The reference plugin for tools that take names: every argument naming a
//! thing accepts a name or an id ([`NameOrId`]) and is resolved by the host
//! over this plugin's entities export ([`catalog`]), so an ambiguous,
//! unknown or missing name turns the call's answer into a question instead
//! of a guess. Read tools need `testbench:read`; tools that create or run
//! need `testbench:run`, are mutating, and plan with GET requests only.
//! `get_execution_status` is one of the latter: an execution waiting for a
//! person's review opens a human checkpoint on the host, and the person's
//! decision is recorded on the execution ([`review`]).
//!
//! It also authors test plans ([`authoring`]): the host's authoring
//! sessions propose a project's tests (`test_plan`, subject `project`),
//! which this plugin reads (`current`: one GET of the project's tests and
//! their version), validates into the arguments of `apply_test_plan` and
//! diffs (both pure, [`test_plan`]). Promoting a plan is a call of
//! `apply_test_plan`, which drafts every test in one request: drafts never
//! run, and a test a draft replaces is untouched. A plan never removes
//! tests.
//!
//! `explore_environments` is an exploration run (`run = { … }` in the
//! manifest): a host worker runs it for as long as its budget allows, with
//! GET requests only, and it keeps one candidate test plan per environment
//! as an artifact ([`explore`], [`candidate`]). Called outside a run it
//! fails: the host keeps artifacts only for runs.
//!
//! Rooms: [`api`] (the backend's rows and requests), [`catalog`]
//! (entities), [`authoring`] (the authoring export), [`selection`],
//! [`kind`], [`review`], [`candidate`] and [`test_plan`] (pure: what runs
//! where, questions, answers, checkpoints, candidate plans, test plans),
//! and one module per group of tools.

mod api;
mod apply;
mod authoring;
mod by_tag;
mod candidate;
mod catalog;
mod create;
mod executions;
mod explore;
mod kind;
mod listing;
mod review;
mod run;
mod selection;
mod test_plan;

use toolhost_sdk::prelude::*;

use crate::run::{ExecuteScenarioArgs, RunPipelineArgs, RunUiTestArgs};

/// Every tool, in the order `describe` lists them.
fn tools() -> Vec<Tool> {
    let groups = [
        listing_tools(),
        run_tools(),
        execution_tools(),
        plan_tools(),
    ];
    groups.into_iter().flatten().collect()
}

/// A read tool: needs `testbench:read`, changes nothing.
fn read(t: Tool) -> Tool {
    t.permission("testbench", "read").read_only()
}

/// A tool that creates or runs: needs `testbench:run`, mutating, medium risk.
fn write(t: Tool) -> Tool {
    t.permission("testbench", "run")
        .mutating()
        .risk(Risk::Medium)
}

/// The lists ([`listing`]).
fn listing_tools() -> Vec<Tool> {
    vec![
        read(Tool::new(
            "list_project_applications",
            "Lists a project's applications.",
            listing::applications,
        )),
        read(Tool::new(
            "list_environments",
            "Lists the environments a project can run in: its own and the shared ones, with their tags.",
            listing::environments,
        )),
        read(Tool::new(
            "find_scenarios",
            "Finds a project's API scenarios, optionally only those with a tag.",
            listing::scenarios,
        )),
        read(Tool::new(
            "find_ui_tests",
            "Finds a project's UI tests, optionally only those with a tag.",
            listing::ui_tests,
        )),
        read(Tool::new(
            "list_pipelines",
            "Lists a project's pipelines.",
            listing::pipelines,
        )),
    ]
}

/// Creating a scenario and running tests ([`create`], [`run`], [`by_tag`]).
fn run_tools() -> Vec<Tool> {
    vec![
        write(Tool::new(
            "create_api_scenario",
            "Creates an API scenario in a project; answers the new scenario.",
            create::create,
        ))
        .plan(create::plan),
        write(Tool::new(
            "execute_scenario",
            "Runs one API scenario in an environment; answers the queued execution.",
            run::run::<ExecuteScenarioArgs>,
        ))
        .plan(run::plan::<ExecuteScenarioArgs>),
        write(Tool::new(
            "run_ui_test",
            "Runs one UI test in an environment; answers the queued execution.",
            run::run::<RunUiTestArgs>,
        ))
        .plan(run::plan::<RunUiTestArgs>),
        write(Tool::new(
            "run_pipeline",
            "Runs one pipeline in an environment; answers the queued execution.",
            run::run::<RunPipelineArgs>,
        ))
        .plan(run::plan::<RunPipelineArgs>),
        write(Tool::new(
            "run_by_tag",
            "Runs every API scenario and UI test with any of the tags in an environment, for one project; dry_run lists them instead.",
            by_tag::run_by_tag,
        ))
        .plan(by_tag::plan),
    ]
}

/// An execution's status and summary ([`executions`]).
fn execution_tools() -> Vec<Tool> {
    vec![
        write(Tool::new(
            "get_execution_status",
            "Reports an execution's status and steps. An execution WAITING_HUMAN needs a person's review: this opens its human checkpoint (answered under `checkpoint`; a person decides it with decide_checkpoint), and once decided records the decision on the execution, which ends PASSED or INCONCLUSIVE.",
            executions::status,
        )),
        read(Tool::new(
            "summarize_execution",
            "Summarizes an execution's outcome: passed and failed steps, in brief.",
            executions::summary,
        )),
    ]
}

/// Applying a test plan and exploring for candidate ones ([`apply`], [`explore`]).
fn plan_tools() -> Vec<Tool> {
    vec![
        write(Tool::new(
            "apply_test_plan",
            "Applies a test plan to a project: drafts every test in one request (a test named like a current one replaces it; drafts never run and replaced tests stay as they are); answers the drafts. Its arguments are a validated test_plan proposal: project, environment and tests [{name, tags, replaces}].",
            apply::apply,
        ))
        .plan(apply::plan),
        read(Tool::new(
            "explore_environments",
            "Exploration run: lists a project's environments and API scenarios, and keeps for each environment a candidate test plan (which scenarios would run there, in what order, why) as a JSON artifact; answers the artifacts. Only works as a run; pace_ms waits between steps.",
            explore::explore,
        )),
    ]
}

/// The prompts: `review_test_plan`, whose `project` argument completes from
/// the caller's projects.
fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new(
            "review_test_plan",
            "Asks the model to review a project's test plan before it is promoted.",
            |_ctx, args| {
                let project = args.get("project").unwrap_or("the project");
                Ok(vec![Message::user(format!(
                    "Review the test plan of project {project}: what is missing, what is redundant, \
                     which tests should run in prod."
                ))])
            },
        )
        .title("Review a test plan")
        .argument("project", "The project, by name.", true)
        .completes("project")
        .permission("testbench", "read"),
    ]
}

toolhost_sdk::export_plugin!(
    tools,
    entities = catalog::entities,
    authoring = authoring::authoring,
    prompts = prompts
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tool's name and permission, as `toolhost.toml` must list them.
    const MANIFEST: &str = include_str!("../toolhost.toml");

    #[test]
    fn every_tool_is_in_the_manifest_with_its_permission() {
        for spec in toolhost_sdk::__private::describe(tools()) {
            let entry = format!(
                "[tools.{}]\npermission = \"{}:{}\"",
                spec.name, spec.permission.resource, spec.permission.action
            );
            assert!(MANIFEST.contains(&entry), "{entry} missing");
        }
    }

    #[test]
    fn the_status_output_schema_has_the_executions_fields_and_the_checkpoint() {
        let spec = (toolhost_sdk::__private::describe(tools()).into_iter())
            .find(|s| s.name == "get_execution_status")
            .expect("listed");
        let schema: serde_json::Value =
            serde_json::from_str(&spec.output_schema.expect("an output schema")).expect("JSON");
        let properties = &schema["properties"];
        for field in ["executionId", "status", "steps", "decided_by", "checkpoint"] {
            assert!(properties.get(field).is_some(), "{field}: {schema}");
        }
        assert_eq!(spec.annotations.read_only, Some(false));
    }

    #[test]
    fn the_test_plan_kind_is_promoted_by_a_described_tool_taking_its_normalized_shape() {
        let kinds = toolhost_sdk::__private::authoring_kinds(authoring::authoring());
        let specs = toolhost_sdk::__private::describe(tools());
        let tool = (specs.iter())
            .find(|s| s.name == kinds[0].promoted_by)
            .expect("described");
        let schema: serde_json::Value = serde_json::from_str(&tool.input_schema).expect("JSON");
        let mut fields: Vec<&String> = schema["properties"]
            .as_object()
            .expect("an object schema")
            .keys()
            .collect();
        fields.sort();
        assert_eq!(fields, ["environment", "project", "tests"]);
        assert!(tool.mutating);
    }

    #[test]
    fn read_tools_are_read_only_and_run_tools_are_mutating_with_medium_risk() {
        for spec in toolhost_sdk::__private::describe(tools()) {
            let run = spec.permission.action == "run";
            assert_eq!(spec.mutating, run, "{}", spec.name);
            assert_eq!(
                spec.risk,
                if run { Risk::Medium } else { Risk::Low },
                "{}",
                spec.name
            );
        }
    }
}
