//! Live views: the two reads every request makes, a grant's standing
//! ([`AuthStore::live_grant`](toolhost_auth::AuthStore::live_grant)) and
//! a subject's roles
//! ([`PolicyStore::grants`](toolhost_policy::PolicyStore::grants)), served
//! from memory while the database's change generation stands still.
//!
//! The generation (`live_generation`, migration 0013) moves by trigger in
//! the transaction of every change a view depends on, whoever makes it.
//! This store learns that it moved:
//! - at once, for a change it makes itself: each of its writers that can
//!   touch a view re-reads the generation before it returns, so the next
//!   request on this host sees the change;
//! - within [`POLL`] for a change made elsewhere (the `toolhost` CLI,
//!   another replica): a task re-reads it every [`POLL`]; on PostgreSQL it
//!   also listens on `toolhost_live`, which the triggers notify at
//!   commit, so another replica's change usually arrives sooner.
//!
//! An entry is remembered with the generation its read started under, and
//! only if that is still the generation when it is stored: a read that
//! raced a change is used once and forgotten. A grant that does not exist
//! is never remembered (it is what a forged or stale token presents; the
//! next read finds it if it was just written).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use toolhost_auth::LiveGrant;
use toolhost_policy::Grants;

use crate::connect::{Pools, on_pool};

/// How often the generation is re-read for changes made elsewhere: the
/// bound on how long such a change takes to apply here (plus one read).
pub const POLL: Duration = Duration::from_millis(25);

/// Entries per view before it is emptied and refilled: bounds memory
/// against many distinct tokens or subjects (a view entry is a few hundred
/// bytes).
const MAX_ENTRIES: usize = 65_536;

/// The channel migration 0013's PostgreSQL triggers notify.
const CHANNEL: &str = "toolhost_live";

const GENERATION: &str = "SELECT value FROM live_generation WHERE id = 1";

/// The remembered reads, valid for `generation`.
#[derive(Default)]
struct Views {
    /// The last generation read; `None` before the first read (nothing is
    /// remembered until one succeeds).
    generation: Option<i64>,
    grants: HashMap<String, LiveGrant>,
    /// By tenant, then subject: looked up with borrowed keys, no
    /// allocation per request.
    roles: HashMap<String, HashMap<String, Grants>>,
    /// Subjects in `roles`, all tenants: what [`MAX_ENTRIES`] bounds.
    role_entries: usize,
}

/// The live views of one store (shared by its clones).
#[derive(Default)]
pub(crate) struct LiveViews {
    views: Mutex<Views>,
}

/// The generation a read started under, to store its answer with.
#[derive(Clone, Copy)]
pub(crate) struct Ticket(Option<i64>);

impl LiveViews {
    /// Starts the views of `pools` and the task that keeps them current;
    /// the task ends when the last store holding them is dropped or its
    /// pool closed.
    pub(crate) async fn start(pools: &Pools) -> Arc<LiveViews> {
        let live = Arc::new(LiveViews::default());
        live.refresh(pools).await;
        tokio::spawn(watch(Arc::downgrade(&live), pools.clone()));
        live
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Views> {
        // A panic while holding the lock leaves plain maps behind: usable.
        self.views.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Re-reads the generation; forgets every entry if it moved. A failed
    /// read forgets everything too, and remembers nothing until a read
    /// succeeds: the views never outlive what they can check.
    pub(crate) async fn refresh(&self, pools: &Pools) {
        let read: Result<i64, sqlx::Error> =
            on_pool!(pools, pool => sqlx::query_scalar(GENERATION).fetch_one(pool).await);
        let mut views = self.lock();
        let now = match read {
            Ok(g) => Some(g),
            Err(e) => {
                // Once per outage, not once per poll.
                if views.generation.is_some() {
                    tracing::warn!(error = %e, "reading the live generation; views emptied");
                }
                None
            }
        };
        if moves(views.generation, now) {
            views.grants.clear();
            views.roles.clear();
            views.role_entries = 0;
            views.generation = now;
        }
    }

    /// The grant of family `id`, if remembered; else a ticket to store
    /// the read's answer with.
    pub(crate) fn grant(&self, id: &str) -> Result<LiveGrant, Ticket> {
        let views = self.lock();
        views
            .grants
            .get(id)
            .cloned()
            .ok_or(Ticket(views.generation))
    }

    /// Remembers a grant read under `ticket`, if nothing moved since.
    pub(crate) fn keep_grant(&self, ticket: Ticket, id: &str, grant: &LiveGrant) {
        let mut views = self.lock();
        if ticket.0.is_some() && views.generation == ticket.0 {
            if views.grants.len() >= MAX_ENTRIES {
                views.grants.clear();
            }
            views.grants.insert(id.to_owned(), grant.clone());
        }
    }

    /// The grants of `subject` in `tenant`, if remembered; else a ticket.
    pub(crate) fn roles(&self, tenant: &str, subject: &str) -> Result<Grants, Ticket> {
        let views = self.lock();
        views
            .roles
            .get(tenant)
            .and_then(|subjects| subjects.get(subject))
            .cloned()
            .ok_or(Ticket(views.generation))
    }

    /// Remembers a subject's grants read under `ticket`, if nothing moved.
    pub(crate) fn keep_roles(&self, ticket: Ticket, tenant: &str, subject: &str, grants: &Grants) {
        let mut views = self.lock();
        if ticket.0.is_some() && views.generation == ticket.0 {
            if views.role_entries >= MAX_ENTRIES {
                views.roles.clear();
                views.role_entries = 0;
            }
            let added = views
                .roles
                .entry(tenant.to_owned())
                .or_default()
                .insert(subject.to_owned(), grants.clone())
                .is_none();
            views.role_entries += usize::from(added);
        }
    }
}

/// Whether a refresh that read `read` forgets what the views hold for
/// `known`. The generation only grows: two refreshes can finish out of
/// order (the poll's read began before a local write's), and the older
/// must not take the views back to a generation a stale read could still
/// be stored under. A failed read (`None`) always forgets.
fn moves(known: Option<i64>, read: Option<i64>) -> bool {
    match (known, read) {
        (Some(known), Some(read)) => read > known,
        _ => true,
    }
}

/// Keeps `live` current until it is dropped or the pool closes: a poll
/// every [`POLL`], and on PostgreSQL the triggers' notifications between.
async fn watch(live: Weak<LiveViews>, pools: Pools) {
    let mut listener = match &pools {
        Pools::Postgres(pool) => listen(pool).await,
        Pools::Sqlite(_) => None,
    };
    let mut tick = tokio::time::interval(POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        match listener.as_mut() {
            Some(l) => {
                tokio::select! {
                    _ = tick.tick() => {}
                    heard = l.recv() => if let Err(e) = heard {
                        tracing::warn!(error = %e, "live views: listening stopped; polling only");
                        listener = None;
                    }
                }
            }
            None => {
                tick.tick().await;
            }
        }
        let closed = on_pool!(&pools, pool => pool.is_closed());
        let Some(live) = live.upgrade().filter(|_| !closed) else {
            return;
        };
        live.refresh(&pools).await;
    }
}

/// A listener on the triggers' channel, or `None` (then polling alone
/// keeps the views current).
async fn listen(pool: &sqlx::PgPool) -> Option<sqlx::postgres::PgListener> {
    let mut listener = match sqlx::postgres::PgListener::connect_with(pool).await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "live views: cannot listen; polling only");
            return None;
        }
    };
    match listener.listen(CHANNEL).await {
        Ok(()) => Some(listener),
        Err(e) => {
            tracing::warn!(error = %e, "live views: cannot listen; polling only");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::moves;

    #[test]
    fn the_views_move_only_forward_and_forget_on_a_failed_read() {
        assert!(moves(None, Some(3)), "the first read");
        assert!(moves(Some(3), Some(4)), "a change");
        assert!(!moves(Some(3), Some(3)), "nothing changed");
        assert!(!moves(Some(4), Some(3)), "an older read finishing late");
        assert!(moves(Some(3), None), "a failed read");
        assert!(moves(None, None), "still failing");
    }
}
