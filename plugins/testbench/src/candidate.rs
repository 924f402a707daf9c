//! Candidate test plans, the pure part of `explore_environments`: for one
//! environment, which of a project's API scenarios would run there, in
//! what order, and why; and the name the plan is kept under. No host
//! calls: all of it is unit-tested natively.
//!
//! The rules, each stated in the plan it shapes:
//!
//! - an environment scoped to another project runs none of them
//!   ([`runnable_in`]);
//! - a production environment (tagged `prod`) runs only `smoke` scenarios:
//!   a run there waits for a person's approval, so it should be short and
//!   safe;
//! - elsewhere `smoke` scenarios run first (a broken build fails fast),
//!   then `regression`, then the rest;
//! - by id within each stage, so the same data always gives the same plan.

use toolhost_sdk::artifacts::MAX_NAME_CHARS;
use toolhost_sdk::prelude::*;

use crate::api::{EnvironmentRow, TestRow};
use crate::listing::Environment;
use crate::selection::{risk, runnable_in};

/// The tag of the scenarios that run first, and alone in production.
pub const SMOKE: &str = "smoke";
/// The tag of the scenarios that run after the smoke ones.
pub const REGRESSION: &str = "regression";

/// Characters of an environment's name an artifact name keeps: room for
/// `plan-`, a `-<id>` of up to 20 digits and `.json` within the host's
/// [`MAX_NAME_CHARS`].
const STEM_CHARS: usize = 96;
const _: () = assert!("plan-".len() + STEM_CHARS + 21 + ".json".len() <= MAX_NAME_CHARS);

/// Where a scenario sits in a plan, in running order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Tagged `smoke`: runs first.
    Smoke,
    /// Tagged `regression` (and not `smoke`): runs after the smoke ones.
    Regression,
    /// Neither: runs last.
    Other,
}

impl Stage {
    /// The stage of a scenario with `tags` (exact, as the backend filters).
    pub fn of(tags: &[String]) -> Stage {
        let has = |tag: &str| tags.iter().any(|t| t == tag);
        if has(SMOKE) {
            Stage::Smoke
        } else if has(REGRESSION) {
            Stage::Regression
        } else {
            Stage::Other
        }
    }

    /// Why a scenario of this stage runs where it does.
    fn reason(self) -> &'static str {
        match self {
            Stage::Smoke => "tagged smoke: runs first, so a broken build fails fast",
            Stage::Regression => "tagged regression: runs once the smoke scenarios passed",
            Stage::Other => "neither smoke nor regression: runs last",
        }
    }
}

/// A scenario the plan would run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Planned {
    /// Its place in the run, from 1.
    pub order: u32,
    /// The scenario's id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// Its stage.
    pub stage: Stage,
    /// Why it runs there.
    pub reason: String,
}

/// A scenario the plan leaves out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Left {
    /// The scenario's id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// Why it does not run there.
    pub reason: String,
}

/// One environment's candidate test plan: the body of its artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CandidatePlan {
    /// The project's name, as the resolver has it.
    pub project: String,
    /// The environment the plan is for.
    pub environment: Environment,
    /// Whether it is a production environment (tagged `prod`): a run there
    /// waits for a person's approval.
    pub production: bool,
    /// The rule that chose and ordered the scenarios, in one line.
    pub rule: String,
    /// What would run, in order.
    pub run: Vec<Planned>,
    /// What would not, by id, each with its reason.
    pub skipped: Vec<Left>,
}

/// The candidate plan of project `project`'s `scenarios` in `environment`.
pub fn plan(project: &str, environment: &EnvironmentRow, scenarios: &[TestRow]) -> CandidatePlan {
    // Production is what the run tools treat as high risk: tagged `prod`.
    let production = risk(&environment.tags) == Risk::High;
    let mut chosen: Vec<(Stage, &TestRow)> = Vec::new();
    let mut skipped = Vec::new();
    for s in scenarios {
        match leave_out(environment, production, s) {
            Some(reason) => skipped.push(left(s, reason)),
            None => chosen.push((Stage::of(&s.tags), s)),
        }
    }
    chosen.sort_by_key(|(stage, s)| (*stage, s.id));
    skipped.sort_by_key(|l| l.id);
    let run = (chosen.into_iter().zip(1..))
        .map(|((stage, s), order)| planned(order, stage, s))
        .collect();
    CandidatePlan {
        project: project.to_owned(),
        environment: describe(environment),
        production,
        rule: rule(production).to_owned(),
        run,
        skipped,
    }
}

/// Why `scenario` does not run in `environment`, if it does not.
fn leave_out(environment: &EnvironmentRow, production: bool, scenario: &TestRow) -> Option<String> {
    if !runnable_in(environment.project_id, scenario.project_id) {
        return Some(format!(
            "environment {} is scoped to another project",
            environment.name
        ));
    }
    if production && Stage::of(&scenario.tags) != Stage::Smoke {
        return Some("not tagged smoke: a production environment runs smoke scenarios only".into());
    }
    None
}

/// The plan's rule, in one line.
fn rule(production: bool) -> &'static str {
    if production {
        "production (tagged prod): smoke scenarios only, by id; a run here waits for a person's approval"
    } else {
        "smoke scenarios first, then regression, then the rest; by id within each"
    }
}

fn planned(order: u32, stage: Stage, s: &TestRow) -> Planned {
    Planned {
        order,
        id: s.id,
        name: s.name.clone(),
        tags: s.tags.clone(),
        stage,
        reason: stage.reason().to_owned(),
    }
}

fn left(s: &TestRow, reason: String) -> Left {
    Left {
        id: s.id,
        name: s.name.clone(),
        tags: s.tags.clone(),
        reason,
    }
}

fn describe(e: &EnvironmentRow) -> Environment {
    Environment {
        id: e.id,
        name: e.name.clone(),
        shared: e.project_id.is_none(),
        tags: e.tags.clone(),
    }
}

/// The name `environment`'s plan is kept under: `plan-<name>.json`, the
/// name cut to [`STEM_CHARS`] with every character but letters, digits and
/// `-_.` as `-`; `plan-<name>-<id>.json` when another of `explored` gives
/// the same name (or the name gives nothing), so each artifact's name
/// says which environment it is for.
pub fn artifact_name(environment: &EnvironmentRow, explored: &[EnvironmentRow]) -> String {
    let own = stem(&environment.name);
    let namesakes = explored.iter().filter(|e| stem(&e.name) == own).count();
    if own.is_empty() {
        format!("plan-environment-{}.json", environment.id)
    } else if namesakes > 1 {
        format!("plan-{own}-{}.json", environment.id)
    } else {
        format!("plan-{own}.json")
    }
}

/// An environment's name as part of an artifact name.
fn stem(name: &str) -> String {
    let keep = |c: char| c.is_alphanumeric() || "-_.".contains(c);
    (name.trim().chars().take(STEM_CHARS))
        .map(|c| if keep(c) { c } else { '-' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| (*s).to_owned()).collect()
    }

    fn env(id: i64, name: &str, project_id: Option<i64>, t: &[&str]) -> EnvironmentRow {
        EnvironmentRow {
            id,
            name: name.into(),
            project_id,
            tenant: "demo".into(),
            tags: tags(t),
        }
    }

    fn scenario(id: i64, name: &str, t: &[&str]) -> TestRow {
        TestRow {
            id,
            name: name.into(),
            project_id: 1,
            tags: tags(t),
            tenant: "demo".into(),
        }
    }

    /// Project `payments`' scenarios in the backend's contract seed, shuffled.
    fn payments() -> Vec<TestRow> {
        vec![
            scenario(207, "Checkout manual review", &["manual"]),
            scenario(206, "Refund", &["regression"]),
            scenario(205, "Cart", &["smoke"]),
            scenario(204, "Login flow", &["smoke"]),
        ]
    }

    fn ids(plan: &CandidatePlan) -> (Vec<i64>, Vec<i64>) {
        (
            plan.run.iter().map(|p| p.id).collect(),
            plan.skipped.iter().map(|l| l.id).collect(),
        )
    }

    #[test]
    fn tags_put_a_scenario_in_its_stage_smoke_first() {
        let cases: &[(&[&str], Stage)] = &[
            (&["smoke"], Stage::Smoke),
            (&["regression", "smoke"], Stage::Smoke),
            (&["regression"], Stage::Regression),
            (&["manual"], Stage::Other),
            (&[], Stage::Other),
            (&["Smoke"], Stage::Other),
        ];
        for (given, want) in cases {
            assert_eq!(Stage::of(&tags(given)), *want, "{given:?}");
        }
        assert!(Stage::Smoke < Stage::Regression && Stage::Regression < Stage::Other);
    }

    #[test]
    fn a_shared_environment_runs_every_scenario_smoke_then_regression_then_the_rest() {
        let plan = plan("payments", &env(11, "dev", None, &[]), &payments());
        assert_eq!(ids(&plan), (vec![204, 205, 206, 207], vec![]));
        let orders: Vec<u32> = plan.run.iter().map(|p| p.order).collect();
        assert_eq!(orders, [1, 2, 3, 4]);
        assert_eq!(plan.run[2].stage, Stage::Regression);
        assert!(
            plan.run[0].reason.contains("fails fast"),
            "{:?}",
            plan.run[0]
        );
        assert!(!plan.production && plan.environment.shared);
    }

    #[test]
    fn a_production_environment_runs_only_smoke_scenarios_and_says_why_the_rest_do_not() {
        let plan = plan("payments", &env(13, "prod", None, &["prod"]), &payments());
        assert_eq!(ids(&plan), (vec![204, 205], vec![206, 207]));
        assert!(
            plan.production && plan.rule.contains("approval"),
            "{plan:?}"
        );
        assert!(
            plan.skipped
                .iter()
                .all(|l| l.reason.contains("smoke scenarios only"))
        );
    }

    #[test]
    fn an_environment_scoped_to_another_project_runs_nothing_and_its_own_runs_all() {
        let other = plan("payments", &env(14, "auth-qa", Some(2), &[]), &payments());
        assert_eq!(ids(&other), (vec![], vec![204, 205, 206, 207]));
        assert_eq!(
            other.skipped[0].reason,
            "environment auth-qa is scoped to another project"
        );
        let own = plan(
            "payments",
            &env(15, "payments-qa", Some(1), &[]),
            &payments(),
        );
        assert_eq!(ids(&own), (vec![204, 205, 206, 207], vec![]));
        assert!(!own.environment.shared);
    }

    #[test]
    fn a_plan_serializes_with_its_environment_rule_and_reasons() {
        let plan = plan(
            "payments",
            &env(13, "prod", None, &["prod"]),
            &[scenario(204, "Login flow", &["smoke"])],
        );
        assert_eq!(
            serde_json::to_value(&plan).expect("JSON"),
            serde_json::json!({
                "project": "payments",
                "environment": {"id": 13, "name": "prod", "shared": true, "tags": ["prod"]},
                "production": true,
                "rule": rule(true),
                "run": [{"order": 1, "id": 204, "name": "Login flow", "tags": ["smoke"],
                    "stage": "smoke", "reason": Stage::Smoke.reason()}],
                "skipped": [],
            })
        );
    }

    #[test]
    fn artifact_names_say_which_environment_and_stay_within_the_hosts_limit() {
        let dev = env(11, "dev", None, &[]);
        let dev_too = env(16, "dev", Some(1), &[]);
        let odd = env(17, " eu/west 1 ", None, &[]);
        let blank = env(18, "  ", None, &[]);
        let long = env(19, &"é".repeat(300), None, &[]);
        let all = [dev.clone(), env(12, "staging", None, &[]), odd.clone()];
        assert_eq!(artifact_name(&dev, &all), "plan-dev.json");
        assert_eq!(artifact_name(&odd, &all), "plan-eu-west-1.json");
        let namesakes = [dev.clone(), dev_too.clone()];
        assert_eq!(artifact_name(&dev, &namesakes), "plan-dev-11.json");
        assert_eq!(artifact_name(&dev_too, &namesakes), "plan-dev-16.json");
        assert_eq!(artifact_name(&blank, &[]), "plan-environment-18.json");
        let cut = artifact_name(&long, &[long.clone(), long.clone()]);
        assert!(cut.chars().count() <= MAX_NAME_CHARS, "{cut}");
        assert!(
            cut.starts_with("plan-éé") && cut.ends_with("-19.json"),
            "{cut}"
        );
    }
}
