//! `toolhost:plugin/artifacts`: an exploration run keeps what it found.
//! Outside a run every `put` is refused; inside one, the run's budget
//! bounds the count and bytes, a credential in the bytes is refused, and
//! each kept artifact is written with the run's last audit row.

use std::time::SystemTime;

use toolhost_artifacts::{Artifact, ArtifactId, NewArtifact};
use toolhost_types::Digest;

use super::HostCallMeter;
use super::exploration::{Exploration, KeptArtifact};
use crate::bindings::toolhost::plugin::artifacts as wit;

/// The longest artifact name and MIME type a plugin may give.
const MAX_NAME: usize = 128;
const MAX_MIME: usize = 100;

/// The artifacts capability of one call.
pub(crate) struct ArtifactsCapability {
    run: Option<Exploration>,
    tenant: String,
    principal: String,
    meter: HostCallMeter,
}

impl ArtifactsCapability {
    pub(crate) fn new(
        run: Option<Exploration>,
        tenant: &str,
        principal: &str,
        meter: HostCallMeter,
    ) -> Self {
        Self {
            run,
            tenant: tenant.into(),
            principal: principal.into(),
            meter,
        }
    }

    fn keep(
        &self,
        run: &Exploration,
        name: String,
        mime: String,
        body: Vec<u8>,
    ) -> Result<wit::ArtifactInfo, String> {
        if name.is_empty() || name.chars().count() > MAX_NAME || name.chars().any(char::is_control)
        {
            return Err(format!(
                "an artifact name is 1–{MAX_NAME} printable characters"
            ));
        }
        if !valid_mime(&mime) {
            return Err(format!(
                "{mime:?} is not a MIME type such as application/json"
            ));
        }
        if let Some(finding) = std::str::from_utf8(&body)
            .ok()
            .and_then(|t| run.scanner.find(t))
        {
            return Err(format!(
                "the artifact holds a credential ({}): not kept",
                finding.kind
            ));
        }
        let now = now_ms();
        let artifact = Artifact {
            id: ArtifactId::new(),
            tenant: self.tenant.clone(),
            principal: self.principal.clone(),
            client_id: Some(run.client_id.clone()),
            tool: run.tool.clone(),
            call_id: run.run_id.clone(),
            run_id: Some(run.run_id.clone()),
            mime_type: mime,
            size: 0,
            sha256: Digest::of(b""),
            created_at_ms: now,
            expires_at_ms: now.saturating_add(run.artifact_ttl_ms.max(1)),
        };
        let new = NewArtifact::new(artifact, body);
        run.with_log(|log| {
            if log.artifacts.len() as u64 >= u64::from(run.max_artifacts) {
                return Err(format!("the run may keep {} artifacts", run.max_artifacts));
            }
            if log.artifact_bytes() + new.artifact.size > run.max_artifact_bytes {
                return Err(format!(
                    "the run may keep {} bytes of artifacts",
                    run.max_artifact_bytes
                ));
            }
            let info = wit::ArtifactInfo {
                uri: new.artifact.id.uri(),
                sha256: new.artifact.sha256.to_string(),
                size: new.artifact.size,
            };
            log.artifacts.push(KeptArtifact { name, new });
            Ok(info)
        })
    }
}

fn valid_mime(m: &str) -> bool {
    let Some((kind, sub)) = m.split_once('/') else {
        return false;
    };
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    m.len() <= MAX_MIME && token(kind) && token(sub)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

impl wit::Host for ArtifactsCapability {
    fn put(
        &mut self,
        name: String,
        mime_type: String,
        body: Vec<u8>,
    ) -> wasmtime::Result<Result<wit::ArtifactInfo, String>> {
        self.meter.charge()?;
        let Some(run) = self.run.clone() else {
            return Ok(Err(
                "artifacts are kept only by exploration runs: this call is not one".into(),
            ));
        };
        let kept = self.keep(&run, name.clone(), mime_type, body);
        if let Err(why) = &kept {
            run.refused("artifact", format!("{name:?}: {why}"));
        }
        Ok(kept)
    }
}
