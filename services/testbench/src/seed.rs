//! The data a backend starts from: every tenant's projects, applications,
//! environments, tests and pipelines, as plain rows.
//!
//! A seed is loaded from JSON (`--seed path.json`, `POST /_test/seed`) or is
//! one of the built-ins: [`Seed::contract`], which reproduces the documented
//! `run_by_tag` conversation, and [`Seed::empty`].

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// The whole data set. Missing arrays are empty; unknown fields are refused,
/// so a typo in a test's seed fails loudly instead of seeding nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Seed {
    /// Projects, each owned by one tenant.
    pub projects: Vec<Project>,
    /// Applications, each in one project.
    pub applications: Vec<Application>,
    /// Environments: instance-shared (`project_id: null`) or a project's own.
    pub environments: Vec<Environment>,
    /// API scenarios (execution kind `api_scenario`).
    pub scenarios: Vec<Test>,
    /// UI tests (execution kind `ui_test`).
    pub ui_tests: Vec<Test>,
    /// Pipelines (execution kind `pipeline`).
    pub pipelines: Vec<Pipeline>,
}

/// A project.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Project {
    /// Unique among projects, across tenants.
    pub id: u64,
    /// Display name; namesakes may exist in other tenants.
    pub name: String,
    /// The owning tenant.
    pub tenant: String,
    /// Row authority: when set, only these people (the `sub` of the host's
    /// identity assertion) see the project and its rows; the rest of the
    /// tenant, and a request without an assertion, do not. Unset: the whole
    /// tenant sees it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub people: Option<Vec<String>>,
}

/// An application of a project.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Application {
    /// Unique among applications.
    pub id: u64,
    /// Display name.
    pub name: String,
    /// The project it belongs to, in the same tenant.
    pub project_id: u64,
    /// The owning tenant.
    pub tenant: String,
}

/// An environment executions run in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Environment {
    /// Unique among environments.
    pub id: u64,
    /// Display name.
    pub name: String,
    /// `None`: shared by every project of the tenant.
    pub project_id: Option<u64>,
    /// The owning tenant.
    pub tenant: String,
    /// Free-form tags such as `prod`.
    #[serde(default)]
    pub tags: Vec<String>,
}

/// An API scenario or a UI test.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Test {
    /// Unique within its collection.
    pub id: u64,
    /// Display name.
    pub name: String,
    /// The project it belongs to, in the same tenant.
    pub project_id: u64,
    /// Tags the `tag` filter matches, exactly.
    #[serde(default)]
    pub tags: Vec<String>,
    /// The owning tenant.
    pub tenant: String,
    /// What an execution of it ends as.
    #[serde(default)]
    pub outcome: Outcome,
    /// Whether a person reviews a passed run: its execution then waits in
    /// `WAITING_HUMAN` for a disposition instead of ending `PASSED`.
    /// Default `false`.
    #[serde(default)]
    pub human_step: bool,
}

/// A pipeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pipeline {
    /// Unique among pipelines.
    pub id: u64,
    /// Display name.
    pub name: String,
    /// The project it belongs to, in the same tenant.
    pub project_id: u64,
    /// The owning tenant.
    pub tenant: String,
    /// What an execution of it ends as.
    #[serde(default)]
    pub outcome: Outcome,
}

/// What an execution of a test or pipeline ends as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The execution ends `PASSED`.
    #[default]
    Passed,
    /// The execution ends `FAILED`.
    Failed,
}

/// A seed that would make answers ambiguous or cross tenants by itself.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SeedError {
    /// Two rows of one collection share an id.
    #[error("seed: {collection} id {id} appears more than once")]
    DuplicateId {
        /// The collection, e.g. `scenarios`.
        collection: &'static str,
        /// The repeated id.
        id: u64,
    },
    /// A row names a project that is missing or belongs to another tenant.
    #[error(
        "seed: {collection} id {id} names project {project_id}, which tenant {tenant:?} does not have"
    )]
    UnknownProject {
        /// The collection, e.g. `applications`.
        collection: &'static str,
        /// The row's id.
        id: u64,
        /// The project it names.
        project_id: u64,
        /// The row's tenant.
        tenant: String,
    },
}

impl Seed {
    /// No data at all.
    pub fn empty() -> Seed {
        Seed::default()
    }

    /// The built-in seed `contract`: tenant `demo` reproduces the documented
    /// `run_by_tag` conversation (the only smoke tests in payments are
    /// scenarios 204 and 205, 205 fails) and holds one human-step scenario,
    /// 207 `Checkout manual review` (tag `manual`); tenant `acme` holds a
    /// namesake `payments` project and a namesake `Login flow` scenario.
    pub fn contract() -> Seed {
        use Outcome::{Failed, Passed};
        Seed {
            projects: vec![
                project(1, "payments", "demo"),
                project(2, "auth", "demo"),
                project(101, "payments", "acme"),
                project(102, "billing", "acme"),
            ],
            applications: vec![
                application(51, "checkout-web", 1, "demo"),
                application(52, "payments-api", 1, "demo"),
                application(53, "auth-service", 2, "demo"),
            ],
            environments: vec![
                environment(11, "dev", "demo", &[]),
                environment(12, "staging", "demo", &[]),
                environment(13, "prod", "demo", &["prod"]),
                environment(21, "dev", "acme", &[]),
            ],
            scenarios: vec![
                test(204, "Login flow", 1, &["smoke"], "demo", Passed),
                test(205, "Cart", 1, &["smoke"], "demo", Failed),
                test(206, "Refund", 1, &["regression"], "demo", Passed),
                Test {
                    human_step: true,
                    ..test(
                        207,
                        "Checkout manual review",
                        1,
                        &["manual"],
                        "demo",
                        Passed,
                    )
                },
                test(301, "Login flow", 2, &["smoke"], "demo", Passed),
                test(302, "Password reset", 2, &["smoke"], "demo", Passed),
                test(601, "Login flow", 101, &["smoke"], "acme", Passed),
            ],
            ui_tests: vec![
                test(401, "Checkout page", 1, &["regression"], "demo", Passed),
                test(402, "Sign-in page", 2, &["regression"], "demo", Passed),
            ],
            pipelines: vec![
                pipeline(501, "nightly", 1, "demo"),
                pipeline(502, "release", 2, "demo"),
            ],
        }
    }

    /// A built-in seed by name: `contract` or `empty`.
    pub fn named(name: &str) -> Option<Seed> {
        match name {
            "contract" => Some(Seed::contract()),
            "empty" => Some(Seed::empty()),
            _ => None,
        }
    }

    /// Refuses repeated ids within a collection, and rows whose project is
    /// missing or in another tenant (a seed must not cross tenants on its
    /// own: only leak mode does that).
    pub fn check(&self) -> Result<(), SeedError> {
        unique("projects", self.projects.iter().map(|p| p.id))?;
        let owners: BTreeMap<u64, &str> = self
            .projects
            .iter()
            .map(|p| (p.id, p.tenant.as_str()))
            .collect();
        for (collection, rows) in self.links() {
            unique(collection, rows.iter().map(|r| r.id))?;
            let foreign = rows.iter().find_map(|r| {
                let p = r.project_id?;
                (owners.get(&p) != Some(&r.tenant)).then_some((r, p))
            });
            if let Some((row, project_id)) = foreign {
                return Err(SeedError::UnknownProject {
                    collection,
                    id: row.id,
                    project_id,
                    tenant: row.tenant.to_owned(),
                });
            }
        }
        Ok(())
    }

    /// Every non-project row, by collection, as the ids [`Seed::check`] reads.
    fn links(&self) -> [(&'static str, Vec<Link<'_>>); 5] {
        let link = |id, project_id, tenant| Link {
            id,
            project_id,
            tenant,
        };
        let apps = self.applications.iter();
        let envs = self.environments.iter();
        let pipes = self.pipelines.iter();
        [
            (
                "applications",
                apps.map(|a| link(a.id, Some(a.project_id), &a.tenant))
                    .collect(),
            ),
            (
                "environments",
                envs.map(|e| link(e.id, e.project_id, &e.tenant)).collect(),
            ),
            ("scenarios", test_links(&self.scenarios)),
            ("ui_tests", test_links(&self.ui_tests)),
            (
                "pipelines",
                pipes
                    .map(|p| link(p.id, Some(p.project_id), &p.tenant))
                    .collect(),
            ),
        ]
    }

    /// The largest id of any row of any kind (0 when empty); new rows are
    /// numbered above it, so an id never names two things.
    pub fn max_id(&self) -> u64 {
        let ids = self
            .projects
            .iter()
            .map(|r| r.id)
            .chain(self.applications.iter().map(|r| r.id))
            .chain(self.environments.iter().map(|r| r.id))
            .chain(self.scenarios.iter().map(|r| r.id))
            .chain(self.ui_tests.iter().map(|r| r.id))
            .chain(self.pipelines.iter().map(|r| r.id));
        ids.max().unwrap_or(0)
    }
}

/// A row's id, project and tenant, for [`Seed::check`].
struct Link<'a> {
    id: u64,
    project_id: Option<u64>,
    tenant: &'a str,
}

fn test_links(tests: &[Test]) -> Vec<Link<'_>> {
    tests
        .iter()
        .map(|t| Link {
            id: t.id,
            project_id: Some(t.project_id),
            tenant: &t.tenant,
        })
        .collect()
}

fn unique(collection: &'static str, ids: impl Iterator<Item = u64>) -> Result<(), SeedError> {
    let mut seen = BTreeSet::new();
    ids.into_iter().try_for_each(|id| match seen.insert(id) {
        true => Ok(()),
        false => Err(SeedError::DuplicateId { collection, id }),
    })
}

fn project(id: u64, name: &str, tenant: &str) -> Project {
    Project {
        id,
        name: name.into(),
        tenant: tenant.into(),
        people: None,
    }
}

fn application(id: u64, name: &str, project_id: u64, tenant: &str) -> Application {
    Application {
        id,
        name: name.into(),
        project_id,
        tenant: tenant.into(),
    }
}

fn environment(id: u64, name: &str, tenant: &str, tags: &[&str]) -> Environment {
    let tags = tags.iter().map(|&t| t.into()).collect();
    Environment {
        id,
        name: name.into(),
        project_id: None,
        tenant: tenant.into(),
        tags,
    }
}

fn test(
    id: u64,
    name: &str,
    project_id: u64,
    tags: &[&str],
    tenant: &str,
    outcome: Outcome,
) -> Test {
    let tags = tags.iter().map(|&t| t.into()).collect();
    Test {
        id,
        name: name.into(),
        project_id,
        tags,
        tenant: tenant.into(),
        outcome,
        human_step: false,
    }
}

fn pipeline(id: u64, name: &str, project_id: u64, tenant: &str) -> Pipeline {
    Pipeline {
        id,
        name: name.into(),
        project_id,
        tenant: tenant.into(),
        outcome: Outcome::Passed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_contract_seed_passes_its_own_checks() {
        assert_eq!(Seed::contract().check(), Ok(()));
        assert_eq!(Seed::contract().max_id(), 601);
    }

    #[test]
    fn the_only_smoke_tests_in_payments_are_204_and_205() {
        let seed = Seed::contract();
        let smoke = |t: &&Test| t.project_id == 1 && t.tags.iter().any(|g| g == "smoke");
        let ids: Vec<u64> = seed
            .scenarios
            .iter()
            .chain(&seed.ui_tests)
            .filter(smoke)
            .map(|t| t.id)
            .collect();
        assert_eq!(ids, [204, 205]);
    }

    #[test]
    fn the_only_human_step_test_is_207_in_payments() {
        let seed = Seed::contract();
        let human: Vec<(u64, u64)> = (seed.scenarios.iter().chain(&seed.ui_tests))
            .filter(|t| t.human_step)
            .map(|t| (t.id, t.project_id))
            .collect();
        assert_eq!(human, [(207, 1)]);
    }

    #[test]
    fn missing_arrays_default_to_empty_and_outcome_to_passed() {
        let json = r#"{"scenarios":[{"id":1,"name":"a","project_id":9,"tenant":"t"}]}"#;
        let seed: Seed = serde_json::from_str(json).expect("a valid seed");
        assert!(seed.projects.is_empty() && seed.pipelines.is_empty());
        assert_eq!(seed.scenarios[0].outcome, Outcome::Passed);
        assert!(!seed.scenarios[0].human_step);
    }

    #[test]
    fn a_row_naming_another_tenants_project_is_refused() {
        let mut seed = Seed::contract();
        seed.scenarios[0].tenant = "acme".into();
        assert!(matches!(
            seed.check(),
            Err(SeedError::UnknownProject { id: 204, .. })
        ));
    }

    #[test]
    fn a_repeated_id_is_refused() {
        let mut seed = Seed::contract();
        seed.pipelines[1].id = 501;
        assert_eq!(
            seed.check(),
            Err(SeedError::DuplicateId {
                collection: "pipelines",
                id: 501
            })
        );
    }

    #[test]
    fn unknown_fields_are_refused() {
        assert!(serde_json::from_str::<Seed>(r#"{"project":[]}"#).is_err());
    }
}
