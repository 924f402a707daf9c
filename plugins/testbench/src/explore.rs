//! `explore_environments`: an exploration run (its manifest entry says
//! `run = { … }`). It lists a project's environments and API scenarios
//! (two GETs), then keeps one candidate test plan per environment as a
//! JSON artifact ([`candidate`](crate::candidate) decides what is in it),
//! reporting progress after every step, and answers with the artifacts.
//!
//! Steps, `2 + environments` of them: list the environments, list the
//! scenarios, then one plan per environment. With `pace_ms` above zero a
//! `GET /api/_pace?ms=…` separates each step from the next, so a run with
//! three environments and `pace_ms = 2500` lasts about ten seconds, every
//! request of it visible to the backend.
//!
//! Only GETs reach the backend (the exploration sandbox allows no other
//! method). Keeping artifacts is allowed only inside a run: called as a
//! plain tool, the host refuses the first plan and the call fails saying so.

use toolhost_sdk::prelude::*;

use crate::api::{self, EnvironmentRow, MAX_PACE_MS, TestRow};
use crate::candidate::{self, CandidatePlan};
use crate::kind::TestKind;
use crate::listing::resolve_project;

/// Arguments of `explore_environments`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExploreArgs {
    /// The project, by name or id. Required: when omitted, ambiguous or
    /// unknown, the answer is a question listing the projects to choose from.
    #[serde(default)]
    pub project: Option<NameOrId>,
    /// Milliseconds the backend waits between two steps (one
    /// `GET /api/_pace` each); default 0, no pacing; at most 5000.
    #[serde(default)]
    #[schemars(range(max = 5000))]
    pub pace_ms: u32,
}

/// One plan the run kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct KeptPlan {
    /// The environment's name.
    pub environment: String,
    /// The artifact's name, `plan-<environment>.json`.
    pub name: String,
    /// How many scenarios the plan would run there.
    pub scenarios: usize,
    /// Where and what the host kept: `uri`, `sha256`, `size`.
    #[serde(flatten)]
    pub artifact: ArtifactInfo,
}

/// The answer of `explore_environments`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Exploration {
    /// The project's name, as the resolver has it.
    pub project: String,
    /// The environments explored, in the backend's order.
    pub environments: Vec<String>,
    /// How many of the project's API scenarios the run saw.
    pub scenarios_seen: usize,
    /// One plan per environment, in the same order.
    pub artifacts: Vec<KeptPlan>,
    /// Requests this call sent to the backend: the two lists and every
    /// pace. (The host's entities snapshot, which the resolver may need
    /// first, is the host's and not counted.)
    pub backend_requests: u32,
}

/// Runs the exploration.
pub fn explore(ctx: &Ctx, args: ExploreArgs) -> Result<Exploration, ToolError> {
    check_pace(args.pace_ms)?;
    let project = resolve_project(args.project)?;
    let mut steps = Steps::new(args.pace_ms);
    let environments = steps.get(|| api::environments(ctx, Some(project.id)))?;
    steps.total = 2 + environments.len();
    steps.done(&format!("listed {} environment(s)", environments.len()))?;
    let scenarios: Vec<TestRow> =
        steps.get(|| api::tests(ctx, TestKind::ApiScenario, Some(project.id), &[]))?;
    steps.done(&format!("listed {} API scenario(s)", scenarios.len()))?;
    let mut artifacts = Vec::with_capacity(environments.len());
    for environment in &environments {
        let plan = candidate::plan(&project.name, environment, &scenarios);
        let kept = keep(environment, &environments, &plan)?;
        steps.done(&format!(
            "kept {}: {} scenario(s)",
            kept.name, kept.scenarios
        ))?;
        artifacts.push(kept);
    }
    Ok(Exploration {
        project: project.name,
        environments: environments.into_iter().map(|e| e.name).collect(),
        scenarios_seen: scenarios.len(),
        artifacts,
        backend_requests: steps.requests,
    })
}

/// Keeps `plan`, the plan of `environment` (one of `explored`).
fn keep(
    environment: &EnvironmentRow,
    explored: &[EnvironmentRow],
    plan: &CandidatePlan,
) -> Result<KeptPlan, ToolError> {
    let name = candidate::artifact_name(environment, explored);
    let artifact = artifacts::put_json(&name, plan).map_err(not_kept)?;
    Ok(KeptPlan {
        environment: environment.name.clone(),
        name,
        scenarios: plan.run.len(),
        artifact,
    })
}

/// The run's steps: progress after each, a pace before the next, and the
/// backend requests sent.
struct Steps {
    pace_ms: u32,
    finished: usize,
    /// Known once the environments are listed.
    total: usize,
    requests: u32,
}

impl Steps {
    fn new(pace_ms: u32) -> Self {
        Steps {
            pace_ms,
            finished: 0,
            total: 0,
            requests: 0,
        }
    }

    /// Sends one backend request (`send` makes exactly one), counted.
    fn get<T>(&mut self, send: impl FnOnce() -> Result<T, ToolError>) -> Result<T, ToolError> {
        self.requests += 1;
        send()
    }

    /// Reports a step done, then paces before the next one, if any.
    fn done(&mut self, message: &str) -> Result<(), ToolError> {
        self.finished += 1;
        let (finished, total) = (self.finished as f64, self.total as f64);
        progress::report(finished, Some(total), Some(message));
        if self.pace_ms > 0 && self.finished < self.total {
            let ms = self.pace_ms;
            self.get(|| api::pace(ms))?;
        }
        Ok(())
    }
}

/// `pace_ms` within what `GET /api/_pace` grants one request.
fn check_pace(pace_ms: u32) -> Result<(), ToolError> {
    if pace_ms > MAX_PACE_MS {
        return Err(ToolError::InvalidArguments(format!(
            "pace_ms is at most {MAX_PACE_MS}, not {pace_ms}"
        )));
    }
    Ok(())
}

/// A plan the host did not keep: most likely the tool was called outside
/// an exploration run, where every artifact is refused.
fn not_kept(e: ToolError) -> ToolError {
    let why = match e {
        ToolError::Failed(why) => why,
        other => other.to_string(),
    };
    ToolError::Failed(format!(
        "{why}. explore_environments keeps one plan per environment as an artifact, \
         which only an exploration run may do: start it as a run"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pace_ms_defaults_to_zero_and_is_at_most_5000() {
        let a: ExploreArgs = serde_json::from_str(r#"{"project": "payments"}"#).expect("fits");
        assert_eq!(
            (a.project, a.pace_ms),
            (Some(NameOrId::Name("payments".into())), 0)
        );
        let schema = serde_json::to_value(schemars::schema_for!(ExploreArgs)).expect("JSON");
        assert_eq!(schema["properties"]["pace_ms"]["maximum"], 5000);
        assert!(schema.get("required").is_none(), "{schema}");
        assert!(check_pace(5000).is_ok());
        let err = check_pace(5001).expect_err("over the cap");
        assert_eq!(
            err,
            ToolError::InvalidArguments("pace_ms is at most 5000, not 5001".into())
        );
        assert!(serde_json::from_str::<ExploreArgs>(r#"{"pace_ms": -1}"#).is_err());
        assert!(serde_json::from_str::<ExploreArgs>(r#"{"pace": 1}"#).is_err());
    }

    #[test]
    fn steps_count_every_request_and_pace_only_between_steps() {
        let mut steps = Steps::new(0);
        steps.total = 3;
        let rows: Vec<i64> = steps.get(|| Ok(vec![1, 2])).expect("no request sent");
        assert_eq!((rows.len(), steps.requests), (2, 1));
        for _ in 0..3 {
            steps.done("step").expect("no pace, no request");
        }
        assert_eq!((steps.finished, steps.requests), (3, 1));
        // Natively no backend answers: a pace between steps is a request, and fails.
        let mut paced = Steps::new(10);
        paced.total = 2;
        assert!(paced.done("first").is_err());
        assert_eq!((paced.finished, paced.requests), (1, 1));
        assert!(paced.done("last").is_ok(), "no pace after the last step");
    }

    #[test]
    fn outside_a_run_the_refusal_says_to_start_a_run() {
        let err = not_kept(ToolError::Failed(
            "artifact \"plan-dev.json\" was not kept: not inside an exploration run".into(),
        ));
        let ToolError::Failed(m) = &err else {
            panic!("{err:?}")
        };
        assert!(
            m.starts_with("artifact \"plan-dev.json\" was not kept")
                && m.ends_with("start it as a run"),
            "{m}"
        );
    }

    #[test]
    fn the_answer_lists_each_artifact_with_its_uri_digest_and_size() {
        let answer = Exploration {
            project: "payments".into(),
            environments: vec!["dev".into()],
            scenarios_seen: 4,
            artifacts: vec![KeptPlan {
                environment: "dev".into(),
                name: "plan-dev.json".into(),
                scenarios: 4,
                artifact: ArtifactInfo {
                    uri: "toolhost://artifacts/art_1".into(),
                    sha256: "0".repeat(64),
                    size: 812,
                },
            }],
            backend_requests: 2,
        };
        assert_eq!(
            serde_json::to_value(&answer).expect("JSON"),
            serde_json::json!({
                "project": "payments",
                "environments": ["dev"],
                "scenarios_seen": 4,
                "artifacts": [{"environment": "dev", "name": "plan-dev.json", "scenarios": 4,
                    "uri": "toolhost://artifacts/art_1", "sha256": "0".repeat(64), "size": 812}],
                "backend_requests": 2,
            })
        );
    }
}
