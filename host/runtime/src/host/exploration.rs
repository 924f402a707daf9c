//! What an exploration run's sandbox adds to a call: a log of every request
//! it sent and every attempt refused, and the artifacts it kept. The worker
//! reads the log into the run's receipt once the call is over.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use toolhost_artifacts::NewArtifact;
use toolhost_runs::{OutboundRecord, RefusalRecord};

/// The most refused attempts one attempt's log lists; past it they are
/// only counted (`RunLog::refusals_unlisted`), so a guest looping on a
/// refused import cannot grow the log, and the receipt, without bound.
pub const MAX_REFUSALS_LISTED: usize = 256;

/// The longest refusal detail kept, in bytes: part of it is the guest's
/// (a backend name and path, an artifact name), which it may make huge.
pub const MAX_REFUSAL_DETAIL: usize = 512;

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
    /// Writes down a refusal: listed while fewer than
    /// [`MAX_REFUSALS_LISTED`] are, its detail cut to
    /// [`MAX_REFUSAL_DETAIL`] bytes; counted after that.
    pub(crate) fn refused(&self, what: &str, detail: String) {
        self.with_log(|log| {
            if log.refused.len() >= MAX_REFUSALS_LISTED {
                log.refusals_unlisted += 1;
                return;
            }
            log.refused.push(RefusalRecord {
                what: what.to_owned(),
                detail: cut(detail, MAX_REFUSAL_DETAIL),
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
    /// Attempts refused, the first [`MAX_REFUSALS_LISTED`].
    pub refused: Vec<RefusalRecord>,
    /// Attempts refused after those.
    pub refusals_unlisted: u64,
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

/// `text` cut to at most `max` bytes at a character boundary, ending in
/// `…` when cut.
fn cut(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max - '…'.len_utf8();
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

impl RunLog {
    /// Bytes of the artifacts kept so far.
    pub fn artifact_bytes(&self) -> u64 {
        self.artifacts.iter().map(|a| a.new.artifact.size).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> Exploration {
        Exploration {
            run_id: "run_1".into(),
            tool: "t".into(),
            client_id: "c".into(),
            max_artifacts: 0,
            max_artifact_bytes: 0,
            artifact_ttl_ms: 0,
            scanner: toolhost_secrets::Scanner::new(),
            log: Arc::default(),
        }
    }

    #[test]
    fn a_flood_of_refusals_is_listed_up_to_the_cap_and_counted_after() {
        let run = run();
        for n in 0..MAX_REFUSALS_LISTED + 1000 {
            run.refused("socket", format!("attempt {n}"));
        }
        run.with_log(|log| {
            assert_eq!(log.refused.len(), MAX_REFUSALS_LISTED);
            assert_eq!(log.refusals_unlisted, 1000);
            assert_eq!(log.refused[0].detail, "attempt 0");
        });
    }

    #[test]
    fn a_huge_detail_is_cut_at_a_character_boundary() {
        let run = run();
        run.refused("artifact", "é".repeat(MAX_REFUSAL_DETAIL));
        run.with_log(|log| {
            let detail = &log.refused[0].detail;
            assert!(detail.len() <= MAX_REFUSAL_DETAIL, "{}", detail.len());
            assert!(detail.ends_with('…'), "{detail}");
        });
    }
}
