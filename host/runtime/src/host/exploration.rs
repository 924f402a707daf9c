//! What an exploration run's sandbox adds to a call: a log of every request
//! it sent and every attempt refused, and the artifacts it kept. The worker
//! reads the log into the run's receipt once the call is over.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use toolhost_artifacts::NewArtifact;
use toolhost_runs::{OutboundRecord, RefusalRecord};

/// Who and what an exploration run is, and where its sandbox writes down
/// what happened.
#[derive(Debug, Clone)]
pub struct Exploration {
    /// The run's id (the artifacts' owner).
    pub run_id: String,
    /// The run's tool.
    pub tool: String,
    /// The client the run was started through.
    pub client_id: String,
    /// Artifacts the run may keep, and their total bytes.
    pub max_artifacts: u32,
    /// Their total bytes.
    pub max_artifact_bytes: u64,
    /// How long a kept artifact stays readable, in milliseconds.
    pub artifact_ttl_ms: i64,
    /// What an artifact is scanned with before it is kept: a credential in
    /// it is refused.
    pub scanner: toolhost_secrets::Scanner,
    /// What the sandbox writes down.
    pub log: Arc<Mutex<RunLog>>,
}

impl Exploration {
    /// Writes down a refusal.
    pub(crate) fn refused(&self, what: &str, detail: String) {
        self.with_log(|log| {
            log.refused.push(RefusalRecord {
                what: what.to_owned(),
                detail,
            })
        });
    }

    /// Writes down a request that went out (`status` 0: no answer).
    pub(crate) fn sent(
        &self,
        method: &str,
        backend: &str,
        path: &str,
        status: u16,
        bytes: u64,
        took: Duration,
    ) {
        self.with_log(|log| {
            log.outbound.push(OutboundRecord {
                method: method.to_owned(),
                backend: backend.to_owned(),
                path: path.to_owned(),
                status,
                bytes,
                ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
            })
        });
    }

    pub(crate) fn with_log<T>(&self, f: impl FnOnce(&mut RunLog) -> T) -> T {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut log)
    }
}

/// What one attempt of a run did, in order.
#[derive(Debug, Default)]
pub struct RunLog {
    /// Every request sent.
    pub outbound: Vec<OutboundRecord>,
    /// Every attempt refused.
    pub refused: Vec<RefusalRecord>,
    /// Every artifact kept (written with the run's last audit row).
    pub artifacts: Vec<KeptArtifact>,
}

/// One artifact a run kept, and the name its plugin gave it.
#[derive(Debug, Clone)]
pub struct KeptArtifact {
    /// The plugin's name for it (shown in the receipt).
    pub name: String,
    /// Its description and bytes.
    pub new: NewArtifact,
}

impl RunLog {
    /// Bytes of the artifacts kept so far.
    pub fn artifact_bytes(&self) -> u64 {
        self.artifacts.iter().map(|a| a.new.artifact.size).sum()
    }
}
