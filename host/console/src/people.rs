//! People: the tenant's users, roles and service clients, for the
//! tenant's admins: what `toolhost user|role|grant|revoke|client` do,
//! within the viewer's tenant only.
//!
//! No host tool manages people, so the page reads through the stores'
//! own traits ([`toolhost_auth::AuthStore`], [`toolhost_policy::PolicyStore`]), and writes
//! each change as an audit effect ([`PeopleEffect`]) in the transaction of
//! the viewer's audit row (tool `disable_user`, `grant_role`, …; client
//! `toolhost-console`; the arguments' digest): the row and the change are
//! written together or not at all, as a host tool's decision is. A refused
//! change (refused here, or lost to another writer meanwhile) changes
//! nothing and writes a row that says why.

use std::collections::BTreeMap;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_audit::{AuditError, AuditEvent, AuditSink, Effect, Outcome, PeopleEffect};
use toolhost_auth::User;
use toolhost_auth::admin::{self, AdminError};
use toolhost_policy::{PolicyStoreError, Role};
use toolhost_storage::{PageFrom, UsersQuery};
use toolhost_types::Permission;

use crate::pages::Page;
use crate::paging::{self, BY_NAME, Cursor, Pager};
use crate::viewer::{CONSOLE_CLIENT, Viewer};
use crate::{Console, Refusal, done_on};

pub(crate) fn routes() -> Router<Console> {
    Router::new()
        .route("/admin/people", get(show))
        .route("/admin/people/users", post(add_user))
        .route(
            "/admin/people/users/{username}/password",
            post(set_password),
        )
        .route("/admin/people/users/{username}/{action}", post(user_action))
        .route("/admin/people/roles/{role}/{action}", post(role_action))
}

/// How many users a page shows.
const SHOWN: u32 = 50;

/// How many of a role's members its card names (the rest are counted).
const MEMBERS_NAMED: usize = 50;

/// What the page shows: the notice of an action done, and which page of
/// users (those whose names start with `find`, `after` or `before` a
/// username; the first without).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Shown {
    done: Option<String>,
    #[serde(default)]
    find: String,
    #[serde(flatten)]
    cursor: Cursor,
}

async fn show(State(c): State<Console>, headers: HeaderMap, Query(q): Query<Shown>) -> Response {
    let viewer = viewer_of!(c, headers, Page::People);
    render(&c, &viewer, &q, None, StatusCode::OK).await
}

/// What an action did, as the notice after its redirect says it: only
/// these words are announced (the query string is anyone's to write).
const DONE: [(&str, &str); 8] = [
    (
        "added",
        "The user is added: they can sign in with the password you set.",
    ),
    (
        "password-set",
        "The password is set: the user's browser sessions ended; they sign in with the new one.",
    ),
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
];

async fn render(
    c: &Console,
    viewer: &Viewer,
    shown: &Shown,
    refusal: Option<Refusal>,
    status: StatusCode,
) -> Response {
    let tenant = viewer.tenant();
    let read = async {
        let query = UsersQuery {
            tenant: tenant.to_owned(),
            starting: shown.find.trim().to_owned(),
            from: PageFrom::Start,
            limit: SHOWN,
        };
        let (users, read) = paging::read_page(
            &shown.cursor.by_name(),
            SHOWN,
            |u: &User| u.username.clone(),
            |from, limit| {
                let query = UsersQuery {
                    from,
                    limit,
                    ..query.clone()
                };
                async move { c.store.users_page(&query).await }
            },
        )
        .await
        .map_err(|e| e.to_string())?;
        let roles = c.policy.roles(tenant).await.map_err(|e| e.to_string())?;
        let named: Vec<&str> = roles
            .iter()
            .flat_map(|r| r.members.iter().take(MEMBERS_NAMED))
            .map(String::as_str)
            .collect();
        let names = c
            .store
            .usernames(tenant, &named)
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>((users, read, roles, names))
    };
    let (users, read, roles, names) = match read.await {
        Ok(r) => r,
        Err(e) => {
            return c.unreadable(viewer, Page::People, "the tenant's people", &e);
        }
    };
    let pager = Pager::linked(&read, &[("find", &shown.find)], &BY_NAME);
    let notice = shown
        .done
        .as_deref()
        .and_then(|d| DONE.iter().find(|(k, _)| *k == d).map(|(_, v)| *v));
    let context = json!({
        "tenant": tenant,
        "users": users_view(&users, &roles, viewer),
        "find": shown.find.trim(),
        "pager": pager,
        "roles": roles_view(&roles, &names, viewer),
        "notice": notice,
        "error": refusal,
    });
    c.show(viewer, Page::People, "people.html", status, None, context)
        .await
}

/// Each user of the page as it shows them: with the roles they hold, and
/// whether they are the viewer.
fn users_view(users: &[User], roles: &[Role], viewer: &Viewer) -> Vec<Value> {
    users
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
        .collect()
}

/// Each role of the tenant as the page shows it: its permissions, and its
/// first [`MEMBERS_NAMED`] members by name (an id when the user is gone),
/// with how many more hold it.
fn roles_view(roles: &[Role], names: &BTreeMap<String, String>, viewer: &Viewer) -> Vec<Value> {
    roles
        .iter()
        .map(|r| {
            let members: Vec<Value> = r
                .members
                .iter()
                .take(MEMBERS_NAMED)
                .map(|m| {
                    let name = names.get(m).map_or(m.as_str(), String::as_str);
                    json!({"name": name, "you": *m == viewer.user.subject})
                })
                .collect();
            json!({
                "name": r.name,
                "admin": r.admin,
                "permissions": r.permissions.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "members": members,
                "more_members": r.members.len().saturating_sub(MEMBERS_NAMED),
            })
        })
        .collect()
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

/// The form that adds a user, or sets a user's password: the password is
/// hashed at once and never written anywhere else (not in the audit row,
/// whose arguments name the user and the role only).
#[derive(Deserialize)]
pub(crate) struct PasswordForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    username: String,
    #[serde(default)]
    password: String,
    /// A role of the tenant to give the new user (none: empty).
    #[serde(default)]
    role: String,
}

/// Why an action was refused: its code and what to tell the person.
pub(crate) fn refusal(code: &'static str, message: impl Into<String>) -> Refusal {
    Refusal {
        code,
        message: message.into(),
    }
}

/// A change as the page decides it: the effects to write with the row
/// (all or none), or why it is refused before anything is written.
type Decided = Result<Vec<PeopleEffect>, Refusal>;

impl Console {
    /// `viewer`'s change `decided`, recorded as `tool` with `args`: the
    /// change and its row in one transaction. Refused (by `decided`, by
    /// the store, or as `lost` when what it changes went missing
    /// meanwhile), nothing changes and the row records the refusal.
    pub(crate) async fn act(
        &self,
        viewer: &Viewer,
        (tool, args): (&str, Value),
        decided: impl Future<Output = Decided>,
        lost: Refusal,
    ) -> Result<(), Refusal> {
        let started = Instant::now();
        let row = AuditEvent {
            client_id: Some(CONSOLE_CLIENT.to_owned()),
            ..AuditEvent::new(
                viewer.tenant(),
                &viewer.user.subject,
                tool,
                toolhost_audit::argument_digest(&args),
            )
        };
        let decided = decided.await;
        let row = AuditEvent {
            duration: started.elapsed(),
            ..row
        };
        written(self.trail.as_ref(), row, decided, lost).await
    }
}

/// Writes `row` with the change `decided` (one transaction), or, if it is
/// refused or its transaction fails, `row` as a refusal alone.
async fn written(
    trail: &dyn AuditSink,
    row: AuditEvent,
    decided: Decided,
    lost: Refusal,
) -> Result<(), Refusal> {
    let refused = match decided {
        Ok(changes) => {
            let effects: Vec<Effect> = changes.into_iter().map(Effect::People).collect();
            match trail.record_with(&row, &effects).await {
                Ok(()) => return Ok(()),
                Err(AuditError::Lost { .. }) => lost,
                Err(e) => store_down(&e),
            }
        }
        Err(refused) => refused,
    };
    // The same call id: if a failed commit's answer was lost after all,
    // the change's row stands and this one is refused as a duplicate.
    let (outcome, code) = match refused.code {
        code if code == "PERMISSION_DENIED" || code.starts_with("SELF_") => (Outcome::Denied, code),
        code => (Outcome::Error, code),
    };
    let row = AuditEvent {
        outcome,
        error_code: Some(code.to_owned()),
        ..row
    };
    if let Err(e) = trail.record(&row).await {
        tracing::error!(error = %e, tool = row.tool, "console: recording a refused admin action");
    }
    Err(refused)
}

/// Now, in unix seconds (what the auth store's revocations hold).
pub(crate) fn now_s() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The user `username`, if they belong to `tenant` (anyone else is as
/// missing as a user that never was).
async fn tenant_user(c: &Console, tenant: &str, username: &str) -> Result<User, Refusal> {
    match c.auth.store().user_by_name(username).await {
        Ok(Some(u)) if u.tenant == tenant => Ok(u),
        Ok(_) => Err(no_user(username)),
        Err(e) => Err(store_down(&e)),
    }
}

/// No user `username` in the viewer's tenant.
fn no_user(username: &str) -> Refusal {
    refusal(
        "USER_NOT_FOUND",
        format!("no user {username:?} in your tenant"),
    )
}

/// No role `role` in the viewer's tenant.
fn no_role(role: &str) -> Refusal {
    refusal("ROLE_NOT_FOUND", format!("no role {role:?} in your tenant"))
}

pub(crate) fn store_down(e: &dyn std::fmt::Display) -> Refusal {
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
            render(c, viewer, &Shown::default(), Some(r), status).await
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
    let decided = async {
        let user = tenant_user(&c, &tenant, &username).await?;
        if disable && user.id == viewer.user.subject {
            return Err(refusal(
                "SELF_DISABLE",
                "you cannot disable yourself: another admin of your tenant can",
            ));
        }
        Ok(vec![PeopleEffect::SetDisabled {
            tenant: tenant.clone(),
            user: user.id,
            disabled: disable,
            at_s: now_s(),
        }])
    };
    let lost = no_user(&username);
    let done = c.act(&viewer, (tool, args), decided, lost).await;
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
    let (tool, word) = match action.as_str() {
        "permit" => ("permit_role", "permitted"),
        "forbid" => ("forbid_role", "forbidden"),
        "grant" => ("grant_role", "granted"),
        "revoke" => ("revoke_role", "revoked"),
        _ => return crate::not_found(State(c), headers).await,
    };
    let (permission, username) = (f.permission.trim(), f.username.trim());
    let args = json!({"role": role, "permission": permission, "username": username});
    let decided = async {
        let roles = c.policy.roles(&tenant).await.map_err(policy_refusal)?;
        let Some(held) = roles.iter().find(|r| r.name == role) else {
            return Err(no_role(&role));
        };
        if matches!(tool, "permit_role" | "forbid_role") {
            let p: Permission = permission.parse().map_err(|e| {
                refusal(
                    "INVALID_ARGUMENTS",
                    format!("permission {permission:?}: {e}"),
                )
            })?;
            return Ok(vec![PeopleEffect::Permission {
                tenant: tenant.clone(),
                role: role.clone(),
                permission: p.to_string(),
                permit: tool == "permit_role",
            }]);
        }
        let user = tenant_user(&c, &tenant, username).await?;
        if tool == "revoke_role" && held.admin && user.id == viewer.user.subject {
            return Err(refusal(
                "SELF_LOCKOUT",
                "you cannot take an admin role from yourself: another admin of your tenant can",
            ));
        }
        Ok(vec![PeopleEffect::Membership {
            tenant: tenant.clone(),
            role: role.clone(),
            user: user.id,
            member: tool == "grant_role",
        }])
    };
    let lost = match tool {
        "permit_role" | "forbid_role" => no_role(&role),
        _ => refusal(
            "NOT_FOUND",
            format!("role {role:?} or user {username:?} is no longer in your tenant"),
        ),
    };
    let done = c.act(&viewer, (tool, args), decided, lost).await;
    answer(&c, &viewer, done, word).await
}

/// What the auth rules say of a new user or password, as a refusal.
fn invalid(e: AdminError) -> Refusal {
    match e {
        AdminError::Invalid(why) => refusal("INVALID_ARGUMENTS", why),
        e => store_down(&e),
    }
}

/// Adds a user to the viewer's tenant, with a password the viewer sets
/// (checked and hashed as `toolhost user add` does) and, if chosen, one
/// of the tenant's roles: the user, the role and the row in one
/// transaction.
async fn add_user(
    State(c): State<Console>,
    headers: HeaderMap,
    Form(f): Form<PasswordForm>,
) -> Response {
    let viewer = acting_on!(c, headers, Page::People, &f.csrf);
    let tenant = viewer.tenant().to_owned();
    let (username, role) = (f.username.trim(), f.role.trim());
    let args = json!({"username": username, "role": role});
    let decided = async {
        if !role.is_empty() {
            let roles = c.policy.roles(&tenant).await.map_err(policy_refusal)?;
            if !roles.iter().any(|r| r.name == role) {
                return Err(no_role(role));
            }
        }
        match c.auth.store().user_by_name(username).await {
            Ok(None) => {}
            Ok(Some(_)) => return Err(taken(username)),
            Err(e) => return Err(store_down(&e)),
        }
        let user = admin::new_user(&tenant, username, &f.password)
            .await
            .map_err(invalid)?;
        let mut changes = vec![PeopleEffect::AddUser {
            tenant: tenant.clone(),
            user: user.id.clone(),
            username: user.username,
            password_hash: user.password_hash,
            at_s: user.created_at,
        }];
        if !role.is_empty() {
            changes.push(PeopleEffect::Membership {
                tenant: tenant.clone(),
                role: role.to_owned(),
                user: user.id,
                member: true,
            });
        }
        Ok(changes)
    };
    let done = c
        .act(&viewer, ("add_user", args), decided, taken(username))
        .await;
    answer(&c, &viewer, done, "added").await
}

/// Sets the password of a user of the viewer's tenant (checked and hashed
/// as `toolhost user passwd` does); their browser sessions end with it.
async fn set_password(
    State(c): State<Console>,
    headers: HeaderMap,
    Path(username): Path<String>,
    Form(f): Form<PasswordForm>,
) -> Response {
    let viewer = acting_on!(c, headers, Page::People, &f.csrf);
    let tenant = viewer.tenant().to_owned();
    let args = json!({"username": username});
    let decided = async {
        let user = tenant_user(&c, &tenant, &username).await?;
        let password_hash = admin::password_hash(&f.password).await.map_err(invalid)?;
        Ok(vec![PeopleEffect::SetPassword {
            tenant: tenant.clone(),
            user: user.id,
            password_hash,
        }])
    };
    let lost = no_user(&username);
    let done = c.act(&viewer, ("set_password", args), decided, lost).await;
    answer(&c, &viewer, done, "password-set").await
}

/// The username `username` is someone's already (in any tenant: names are
/// unique on the host).
fn taken(username: &str) -> Refusal {
    refusal(
        "USER_CONFLICT",
        format!("the username {username:?} is taken; choose another"),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;
    use toolhost_audit::{
        AuditError, AuditEvent, AuditSink, Effect, Outcome, PeopleEffect, SinkFuture,
    };

    use super::{refusal, written};
    use crate::testing::{HOSTILE, assert_escaped, ready, render};

    /// A trail whose changes all lose to another writer (as a store's
    /// transaction does when what a change needs went missing): it keeps
    /// only the rows written without a change.
    #[derive(Default)]
    struct Losing(Mutex<Vec<AuditEvent>>);

    impl AuditSink for Losing {
        fn record_with<'a>(
            &'a self,
            event: &'a AuditEvent,
            effects: &'a [Effect],
        ) -> SinkFuture<'a> {
            Box::pin(async move {
                if !effects.is_empty() {
                    return Err(AuditError::Lost { effect: 0 });
                }
                self.0.lock().expect("rows").push(event.clone());
                Ok(())
            })
        }
    }

    fn row() -> AuditEvent {
        AuditEvent::new(
            "demo",
            "u-ann",
            "disable_user",
            toolhost_audit::argument_digest(&json!({})),
        )
    }

    fn disable() -> PeopleEffect {
        PeopleEffect::SetDisabled {
            tenant: "demo".into(),
            user: "u-bob".into(),
            disabled: true,
            at_s: 1,
        }
    }

    /// `f`'s output: the futures here never wait (the trail is memory).
    #[test]
    fn a_change_that_lost_leaves_no_row_of_it_only_the_row_of_its_refusal() {
        let trail = Losing::default();
        let lost = refusal("USER_NOT_FOUND", "gone");
        let done = ready(written(&trail, row(), Ok(vec![disable()]), lost));
        assert_eq!(done.map_err(|r| r.code), Err("USER_NOT_FOUND"));
        let rows = trail.0.lock().expect("rows");
        assert_eq!(rows.len(), 1, "one row: the refusal's");
        assert_eq!(rows[0].outcome, Outcome::Error);
        assert_eq!(rows[0].error_code.as_deref(), Some("USER_NOT_FOUND"));
    }

    #[test]
    fn a_change_refused_before_writing_records_its_refusal_alone() {
        let trail = Losing::default();
        let refused = refusal("SELF_DISABLE", "not yourself");
        let lost = refusal("USER_NOT_FOUND", "gone");
        let done = ready(written(&trail, row(), Err(refused), lost));
        assert_eq!(done.map_err(|r| r.code), Err("SELF_DISABLE"));
        let rows = trail.0.lock().expect("rows");
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].outcome, Outcome::Denied);
    }

    #[test]
    fn names_scopes_and_permissions_are_text_and_you_cannot_disable_yourself() {
        let page = json!({
            "tenant": "demo",
            "users": [
                {"username": "ann", "id": "u-1", "disabled": false, "created_ms": 1, "roles": [HOSTILE], "you": true},
                {"username": "bob", "id": "u-2", "disabled": false, "created_ms": 1, "roles": [], "you": false},
                {"username": "cy", "id": "u-3", "disabled": true, "created_ms": 1, "roles": [], "you": false},
            ],
            "find": HOSTILE,
            "pager": {"newer": format!("find={HOSTILE}&before=ann"), "older": "after=cy"},
            "roles": [
                {"name": "ops", "admin": false, "permissions": ["approvals:decide"], "members": [{"name": "bob"}], "more_members": 70},
                {"name": "boss", "admin": true, "permissions": [], "members": [{"name": "ann", "you": true}], "more_members": 0},
            ],
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
            html.contains("and 70 more"),
            "the members not named are counted"
        );
        assert!(
            html.contains("<a rel=\"next\" href=\"/admin/people?after=cy\">Next</a>"),
            "{html}"
        );
        let grant = html
            .split("action=\"/admin/people/roles/ops/grant\"")
            .nth(1)
            .expect("a form to grant ops");
        assert!(
            grant.contains("<input id=\"grant-1\" name=\"username\""),
            "a name typed, not chosen from every user: {grant}"
        );
        let add = html
            .split(
                "<form class=\"filters add-user\" method=\"post\" action=\"/admin/people/users\"",
            )
            .nth(1)
            .expect("a form to add a user");
        assert!(add.contains(&format!("name=\"csrf\" value=\"{}\"", crate::testing::CSRF)));
        assert!(add.contains("name=\"password\" type=\"password\""));
        assert!(add.contains("<option value=\"ops\">ops</option>"), "{add}");
        assert!(html.contains("action=\"/admin/people/users/bob/password\""));
    }
}
