//! `POST /catalog/revisions`: an author submits a signed revision over HTTP
//! with their bearer token, the same operation as `toolhost plugin submit`
//! (one intake for every source). The revision goes into the queue of the
//! catalog every tenant shares, so `catalog:submit` is host-level: a
//! person of the operator tenant needs it through their roles, a service
//! of the operator tenant through its scope; a principal of any other
//! tenant is refused whatever its roles or scopes (the same decision as a
//! tool's, `toolhost_policy::decide`). The body is bounded before it is
//! read, and the bearer check runs before that.
//!
//! ```text
//! POST /catalog/revisions
//! Authorization: Bearer …
//! {"manifest": "<TOML text>", "component": "<base64>", "signature": {<DSSE envelope>}}
//! → 201 {"revision", "plugin", "version", "state", "new": true}   (200 when submitted before)
//! → 4xx {"error": {"code", "message"}}                            (nothing stored)
//! ```

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Extension, Json, Router};
use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_audit::AuditSink;
use toolhost_auth::AuthServer;
use toolhost_catalog::decide::Decider;
use toolhost_catalog::intake::{
    self, Intake, IntakeError, IntakeOptions, MAX_COMPONENT_BYTES, MAX_MANIFEST_BYTES, Submission,
};
use toolhost_invoke::{InvokeError, Toolhost};
use toolhost_policy::{Use, decide};
use toolhost_runtime::Runtime;
use toolhost_storage::Store;
use toolhost_types::{Permission, Principal, Risk};

use crate::catalog_sync::{SUBMIT_PERMISSION, now_ms, person_event};

/// Largest body accepted: the largest component base64-encoded, the largest
/// manifest and envelope, JSON around them.
pub const MAX_SUBMISSION_BYTES: usize = MAX_COMPONENT_BYTES.div_ceil(3) * 4
    + MAX_MANIFEST_BYTES
    + toolhost_signing::MAX_ENVELOPE_BYTES
    + 4096;

/// What the route needs.
#[derive(Clone)]
pub struct CatalogHttp {
    /// The store revisions go into.
    pub store: Arc<Store>,
    /// The sandbox components are checked in.
    pub runtime: Arc<Runtime>,
    /// Intake's options (dev mode included).
    pub opts: IntakeOptions,
    /// The host, whose grants (with the operator tenant's standing) decide
    /// who may submit.
    pub host: Arc<Toolhost>,
}

/// The route, behind the bearer check.
pub fn routes(state: CatalogHttp, auth: Arc<AuthServer>) -> Router {
    Router::new()
        .route("/catalog/revisions", post(submit))
        .with_state(state)
        .layer(DefaultBodyLimit::max(MAX_SUBMISSION_BYTES))
        .layer(axum::middleware::from_fn_with_state(
            crate::declared::Bound {
                limit: MAX_SUBMISSION_BYTES,
                what: "a submission",
            },
            crate::declared::declared_within,
        ))
        .layer(axum::middleware::from_fn_with_state(
            auth,
            toolhost_auth::require_bearer,
        ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SubmitBody {
    manifest: String,
    component: String,
    #[serde(default)]
    signature: Option<Value>,
}

fn refuse(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let body = json!({"error": {"code": code, "message": message.into()}});
    (status, Json(body)).into_response()
}

async fn submit(
    State(state): State<CatalogHttp>,
    Extension(who): Extension<Principal>,
    body: Result<Json<SubmitBody>, axum::extract::rejection::JsonRejection>,
) -> Response {
    if let Err(refused) = check_may_submit(&state.host, &who).await {
        return refused;
    }
    let Json(body) = match body {
        Ok(b) => b,
        Err(e) => return refuse(e.status(), "INVALID_REQUEST", e.body_text()),
    };
    let sub = match submission(body, &who) {
        Ok(sub) => sub,
        Err(e) => {
            let message = format!("component is not base64: {e}");
            return refuse(StatusCode::BAD_REQUEST, "INVALID_REQUEST", message);
        }
    };
    // A submitter's compile takes its tenant's share of the compile queue.
    let mut opts = state.opts.clone();
    opts.load.payer = toolhost_runtime::Payer::Tenant(who.tenant.clone());
    match intake::submit(&*state.store, &state.runtime, sub, &opts, now_ms()).await {
        Ok(done) => accepted(&state.store, &who, &done).await,
        Err(e) => intake_refused(&e),
    }
}

/// Nothing when `who` may submit; else the refusal (403, or 500 when the
/// grants could not be read).
async fn check_may_submit(host: &Toolhost, who: &Principal) -> Result<(), Response> {
    match may_submit(host, who).await {
        Ok(true) => Ok(()),
        Ok(false) => {
            let needed = format!("{}:{}", SUBMIT_PERMISSION.0, SUBMIT_PERMISSION.1);
            Err(refuse(
                StatusCode::FORBIDDEN,
                "PERMISSION_DENIED",
                format!("submitting needs {needed}, held in the operator tenant only"),
            ))
        }
        Err(e) => {
            tracing::error!(error = %e, "reading grants failed");
            Err(internal_error())
        }
    }
}

/// The submission `body` makes, by `who`, unless its component is not
/// base64.
fn submission(body: SubmitBody, who: &Principal) -> Result<Submission, base64::DecodeError> {
    Ok(Submission {
        manifest: body.manifest,
        component: base64::engine::general_purpose::STANDARD.decode(&body.component)?,
        envelope: body.signature.map(|s| s.to_string().into_bytes()),
        source: "http".into(),
        submitted_by: who.subject.clone(),
    })
}

/// The answer to a revision intake took: 201 and audited when it is new,
/// 200 when it was submitted before.
async fn accepted(store: &Store, who: &Principal, done: &Intake) -> Response {
    let rev = &done.revision;
    if done.new {
        let decider = Decider {
            principal: who.subject.clone(),
            tenant: who.tenant.clone(),
            client_id: Some(who.client_id.clone()),
            may_approve_own: false,
        };
        if let Err(e) = store
            .record(&person_event(&decider, "submit_plugin", rev))
            .await
        {
            tracing::error!(error = %e, revision = %rev.id, "auditing a submission failed");
        }
    }
    let status = if done.new {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let answer = json!({"revision": rev.id, "plugin": rev.plugin, "version": rev.version,
        "state": rev.state.as_str(), "new": done.new});
    (status, Json(answer)).into_response()
}

/// Intake's refusal as an answer: its code, with the status it calls for.
fn intake_refused(e: &IntakeError) -> Response {
    match e.code() {
        "INTERNAL" => {
            tracing::error!(error = %e, "a submission failed internally");
            internal_error()
        }
        "RATE_LIMITED" => refuse(StatusCode::TOO_MANY_REQUESTS, e.code(), e.to_string()),
        code => refuse(StatusCode::UNPROCESSABLE_ENTITY, code, e.to_string()),
    }
}

/// A 500 that says nothing of why (the log does).
fn internal_error() -> Response {
    refuse(
        StatusCode::INTERNAL_SERVER_ERROR,
        "INTERNAL",
        "internal error",
    )
}

/// A person through their roles now, a service through its scopes, in
/// the operator tenant only.
async fn may_submit(host: &Toolhost, who: &Principal) -> Result<bool, InvokeError> {
    let needed =
        Permission::new(SUBMIT_PERMISSION.0, SUBMIT_PERMISSION.1).expect("a valid permission");
    let grants = host.host().grants(who).await?;
    Ok(decide(who, &grants, &needed, Risk::Low, Use::Call).permits())
}
