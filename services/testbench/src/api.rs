//! The `/api` routes: the lists, creating scenarios, a project's tests
//! with their version and its draft tests ([`crate::drafts`]), executions,
//! the hostile `_echo` and the test clock `_pace` ([`crate::pace`]). Every
//! route is behind [`crate::guard`]; each handler reads
//! [`Store`](crate::store::Store) under the lock and answers JSON.

use std::collections::BTreeMap;
use std::time::Instant;

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Extension, FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use crate::authority::Sees;
use crate::drafts::NewDrafts;
use crate::error::ApiError;
use crate::execution::{Advance, Execution, Kind};
use crate::guard::{Guarded, Tenant};
use crate::handle::Handle;
use crate::seed::{Pipeline, Test};
use crate::store::{Disposition, Filter, NewExecution, NewScenario, ProjectTests};

pub(crate) fn routes(handle: &Handle) -> Router<Handle> {
    Guarded::new(handle)
        .get("/api/projects", projects)
        .get("/api/projects/{id}/applications", applications)
        .get("/api/projects/{id}/tests", project_tests)
        .get("/api/projects/{id}/test-drafts", drafts)
        .post("/api/projects/{id}/test-drafts", create_drafts)
        .get("/api/environments", environments)
        .get("/api/scenarios", scenarios)
        .post("/api/scenarios", create_scenario)
        .get("/api/ui-tests", ui_tests)
        .get("/api/pipelines", pipelines)
        .post("/api/executions", start_execution)
        .get("/api/executions/{executionId}", execution)
        .get("/api/executions/{executionId}/summary", summary)
        .post("/api/executions/{executionId}/disposition", disposition)
        .get("/api/_echo", echo)
        .get("/api/_pace", crate::pace::pace)
        .into_router()
}

/// The query of the lists: `tag=a,b` (any of) and `project_id=N`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ListQuery {
    tag: Option<String>,
    project_id: Option<u64>,
}

impl ListQuery {
    fn parse(query: Result<Query<ListQuery>, QueryRejection>) -> Result<Filter, ApiError> {
        let Query(q) = query.map_err(|e| ApiError::BadRequest(e.body_text()))?;
        let tags = q.tag.iter().flat_map(|t| t.split(',')).map(str::trim);
        let tags = tags.filter(|t| !t.is_empty()).map(str::to_owned).collect();
        Ok(Filter {
            tags,
            project_id: q.project_id,
        })
    }
}

/// A test as the lists show it: without its scripted outcome.
#[derive(Serialize)]
struct TestRow {
    id: u64,
    name: String,
    project_id: u64,
    tags: Vec<String>,
    tenant: String,
}

impl From<&Test> for TestRow {
    fn from(t: &Test) -> TestRow {
        let (name, tags, tenant) = (t.name.clone(), t.tags.clone(), t.tenant.clone());
        TestRow {
            id: t.id,
            name,
            project_id: t.project_id,
            tags,
            tenant,
        }
    }
}

/// A pipeline as the list shows it: without its scripted outcome.
#[derive(Serialize)]
struct PipelineRow {
    id: u64,
    name: String,
    project_id: u64,
    tenant: String,
}

impl From<&Pipeline> for PipelineRow {
    fn from(p: &Pipeline) -> PipelineRow {
        let (name, tenant) = (p.name.clone(), p.tenant.clone());
        PipelineRow {
            id: p.id,
            name,
            project_id: p.project_id,
            tenant,
        }
    }
}

/// `GET /api/projects/{id}/tests`: the project, the version of its tests
/// (it changes whenever they or its drafts do) and every test, by id.
#[derive(Serialize)]
struct ProjectTestsBody {
    project: ProjectRef,
    version: String,
    tests: Vec<KindedTest>,
}

#[derive(Serialize)]
struct ProjectRef {
    id: u64,
    name: String,
    tenant: String,
}

/// A test of a project with its kind: `api_scenario` or `ui_test`.
#[derive(Serialize)]
struct KindedTest {
    id: u64,
    name: String,
    kind: Kind,
    tags: Vec<String>,
    tenant: String,
}

impl From<ProjectTests<'_>> for ProjectTestsBody {
    fn from(p: ProjectTests<'_>) -> Self {
        let tests = (p.tests.into_iter())
            .map(|(kind, t)| KindedTest {
                id: t.id,
                name: t.name.clone(),
                kind,
                tags: t.tags.clone(),
                tenant: t.tenant.clone(),
            })
            .collect();
        ProjectTestsBody {
            project: ProjectRef {
                id: p.project.id,
                name: p.project.name.clone(),
                tenant: p.project.tenant.clone(),
            },
            version: p.version,
            tests,
        }
    }
}

type Caller = Extension<Tenant>;
/// The projects the caller may see ([`crate::authority`]).
type Seen = Extension<Sees>;
type ApiResult = Result<Response, ApiError>;

/// The filter of a list route, from its query: a malformed query is a 400.
struct Listing(Filter);

impl<S: Send + Sync> FromRequestParts<S> for Listing {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Listing, ApiError> {
        let query = Query::<ListQuery>::from_request_parts(parts, state).await;
        ListQuery::parse(query).map(Listing)
    }
}

/// The project a route's path names. An id that is not a number names no
/// project, and a project hidden from the caller is not theirs: 404, not
/// 400.
struct ProjectId(u64);

impl<S: Send + Sync> FromRequestParts<S> for ProjectId {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<ProjectId, Response> {
        let Path(id) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let not_found = || ApiError::not_found("project", &id).into_response();
        let sees = parts.extensions.get::<Sees>().cloned().unwrap_or_default();
        let id: u64 = id.parse().map_err(|_| not_found())?;
        sees.project(id)
            .then_some(ProjectId(id))
            .ok_or_else(not_found)
    }
}

/// Rows of a list as the lists show them (`TestRow`, `PipelineRow`).
fn rows<'a, T: 'a, R: From<&'a T>>(found: Vec<&'a T>) -> Vec<R> {
    found.into_iter().map(R::from).collect()
}

async fn projects(
    State(h): State<Handle>,
    Extension(Tenant(t)): Caller,
    Extension(sees): Seen,
) -> Response {
    h.with(|s| {
        let seen: Vec<_> = (s.store.projects(&t).into_iter())
            .filter(|p| sees.project(p.id))
            .collect();
        Json(seen).into_response()
    })
}

async fn applications(
    State(h): State<Handle>,
    Extension(Tenant(t)): Caller,
    ProjectId(project_id): ProjectId,
) -> ApiResult {
    h.with(|s| Ok(Json(s.store.applications(&t, project_id)?).into_response()))
}

async fn project_tests(
    State(h): State<Handle>,
    Extension(Tenant(t)): Caller,
    ProjectId(project_id): ProjectId,
) -> ApiResult {
    h.with(|s| {
        let body = ProjectTestsBody::from(s.store.project_tests(&t, project_id)?);
        Ok(Json(body).into_response())
    })
}

async fn drafts(
    State(h): State<Handle>,
    Extension(Tenant(t)): Caller,
    ProjectId(project_id): ProjectId,
) -> ApiResult {
    h.with(|s| Ok(Json(s.store.drafts(&t, project_id)?).into_response()))
}

/// Every test of the body as one batch of drafts, in one write: 201
/// `{batch, drafts}`; 404 or 422 with nothing written.
async fn create_drafts(
    State(h): State<Handle>,
    Extension(Tenant(t)): Caller,
    ProjectId(project_id): ProjectId,
    body: Result<Json<NewDrafts>, JsonRejection>,
) -> ApiResult {
    let Json(new) = body.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    h.with(|s| {
        let batch = s.store.create_drafts(&t, project_id, new)?;
        s.counters.writes += 1;
        Ok((StatusCode::CREATED, Json(batch)).into_response())
    })
}

async fn environments(
    State(h): State<Handle>,
    Extension(Tenant(t)): Caller,
    Extension(sees): Seen,
    Listing(filter): Listing,
) -> Response {
    h.with(|s| {
        let found = s.store.environments(&t, filter.project_id).into_iter();
        let seen: Vec<_> = found.filter(|e| sees.row(e.project_id)).collect();
        Json(seen).into_response()
    })
}

async fn scenarios(
    State(h): State<Handle>,
    Extension(Tenant(t)): Caller,
    Extension(sees): Seen,
    Listing(filter): Listing,
) -> Response {
    h.with(|s| {
        let found = s.store.scenarios(&t, &filter).into_iter();
        let seen = found.filter(|r| sees.project(r.project_id)).collect();
        Json(rows::<_, TestRow>(seen)).into_response()
    })
}

async fn ui_tests(
    State(h): State<Handle>,
    Extension(Tenant(t)): Caller,
    Extension(sees): Seen,
    Listing(filter): Listing,
) -> Response {
    h.with(|s| {
        let found = s.store.ui_tests(&t, &filter).into_iter();
        let seen = found.filter(|r| sees.project(r.project_id)).collect();
        Json(rows::<_, TestRow>(seen)).into_response()
    })
}

async fn pipelines(
    State(h): State<Handle>,
    Extension(Tenant(t)): Caller,
    Extension(sees): Seen,
    Listing(filter): Listing,
) -> Response {
    h.with(|s| {
        let found = s.store.pipelines(&t, filter.project_id).into_iter();
        let seen = found.filter(|r| sees.project(r.project_id)).collect();
        Json(rows::<_, PipelineRow>(seen)).into_response()
    })
}

async fn create_scenario(
    State(h): State<Handle>,
    Extension(Tenant(t)): Caller,
    Extension(sees): Seen,
    body: Result<Json<NewScenario>, JsonRejection>,
) -> ApiResult {
    let Json(new) = body.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    h.with(|s| {
        let row = TestRow::from(s.store.create_scenario(&t, &sees, new)?);
        s.counters.writes += 1;
        Ok((StatusCode::CREATED, Json(row)).into_response())
    })
}

async fn start_execution(
    State(h): State<Handle>,
    Extension(Tenant(t)): Caller,
    Extension(sees): Seen,
    body: Result<Json<NewExecution>, JsonRejection>,
) -> ApiResult {
    let Json(new) = body.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    h.with(|s| {
        let created = (
            StatusCode::CREATED,
            Json(s.store.start(&t, &sees, new, Instant::now())?.created()),
        )
            .into_response();
        s.counters.writes += 1;
        Ok(created)
    })
}

/// Answers what `answer` makes of execution `id`, under the lock, with
/// the backend's advance mode.
fn with_execution(
    h: &Handle,
    tenant: &str,
    id: &str,
    answer: impl FnOnce(&mut Execution, Advance) -> Response,
) -> ApiResult {
    let advance = h.advance();
    h.with(|s| Ok(answer(s.store.execution(tenant, id)?, advance)))
}

/// Moves the execution one step first under [`crate::Advance::OnRead`].
async fn execution(
    State(h): State<Handle>,
    Extension(Tenant(t)): Caller,
    Path(id): Path<String>,
) -> ApiResult {
    with_execution(&h, &t, &id, |ex, advance| {
        let status = ex.read(advance, Instant::now());
        Json(ex.details(status)).into_response()
    })
}

/// A person's review of a `WAITING_HUMAN` execution: answers its details
/// with the new status. Counted as a write when it succeeds.
async fn disposition(
    State(h): State<Handle>,
    Extension(Tenant(t)): Caller,
    Path(id): Path<String>,
    body: Result<Json<Disposition>, JsonRejection>,
) -> ApiResult {
    let Json(decided) = body.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let advance = h.advance();
    h.with(|s| {
        let now = Instant::now();
        let ex = s.store.decide(&t, &id, decided, advance, now)?;
        let answer = Json(ex.details(ex.status(advance, now))).into_response();
        s.counters.writes += 1;
        Ok(answer)
    })
}

/// Never moves the execution.
async fn summary(
    State(h): State<Handle>,
    Extension(Tenant(t)): Caller,
    Path(id): Path<String>,
) -> ApiResult {
    with_execution(&h, &t, &id, |ex, advance| {
        Json(ex.summary(ex.status(advance, Instant::now()))).into_response()
    })
}

/// Deliberately hostile: echoes every request header, `Authorization`
/// included, so tests can prove the host redacts its secret. Repeated
/// headers are joined with `, `; non-UTF-8 bytes are replaced.
async fn echo(headers: HeaderMap) -> Json<serde_json::Value> {
    let mut echoed: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in &headers {
        let value = String::from_utf8_lossy(value.as_bytes());
        echoed
            .entry(name.as_str().to_owned())
            .and_modify(|v| *v = format!("{v}, {value}"))
            .or_insert(value.into_owned());
    }
    Json(serde_json::json!({ "headers": echoed }))
}
