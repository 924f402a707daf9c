//! A call's effects ([`toolhost_audit::Effect`]): the state changes written
//! in the same transaction as the call's audit row (`src/chain.rs`).
//!
//! An effect that finds nothing to change fails the transaction, row and
//! all: finishing an idempotency key no running claim holds is a host bug,
//! and recording the call as if its result were stored would be a lie.

/// Inserts one artifact: its description and its bytes.
pub(crate) const INSERT_ARTIFACT: &str = "INSERT INTO artifacts (id, tenant, principal, \
     client_id, tool, call_id, mime_type, size, sha256, body, created_at, expires_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";

/// Applies `$effects` (an iterator of `&Effect`) on the open transaction
/// `$tx` of either engine; evaluates to `Result<(), sqlx::Error>`.
macro_rules! apply_effects {
    ($tx:expr, $effects:expr) => {
        async {
            use toolhost_audit::Effect;
            use $crate::gates::sql::{FINISH_KEY, RELEASE_KEY};
            for effect in $effects {
                match effect {
                    Effect::FinishKey { key, result } => {
                        let done = sqlx::query(FINISH_KEY)
                            .bind(key.tenant.as_str())
                            .bind(key.principal.as_str())
                            .bind(key.tool.as_str())
                            .bind(key.key.as_str())
                            .bind(result.as_str())
                            .execute(&mut *$tx)
                            .await?;
                        if done.rows_affected() != 1 {
                            // No running claim holds the key.
                            return Err(sqlx::Error::RowNotFound);
                        }
                    }
                    Effect::ReleaseKey { key } => {
                        // Releasing twice, or after finishing, changes nothing.
                        sqlx::query(RELEASE_KEY)
                            .bind(key.tenant.as_str())
                            .bind(key.principal.as_str())
                            .bind(key.tool.as_str())
                            .bind(key.key.as_str())
                            .execute(&mut *$tx)
                            .await?;
                    }
                    Effect::StoreArtifact(new) => {
                        let a = &new.artifact;
                        sqlx::query($crate::effects::INSERT_ARTIFACT)
                            .bind(a.id.as_str())
                            .bind(a.tenant.as_str())
                            .bind(a.principal.as_str())
                            .bind(a.client_id.as_deref())
                            .bind(a.tool.as_str())
                            .bind(a.call_id.as_str())
                            .bind(a.mime_type.as_str())
                            .bind(i64::try_from(a.size).unwrap_or(i64::MAX))
                            .bind(a.sha256.to_string())
                            .bind(&new.body[..])
                            .bind(a.created_at_ms)
                            .bind(a.expires_at_ms)
                            .execute(&mut *$tx)
                            .await?;
                    }
                }
            }
            Ok::<(), sqlx::Error>(())
        }
    };
}
pub(crate) use apply_effects;
