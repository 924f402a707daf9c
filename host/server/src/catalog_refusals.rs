//! A built catalog's refusals, made loud: each served revision a build
//! left out (no longer trusted, not loading, claiming an incumbent's
//! names, pinned but pulled) was logged as an ERROR where it was refused;
//! here it also becomes the gauge `toolhost_catalog_refused_revisions`
//! an operator alerts on, and one audit row per revision and catalog
//! generation (`catalog_refused`, tenant and principal `(operator)`),
//! which the console's Plugin reviews page lists with the refusals of the
//! catalog served now.
//!
//! Every replica builds every generation and so refuses the same
//! revisions; the row's call id is derived from the generation and the
//! revision, so the store's unique call id keeps one row whichever
//! replica writes first, and the others' writes are dropped quietly.

use serde_json::json;
use toolhost_audit::{AuditError, AuditEvent, AuditSink, argument_digest};
use toolhost_types::Digest;

/// The audit row's tool name.
pub(crate) const OPERATION: &str = "catalog_refused";

/// Records `refused` (revision, why) of the catalog built at `generation`
/// (version `version`): the gauge, and a row per revision.
pub(crate) async fn seen(
    sink: &dyn AuditSink,
    generation: i64,
    version: &str,
    refused: &[(String, String)],
) {
    metrics::gauge!("toolhost_catalog_refused_revisions").set(refused.len() as f64);
    for (revision, why) in refused {
        let event = row(generation, version, revision, why);
        match sink.record(&event).await {
            Ok(()) => {}
            Err(e) if written_elsewhere(&e) => {
                tracing::debug!(%revision, generation, "another replica recorded the refusal")
            }
            Err(e) => {
                tracing::warn!(%revision, error = %e, "recording a catalog refusal failed")
            }
        }
    }
}

/// The row of `revision` refused at `generation`: its call id the same on
/// every replica.
fn row(generation: i64, version: &str, revision: &str, why: &str) -> AuditEvent {
    let args = json!({"revision": revision, "generation": generation, "why": why});
    let key = format!("toolhost-catalog-refusal\0{generation}\0{revision}");
    let call_id = Digest::of(key.as_bytes()).to_string()[..32].to_owned();
    AuditEvent {
        call_id,
        plugin: Some("(host)".into()),
        catalog_version: Some(version.to_owned()),
        ..AuditEvent::new(
            "(operator)",
            "(operator)",
            OPERATION,
            argument_digest(&args),
        )
    }
}

/// Whether `e` is the unique call id of a row another replica wrote.
fn written_elsewhere(e: &AuditError) -> bool {
    matches!(e, AuditError::DuplicateCallId { .. })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusals_row_has_the_same_call_id_on_every_replica_and_a_new_one_per_generation() {
        let a = row(7, "1.2.0", "rev1", "claims greet");
        let b = row(7, "1.2.0", "rev1", "claims greet");
        assert_eq!(a.call_id, b.call_id);
        assert_eq!(a.call_id.len(), 32);
        assert_ne!(a.call_id, row(8, "1.2.1", "rev1", "claims greet").call_id);
        assert_ne!(a.call_id, row(7, "1.2.0", "rev2", "claims greet").call_id);
        assert_eq!(
            (a.tenant.as_str(), a.principal.as_str(), a.tool.as_str()),
            ("(operator)", "(operator)", OPERATION)
        );
    }

    /// Two replicas seeing one refusal: one row, and the second write is
    /// known as the first's, on a real store.
    #[tokio::test]
    async fn the_second_replicas_row_of_one_refusal_is_dropped_quietly() {
        let store = toolhost_storage::Store::connect("sqlite::memory:")
            .await
            .expect("a store");
        let refused = [("rev1".to_owned(), "claims greet".to_owned())];
        seen(&store, 7, "1.2.0", &refused).await;
        let again = store.record(&row(7, "1.2.0", "rev1", "claims greet")).await;
        let err = again.expect_err("the same call id twice");
        assert!(written_elsewhere(&err), "{err}");
        seen(&store, 7, "1.2.0", &refused).await;
        seen(&store, 8, "1.2.1", &refused).await;
        let rows = store.recent(10).await.expect("rows");
        let refusals = rows.iter().filter(|r| r.event.tool == OPERATION).count();
        assert_eq!(refusals, 2, "one per generation");
    }

    #[test]
    fn only_a_duplicate_call_id_is_another_replicas_row() {
        let twice = AuditError::DuplicateCallId {
            call_id: "a3f8".into(),
        };
        assert!(written_elsewhere(&twice));
        assert!(!written_elsewhere(&AuditError::Failed("disk full".into())));
        assert!(!written_elsewhere(&AuditError::Lost { effect: 0 }));
    }
}
