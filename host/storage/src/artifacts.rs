//! [`ArtifactStore`] for [`Store`]: reading artifacts back, and the purge.
//! They are written with their call's audit row (`src/effects.rs`).

use toolhost_artifacts::{Artifact, ArtifactFuture, ArtifactId, ArtifactStore, ArtifactStoreError};

use crate::Store;
use crate::connect::{execute, fetch_optional};
use crate::fields::{Fields, corrupt};

/// One unexpired artifact of one tenant: another tenant's id reads as missing.
const READ: &str = "SELECT id, tenant, principal, client_id, tool, call_id, run_id, mime_type, \
     size, sha256, body, created_at, expires_at FROM artifacts \
     WHERE id = $1 AND tenant = $2 AND expires_at > $3";

const PURGE: &str = "DELETE FROM artifacts WHERE expires_at <= $1";

fn failed(operation: &'static str) -> impl FnOnce(sqlx::Error) -> ArtifactStoreError {
    move |e| match crate::error::unreachable(operation, &e) {
        Some(down) => ArtifactStoreError::Unavailable(down),
        None => ArtifactStoreError::Failed(format!("{operation}: {e}")),
    }
}

/// A row as its description and bytes.
fn artifact(row: &impl Fields) -> Result<(Artifact, Vec<u8>), sqlx::Error> {
    let id = row.text("id")?;
    let bad =
        |column, value: &str, problem: &str| corrupt("artifacts", &id, column, value, problem);
    let sha256 = row.text("sha256")?;
    let size = row.int("size")?;
    let artifact = Artifact {
        id: ArtifactId::parse(&id).ok_or_else(|| bad("id", &id, "not an artifact id"))?,
        tenant: row.text("tenant")?,
        principal: row.text("principal")?,
        client_id: row.maybe_text("client_id")?,
        tool: row.text("tool")?,
        call_id: row.text("call_id")?,
        run_id: row.maybe_text("run_id")?,
        mime_type: row.text("mime_type")?,
        size: u64::try_from(size).map_err(|_| bad("size", &size.to_string(), "negative"))?,
        sha256: sha256
            .parse()
            .map_err(|_| bad("sha256", &sha256, "not a SHA-256"))?,
        created_at_ms: row.int("created_at")?,
        expires_at_ms: row.int("expires_at")?,
    };
    Ok((artifact, row.bytes("body")?))
}

impl ArtifactStore for Store {
    fn read<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a ArtifactId,
        now_ms: i64,
    ) -> ArtifactFuture<'a, Option<(Artifact, Vec<u8>)>> {
        Box::pin(async move {
            fetch_optional!(&self.pools, artifact, READ, id.as_str(), tenant, now_ms)
                .map_err(failed("read artifact"))
        })
    }

    fn purge(&self, now_ms: i64) -> ArtifactFuture<'_, u64> {
        Box::pin(
            async move { execute!(&self.pools, PURGE, now_ms).map_err(failed("purge artifacts")) },
        )
    }
}
