//! The schema migrations, embedded in the binary and run at connect.
//!
//! Why not `sqlx::migrate!`: in sqlx 0.9 that macro lives behind the
//! `macros` feature, whose proc-macro crate links both drivers (and compiles
//! the bundled SQLite a second time, for the build host). Listing the files
//! here with `include_str!` costs one line per migration, and it also makes
//! cargo rebuild when a listed file changes, which `migrate!` cannot do for
//! a new file without a build script. A test checks these lists against the
//! directories, so a file added there and forgotten here fails
//! `cargo test`. Versions, descriptions and checksums are computed the way
//! `migrate!` computes them, so the `_sqlx_migrations` rows are the same
//! either way.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use sqlx::SqlSafeStr;
use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};

use crate::Engine;

/// `(file name, SQL)` of each migration, oldest first.
type Files = &'static [(&'static str, &'static str)];

/// migrations/sqlite, in order.
pub(crate) const SQLITE: Files = &[
    (
        "0001_audit.sql",
        include_str!("../../../migrations/sqlite/0001_audit.sql"),
    ),
    (
        "0002_auth.sql",
        include_str!("../../../migrations/sqlite/0002_auth.sql"),
    ),
    (
        "0003_rbac.sql",
        include_str!("../../../migrations/sqlite/0003_rbac.sql"),
    ),
    (
        "0004_gates.sql",
        include_str!("../../../migrations/sqlite/0004_gates.sql"),
    ),
    (
        "0005_checkpoints.sql",
        include_str!("../../../migrations/sqlite/0005_checkpoints.sql"),
    ),
    (
        "0006_audit_chain.sql",
        include_str!("../../../migrations/sqlite/0006_audit_chain.sql"),
    ),
    (
        "0007_rate_limits.sql",
        include_str!("../../../migrations/sqlite/0007_rate_limits.sql"),
    ),
    (
        "0008_artifacts.sql",
        include_str!("../../../migrations/sqlite/0008_artifacts.sql"),
    ),
    (
        "0009_gate_consumer.sql",
        include_str!("../../../migrations/sqlite/0009_gate_consumer.sql"),
    ),
    (
        "0010_catalog.sql",
        include_str!("../../../migrations/sqlite/0010_catalog.sql"),
    ),
    (
        "0011_runs.sql",
        include_str!("../../../migrations/sqlite/0011_runs.sql"),
    ),
    (
        "0012_workspace.sql",
        include_str!("../../../migrations/sqlite/0012_workspace.sql"),
    ),
    (
        "0013_live_views.sql",
        include_str!("../../../migrations/sqlite/0013_live_views.sql"),
    ),
    (
        "0014_sso.sql",
        include_str!("../../../migrations/sqlite/0014_sso.sql"),
    ),
    (
        "0015_request_states.sql",
        include_str!("../../../migrations/sqlite/0015_request_states.sql"),
    ),
    (
        "0016_entity_generations.sql",
        include_str!("../../../migrations/sqlite/0016_entity_generations.sql"),
    ),
    (
        "0017_audit_client_rounds.sql",
        include_str!("../../../migrations/sqlite/0017_audit_client_rounds.sql"),
    ),
    (
        "0018_audit_client_rounds_null.sql",
        include_str!("../../../migrations/sqlite/0018_audit_client_rounds_null.sql"),
    ),
    (
        "0019_audit_chain_seq.sql",
        include_str!("../../../migrations/sqlite/0019_audit_chain_seq.sql"),
    ),
    (
        "0020_upload_parts.sql",
        include_str!("../../../migrations/sqlite/0020_upload_parts.sql"),
    ),
    (
        "0021_audit_definition_digest.sql",
        include_str!("../../../migrations/sqlite/0021_audit_definition_digest.sql"),
    ),
    (
        "0022_catalog_audience_and_pins.sql",
        include_str!("../../../migrations/sqlite/0022_catalog_audience_and_pins.sql"),
    ),
    (
        "0023_audit_writer_chains.sql",
        include_str!("../../../migrations/sqlite/0023_audit_writer_chains.sql"),
    ),
    (
        "0024_audit_jcs_encoding.sql",
        include_str!("../../../migrations/sqlite/0024_audit_jcs_encoding.sql"),
    ),
    (
        "0025_run_handovers.sql",
        include_str!("../../../migrations/sqlite/0025_run_handovers.sql"),
    ),
    (
        "0026_run_input.sql",
        include_str!("../../../migrations/sqlite/0026_run_input.sql"),
    ),
    (
        "0027_session_ends.sql",
        include_str!("../../../migrations/sqlite/0027_session_ends.sql"),
    ),
    (
        "0028_audit_tenant_pages.sql",
        include_str!("../../../migrations/sqlite/0028_audit_tenant_pages.sql"),
    ),
    (
        "0029_runs_pages.sql",
        include_str!("../../../migrations/sqlite/0029_runs_pages.sql"),
    ),
    (
        "0030_people_pages.sql",
        include_str!("../../../migrations/sqlite/0030_people_pages.sql"),
    ),
    (
        "0031_uploads_kept_by.sql",
        include_str!("../../../migrations/sqlite/0031_uploads_kept_by.sql"),
    ),
    (
        "0032_gates_pages.sql",
        include_str!("../../../migrations/sqlite/0032_gates_pages.sql"),
    ),
    (
        "0033_toolsets.sql",
        include_str!("../../../migrations/sqlite/0033_toolsets.sql"),
    ),
    (
        "0034_backend_assertion_keys.sql",
        include_str!("../../../migrations/sqlite/0034_backend_assertion_keys.sql"),
    ),
    (
        "0035_dpop.sql",
        include_str!("../../../migrations/sqlite/0035_dpop.sql"),
    ),
    (
        "0036_client_keys.sql",
        include_str!("../../../migrations/sqlite/0036_client_keys.sql"),
    ),
    (
        "0037_code_dpop_jkt.sql",
        include_str!("../../../migrations/sqlite/0037_code_dpop_jkt.sql"),
    ),
    (
        "0038_person_connections.sql",
        include_str!("../../../migrations/sqlite/0038_person_connections.sql"),
    ),
    (
        "0039_auth_events_at.sql",
        include_str!("../../../migrations/sqlite/0039_auth_events_at.sql"),
    ),
];

/// migrations/postgres, in order: the same numbers as [`SQLITE`].
pub(crate) const POSTGRES: Files = &[
    (
        "0001_audit.sql",
        include_str!("../../../migrations/postgres/0001_audit.sql"),
    ),
    (
        "0002_auth.sql",
        include_str!("../../../migrations/postgres/0002_auth.sql"),
    ),
    (
        "0003_rbac.sql",
        include_str!("../../../migrations/postgres/0003_rbac.sql"),
    ),
    (
        "0004_gates.sql",
        include_str!("../../../migrations/postgres/0004_gates.sql"),
    ),
    (
        "0005_checkpoints.sql",
        include_str!("../../../migrations/postgres/0005_checkpoints.sql"),
    ),
    (
        "0006_audit_chain.sql",
        include_str!("../../../migrations/postgres/0006_audit_chain.sql"),
    ),
    (
        "0007_rate_limits.sql",
        include_str!("../../../migrations/postgres/0007_rate_limits.sql"),
    ),
    (
        "0008_artifacts.sql",
        include_str!("../../../migrations/postgres/0008_artifacts.sql"),
    ),
    (
        "0009_gate_consumer.sql",
        include_str!("../../../migrations/postgres/0009_gate_consumer.sql"),
    ),
    (
        "0010_catalog.sql",
        include_str!("../../../migrations/postgres/0010_catalog.sql"),
    ),
    (
        "0011_runs.sql",
        include_str!("../../../migrations/postgres/0011_runs.sql"),
    ),
    (
        "0012_workspace.sql",
        include_str!("../../../migrations/postgres/0012_workspace.sql"),
    ),
    (
        "0013_live_views.sql",
        include_str!("../../../migrations/postgres/0013_live_views.sql"),
    ),
    (
        "0014_sso.sql",
        include_str!("../../../migrations/postgres/0014_sso.sql"),
    ),
    (
        "0015_request_states.sql",
        include_str!("../../../migrations/postgres/0015_request_states.sql"),
    ),
    (
        "0016_entity_generations.sql",
        include_str!("../../../migrations/postgres/0016_entity_generations.sql"),
    ),
    (
        "0017_audit_client_rounds.sql",
        include_str!("../../../migrations/postgres/0017_audit_client_rounds.sql"),
    ),
    (
        "0018_audit_client_rounds_null.sql",
        include_str!("../../../migrations/postgres/0018_audit_client_rounds_null.sql"),
    ),
    (
        "0019_audit_chain_seq.sql",
        include_str!("../../../migrations/postgres/0019_audit_chain_seq.sql"),
    ),
    (
        "0020_upload_parts.sql",
        include_str!("../../../migrations/postgres/0020_upload_parts.sql"),
    ),
    (
        "0021_audit_definition_digest.sql",
        include_str!("../../../migrations/postgres/0021_audit_definition_digest.sql"),
    ),
    (
        "0022_catalog_audience_and_pins.sql",
        include_str!("../../../migrations/postgres/0022_catalog_audience_and_pins.sql"),
    ),
    (
        "0023_audit_writer_chains.sql",
        include_str!("../../../migrations/postgres/0023_audit_writer_chains.sql"),
    ),
    (
        "0024_audit_jcs_encoding.sql",
        include_str!("../../../migrations/postgres/0024_audit_jcs_encoding.sql"),
    ),
    (
        "0025_run_handovers.sql",
        include_str!("../../../migrations/postgres/0025_run_handovers.sql"),
    ),
    (
        "0026_run_input.sql",
        include_str!("../../../migrations/postgres/0026_run_input.sql"),
    ),
    (
        "0027_session_ends.sql",
        include_str!("../../../migrations/postgres/0027_session_ends.sql"),
    ),
    (
        "0028_audit_tenant_pages.sql",
        include_str!("../../../migrations/postgres/0028_audit_tenant_pages.sql"),
    ),
    (
        "0029_runs_pages.sql",
        include_str!("../../../migrations/postgres/0029_runs_pages.sql"),
    ),
    (
        "0030_people_pages.sql",
        include_str!("../../../migrations/postgres/0030_people_pages.sql"),
    ),
    (
        "0031_uploads_kept_by.sql",
        include_str!("../../../migrations/postgres/0031_uploads_kept_by.sql"),
    ),
    (
        "0032_gates_pages.sql",
        include_str!("../../../migrations/postgres/0032_gates_pages.sql"),
    ),
    (
        "0033_toolsets.sql",
        include_str!("../../../migrations/postgres/0033_toolsets.sql"),
    ),
    (
        "0034_backend_assertion_keys.sql",
        include_str!("../../../migrations/postgres/0034_backend_assertion_keys.sql"),
    ),
    (
        "0035_dpop.sql",
        include_str!("../../../migrations/postgres/0035_dpop.sql"),
    ),
    (
        "0036_client_keys.sql",
        include_str!("../../../migrations/postgres/0036_client_keys.sql"),
    ),
    (
        "0037_code_dpop_jkt.sql",
        include_str!("../../../migrations/postgres/0037_code_dpop_jkt.sql"),
    ),
    (
        "0038_person_connections.sql",
        include_str!("../../../migrations/postgres/0038_person_connections.sql"),
    ),
    (
        "0039_auth_events_at.sql",
        include_str!("../../../migrations/postgres/0039_auth_events_at.sql"),
    ),
];

/// The migrator for `engine`'s embedded files.
pub(crate) async fn migrator(engine: Engine) -> Result<Migrator, String> {
    let files = match engine {
        Engine::Sqlite => SQLITE,
        Engine::Postgres => POSTGRES,
    };
    Migrator::new(Embedded(files))
        .await
        .map_err(|e| e.to_string())
}

/// A [`MigrationSource`] over files embedded at build time.
#[derive(Debug)]
struct Embedded(Files);

impl MigrationSource<'static> for Embedded {
    fn resolve(
        self,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<Migration>, BoxDynError>> + Send + 'static>> {
        Box::pin(async move {
            self.0
                .iter()
                .map(|&(name, sql)| migration(name, sql))
                .collect()
        })
    }
}

/// `NNNN_words.sql` → version NNNN, description "words", as sqlx names them.
fn migration(name: &'static str, sql: &'static str) -> Result<Migration, BoxDynError> {
    let (version, rest) = name
        .split_once('_')
        .ok_or_else(|| format!("migration {name:?}: expected NNNN_description.sql"))?;
    let version: i64 = version
        .parse()
        .map_err(|_| format!("migration {name:?}: {version:?} is not a version number"))?;
    let description = rest
        .strip_suffix(".sql")
        .ok_or_else(|| format!("migration {name:?}: expected a .sql file"))?;
    // Reversible (.up/.down) migrations are not used: refuse rather than misread them.
    if description.ends_with(".up") || description.ends_with(".down") {
        return Err(format!("migration {name:?}: reversible migrations are not supported").into());
    }
    Ok(Migration::new(
        version,
        Cow::Owned(description.replace('_', " ")),
        MigrationType::Simple,
        sql.into_sql_str(),
        sql.starts_with("-- no-transaction"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The `.sql` file names in migrations/`dir`, sorted.
    fn on_disk(dir: &str) -> Vec<String> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../migrations")
            .join(dir);
        let mut names: Vec<String> = std::fs::read_dir(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
            .map(|entry| entry.expect("a readable directory entry").file_name())
            .map(|name| name.to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".sql"))
            .collect();
        names.sort();
        names
    }

    fn names(files: Files) -> Vec<String> {
        files.iter().map(|(name, _)| name.to_string()).collect()
    }

    #[test]
    fn every_migration_file_is_embedded_in_order() {
        assert_eq!(
            names(SQLITE),
            on_disk("sqlite"),
            "update migrations::SQLITE"
        );
        assert_eq!(
            names(POSTGRES),
            on_disk("postgres"),
            "update migrations::POSTGRES"
        );
    }

    #[test]
    fn both_engines_have_the_same_migration_numbers() {
        let versions = |files: Files| -> Vec<i64> {
            files
                .iter()
                .map(|&(name, sql)| {
                    migration(name, sql)
                        .expect("a well-named migration")
                        .version
                })
                .collect()
        };
        assert_eq!(versions(SQLITE), versions(POSTGRES));
    }

    /// A SQLite database at `url` migrated up to (not with) the migration
    /// whose name starts with `version`.
    async fn migrated_before(url: &str, version: &str) -> sqlx::SqliteConnection {
        use sqlx::Connection;
        let before = SQLITE
            .iter()
            .position(|(name, _)| name.starts_with(version))
            .expect("the migration is listed");
        let mut conn = sqlx::SqliteConnection::connect(url).await.expect("open");
        Migrator::new(Embedded(&SQLITE[..before]))
            .await
            .expect("migrations")
            .run(&mut conn)
            .await
            .expect("migrated to the one before");
        conn
    }

    /// 0019 numbers the rows chained before it in id order and skips the
    /// rows from before the chain; they stay in the legacy chain, and the
    /// host appends to a chain of its own (0023).
    #[tokio::test]
    async fn rows_chained_before_0019_get_their_places_and_the_chain_goes_on() {
        use sqlx::Connection;
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("old.db");
        let url = format!("sqlite://{}?mode=rwc", file.display());
        let mut conn = migrated_before(&url, "0019").await;
        let hash = |d: char| d.to_string().repeat(64);
        // A row from before the chain, then three chained rows.
        let rows = [
            ("legacy", None, None),
            ("a", Some(hash('0')), Some(hash('a'))),
            ("b", Some(hash('a')), Some(hash('b'))),
            ("c", Some(hash('b')), Some(hash('c'))),
        ];
        for (call, prev, row) in &rows {
            sqlx::query(
                "INSERT INTO audit (call_id, at, principal, tenant, tool, argument_digest, \
                 outcome, duration_us, prev_hash, row_hash) \
                 VALUES ($1, 0, 'p', 't', 'x', $2, 'executed', 0, $3, $4)",
            )
            .bind(call)
            .bind(hash('0'))
            .bind(prev)
            .bind(row)
            .execute(&mut conn)
            .await
            .expect("an old row");
        }
        conn.close().await.expect("closed");

        let store = crate::Store::connect(&url)
            .await
            .expect("migrates to the last");
        let event = crate::test_event::test_event("d");
        store
            .append(&event)
            .await
            .expect("appended after the old head");
        let mut conn = sqlx::SqliteConnection::connect(&url).await.expect("open");
        let places: Vec<(String, Option<i64>, Option<String>, String)> =
            sqlx::query_as("SELECT call_id, chain_seq, prev_hash, chain_id FROM audit ORDER BY id")
                .fetch_all(&mut conn)
                .await
                .expect("rows");
        let legacy = String::new();
        let writer = places[4].3.clone();
        assert_ne!(
            writer, legacy,
            "since 0023 the host appends to a chain of its own"
        );
        let genesis = toolhost_audit::Encoding::CURRENT.genesis(&writer);
        assert_eq!(
            places,
            [
                ("legacy".to_owned(), None, None, legacy.clone()),
                ("a".to_owned(), Some(1), Some(hash('0')), legacy.clone()),
                ("b".to_owned(), Some(2), Some(hash('a')), legacy.clone()),
                ("c".to_owned(), Some(3), Some(hash('b')), legacy.clone()),
                ("d".to_owned(), Some(1), Some(genesis), writer),
            ]
        );
    }

    /// Rows chained before 0021 keep their hashes after it (an unset
    /// `definition_digest` is not hashed), and the chain goes on with a row
    /// that names one.
    #[tokio::test]
    async fn rows_chained_before_0021_verify_after_it_and_the_chain_goes_on() {
        use sqlx::Connection;
        use toolhost_audit::chain::{ChainedRow, GENESIS, row_hash};
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("old.db").display());
        let mut conn = migrated_before(&url, "0021").await;
        let args = toolhost_types::Digest::of(b"{}").to_string();
        let mut prev = GENESIS.to_owned();
        for (place, call) in [(1_i64, "a"), (2, "b")] {
            let row = ChainedRow {
                call_id: call,
                principal: "p",
                tenant: "t",
                tool: "x",
                argument_digest: &args,
                outcome: "executed",
                ..ChainedRow::default()
            };
            let hash = row_hash(&prev, &row).to_string();
            sqlx::query(
                "INSERT INTO audit (call_id, at, principal, tenant, tool, argument_digest, \
                 outcome, duration_us, prev_hash, row_hash, chain_seq) \
                 VALUES ($1, 0, 'p', 't', 'x', $2, 'executed', 0, $3, $4, $5)",
            )
            .bind(call)
            .bind(&args)
            .bind(&prev)
            .bind(&hash)
            .bind(place)
            .execute(&mut conn)
            .await
            .expect("an old row");
            prev = hash;
        }
        conn.close().await.expect("closed");

        let store = crate::Store::connect(&url)
            .await
            .expect("migrates to the last");
        let served = toolhost_audit::AuditEvent {
            definition_digest: Some(toolhost_types::Digest::of(b"x, as reviewed")),
            ..crate::test_event::test_event("c")
        };
        store.append(&served).await.expect("appended");
        let summary = store.verify_chain().await.expect("read").expect("intact");
        assert_eq!(summary.verified, 3);
        let rows = store.recent(3).await.expect("read");
        let named: Vec<_> = rows.iter().map(|r| r.event.definition_digest).collect();
        assert_eq!(named, [served.definition_digest, None, None]);
    }

    /// A writer chain and an anchor hashed in the tagged encoding before
    /// 0024 verify after it, as encoding 1; a host of this build opens a
    /// chain and writes anchors in the JCS encoding beside them.
    #[tokio::test]
    async fn chains_and_anchors_hashed_before_0024_verify_after_it_beside_jcs_ones() {
        use sqlx::Connection;
        use toolhost_audit::Encoding;
        use toolhost_audit::anchor::AnchorRow;
        use toolhost_audit::chain::{ChainedRow, GENESIS};
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("old.db").display());
        let mut conn = migrated_before(&url, "0024").await;
        let args = toolhost_types::Digest::of(b"{}").to_string();
        let old = Encoding::Tagged;
        let mut prev = old.genesis("old-writer");
        sqlx::query("INSERT INTO audit_chains (chain_id, writer, opened_at) VALUES ('old-writer', 'pid 1', 0)")
            .execute(&mut conn)
            .await
            .expect("an old chain");
        for (place, call) in [(1_i64, "a"), (2, "b")] {
            let row = ChainedRow {
                call_id: call,
                principal: "p",
                tenant: "t",
                tool: "x",
                argument_digest: &args,
                outcome: "executed",
                ..ChainedRow::default()
            };
            let hash = old.row_hash(&prev, &row).to_string();
            sqlx::query(
                "INSERT INTO audit (call_id, at, principal, tenant, tool, argument_digest, \
                 outcome, duration_us, prev_hash, row_hash, chain_seq, chain_id) \
                 VALUES ($1, 0, 'p', 't', 'x', $2, 'executed', 0, $3, $4, $5, 'old-writer')",
            )
            .bind(call)
            .bind(&args)
            .bind(&prev)
            .bind(&hash)
            .bind(place)
            .execute(&mut conn)
            .await
            .expect("an old row");
            prev = hash;
        }
        let anchor = AnchorRow {
            seq: 1,
            at_ms: 5,
            chain: "old-writer",
            place: 2,
            head_hash: &prev,
        };
        sqlx::query(
            "INSERT INTO audit_anchors (seq, at, chain_id, chain_seq, head_hash, prev_hash, \
             anchor_hash) VALUES (1, 5, 'old-writer', 2, $1, $2, $3)",
        )
        .bind(&prev)
        .bind(GENESIS)
        .bind(old.anchor_hash(GENESIS, &anchor).to_string())
        .execute(&mut conn)
        .await
        .expect("an old anchor");
        conn.close().await.expect("closed");

        let store = crate::Store::connect(&url)
            .await
            .expect("migrates to the last");
        store
            .append(&crate::test_event::test_event("c"))
            .await
            .expect("appended");
        store.anchor_audit().await.expect("anchored");
        let summary = store.verify_chain().await.expect("read").expect("intact");
        assert_eq!(
            (summary.verified, summary.chains, summary.anchors),
            (3, 2, 2)
        );
        let mut conn = sqlx::SqliteConnection::connect(&url).await.expect("open");
        let encodings: Vec<i64> =
            sqlx::query_scalar("SELECT encoding FROM audit_chains ORDER BY opened_at")
                .fetch_all(&mut conn)
                .await
                .expect("chains");
        assert_eq!(encodings, [1, 2]);
        let anchors: Vec<i64> =
            sqlx::query_scalar("SELECT encoding FROM audit_anchors ORDER BY seq")
                .fetch_all(&mut conn)
                .await
                .expect("anchors");
        assert_eq!(anchors, [1, 2]);
    }

    /// 0020 keeps the uploads stored whole before it: each is finished, and
    /// its body is its part 0, read back as before.
    #[tokio::test]
    async fn uploads_stored_before_0020_are_kept_as_their_part_zero() {
        use sqlx::Connection;
        use toolhost_workspace::{UploadHandle, WorkspaceStore};
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("old.db").display());
        let mut conn = migrated_before(&url, "0020").await;
        let handle = UploadHandle::new();
        let digest = toolhost_types::Digest::of(b"[plugin]").to_string();
        sqlx::query(
            "INSERT INTO workspace_uploads (handle, tenant, owner, kind, size, sha256, body, \
             created_at, expires_at) VALUES ($1, 'acme', 'alice', 'manifest', 8, $2, $3, 0, 100)",
        )
        .bind(handle.as_str())
        .bind(&digest)
        .bind(&b"[plugin]"[..])
        .execute(&mut conn)
        .await
        .expect("an old upload");
        conn.close().await.expect("closed");

        let store = crate::Store::connect(&url)
            .await
            .expect("migrates to the last");
        let (upload, bytes) = store
            .upload("acme", &handle, 50)
            .await
            .expect("read")
            .expect("kept");
        assert_eq!(
            (upload.size, upload.sha256, bytes),
            (8, digest, b"[plugin]".to_vec())
        );
    }

    /// 0027 rebuilds the sessions table under the four tables whose keys
    /// name it: its rows, and the rows naming them, are kept; the keys
    /// still hold and are still enforced; a session may now end; an old
    /// proposal is against its session's binding.
    #[tokio::test]
    async fn sessions_kept_through_0027_may_end_and_their_keys_still_hold() {
        use sqlx::Connection;
        use toolhost_workspace::{SessionId, SessionState, WorkspaceStore};
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("old.db").display());
        let mut conn = migrated_before(&url, "0027").await;
        let (sid, pid) = (SessionId::new(), toolhost_workspace::ProposalId::new());
        let digest = "a".repeat(64);
        sqlx::query(
            "INSERT INTO workspace_sessions (id, tenant, owner, subject, bound_to, \
             subject_version, version, state, created_at, updated_at) \
             VALUES ($1, 'acme', 'alice', 'plugin:hello', NULL, 'rev_1', 2, 'promoted', 1, 2)",
        )
        .bind(sid.as_str())
        .execute(&mut conn)
        .await
        .expect("an old session");
        sqlx::query(
            "INSERT INTO workspace_proposals (id, session_id, number, author, body, digest, \
             validation, diff, created_at) VALUES ($1, $2, 1, 'alice', '{}', $3, '{}', '[]', 2)",
        )
        .bind(pid.as_str())
        .bind(sid.as_str())
        .bind(&digest)
        .execute(&mut conn)
        .await
        .expect("an old proposal");
        conn.close().await.expect("closed");

        let store = crate::Store::connect(&url)
            .await
            .expect("migrates to the last");
        let view = store.view("acme", &sid).await.expect("read").expect("kept");
        assert_eq!(view.session.state, SessionState::Promoted);
        assert_eq!(view.proposals.len(), 1);
        assert_eq!(view.proposals[0].subject_version, "rev_1");

        let mut conn = sqlx::SqliteConnection::connect(&url).await.expect("open");
        let broken: Vec<(String,)> = sqlx::query_as("PRAGMA foreign_key_check")
            .fetch_all(&mut conn)
            .await
            .expect("checked");
        assert!(broken.is_empty(), "{broken:?}");
        sqlx::query("UPDATE workspace_sessions SET state = 'abandoned' WHERE id = $1")
            .bind(sid.as_str())
            .execute(&mut conn)
            .await
            .expect("a session may end");
        let orphan = sqlx::query(
            "INSERT INTO workspace_runs (session_id, run_id, linked_at) VALUES ('ws_none', 'r', 0)",
        )
        .execute(&mut conn)
        .await;
        assert!(orphan.is_err(), "the key still names the sessions table");
        let unknown = sqlx::query("UPDATE workspace_sessions SET state = 'gone'")
            .execute(&mut conn)
            .await;
        assert!(unknown.is_err(), "the state is still checked");
    }

    #[test]
    fn migrations_are_named_as_sqlx_names_them() {
        let m = migration("0001_audit_trail.sql", "SELECT 1").expect("a well-named migration");
        assert_eq!((m.version, m.description.as_ref()), (1, "audit trail"));
        assert!(migration("audit.sql", "").is_err());
        assert!(migration("0002_x.up.sql", "").is_err());
    }
}
