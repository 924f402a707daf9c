//! Who this process is among the replicas: its replica id (logs, traces,
//! the `X-Toolhost-Replica` header, resource relays) and its run workers'
//! id.

use std::net::SocketAddr;

/// This process among the replicas: host name and process id.
pub(crate) fn replica_id() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into());
    format!("{host}/{}", std::process::id())
}

/// This process's worker id: its replica id and what it serves.
pub(crate) fn worker_id(listen: SocketAddr, worker_only: bool) -> String {
    let role = if worker_only {
        "worker".to_owned()
    } else {
        listen.to_string()
    };
    format!("{}/{role}", replica_id())
}
