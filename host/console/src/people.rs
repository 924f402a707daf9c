//! People: the tenant's users, roles and service clients, for the
//! tenant's admins: what `toolhost user|role|grant|revoke|client` do,
//! within the viewer's tenant only.
//!
//! No host tool manages people, so the page acts on the stores through
//! the same functions the CLI uses (`toolhost_auth::admin`, the policy
//! store), and records each action in the audit trail as a row of the
//! viewer (tool `disable_user`, `grant_role`, …; client
//! `toolhost-console`; the arguments' digest), refused or not.

use std::collections::BTreeMap;
use std::time::{Instant, SystemTime};

use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_audit::{AuditEvent, Outcome, argument_digest};
use toolhost_auth::{AuthStore, ClientKind, admin};
use toolhost_policy::{PolicyStore, PolicyStoreError};
use toolhost_types::Permission;

use crate::pages::Page;
use crate::viewer::{CONSOLE_CLIENT, Viewer};
use crate::{Console, Refusal, done_on};

pub(crate) fn routes() -> Router<Console> {
    Router::new()
        .route("/admin/people", get(show))
        .route("/admin/people/users/{username}/{action}", post(user_action))
        .route("/admin/people/roles/{role}/{action}", post(role_action))
        .route(
            "/admin/people/clients/{client_id}/revoke",
            post(revoke_client),
        )
}

#[derive(Deserialize)]
pub(crate) struct Shown {
    done: Option<String>,
}

async fn show(State(c): State<Console>, headers: HeaderMap, Query(q): Query<Shown>) -> Response {
    let viewer = viewer_of!(c, headers, Page::People);
    render(&c, &viewer, q.done.as_deref(), None, StatusCode::OK).await
}

/// What an action did, as the notice after its redirect says it: only
/// these words are announced (the query string is anyone's to write).
const DONE: [(&str, &str); 7] = [
    (
        "disabled",
        "The user is disabled: their sessions ended and their tokens stopped working.",
    ),
    (
        "enabled",
        "The user is enabled again (their old tokens stay revoked).",
    ),
    ("permitted", "The role now permits that."),
    ("forbidden", "The role no longer permits that."),
    ("granted", "The user now holds the role."),
    ("revoked", "The user no longer holds the role."),
    (
        "client-revoked",
        "The client is revoked: its tokens stopped working.",
    ),
];

async fn render(
    c: &Console,
    viewer: &Viewer,
    done: Option<&str>,
    refusal: Option<Refusal>,
    status: StatusCode,
) -> Response {
    let tenant = viewer.tenant();
    let read = async {
        let users = c.store.users_of(tenant).await.map_err(|e| e.to_string())?;
        let roles = PolicyStore::roles(c.store.as_ref(), tenant)
            .await
            .map_err(|e| e.to_string())?;
        let clients = c.store.clients().await.map_err(|e| e.to_string())?;
        Ok::<_, String>((users, roles, clients))
    };
    let (users, roles, clients) = match read.await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "console: reading people");
            let refusal = Refusal {
                code: "UNAVAILABLE",
                message: "the tenant's people could not be read now; try again".into(),
            };
            return c.refused(
                viewer,
                Page::People,
                StatusCode::SERVICE_UNAVAILABLE,
                refusal,
            );
        }
    };
    let names: BTreeMap<&str, &str> = users
        .iter()
        .map(|u| (u.id.as_str(), u.username.as_str()))
        .collect();
    let users: Vec<Value> = users
        .iter()
        .map(|u| {
            let held: Vec<&str> = roles
                .iter()
                .filter(|r| r.members.contains(&u.id))
                .map(|r| r.name.as_str())
                .collect();
            json!({
                "username": u.username,
                "id": u.id,
                "disabled": u.disabled,
                "created_ms": u.created_at.saturating_mul(1000),
                "roles": held,
                "you": u.id == viewer.user.subject,
            })
        })
        .collect();
    let role_views: Vec<Value> = roles
        .iter()
        .map(|r| {
            let members: Vec<Value> = r
                .members
                .iter()
                .map(|m| {
                    let name = names.get(m.as_str()).copied().unwrap_or(m.as_str());
                    json!({"name": name, "you": *m == viewer.user.subject})
                })
                .collect();
            json!({
                "name": r.name,
                "admin": r.admin,
                "permissions": r.permissions.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "members": members,
            })
        })
        .collect();
    // Service clients belong to a tenant; clients people sign in with
    // (registered or metadata-document clients) are the host's, and the
    // operator's to manage with `toolhost client`.
    let services: Vec<Value> = clients
        .iter()
        .filter(|cl| cl.kind == ClientKind::Service && cl.tenant.as_deref() == Some(tenant))
        .map(|cl| {
            json!({
                "client_id": cl.client_id,
                "name": cl.name,
                "scope": cl.scope,
                "created_ms": cl.created_at.saturating_mul(1000),
                "last_used_ms": cl.last_used_at.map(|t| t.saturating_mul(1000)),
                "revoked_ms": cl.revoked_at.map(|t| t.saturating_mul(1000)),
            })
        })
        .collect();
    let notice = done.and_then(|d| DONE.iter().find(|(k, _)| *k == d).map(|(_, v)| *v));
    let context = json!({
        "tenant": tenant,
        "users": users,
        "usernames": users.iter().filter_map(|u| u["username"].as_str()).collect::<Vec<_>>(),
        "roles": role_views,
        "clients": services,
        "notice": notice,
        "error": refusal,
    });
    c.show(viewer, Page::People, "people.html", status, None, context)
        .await
}

/// A form with the CSRF token and, for some actions, one value.
#[derive(Deserialize)]
pub(crate) struct ActionForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    permission: String,
    #[serde(default)]
    username: String,
}

/// Why an action was refused: its code and what to tell the person.
fn refusal(code: &'static str, message: impl Into<String>) -> Refusal {
    Refusal {
        code,
        message: message.into(),
    }
}

impl Console {
    /// Runs `action` (named `tool` in the audit trail, with `args`) as
    /// `viewer` and records its row; the notice word on success.
    async fn act<F>(
        &self,
        viewer: &Viewer,
        tool: &str,
        args: Value,
        action: F,
    ) -> Result<(), Refusal>
    where
        F: std::future::Future<Output = Result<(), Refusal>>,
    {
        let started = Instant::now();
        let at = SystemTime::now();
        let done = action.await;
        let (outcome, error_code) = match &done {
            Ok(()) => (Outcome::Executed, None),
            Err(r) if r.code == "PERMISSION_DENIED" || r.code.starts_with("SELF_") => {
                (Outcome::Denied, Some(r.code.to_owned()))
            }
            Err(r) => (Outcome::Error, Some(r.code.to_owned())),
        };
        let digest = argument_digest(&args);
        let event = AuditEvent {
            at,
            client_id: Some(CONSOLE_CLIENT.to_owned()),
            outcome,
            error_code,
            duration: started.elapsed(),
            ..AuditEvent::new(viewer.tenant(), &viewer.user.subject, tool, digest)
        };
        if let Err(e) = self.store.append(&event).await {
            tracing::error!(error = %e, tool, "console: recording an admin action");
            if done.is_ok() {
                return Err(refusal(
                    "AUDIT_FAILED",
                    "it was done, but its audit row could not be written: tell an operator",
                ));
            }
        }
        done
    }
}

/// The user `username`, if they belong to `tenant` (anyone else is as
/// missing as a user that never was).
async fn tenant_user(
    c: &Console,
    tenant: &str,
    username: &str,
) -> Result<toolhost_auth::User, Refusal> {
    match c.store.user_by_name(username).await {
        Ok(Some(u)) if u.tenant == tenant => Ok(u),
        Ok(_) => Err(refusal(
            "USER_NOT_FOUND",
            format!("no user {username:?} in your tenant"),
        )),
        Err(e) => Err(store_down(&e)),
    }
}

fn store_down(e: &dyn std::fmt::Display) -> Refusal {
    tracing::error!(error = %e, "console: people");
    refusal(
        "UNAVAILABLE",
        "the store could not be reached; nothing was changed: try again",
    )
}

fn policy_refusal(e: PolicyStoreError) -> Refusal {
    match e {
        PolicyStoreError::NotFound { what } => {
            refusal("NOT_FOUND", format!("{what} does not exist"))
        }
        PolicyStoreError::Conflict { what } => {
            refusal("CONFLICT", format!("{what} already exists"))
        }
        e => store_down(&e),
    }
}

/// The page after an action: to it with the notice, or re-rendered with
/// the refusal.
async fn answer(c: &Console, viewer: &Viewer, done: Result<(), Refusal>, word: &str) -> Response {
    match done {
        Ok(()) => done_on(Page::People, "done", word),
        Err(r) => {
            let status = crate::status_of(r.code);
            render(c, viewer, None, Some(r), status).await
        }
    }
}

async fn user_action(
    State(c): State<Console>,
    headers: HeaderMap,
    Path((username, action)): Path<(String, String)>,
    Form(f): Form<ActionForm>,
) -> Response {
    let viewer = acting_on!(c, headers, Page::People, &f.csrf);
    let (disable, tool, word) = match action.as_str() {
        "disable" => (true, "disable_user", "disabled"),
        "enable" => (false, "enable_user", "enabled"),
        _ => return crate::not_found(State(c), headers).await,
    };
    let tenant = viewer.tenant().to_owned();
    let args = json!({"username": username});
    let action = async {
        let user = tenant_user(&c, &tenant, &username).await?;
        if disable && user.id == viewer.user.subject {
            return Err(refusal(
                "SELF_DISABLE",
                "you cannot disable yourself: another admin of your tenant can",
            ));
        }
        admin::set_disabled(c.store.as_ref(), &username, disable)
            .await
            .map_err(|e| store_down(&e))
    };
    let done = c.act(&viewer, tool, args, action).await;
    answer(&c, &viewer, done, word).await
}

async fn role_action(
    State(c): State<Console>,
    headers: HeaderMap,
    Path((role, action)): Path<(String, String)>,
    Form(f): Form<ActionForm>,
) -> Response {
    let viewer = acting_on!(c, headers, Page::People, &f.csrf);
    let tenant = viewer.tenant().to_owned();
    let store = c.store.clone();
    let (tool, word) = match action.as_str() {
        "permit" => ("permit_role", "permitted"),
        "forbid" => ("forbid_role", "forbidden"),
        "grant" => ("grant_role", "granted"),
        "revoke" => ("revoke_role", "revoked"),
        _ => return crate::not_found(State(c), headers).await,
    };
    let args =
        json!({"role": role, "permission": f.permission.trim(), "username": f.username.trim()});
    let action = async {
        let roles = PolicyStore::roles(store.as_ref(), &tenant)
            .await
            .map_err(policy_refusal)?;
        let Some(held) = roles.iter().find(|r| r.name == role) else {
            return Err(refusal(
                "ROLE_NOT_FOUND",
                format!("no role {role:?} in your tenant"),
            ));
        };
        match tool {
            "permit_role" | "forbid_role" => {
                let p: Permission = f.permission.trim().parse().map_err(|e| {
                    refusal(
                        "INVALID_ARGUMENTS",
                        format!("permission {:?}: {e}", f.permission.trim()),
                    )
                })?;
                let changed = if tool == "permit_role" {
                    store.permit(&tenant, &role, &p).await
                } else {
                    store.forbid(&tenant, &role, &p).await
                };
                changed.map(drop).map_err(policy_refusal)
            }
            _ => {
                let user = tenant_user(&c, &tenant, f.username.trim()).await?;
                if tool == "revoke_role" && held.admin && user.id == viewer.user.subject {
                    return Err(refusal(
                        "SELF_LOCKOUT",
                        "you cannot take an admin role from yourself: another admin of your tenant can",
                    ));
                }
                let changed = if tool == "grant_role" {
                    store.assign(&tenant, &role, &user.id).await
                } else {
                    store.unassign(&tenant, &role, &user.id).await
                };
                changed.map(drop).map_err(policy_refusal)
            }
        }
    };
    let done = c.act(&viewer, tool, args, action).await;
    answer(&c, &viewer, done, word).await
}

async fn revoke_client(
    State(c): State<Console>,
    headers: HeaderMap,
    Path(client_id): Path<String>,
    Form(f): Form<ActionForm>,
) -> Response {
    let viewer = acting_on!(c, headers, Page::People, &f.csrf);
    let tenant = viewer.tenant().to_owned();
    let args = json!({"client_id": client_id});
    let action = async {
        // Only a service client of this tenant: any other is not found.
        match c.store.client(&client_id).await {
            Ok(Some(cl))
                if cl.kind == ClientKind::Service
                    && cl.tenant.as_deref() == Some(tenant.as_str()) => {}
            Ok(_) => {
                return Err(refusal(
                    "CLIENT_NOT_FOUND",
                    format!("no service client {client_id:?} in your tenant"),
                ));
            }
            Err(e) => return Err(store_down(&e)),
        }
        admin::revoke_client(c.store.as_ref(), &client_id)
            .await
            .map_err(|e| match e {
                admin::AdminError::NotFound(what) => refusal(
                    "CLIENT_NOT_FOUND",
                    format!("{what} does not exist (revoked already?)"),
                ),
                e => store_down(&e),
            })
    };
    let done = c.act(&viewer, "revoke_client", args, action).await;
    answer(&c, &viewer, done, "client-revoked").await
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::testing::{HOSTILE, assert_escaped, render};

    #[test]
    fn names_scopes_and_permissions_are_text_and_you_cannot_disable_yourself() {
        let page = json!({
            "tenant": "demo",
            "users": [
                {"username": "ann", "id": "u-1", "disabled": false, "created_ms": 1, "roles": [HOSTILE], "you": true},
                {"username": "bob", "id": "u-2", "disabled": false, "created_ms": 1, "roles": [], "you": false},
                {"username": "cy", "id": "u-3", "disabled": true, "created_ms": 1, "roles": [], "you": false},
            ],
            "usernames": ["ann", "bob", "cy"],
            "roles": [
                {"name": "ops", "admin": false, "permissions": ["approvals:decide"], "members": [{"name": "bob"}]},
                {"name": "boss", "admin": true, "permissions": [], "members": [{"name": "ann", "you": true}]},
            ],
            "clients": [{"client_id": "svc 1", "name": HOSTILE, "scope": "mcp", "created_ms": 1}],
        });
        let html = render("people.html", page);
        assert_escaped(&html);
        assert!(
            !html.contains("/admin/people/users/ann/disable"),
            "not yourself"
        );
        assert!(html.contains("/admin/people/users/bob/disable"));
        assert!(html.contains("/admin/people/users/cy/enable"));
        assert!(html.contains("/admin/people/roles/ops/forbid"));
        assert!(html.contains("/admin/people/roles/ops/revoke"));
        assert!(
            !html.contains("/admin/people/roles/boss/revoke"),
            "nobody takes an admin role from themselves"
        );
        assert!(
            html.contains("/admin/people/clients/svc%201/revoke"),
            "{html}"
        );
    }
}
