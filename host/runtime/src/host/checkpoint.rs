//! `toolhost:plugin/checkpoint`: a plugin opens (or reads) the human
//! checkpoint of one of its runs. The rows are the host's
//! (`toolhost_gates::CheckpointStore`); a plugin can open and read them,
//! never decide them.

use std::sync::Arc;
use std::time::SystemTime;

use toolhost_gates::{Checkpoint, CheckpointStore, NewCheckpoint};

use super::HostCallMeter;
use super::client::Acted;
use super::resolver::Quiet;
use crate::bindings::toolhost::plugin::checkpoint as wit;

/// The longest subject, title and evidence a plugin may give.
const MAX_SUBJECT: usize = 200;
const MAX_TITLE: usize = 300;
const MAX_EVIDENCE: usize = 4096;

/// The most checkpoints one call may open or read: each open may put a
/// row in front of people, so a plugin looping on the import must not
/// fill their inbox (the host-call budget alone would allow thousands).
pub const MAX_CHECKPOINTS_PER_CALL: u32 = 16;

/// Where a call's checkpoints go: the store, and who is calling.
#[derive(Clone)]
pub struct CheckpointGrant {
    /// The host's checkpoint rows.
    pub store: Arc<dyn CheckpointStore>,
    /// The plugin's name (checkpoints are per plugin).
    pub plugin: String,
    /// What a checkpoint's text is scanned with before it is stored: it is
    /// shown to people and kept, so a credential in it is refused.
    pub scanner: toolhost_secrets::Scanner,
}

impl std::fmt::Debug for CheckpointGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointGrant")
            .field("plugin", &self.plugin)
            .finish_non_exhaustive()
    }
}

/// The checkpoint capability of one call.
pub(crate) struct CheckpointCapability {
    grant: Option<CheckpointGrant>,
    tenant: String,
    principal: String,
    meter: HostCallMeter,
    quiet: Quiet,
    acted: Acted,
    /// Opens asked for so far in this call.
    opens: u32,
}

impl CheckpointCapability {
    pub(crate) fn new(
        grant: Option<CheckpointGrant>,
        tenant: &str,
        principal: &str,
        meter: HostCallMeter,
        quiet: Quiet,
    ) -> Self {
        Self {
            grant,
            tenant: tenant.into(),
            principal: principal.into(),
            meter,
            quiet,
            acted: Acted::default(),
            opens: 0,
        }
    }

    /// This capability marking `acted` when it opens a checkpoint.
    pub(crate) fn acting(mut self, acted: Acted) -> Self {
        self.acted = acted;
        self
    }
}

fn info(c: &Checkpoint) -> wit::CheckpointInfo {
    wit::CheckpointInfo {
        id: c.opened.id.clone(),
        version: c.version,
        state: c.state().into(),
        disposition: c.disposition.map(|d| d.as_str().to_owned()),
        outcome: c.disposition.map(|d| d.outcome().to_owned()),
    }
}

fn too_long(what: &str, s: &str, max: usize) -> Option<String> {
    (s.len() > max || s.is_empty() && what == "subject")
        .then(|| format!("{what} must be 1–{max} bytes"))
}

impl wit::Host for CheckpointCapability {
    async fn open(
        &mut self,
        subject: String,
        title: String,
        evidence: String,
    ) -> wasmtime::Result<Result<wit::CheckpointInfo, String>> {
        self.meter.charge()?;
        let Some(grant) = self.grant.clone() else {
            return Ok(Err("checkpoints are not available to this call".into()));
        };
        if self.quiet.is_set() {
            return Ok(Err(
                "a checkpoint cannot be opened while the call may not have side effects".into(),
            ));
        }
        if self.opens >= MAX_CHECKPOINTS_PER_CALL {
            return Ok(Err(format!(
                "a call may open at most {MAX_CHECKPOINTS_PER_CALL} checkpoints"
            )));
        }
        self.opens += 1;
        let problem = too_long("subject", &subject, MAX_SUBJECT)
            .or_else(|| too_long("title", &title, MAX_TITLE))
            .or_else(|| too_long("evidence", &evidence, MAX_EVIDENCE));
        if let Some(p) = problem {
            return Ok(Err(p));
        }
        let secret = [&subject, &title, &evidence]
            .into_iter()
            .find_map(|text| grant.scanner.find(text));
        if let Some(found) = secret {
            return Ok(Err(format!(
                "the checkpoint was not opened: it holds a {} (SECRET_EXPOSURE)",
                found.kind
            )));
        }
        let mut random = [0u8; 16];
        getrandom::fill(&mut random).expect("the OS random source is available");
        let id: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let created_at = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let new = NewCheckpoint {
            id: format!("chk_{id}"),
            tenant: self.tenant.clone(),
            plugin: grant.plugin.clone(),
            subject,
            title,
            evidence,
            opened_by: self.principal.clone(),
            created_at,
        };
        Ok(match grant.store.open_checkpoint(new).await {
            Ok(c) => {
                self.acted.set();
                Ok(info(&c))
            }
            Err(e) => {
                tracing::error!(error = %e, "opening a checkpoint failed");
                Err("the checkpoint store is unavailable".into())
            }
        })
    }
}
