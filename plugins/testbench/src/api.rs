//! The test platform's HTTP API, through the host's `backend` import: its
//! rows, and one function per request the plugin makes.
//!
//! Every list row carries the `tenant` the backend says it belongs to. The
//! entities export passes it on untouched (the host enforces tenancy on
//! snapshots); tools keep only the caller's rows ([`own`]) before answering.
//!
//! There is no request for a resolved thing's name: the resolver answers it
//! from the host's snapshot, and `GET /api/projects` is that snapshot's
//! (once per conversation), never a tool's.

use serde::de::DeserializeOwned;
use serde_json::Value;
use toolhost_sdk::backend;
use toolhost_sdk::prelude::*;

use crate::kind::TestKind;
use crate::selection::Test;

/// The backend's name in the manifest (`[backends.testbench]`).
const BACKEND: &str = "testbench";

/// A row that belongs to a tenant.
pub trait Owned {
    /// The tenant the backend says the row belongs to.
    fn tenant(&self) -> &str;
}

/// `GET /api/projects`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ProjectRow {
    /// The project's id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its tenant.
    pub tenant: String,
}

/// `GET /api/projects/{id}/applications`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ApplicationRow {
    /// The application's id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its tenant.
    pub tenant: String,
}

/// `GET /api/environments`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EnvironmentRow {
    /// The environment's id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// The project it is scoped to; `None`: shared by the instance.
    pub project_id: Option<i64>,
    /// Its tenant.
    pub tenant: String,
    /// Its tags (`prod` raises a run's risk).
    #[serde(default)]
    pub tags: Vec<String>,
}

/// `GET /api/scenarios`, `/api/ui-tests`, `/api/pipelines`; also the row
/// `POST /api/scenarios` answers, which `create_api_scenario` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TestRow {
    /// The test's (or pipeline's) id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// The project it belongs to.
    pub project_id: i64,
    /// Its tags (pipelines have none).
    #[serde(default)]
    pub tags: Vec<String>,
    /// Its tenant.
    pub tenant: String,
}

/// `GET /api/projects/{id}/tests`: the project, the version of its tests
/// and the tests, by id.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ProjectTestsRow {
    /// The project.
    pub project: ProjectRow,
    /// Changes whenever the project's tests or drafts change.
    pub version: String,
    /// Its API scenarios and UI tests.
    pub tests: Vec<KindedTestRow>,
}

/// One test of [`ProjectTestsRow`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct KindedTestRow {
    /// The test's id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Its tenant.
    pub tenant: String,
}

/// A draft test, as `POST /api/projects/{id}/test-drafts` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DraftRow {
    /// The draft's id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// `draft`: never run until put into service.
    pub status: String,
    /// The project's test it would replace (untouched meanwhile), if any.
    pub replaces: Option<i64>,
    /// The environment the plan was for.
    pub environment_id: i64,
    /// Shared by the drafts of one request.
    pub batch: i64,
}

/// What `POST /api/projects/{id}/test-drafts` answers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BatchRow {
    /// The batch.
    pub batch: i64,
    /// Its drafts, in the plan's order.
    pub drafts: Vec<DraftRow>,
}

/// What `POST /api/executions` answers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct QueuedRow {
    /// The new execution's opaque id.
    #[serde(rename = "executionId")]
    pub execution_id: String,
    /// Its status, `QUEUED`.
    pub status: String,
}

macro_rules! owned {
    ($($row:ty),*) => {$(
        impl Owned for $row {
            fn tenant(&self) -> &str {
                &self.tenant
            }
        }
    )*};
}
owned!(
    ProjectRow,
    ApplicationRow,
    EnvironmentRow,
    TestRow,
    KindedTestRow
);

/// The caller's rows of `rows`, in order. Rows of another tenant mean the
/// backend ignored `X-Tenant`: dropped, and counted in a warning (never
/// named, so no other tenant's data reaches the log).
pub fn own<T: Owned>(ctx: &Ctx, what: &str, rows: Vec<T>) -> Vec<T> {
    let total = rows.len();
    let mine: Vec<T> = rows
        .into_iter()
        .filter(|r| r.tenant() == ctx.tenant)
        .collect();
    if mine.len() < total {
        log::warn!(
            "dropped {} {what} rows of another tenant",
            total - mine.len()
        );
    }
    mine
}

/// `GET path`, a JSON list of rows as the backend sent them.
pub fn list<T: DeserializeOwned>(path: &str) -> Result<Vec<T>, ToolError> {
    backend::get(BACKEND, path)?.ok()?.json()
}

/// Every project, as the backend sent them: for the entities export only.
pub fn projects() -> Result<Vec<ProjectRow>, ToolError> {
    list("/api/projects")
}

/// The caller's applications of project `id`.
pub fn applications(ctx: &Ctx, project: i64) -> Result<Vec<ApplicationRow>, ToolError> {
    let rows = list(&format!("/api/projects/{project}/applications"))?;
    Ok(own(ctx, "application", rows))
}

/// The caller's environments, all or those the backend lists for `project`.
pub fn environments(ctx: &Ctx, project: Option<i64>) -> Result<Vec<EnvironmentRow>, ToolError> {
    let path = match project {
        Some(p) => format!("/api/environments?project_id={p}"),
        None => "/api/environments".to_owned(),
    };
    Ok(own(ctx, "environment", list(&path)?))
}

/// The caller's environment `id`.
pub fn environment(ctx: &Ctx, id: i64) -> Result<EnvironmentRow, ToolError> {
    (environments(ctx, None)?.into_iter())
        .find(|e| e.id == id)
        .ok_or_else(|| ToolError::NotFound(format!("environment {id}")))
}

/// The caller's tests of `kind`, filtered by the backend to `project` and
/// to those with any of `tags` (an empty slice: no tag filter).
pub fn tests(
    ctx: &Ctx,
    kind: TestKind,
    project: Option<i64>,
    tags: &[String],
) -> Result<Vec<TestRow>, ToolError> {
    let mut query = Vec::new();
    if !tags.is_empty() {
        query.push(format!("tag={}", crate::selection::tag_query(tags)));
    }
    if let Some(p) = project {
        query.push(format!("project_id={p}"));
    }
    let mut path = kind.route().to_owned();
    if !query.is_empty() {
        path = format!("{path}?{}", query.join("&"));
    }
    Ok(own(ctx, kind.entity(), list(&path)?))
}

/// The caller's test `id` of `kind`, from the whole list of that kind.
pub fn test(ctx: &Ctx, kind: TestKind, id: i64) -> Result<TestRow, ToolError> {
    (tests(ctx, kind, None, &[])?.into_iter())
        .find(|t| t.id == id)
        .ok_or_else(|| ToolError::NotFound(format!("{} {id}", kind.noun())))
}

/// The longest wait `GET /api/_pace` grants one request, in milliseconds.
pub const MAX_PACE_MS: u32 = 5_000;

/// `GET /api/_pace?ms=N`: the backend answers after waiting `ms` (at most
/// [`MAX_PACE_MS`]). Nothing but time: exploration runs pace their steps
/// with it so a test can watch them.
pub fn pace(ms: u32) -> Result<(), ToolError> {
    backend::get(BACKEND, &format!("/api/_pace?ms={ms}"))?.ok()?;
    Ok(())
}

/// `POST /api/scenarios`: a new API scenario in `project`.
pub fn create_scenario(project: i64, name: &str, tags: &[String]) -> Result<TestRow, ToolError> {
    #[derive(Serialize)]
    struct NewScenario<'a> {
        project_id: i64,
        name: &'a str,
        tags: &'a [String],
    }
    let body = NewScenario {
        project_id: project,
        name,
        tags,
    };
    backend::post_json(BACKEND, "/api/scenarios", &body)?
        .ok()?
        .json()
}

/// `GET /api/projects/{id}/tests`, the project's tests kept to the
/// caller's; a project of another tenant is not found.
pub fn project_tests(ctx: &Ctx, project: i64) -> Result<ProjectTestsRow, ToolError> {
    let path = format!("/api/projects/{project}/tests");
    let mut row: ProjectTestsRow = backend::get(BACKEND, &path)?.ok()?.json()?;
    if row.project.tenant != ctx.tenant {
        log::warn!("dropped a project row of another tenant");
        return Err(ToolError::NotFound(format!("project {project}")));
    }
    row.tests = own(ctx, "test", row.tests);
    Ok(row)
}

/// `POST /api/projects/{id}/test-drafts`: every test of `tests` drafted
/// in one request. 422 (the backend refused the plan, e.g. a `replaces`
/// not of the project) is invalid-arguments with the backend's reason.
pub fn create_drafts(
    project: i64,
    environment: i64,
    tests: &[crate::test_plan::PlannedTest],
) -> Result<BatchRow, ToolError> {
    #[derive(Serialize)]
    struct NewDrafts<'a> {
        environment_id: i64,
        tests: &'a [crate::test_plan::PlannedTest],
    }
    let body = NewDrafts {
        environment_id: environment,
        tests,
    };
    let path = format!("/api/projects/{project}/test-drafts");
    let answer = backend::post_json(BACKEND, &path, &body)?;
    if answer.status == 422 {
        let reason: Value = answer.json().unwrap_or(Value::Null);
        let reason = reason["error"].as_str().unwrap_or("refused").to_owned();
        return Err(ToolError::InvalidArguments(reason));
    }
    answer.ok()?.json()
}

/// `POST /api/executions`: queues `test` in `environment`.
pub fn queue(test: &Test, environment: i64) -> Result<QueuedRow, ToolError> {
    #[derive(Serialize)]
    struct NewExecution {
        kind: TestKind,
        target_id: i64,
        environment_id: i64,
    }
    let body = NewExecution {
        kind: test.kind,
        target_id: test.id,
        environment_id: environment,
    };
    backend::post_json(BACKEND, "/api/executions", &body)?
        .ok()?
        .json()
}

/// `GET /api/executions/{id}` (or a sub-resource `suffix` such as
/// `/summary`), parsed as `T`; 404 is not-found naming the execution.
pub fn execution<T: DeserializeOwned>(id: &str, suffix: &str) -> Result<T, ToolError> {
    let path = format!("/api/executions/{}{suffix}", backend::escape(id));
    let answer = backend::get(BACKEND, &path)?;
    if answer.status == 404 {
        return Err(ToolError::NotFound(format!("no execution {id:?}")));
    }
    answer.ok()?.json()
}

/// `POST /api/executions/{id}/disposition`: records a person's review of
/// an execution waiting for one, answering the execution as it is now
/// (parsed as `T`). `None`: the backend answered 409, the execution no
/// longer waits (another call carried the same decision first); read it
/// again. 404 is not-found naming the execution.
pub fn dispose<T: DeserializeOwned>(
    id: &str,
    disposition: &impl Serialize,
) -> Result<Option<T>, ToolError> {
    let path = format!("/api/executions/{}/disposition", backend::escape(id));
    let answer = backend::post_json(BACKEND, &path, disposition)?;
    match answer.status {
        404 => Err(ToolError::NotFound(format!("no execution {id:?}"))),
        409 => Ok(None),
        _ => answer.ok()?.json().map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, tenant: &str) -> ProjectRow {
        ProjectRow {
            id,
            name: format!("p{id}"),
            tenant: tenant.into(),
        }
    }

    #[test]
    fn own_keeps_only_the_callers_rows_in_order() {
        let ctx = Ctx::new("c1", "demo", "alice");
        let rows = vec![row(1, "demo"), row(2, "acme"), row(3, "demo")];
        let ids: Vec<i64> = own(&ctx, "project", rows).iter().map(|p| p.id).collect();
        assert_eq!(ids, [1, 3]);
    }

    #[test]
    fn rows_parse_with_null_project_and_missing_tags() {
        let e: EnvironmentRow =
            serde_json::from_str(r#"{"id":11,"name":"dev","project_id":null,"tenant":"demo"}"#)
                .expect("fits");
        assert_eq!((e.project_id, e.tags.len()), (None, 0));
        let q: QueuedRow = serde_json::from_str(
            r#"{"executionId":"ex-1","kind":"api_scenario","target_id":204,"target_name":"Login flow","environment_id":12,"status":"QUEUED"}"#,
        )
        .expect("fits");
        assert_eq!(q.execution_id, "ex-1");
    }
}
