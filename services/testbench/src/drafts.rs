//! Draft tests: the tests a test plan proposes for a project, created
//! together in one request as one batch.
//!
//! A draft is never active: no execution runs it, no test list shows it,
//! and the test it `replaces` (one of the project's tests) is untouched.
//! Putting a draft into service is a later step this backend does not
//! model. A batch is checked whole before anything is written: one bad
//! test refuses them all.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::store::{checked_name, checked_tags};

/// Most tests one request may draft: a plan is read by a person before it
/// is applied, and 200 is what the `testbench` plugin's plans may hold.
pub(crate) const MAX_DRAFTS_PER_REQUEST: usize = 200;

/// The body of `POST /api/projects/{id}/test-drafts`. Unknown fields are
/// ignored, as for the other bodies.
#[derive(Debug, Deserialize)]
pub(crate) struct NewDrafts {
    /// The environment the plan is for: the caller's, shared or the project's.
    environment_id: u64,
    tests: Vec<NewDraft>,
}

/// One test of [`NewDrafts`].
#[derive(Debug, Deserialize)]
pub(crate) struct NewDraft {
    name: String,
    #[serde(default)]
    tags: Vec<String>,
    /// A test of the project this draft would replace.
    #[serde(default)]
    replaces: Option<u64>,
}

/// A draft as `GET /api/projects/{id}/test-drafts` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Draft {
    id: u64,
    name: String,
    project_id: u64,
    tags: Vec<String>,
    /// Always `draft`.
    status: &'static str,
    replaces: Option<u64>,
    environment_id: u64,
    /// Shared by the drafts one request created.
    batch: u64,
    tenant: String,
}

/// What a successful `POST` answers: the batch and its drafts, in order.
#[derive(Debug, Serialize)]
pub(crate) struct Batch {
    batch: u64,
    drafts: Vec<Draft>,
}

/// What a batch is checked against, found by the store in the caller's
/// tenant (which has also checked the environment): the project and the
/// ids of its tests.
pub(crate) struct Scope<'a> {
    pub(crate) tenant: &'a str,
    pub(crate) project_id: u64,
    pub(crate) test_ids: BTreeSet<u64>,
}

/// Every draft, in id order, and the last batch number.
#[derive(Debug, Default)]
pub(crate) struct Drafts {
    rows: Vec<Draft>,
    last_batch: u64,
}

impl NewDrafts {
    /// The environment the batch names.
    pub(crate) fn environment_id(&self) -> u64 {
        self.environment_id
    }
}

impl Drafts {
    /// The drafts of `project_id` that `visible` keeps (by tenant), in id order.
    pub(crate) fn of_project(
        &self,
        project_id: u64,
        visible: impl Fn(&str) -> bool,
    ) -> Vec<&Draft> {
        (self.rows.iter())
            .filter(|d| d.project_id == project_id && visible(&d.tenant))
            .collect()
    }

    /// The largest draft id (0 without drafts).
    pub(crate) fn max_id(&self) -> u64 {
        self.rows.last().map_or(0, |d| d.id)
    }

    /// Checks `new` whole against `scope`, then adds its tests as one
    /// batch numbered from `first_id`. 422 naming the first bad test: none,
    /// more than [`MAX_DRAFTS_PER_REQUEST`], a blank or overlong name, bad
    /// tags, a name or a `replaces` given twice, a `replaces` that is not a
    /// test of the project.
    pub(crate) fn create(
        &mut self,
        scope: &Scope<'_>,
        new: NewDrafts,
        first_id: u64,
    ) -> Result<Batch, ApiError> {
        let tests = checked(scope, new.tests)?;
        let batch = self.last_batch + 1;
        let drafts: Vec<Draft> = (tests.into_iter().zip(first_id..))
            .map(|(t, id)| Draft {
                id,
                name: t.name,
                project_id: scope.project_id,
                tags: t.tags,
                status: "draft",
                replaces: t.replaces,
                environment_id: new.environment_id,
                batch,
                tenant: scope.tenant.to_owned(),
            })
            .collect();
        self.last_batch = batch;
        self.rows.extend(drafts.iter().cloned());
        Ok(Batch { batch, drafts })
    }
}

/// The tests with names trimmed, or the first reason to refuse them all.
fn checked(scope: &Scope<'_>, tests: Vec<NewDraft>) -> Result<Vec<NewDraft>, ApiError> {
    if tests.is_empty() {
        return Err(ApiError::Unprocessable("tests must not be empty".into()));
    }
    if tests.len() > MAX_DRAFTS_PER_REQUEST {
        return Err(ApiError::Unprocessable(format!(
            "more than {MAX_DRAFTS_PER_REQUEST} tests"
        )));
    }
    let (mut names, mut replaced) = (BTreeSet::new(), BTreeSet::new());
    let mut out = Vec::with_capacity(tests.len());
    for (i, t) in tests.into_iter().enumerate() {
        let refuse = |m: String| ApiError::Unprocessable(format!("tests/{i}: {m}"));
        let name = checked_name(&t.name).map_err(|e| refuse(e.to_string()))?;
        let tags = checked_tags(t.tags).map_err(|e| refuse(e.to_string()))?;
        if !names.insert(name.clone()) {
            return Err(refuse(format!("the name {name:?} is given twice")));
        }
        if let Some(id) = t.replaces {
            if !scope.test_ids.contains(&id) {
                return Err(refuse(format!("replaces {id}, not a test of the project")));
            }
            if !replaced.insert(id) {
                return Err(refuse(format!("test {id} is replaced twice")));
            }
        }
        out.push(NewDraft {
            name,
            tags,
            replaces: t.replaces,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope() -> Scope<'static> {
        Scope {
            tenant: "demo",
            project_id: 1,
            test_ids: BTreeSet::from([204, 205]),
        }
    }

    /// A test's name and the test it replaces.
    type Proposed<'a> = (&'a str, Option<u64>);

    fn new(tests: &[Proposed<'_>]) -> NewDrafts {
        NewDrafts {
            environment_id: 12,
            tests: (tests.iter())
                .map(|(name, replaces)| NewDraft {
                    name: (*name).into(),
                    tags: vec!["smoke".into()],
                    replaces: *replaces,
                })
                .collect(),
        }
    }

    #[test]
    fn a_batch_is_refused_whole_naming_the_first_bad_test() {
        let many: Vec<(String, Option<u64>)> = (0..=MAX_DRAFTS_PER_REQUEST)
            .map(|i| (format!("t{i}"), None))
            .collect();
        let many: Vec<Proposed<'_>> = many.iter().map(|(n, r)| (n.as_str(), *r)).collect();
        let cases: [(&[Proposed<'_>], &str); 6] = [
            (&[], "tests must not be empty"),
            (&many, "more than 200 tests"),
            (
                &[("Cart", None), ("  ", None)],
                "tests/1: name must not be empty",
            ),
            (
                &[("Cart", None), (" Cart ", None)],
                "tests/1: the name \"Cart\" is given twice",
            ),
            (
                &[("A", Some(204)), ("B", Some(206))],
                "tests/1: replaces 206, not a test of the project",
            ),
            (
                &[("A", Some(204)), ("B", Some(204))],
                "tests/1: test 204 is replaced twice",
            ),
        ];
        for (tests, want) in cases {
            let mut drafts = Drafts::default();
            let err = drafts.create(&scope(), new(tests), 700).expect_err(want);
            assert_eq!(err.to_string(), want);
            assert!(matches!(err, ApiError::Unprocessable(_)), "{want}");
            assert_eq!(
                (drafts.max_id(), drafts.last_batch),
                (0, 0),
                "{want}: nothing written"
            );
        }
    }

    #[test]
    fn one_request_is_one_batch_of_trimmed_drafts_numbered_from_the_first_id() {
        let mut drafts = Drafts::default();
        let first = drafts
            .create(
                &scope(),
                new(&[(" Login ", Some(204)), ("Cart v2", None)]),
                700,
            )
            .expect("valid");
        assert_eq!(first.batch, 1);
        let rows: Vec<(u64, &str, Option<u64>, u64)> = (first.drafts.iter())
            .map(|d| (d.id, d.name.as_str(), d.replaces, d.batch))
            .collect();
        assert_eq!(
            rows,
            [(700, "Login", Some(204), 1), (701, "Cart v2", None, 1)]
        );
        assert!(
            first
                .drafts
                .iter()
                .all(|d| d.status == "draft" && d.environment_id == 12)
        );
        let second = drafts
            .create(&scope(), new(&[("Refund", None)]), 702)
            .expect("valid");
        assert_eq!((second.batch, drafts.max_id()), (2, 702));
        assert_eq!(drafts.of_project(1, |t| t == "demo").len(), 3);
        assert!(drafts.of_project(1, |t| t == "acme").is_empty());
        assert!(drafts.of_project(2, |_| true).is_empty());
    }
}
