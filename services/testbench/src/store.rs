//! The in-memory data and executions, and the one tenant predicate every
//! read goes through.
//!
//! Reads keep a row when [`Store::visible`] says so: the row's tenant is the
//! caller's, unless leak mode is on, in which case every tenant's rows come
//! back (tests use that to prove the host drops foreign rows). Writes and
//! executions always check the tenant: leak mode only widens reads.
//! Lists come back in id order.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::Deserialize;

use crate::authority::Sees;
use crate::drafts::{Batch, Draft, Drafts, NewDrafts, Scope};
use crate::error::ApiError;
use crate::execution::{Advance, Execution, Kind, Review, Reviewed};
use crate::seed::{Application, Environment, Outcome, Pipeline, Project, Seed, Test};

/// Longest scenario name `POST /api/scenarios` accepts, in characters: a
/// name is a label people read in one line.
const MAX_NAME_CHARS: usize = 200;
/// Most tags a new scenario may carry, and longest tag: tags are short
/// filter words, not data.
const MAX_TAGS: usize = 20;
const MAX_TAG_CHARS: usize = 50;
/// Longest `decided_by` a disposition accepts, in characters: a person's
/// or a checkpoint's name, one line.
const MAX_DECIDED_BY_CHARS: usize = 200;

/// The filters of the test lists.
#[derive(Debug, Default)]
pub(crate) struct Filter {
    /// Keep rows with ANY of these tags; empty keeps every row.
    pub(crate) tags: Vec<String>,
    /// Keep rows of this project only.
    pub(crate) project_id: Option<u64>,
}

/// The body of `POST /api/scenarios`. Unknown fields are ignored: a client
/// may send more than the backend needs.
#[derive(Debug, Deserialize)]
pub(crate) struct NewScenario {
    project_id: u64,
    name: String,
    #[serde(default)]
    tags: Vec<String>,
}

/// The body of `POST /api/executions`; an unknown `kind` fails to parse (400).
#[derive(Debug, Deserialize)]
pub(crate) struct NewExecution {
    kind: Kind,
    target_id: u64,
    environment_id: u64,
}

/// The body of `POST /api/executions/{id}/disposition`: what a person
/// decided and who they are. Unknown fields are ignored, as for
/// [`NewScenario`]; an `outcome` other than `passed` or `inconclusive`
/// fails to parse (400).
#[derive(Debug, Deserialize)]
pub(crate) struct Disposition {
    outcome: Reviewed,
    decided_by: String,
}

/// What an execution targets, found in the caller's tenant.
struct Target<'a> {
    name: &'a str,
    project_id: u64,
    outcome: Outcome,
    human_step: bool,
}

/// The data, leak mode, executions and draft tests.
pub(crate) struct Store {
    data: Seed,
    leak: bool,
    executions: BTreeMap<u64, Execution>,
    last_execution: u64,
    drafts: Drafts,
    /// Per project, how many times its tests or drafts changed since the
    /// store was built (absent: never). A project's tests' version.
    revisions: BTreeMap<u64, u64>,
}

/// A project's tests as `GET /api/projects/{id}/tests` reads them: the
/// project, its version, and its API scenarios and UI tests by id.
pub(crate) struct ProjectTests<'a> {
    pub(crate) project: &'a Project,
    /// `r<n>`: changes whenever the project's tests or drafts change. A
    /// reset or a seed load starts counting again, with the data.
    pub(crate) version: String,
    pub(crate) tests: Vec<(Kind, &'a Test)>,
}

impl Store {
    /// A store holding `seed`'s rows in id order, leak off, no executions.
    pub(crate) fn new(mut seed: Seed) -> Store {
        seed.projects.sort_by_key(|r| r.id);
        seed.applications.sort_by_key(|r| r.id);
        seed.environments.sort_by_key(|r| r.id);
        seed.scenarios.sort_by_key(|r| r.id);
        seed.ui_tests.sort_by_key(|r| r.id);
        seed.pipelines.sort_by_key(|r| r.id);
        Store {
            data: seed,
            leak: false,
            executions: BTreeMap::new(),
            last_execution: 0,
            drafts: Drafts::default(),
            revisions: BTreeMap::new(),
        }
    }

    pub(crate) fn set_leak(&mut self, on: bool) {
        self.leak = on;
    }

    pub(crate) fn leaking(&self) -> bool {
        self.leak
    }

    /// THE tenant predicate of every read.
    fn visible(&self, row_tenant: &str, tenant: &str) -> bool {
        self.leak || row_tenant == tenant
    }

    /// The projects hidden from `person` (none: a request without an
    /// identity assertion): those whose `people` do not name them.
    pub(crate) fn hidden_from(&self, person: Option<&str>) -> std::collections::BTreeSet<u64> {
        let named = |people: &Vec<String>| person.is_some_and(|p| people.iter().any(|q| q == p));
        (self.data.projects.iter())
            .filter(|p| p.people.as_ref().is_some_and(|people| !named(people)))
            .map(|p| p.id)
            .collect()
    }

    pub(crate) fn projects(&self, tenant: &str) -> Vec<&Project> {
        self.data
            .projects
            .iter()
            .filter(|p| self.visible(&p.tenant, tenant))
            .collect()
    }

    /// 404 when the project is not visible to the caller.
    pub(crate) fn applications(
        &self,
        tenant: &str,
        project_id: u64,
    ) -> Result<Vec<&Application>, ApiError> {
        if !self.projects(tenant).iter().any(|p| p.id == project_id) {
            return Err(ApiError::not_found("project", project_id));
        }
        let apps = self.data.applications.iter();
        Ok(apps
            .filter(|a| a.project_id == project_id && self.visible(&a.tenant, tenant))
            .collect())
    }

    /// With a project: that project's environments plus the shared ones.
    pub(crate) fn environments(&self, tenant: &str, project_id: Option<u64>) -> Vec<&Environment> {
        let in_scope = |e: &&Environment| {
            project_id.is_none() || e.project_id.is_none() || e.project_id == project_id
        };
        let envs = self.data.environments.iter().filter(in_scope);
        envs.filter(|e| self.visible(&e.tenant, tenant)).collect()
    }

    pub(crate) fn scenarios(&self, tenant: &str, filter: &Filter) -> Vec<&Test> {
        self.tests(&self.data.scenarios, tenant, filter)
    }

    pub(crate) fn ui_tests(&self, tenant: &str, filter: &Filter) -> Vec<&Test> {
        self.tests(&self.data.ui_tests, tenant, filter)
    }

    fn tests<'a>(&'a self, rows: &'a [Test], tenant: &str, filter: &Filter) -> Vec<&'a Test> {
        let tagged =
            |t: &&Test| filter.tags.is_empty() || t.tags.iter().any(|g| filter.tags.contains(g));
        let in_project = |t: &&Test| filter.project_id.is_none_or(|p| t.project_id == p);
        let rows = rows.iter().filter(tagged).filter(in_project);
        rows.filter(|t| self.visible(&t.tenant, tenant)).collect()
    }

    pub(crate) fn pipelines(&self, tenant: &str, project_id: Option<u64>) -> Vec<&Pipeline> {
        let rows = self
            .data
            .pipelines
            .iter()
            .filter(|p| project_id.is_none_or(|id| p.project_id == id));
        rows.filter(|p| self.visible(&p.tenant, tenant)).collect()
    }

    /// Adds a scenario numbered above every existing id, passing and with
    /// no human step; 400 on a bad name or tags, 404 when the project is
    /// not the caller's or is hidden from them.
    pub(crate) fn create_scenario(
        &mut self,
        tenant: &str,
        sees: &Sees,
        new: NewScenario,
    ) -> Result<&Test, ApiError> {
        let name = checked_name(&new.name)?;
        let tags = checked_tags(new.tags)?;
        let owned = |p: &Project| p.id == new.project_id && p.tenant == tenant;
        if !sees.project(new.project_id) || !self.data.projects.iter().any(owned) {
            return Err(ApiError::not_found("project", new.project_id));
        }
        let id = self.next_id();
        self.touch(new.project_id);
        let (project_id, tenant, outcome) = (new.project_id, tenant.to_owned(), Outcome::Passed);
        self.data.scenarios.push(Test {
            id,
            name,
            project_id,
            tags,
            tenant,
            outcome,
            human_step: false,
        });
        Ok(&self.data.scenarios[self.data.scenarios.len() - 1])
    }

    /// The caller's project `project_id` with its version and its tests
    /// (API scenarios and UI tests, by id); 404 when it is not visible.
    pub(crate) fn project_tests(
        &self,
        tenant: &str,
        project_id: u64,
    ) -> Result<ProjectTests<'_>, ApiError> {
        let project = self.project(tenant, project_id)?;
        let filter = Filter {
            tags: Vec::new(),
            project_id: Some(project_id),
        };
        let scenarios = self.scenarios(tenant, &filter).into_iter();
        let ui = self.ui_tests(tenant, &filter).into_iter();
        let mut tests: Vec<(Kind, &Test)> = (scenarios.map(|t| (Kind::ApiScenario, t)))
            .chain(ui.map(|t| (Kind::UiTest, t)))
            .collect();
        tests.sort_by_key(|(_, t)| t.id);
        let revision = self.revisions.get(&project_id).copied().unwrap_or(0);
        Ok(ProjectTests {
            project,
            version: format!("r{revision}"),
            tests,
        })
    }

    /// The drafts of the caller's project `project_id`, in id order; 404
    /// when the project is not visible.
    pub(crate) fn drafts(&self, tenant: &str, project_id: u64) -> Result<Vec<&Draft>, ApiError> {
        self.project(tenant, project_id)?;
        Ok(self
            .drafts
            .of_project(project_id, |t| self.visible(t, tenant)))
    }

    /// Drafts `new`'s tests in the caller's project `project_id` as one
    /// batch, numbered above every existing id. 404 unless the project is
    /// the caller's and the environment is the caller's and shared or the
    /// project's; 422 as [`Drafts::create`] says. Nothing is written on error.
    pub(crate) fn create_drafts(
        &mut self,
        tenant: &str,
        project_id: u64,
        new: NewDrafts,
    ) -> Result<Batch, ApiError> {
        let owned = |p: &Project| p.id == project_id && p.tenant == tenant;
        if !self.data.projects.iter().any(owned) {
            return Err(ApiError::not_found("project", project_id));
        }
        let environment_id = new.environment_id();
        let usable = |e: &Environment| {
            e.id == environment_id
                && e.tenant == tenant
                && e.project_id.is_none_or(|p| p == project_id)
        };
        if !self.data.environments.iter().any(usable) {
            return Err(ApiError::not_found("environment", environment_id));
        }
        let tests = self.data.scenarios.iter().chain(&self.data.ui_tests);
        let test_ids = (tests.filter(|t| t.project_id == project_id && t.tenant == tenant))
            .map(|t| t.id)
            .collect();
        let scope = Scope {
            tenant,
            project_id,
            test_ids,
        };
        let first_id = self.next_id();
        let batch = self.drafts.create(&scope, new, first_id)?;
        self.touch(project_id);
        Ok(batch)
    }

    /// The caller's (or, leaking, anyone's) project `id`; 404 otherwise.
    fn project(&self, tenant: &str, id: u64) -> Result<&Project, ApiError> {
        (self.data.projects.iter())
            .find(|p| p.id == id && self.visible(&p.tenant, tenant))
            .ok_or_else(|| ApiError::not_found("project", id))
    }

    /// An id above every row's and draft's, so an id never names two things.
    fn next_id(&self) -> u64 {
        self.data.max_id().max(self.drafts.max_id()) + 1
    }

    /// Notes that project `id`'s tests or drafts changed: a new version.
    fn touch(&mut self, id: u64) {
        *self.revisions.entry(id).or_default() += 1;
    }

    /// Starts an execution; 404 unless the target is the caller's, of a
    /// project they see, and the environment is the caller's and shared or
    /// of the target's project.
    pub(crate) fn start(
        &mut self,
        tenant: &str,
        sees: &Sees,
        new: NewExecution,
        now: Instant,
    ) -> Result<&Execution, ApiError> {
        let target = self.target(tenant, new.kind, new.target_id)?;
        if !sees.project(target.project_id) {
            return Err(ApiError::not_found("target", new.target_id));
        }
        let environment = self
            .data
            .environments
            .iter()
            .find(|e| e.id == new.environment_id && e.tenant == tenant)
            .filter(|e| e.project_id.is_none_or(|p| p == target.project_id))
            .ok_or_else(|| ApiError::not_found("environment", new.environment_id))?;
        let number = self.last_execution + 1;
        let execution = Execution {
            id: format!("ex-{number}"),
            tenant: tenant.to_owned(),
            kind: new.kind,
            target_id: new.target_id,
            target_name: target.name.to_owned(),
            environment_id: environment.id,
            environment: environment.name.clone(),
            outcome: target.outcome,
            human_step: target.human_step,
            review: None,
            created: now,
            reads: 0,
        };
        self.last_execution = number;
        Ok(self.executions.entry(number).or_insert(execution))
    }

    fn target(&self, tenant: &str, kind: Kind, id: u64) -> Result<Target<'_>, ApiError> {
        let found = match kind {
            Kind::ApiScenario => find_test(&self.data.scenarios, tenant, id),
            Kind::UiTest => find_test(&self.data.ui_tests, tenant, id),
            Kind::Pipeline => {
                let mut rows = self.data.pipelines.iter();
                let row = rows.find(|p| p.id == id && p.tenant == tenant);
                row.map(|p| Target {
                    name: &p.name,
                    project_id: p.project_id,
                    outcome: p.outcome,
                    human_step: false,
                })
            }
        };
        found.ok_or_else(|| ApiError::not_found("target", id))
    }

    /// The caller's execution `ex-<n>`; 404 for anyone else's.
    pub(crate) fn execution(&mut self, tenant: &str, id: &str) -> Result<&mut Execution, ApiError> {
        let number = id.strip_prefix("ex-").and_then(|n| n.parse::<u64>().ok());
        let execution = number.and_then(|n| self.executions.get_mut(&n));
        execution
            .filter(|e| e.tenant == tenant)
            .ok_or_else(|| ApiError::not_found("execution", id))
    }

    /// Records a person's disposition of the caller's execution `id`: 400
    /// on a blank or overlong `decided_by`, 404 for anyone else's, 409
    /// `not waiting` unless it is `WAITING_HUMAN` now.
    pub(crate) fn decide(
        &mut self,
        tenant: &str,
        id: &str,
        disposition: Disposition,
        advance: Advance,
        now: Instant,
    ) -> Result<&Execution, ApiError> {
        let review = Review {
            outcome: disposition.outcome,
            decided_by: checked_decider(&disposition.decided_by)?,
        };
        let execution = self.execution(tenant, id)?;
        execution
            .decide(review, advance, now)
            .map_err(|_| ApiError::Conflict("not waiting".into()))?;
        Ok(execution)
    }
}

fn find_test<'a>(rows: &'a [Test], tenant: &str, id: u64) -> Option<Target<'a>> {
    let row = rows.iter().find(|t| t.id == id && t.tenant == tenant)?;
    Some(Target {
        name: &row.name,
        project_id: row.project_id,
        outcome: row.outcome,
        human_step: row.human_step,
    })
}

fn checked_decider(decided_by: &str) -> Result<String, ApiError> {
    let who = decided_by.trim();
    match who.chars().count() {
        0 => Err(ApiError::BadRequest("decided_by must not be empty".into())),
        n if n > MAX_DECIDED_BY_CHARS => Err(ApiError::BadRequest(format!(
            "decided_by is longer than {MAX_DECIDED_BY_CHARS} characters"
        ))),
        _ => Ok(who.to_owned()),
    }
}

pub(crate) fn checked_name(name: &str) -> Result<String, ApiError> {
    let name = name.trim();
    match name.chars().count() {
        0 => Err(ApiError::BadRequest("name must not be empty".into())),
        n if n > MAX_NAME_CHARS => Err(ApiError::BadRequest(format!(
            "name is longer than {MAX_NAME_CHARS} characters"
        ))),
        _ => Ok(name.to_owned()),
    }
}

pub(crate) fn checked_tags(tags: Vec<String>) -> Result<Vec<String>, ApiError> {
    if tags.len() > MAX_TAGS {
        return Err(ApiError::BadRequest(format!("more than {MAX_TAGS} tags")));
    }
    let bad = |t: &String| t.trim().is_empty() || t.chars().count() > MAX_TAG_CHARS;
    match tags.iter().find(|t| bad(t)) {
        Some(t) => Err(ApiError::BadRequest(format!(
            "tag {t:?} must be 1 to {MAX_TAG_CHARS} characters"
        ))),
        None => Ok(tags),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn ids<T>(rows: &[&T], id: impl Fn(&T) -> u64) -> Vec<u64> {
        rows.iter().map(|r| id(r)).collect()
    }

    #[test]
    fn a_hidden_projects_tests_cannot_be_run_or_added_to() {
        let mut store = Store::new(Seed::contract());
        let sees = Sees::new([1].into());
        let run = NewExecution {
            kind: Kind::ApiScenario,
            target_id: 204,
            environment_id: 11,
        };
        let refused = store.start("demo", &sees, run, Instant::now());
        assert!(matches!(refused, Err(ApiError::NotFound(_))), "{refused:?}");
        let new = NewScenario {
            project_id: 1,
            name: "Hidden".into(),
            tags: Vec::new(),
        };
        let refused = store.create_scenario("demo", &sees, new);
        assert!(matches!(refused, Err(ApiError::NotFound(_))), "{refused:?}");
    }

    #[test]
    fn a_project_with_people_is_hidden_from_everyone_else_and_from_nobody() {
        let mut seed = Seed::contract();
        for p in seed.projects.iter_mut().filter(|p| p.name == "auth") {
            p.people = Some(vec!["u_ann".into()]);
        }
        let store = Store::new(seed);
        assert!(store.hidden_from(Some("u_ann")).is_empty());
        let hidden = [2].into();
        assert_eq!(store.hidden_from(Some("u_bob")), hidden);
        assert_eq!(store.hidden_from(None), hidden);
        assert!(Store::new(Seed::contract()).hidden_from(None).is_empty());
    }

    #[test]
    fn reads_keep_the_callers_tenant_unless_leaking() {
        let mut store = Store::new(Seed::contract());
        assert_eq!(ids(&store.projects("acme"), |p| p.id), [101, 102]);
        store.set_leak(true);
        assert_eq!(ids(&store.projects("acme"), |p| p.id), [1, 2, 101, 102]);
    }

    #[test]
    fn a_tag_filter_keeps_rows_with_any_of_the_tags() {
        let store = Store::new(Seed::contract());
        let filter = |tags: &[&str], project_id| Filter {
            tags: tags.iter().map(|&t| t.into()).collect(),
            project_id,
        };
        assert_eq!(
            ids(
                &store.scenarios("demo", &filter(&["smoke"], Some(1))),
                |t| t.id
            ),
            [204, 205]
        );
        let any = store.scenarios("demo", &filter(&["regression", "smoke"], None));
        assert_eq!(ids(&any, |t| t.id), [204, 205, 206, 301, 302]);
    }

    #[test]
    fn an_environment_of_another_project_cannot_run_a_target() {
        let mut seed = Seed::contract();
        seed.environments.push(Environment {
            id: 14,
            name: "auth-only".into(),
            project_id: Some(2),
            tenant: "demo".into(),
            tags: vec![],
        });
        let mut store = Store::new(seed);
        let new = NewExecution {
            kind: Kind::ApiScenario,
            target_id: 204,
            environment_id: 14,
        };
        assert!(matches!(
            store.start("demo", &Sees::default(), new, Instant::now()),
            Err(ApiError::NotFound(_))
        ));
        let new = NewExecution {
            kind: Kind::ApiScenario,
            target_id: 301,
            environment_id: 14,
        };
        assert_eq!(
            store
                .start("demo", &Sees::default(), new, Instant::now())
                .map(|e| e.id.clone())
                .ok(),
            Some("ex-1".into())
        );
    }

    #[test]
    fn a_disposition_reaches_only_the_callers_waiting_execution() {
        let mut store = Store::new(Seed::contract());
        let new = NewExecution {
            kind: Kind::ApiScenario,
            target_id: 207,
            environment_id: 12,
        };
        let now = Instant::now();
        store
            .start("demo", &Sees::default(), new, now)
            .expect("207 is demo's");
        let disposition = |who: &str| Disposition {
            outcome: Reviewed::Passed,
            decided_by: who.into(),
        };
        let mut decide = |tenant, who| {
            let d = disposition(who);
            (store.decide(tenant, "ex-1", d, Advance::Every(Duration::ZERO), now))
                .map(|e| e.review.clone())
        };
        assert!(matches!(decide("demo", " "), Err(ApiError::BadRequest(_))));
        assert!(matches!(decide("acme", "ann"), Err(ApiError::NotFound(_))));
        let decided = decide("demo", " ann ").expect("waiting");
        assert_eq!(decided.map(|r| r.decided_by).as_deref(), Some("ann"));
        assert!(matches!(decide("demo", "bob"), Err(ApiError::Conflict(_))));
    }

    #[test]
    fn a_name_must_be_one_to_two_hundred_characters() {
        assert!(checked_name("  ").is_err());
        assert!(checked_name(&"é".repeat(201)).is_err());
        assert_eq!(checked_name(" Cart ").ok(), Some("Cart".into()));
    }
}
