//! The demo tenant of `make run` and `toolhost serve --seed-demo`: its
//! admin role and the user `demo` holding it.

use anyhow::Context;
use toolhost_policy::{PolicyStore, PolicyStoreError};
use toolhost_storage::Store;

/// The demo tenant, its admin role and the user `demo` holding it, unless
/// they exist: the password made (and whether it came from
/// `$TOOLHOST_DEMO_PASSWORD`), or `None` when `demo` existed already.
pub(crate) async fn seed_demo(store: &Store) -> anyhow::Result<Option<(String, bool)>> {
    let wanted = std::env::var("TOOLHOST_DEMO_PASSWORD")
        .ok()
        .filter(|p| !p.is_empty());
    let created = toolhost_auth::admin::seed_demo(store, wanted.as_deref())
        .await
        .context("seeding the demo user")?;
    seed_demo_admin(store).await?;
    Ok(created.map(|p| (p, wanted.is_some())))
}

/// The demo tenant's `admin` role (an admin role: every tool), held by `demo`.
async fn seed_demo_admin(store: &Store) -> anyhow::Result<()> {
    match PolicyStore::create_role(store, "demo", "admin", true).await {
        Ok(()) | Err(PolicyStoreError::Conflict { .. }) => {}
        Err(e) => return Err(e).context("seeding the demo admin role"),
    }
    let demo = toolhost_auth::AuthStore::user_by_name(store, "demo")
        .await
        .context("reading the demo user")?
        .context("the demo user is missing")?;
    PolicyStore::assign(store, "demo", "admin", &demo.id)
        .await
        .context("giving demo the admin role")?;
    Ok(())
}
