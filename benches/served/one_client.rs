//! One client: the host as shipped (a SQLite file on the disk) against
//! the same binary on an in-memory database and on a SQLite file in
//! tmpfs, in rounds at one client, each as the bearer of the demo user's
//! token (an in-memory store has no way in for a service client: it is
//! added by a CLI run on the store, which cannot reach the server's
//! memory).

use std::path::Path;

use crate::closed_loop::{Span, Window};
use crate::process::{self, Target};
use crate::rounds::greet_rounds;
use crate::support::oauth::user_token;
use crate::support::{DEMO_PASSWORD, Server};

/// Where a SQLite file costs no disk syncs, if this machine has it.
const TMPFS: &str = "/dev/shm";

/// Each store's windows, pooled over the rounds.
pub struct OneClient {
    /// The host as shipped: a SQLite file on the disk, synced.
    pub shipped: Window,
    /// `sqlite::memory:`.
    pub memory: Window,
    /// A SQLite file in tmpfs, if there is one.
    pub tmpfs: Option<Window>,
}

/// `shipped` and two more servers of the same binary, `rounds` rounds of
/// `span` each at one client.
pub fn measure(shipped: &Server, span: Span, rounds: usize) -> OneClient {
    let exe = Path::new(crate::TOOLHOST);
    let memory = process::host(exe, Some("sqlite::memory:"));
    let tmpfs_store = tmpfs_store();
    let tmpfs = (tmpfs_store.as_ref()).map(|(_, url)| process::host(exe, Some(url)));
    let demo = |s: &Server| Target::host(s, &user_token(s, "demo", DEMO_PASSWORD));
    let mut targets = vec![demo(shipped), Target::host(&memory, memory.token())];
    targets.extend(tmpfs.as_ref().map(demo));
    let targets: Vec<&Target> = targets.iter().collect();
    let mut pooled = greet_rounds(&targets, 1, span, rounds).pooled.into_iter();
    OneClient {
        shipped: pooled.next().expect("shipped"),
        memory: pooled.next().expect("in memory"),
        tmpfs: pooled.next(),
    }
}

/// A SQLite file in tmpfs, if this machine has it: the dir that holds it
/// (removed when dropped) and the store's URL. The shipped path, whose
/// syncs cost nothing.
pub fn tmpfs_store() -> Option<(tempfile::TempDir, String)> {
    let dir = Path::new(TMPFS).is_dir().then(|| {
        tempfile::Builder::new()
            .prefix("toolhost-served-")
            .tempdir_in(TMPFS)
            .expect("a dir in tmpfs")
    })?;
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("host.db").display());
    Some((dir, url))
}
