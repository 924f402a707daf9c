//! `toolhost tenant …`, `toolhost role …`, `toolhost grant` and `toolhost
//! revoke`: operator commands on tenants, their roles and who holds them,
//! against the server's store (the same `--database-url`). A change takes
//! effect on the holder's next MCP request: grants are read live.
//!
//! Every refusal happens before anything is written: names and permissions
//! are parsed first, then the tenant, role and user are looked up. A user of
//! another tenant is refused here with a clear message; the store would
//! refuse the assignment anyway (a foreign key), so a role never crosses
//! tenants even if two operators race.

use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use clap::Subcommand;
use toolhost_auth::{AuthStore, User};
use toolhost_policy::{PolicyStore, Role};
use toolhost_storage::Store;
use toolhost_types::Permission;

use crate::admin::{StoreArg, open};

/// `toolhost tenant …`
#[derive(Debug, Subcommand)]
pub enum TenantCommand {
    /// Create a tenant; one that exists already is left as it is.
    Add {
        /// The tenant's id.
        name: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Every tenant, by id.
    List {
        #[command(flatten)]
        store: StoreArg,
    },
    /// Require DPoP-bound tokens of the tenant's clients, or stop requiring them.
    ///
    /// When required (RFC 9449), a token request without a DPoP proof is
    /// refused with `invalid_dpop_proof`, for the tenant's people and its
    /// service clients alike.
    Dpop {
        /// The tenant's id (must exist).
        name: String,
        /// `required` or `optional` (the default of every tenant).
        #[arg(value_enum)]
        mode: DpopMode,
        #[command(flatten)]
        store: StoreArg,
    },
}

/// Whether a tenant requires DPoP-bound tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DpopMode {
    /// Every token request must carry a DPoP proof.
    Required,
    /// A client may use DPoP or bearer tokens.
    Optional,
}

/// A role and permissions given to it (`role permit`) or taken from it
/// (`role forbid`).
#[derive(Debug, clap::Args)]
pub struct RolePermissions {
    /// The role's name.
    name: String,
    /// `resource:action`, or `resource:*` for every action (to forbid: as
    /// permitted).
    #[arg(required = true)]
    permissions: Vec<String>,
    /// The role's tenant.
    #[arg(long)]
    tenant: String,
    #[command(flatten)]
    store: StoreArg,
}

/// `toolhost role …`
#[derive(Debug, Subcommand)]
pub enum RoleCommand {
    /// Create a role in a tenant. An admin role allows every tool.
    Add {
        /// The role's name, unique in its tenant.
        name: String,
        /// The role's tenant (must exist).
        #[arg(long)]
        tenant: String,
        /// Make it an admin role.
        #[arg(long)]
        admin: bool,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Delete a role; its holders lose it at once.
    Delete {
        /// The role's name.
        name: String,
        /// The role's tenant.
        #[arg(long)]
        tenant: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Let a role use the tools needing these permissions.
    Permit(RolePermissions),
    /// Take permissions from a role.
    Forbid(RolePermissions),
    /// A tenant's roles: name, admin, permissions and holders.
    List {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        #[command(flatten)]
        store: StoreArg,
    },
}

/// `toolhost grant` and `toolhost revoke`.
#[derive(Debug, clap::Args)]
pub struct GrantArgs {
    /// The role's name.
    role: String,
    /// The user's login name; the user must belong to the tenant.
    username: String,
    /// The role's tenant.
    #[arg(long)]
    tenant: String,
    #[command(flatten)]
    store: StoreArg,
}

/// Runs a `tenant` command.
pub async fn tenant(command: TenantCommand) -> anyhow::Result<ExitCode> {
    match command {
        TenantCommand::Add { name, store } => {
            valid_name("tenant", &name)?;
            let store = open(&store).await?;
            if store.tenants().await?.contains(&name) {
                println!("tenant {name} exists already");
            } else {
                store.ensure_tenant(&name, now()).await?;
                println!("tenant {name} added");
            }
        }
        TenantCommand::List { store } => {
            for id in open(&store).await?.tenants().await? {
                println!("{id}");
            }
        }
        TenantCommand::Dpop { name, mode, store } => {
            let required = mode == DpopMode::Required;
            if !open(&store).await?.set_tenant_dpop(&name, required).await? {
                bail!("no tenant {name}");
            }
            let says = if required {
                "requires DPoP-bound tokens"
            } else {
                "accepts bearer and DPoP-bound tokens"
            };
            println!("tenant {name} {says}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs a `role` command.
pub async fn role(command: RoleCommand) -> anyhow::Result<ExitCode> {
    match command {
        RoleCommand::Add {
            name,
            tenant,
            admin,
            store,
        } => {
            valid_name("role", &name)?;
            open(&store)
                .await?
                .create_role(&tenant, &name, admin)
                .await?;
            let kind = if admin {
                " (admin: allows every tool)"
            } else {
                ""
            };
            println!("role {name} added to tenant {tenant}{kind}");
        }
        RoleCommand::Delete {
            name,
            tenant,
            store,
        } => {
            let store = open(&store).await?;
            let role = existing_role(&store, &tenant, &name).await?;
            if !store.delete_role(&tenant, &name).await? {
                bail!("role {name:?} does not exist in tenant {tenant:?}");
            }
            let holders = role.members.len();
            println!("role {name} deleted from tenant {tenant}; {holders} holder(s) lost it");
        }
        RoleCommand::Permit(role) => permit(&role, true).await?,
        RoleCommand::Forbid(role) => permit(&role, false).await?,
        RoleCommand::List { tenant, store } => {
            let store = open(&store).await?;
            existing_tenant(&store, &tenant).await?;
            print_roles(&store, &store.roles(&tenant).await?).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `role permit` (`add`) or `role forbid`: every permission is parsed and
/// the role found before the first one is written.
async fn permit(role: &RolePermissions, add: bool) -> anyhow::Result<()> {
    let RolePermissions {
        name,
        permissions: values,
        tenant,
        store,
    } = role;
    let permissions = values
        .iter()
        .map(|v| v.parse::<Permission>())
        .collect::<Result<Vec<_>, _>>()?;
    let store = open(store).await?;
    existing_role(&store, tenant, name).await?;
    for p in &permissions {
        let (changed, done, unchanged) = if add {
            let added = store.permit(tenant, name, p).await?;
            (added, "now permits", "already permitted")
        } else {
            let removed = store.forbid(tenant, name, p).await?;
            (removed, "no longer permits", "did not permit")
        };
        println!("role {name} {} {p}", if changed { done } else { unchanged });
    }
    Ok(())
}

/// Runs `grant`: gives the role to a user of its tenant.
pub async fn grant(args: GrantArgs) -> anyhow::Result<ExitCode> {
    let (store, user) = holder(&args).await?;
    let (role, tenant) = (&args.role, &args.tenant);
    if store.assign(tenant, role, &user.id).await? {
        println!("{} now holds role {role} in tenant {tenant}", user.username);
    } else {
        println!(
            "{} already holds role {role} in tenant {tenant}",
            user.username
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `revoke`: takes the role from the user.
pub async fn revoke(args: GrantArgs) -> anyhow::Result<ExitCode> {
    let (store, user) = holder(&args).await?;
    let (role, tenant) = (&args.role, &args.tenant);
    if store.unassign(tenant, role, &user.id).await? {
        println!(
            "{} no longer holds role {role} in tenant {tenant}",
            user.username
        );
    } else {
        println!(
            "{} did not hold role {role} in tenant {tenant}",
            user.username
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The store and the user `grant`/`revoke` name, once the role is known to
/// exist and the user to belong to the role's tenant.
async fn holder(args: &GrantArgs) -> anyhow::Result<(Store, User)> {
    let store = open(&args.store).await?;
    existing_role(&store, &args.tenant, &args.role).await?;
    let name = &args.username;
    let Some(user) = store.user_by_name(name).await? else {
        bail!("user {name:?} does not exist");
    };
    if user.tenant != args.tenant {
        bail!(
            "user {name:?} belongs to tenant {:?}, not {:?}: a role is held only within its tenant",
            user.tenant,
            args.tenant
        );
    }
    Ok((store, user))
}

/// Fails unless `tenant` exists.
async fn existing_tenant(store: &Store, tenant: &str) -> anyhow::Result<()> {
    if !store.tenants().await?.iter().any(|t| t == tenant) {
        bail!("tenant {tenant:?} does not exist");
    }
    Ok(())
}

/// The role `name` of `tenant`, or a failure naming whichever is missing.
async fn existing_role(store: &Store, tenant: &str, name: &str) -> anyhow::Result<Role> {
    existing_tenant(store, tenant).await?;
    let role = store
        .roles(tenant)
        .await?
        .into_iter()
        .find(|r| r.name == name);
    role.with_context(|| format!("role {name:?} does not exist in tenant {tenant:?}"))
}

/// One line per role; holders by login name (their user id if the user is
/// gone, which the store's cascade should make impossible).
async fn print_roles(store: &Store, roles: &[Role]) -> anyhow::Result<()> {
    println!(
        "{:<24} {:<5} {:<40} HOLDERS",
        "ROLE", "ADMIN", "PERMISSIONS"
    );
    for role in roles {
        let mut holders = Vec::with_capacity(role.members.len());
        for id in &role.members {
            let user = store.user_by_id(id).await?;
            holders.push(user.map_or_else(|| id.clone(), |u| u.username));
        }
        let permissions: Vec<String> = role.permissions.iter().map(|p| p.to_string()).collect();
        println!(
            "{:<24} {:<5} {:<40} {}",
            role.name,
            if role.admin { "yes" } else { "no" },
            or_dash(permissions.join(",")),
            or_dash(holders.join(","))
        );
    }
    Ok(())
}

fn or_dash(list: String) -> String {
    if list.is_empty() { "-".into() } else { list }
}

/// The rule `toolhost_auth::admin` applies to usernames and tenants (it
/// keeps its check private), applied here to tenants and roles too.
pub(crate) fn valid_name(what: &str, name: &str) -> anyhow::Result<()> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.@".contains(&b));
    if !ok {
        bail!("{what} {name:?}: use 1-64 letters, digits, '-', '_', '.', '@'");
    }
    Ok(())
}

/// Unix seconds, as the auth tables store them.
fn now() -> i64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("the clock is after 1970");
    i64::try_from(since.as_secs()).expect("seconds since 1970 fit in i64")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_account_rule() {
        for ok in ["acme", "data-team", "ops_2", "a.b@c"] {
            assert!(valid_name("role", ok).is_ok(), "{ok}");
        }
        let long = "x".repeat(65);
        for bad in ["", "has space", "semi;colon", "ünï", long.as_str()] {
            assert!(valid_name("role", bad).is_err(), "{bad:?}");
        }
    }
}
