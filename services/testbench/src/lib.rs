//! `testbench`: a small, real, in-memory test-platform backend. It is the
//! service the `testbench` plugin reaches through the host's `backend`
//! capability, and the e2e tests run it in-process to count what the host
//! asked of it.
//!
//! What it owns: the seed data ([`Seed`]), the HTTP API under `/api` (bearer
//! token, `X-Tenant`, an explicit tenant predicate on every read), the
//! execution state machine ([`Advance`]), draft tests (a test plan's
//! proposed tests, never run), request counters ([`Counters`])
//! and the test API under `/_test`. What it does not: the plugin and the
//! host's resolver (the `testbench` plugin and `toolhost-resolver`). It has
//! no persistence: a restart returns to the seed.
//!
//! Routes (`/api/*` need `Authorization: Bearer <token>` (else 401) and
//! `X-Tenant` (else 400); lists are JSON arrays in id order, each row with
//! its `tenant`; foreign and missing things are the same 404):
//!
//! ```text
//! GET  /api/projects                          [{id,name,tenant}]
//! GET  /api/projects/{id}/applications        [{id,name,project_id,tenant}]
//! GET  /api/projects/{id}/tests               {project:{id,name,tenant},version,tests:[{id,name,kind,tags,tenant}]}
//!                                             (API scenarios and UI tests by id; `version` changes
//!                                             whenever the project's tests or drafts do)
//! GET  /api/projects/{id}/test-drafts         [{id,name,project_id,tags,status:"draft",replaces,environment_id,batch,tenant}]
//! POST /api/projects/{id}/test-drafts {environment_id,tests:[{name,tags,replaces?}]}
//!                                             201 {batch,drafts}: one write, every test a draft
//!                                             (never run, the replaced test untouched); 404 for a
//!                                             project or environment not the caller's, 422 (nothing
//!                                             written) for none or over 200 tests, a blank name, a
//!                                             name or replaces given twice, replaces not the project's
//! GET  /api/environments[?project_id=]        [{id,name,project_id|null,tenant,tags}] (+ shared ones)
//! GET  /api/scenarios[?tag=a,b&project_id=]   [{id,name,project_id,tags,tenant}] (any of the tags)
//! GET  /api/ui-tests[?tag=&project_id=]       same shape
//! GET  /api/pipelines[?project_id=]           [{id,name,project_id,tenant}]
//! POST /api/scenarios {project_id,name,tags}  201 the new row
//! POST /api/executions {kind,target_id,environment_id}   201 {executionId,...,status:"QUEUED"}
//! GET  /api/executions/{executionId}          {...,status,steps}, see Advance
//! GET  /api/executions/{executionId}/summary  {executionId,status,passed,failed,summary}
//! POST /api/executions/{executionId}/disposition {outcome:"passed"|"inconclusive",decided_by}
//!                                             200 the details, PASSED or INCONCLUSIVE;
//!                                             409 {"error":"not waiting"} unless WAITING_HUMAN
//! GET  /api/_echo                             {headers:{...}}, every request header
//! GET  /api/_pace[?ms=N]                      {waited_ms:N}, after waiting N ms (at most 5000)
//! GET  /_test/counters   POST /_test/reset   POST /_test/seed   POST /_test/leak {on}
//! ```
//!
//! Row authority is opt-in ([`Handle::require_assertions`], the binary's
//! `--assertion-issuer`): every `/api` request must then carry the host's
//! signed identity assertion (`X-Toolhost-Assertion`, verified against the
//! host's JWKS), and a project with `people` in the seed is seen only by
//! them (see the `authority` module).
//!
//! It is deliberately hostile in two opt-in ways the host must survive:
//! leak mode ([`Handle::set_leak`]) returns every tenant's rows, and
//! `GET /api/_echo` echoes request headers, the token included. One
//! route is a clock, not data: `GET /api/_pace` waits before it answers, so
//! a test's exploration run lasts seconds while each request is counted.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use testbench::{Advance, Config, Seed};
//! let config = Config { token: "t0ken".into(), seed: Seed::contract(), test_api: true, advance: Advance::OnRead };
//! let backend = testbench::start("127.0.0.1:0".parse().expect("an address"), config).await?;
//! // ... point the host at backend.url(), drive a conversation ...
//! assert_eq!(backend.handle.counters().requests_to("GET /api/projects"), 1);
//! # Ok(()) }
//! ```

mod api;
mod authority;
mod counters;
mod drafts;
mod error;
mod execution;
mod guard;
mod handle;
mod pace;
mod provider;
mod seed;
mod store;
mod test_api;

use std::fmt;
use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use authority::{ASSERTION_HEADER, ASSERTION_JWKS_PATH, Actor, Asserted, AssertionCheck};
pub use counters::Counters;
pub use execution::{Advance, Kind, Status};
pub use handle::Handle;
pub use provider::{ProviderActor, ProviderCheck, ProviderToken};
pub use seed::{Application, Environment, Outcome, Pipeline, Project, Seed, SeedError, Test};

/// How a backend runs.
#[derive(Clone)]
pub struct Config {
    /// The bearer token every `/api` request must carry. An empty token
    /// refuses every request. Never printed (see the `Debug` impl).
    pub token: String,
    /// The data at start and after a reset. Not checked here: built-in
    /// seeds are valid, and callers loading JSON call [`Seed::check`].
    pub seed: Seed,
    /// Mount `/_test/*` (no token needed there). Off: those routes are 404.
    pub test_api: bool,
    /// How executions move.
    pub advance: Advance,
}

impl Config {
    /// The contract seed, no test API, [`Advance::OnRead`].
    pub fn new(token: impl Into<String>) -> Config {
        Config {
            token: token.into(),
            seed: Seed::contract(),
            test_api: false,
            advance: Advance::OnRead,
        }
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("token", &"<redacted>")
            .field("test_api", &self.test_api)
            .field("advance", &self.advance)
            .finish_non_exhaustive()
    }
}

/// The backend's routes, and a [`Handle`] on their shared state.
pub fn router(config: Config) -> (axum::Router, Handle) {
    let handle = Handle::new(config);
    let mut app = api::routes(&handle);
    if handle.test_api() {
        app = app.merge(test_api::routes());
    }
    (app.with_state(handle.clone()), handle)
}

/// Serves the backend on `listener` until the task is dropped or fails.
pub async fn serve(listener: TcpListener, config: Config) -> std::io::Result<()> {
    let (app, _handle) = router(config);
    axum::serve(listener, app).await
}

/// A backend serving on a task of the current runtime.
#[derive(Debug)]
pub struct Running {
    /// The bound address (the real port when started on port 0).
    pub addr: SocketAddr,
    /// Counters and test controls.
    pub handle: Handle,
    /// The serving task; it ends only on an I/O error or when aborted.
    pub task: JoinHandle<std::io::Result<()>>,
}

impl Running {
    /// The base URL, e.g. `http://127.0.0.1:40123`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops serving; connections in flight are dropped.
    pub fn stop(self) {
        self.task.abort();
    }
}

/// Binds `addr` (`127.0.0.1:0` picks a free port), then serves on a spawned
/// task. Fails only if binding fails.
pub async fn start(addr: SocketAddr, config: Config) -> std::io::Result<Running> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let (app, handle) = router(config);
    let task = tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(Running { addr, handle, task })
}
