//! The audit trail's hash chain in SQL: appending rows with their hashes,
//! and walking every row to check them. What a hash covers and what a walk
//! accepts is decided in `toolhost_audit::chain`; this module only moves
//! rows.
//!
//! Appends are serialized so the chain never forks: each takes the
//! database's write lock *before* reading the head (the newest `row_hash`),
//! then inserts its rows and commits, all in one transaction. On SQLite that
//! lock is the database's own (`BEGIN IMMEDIATE`; a deferred transaction
//! would read the head under a snapshot another writer can outdate). On
//! PostgreSQL it is a transaction-scoped advisory lock, [`APPEND_LOCK`],
//! released by the commit; every host sharing the database takes the same
//! one. Each chained row also carries its place in the chain, `chain_seq`
//! (migration 0019): a trigger refuses a row that does not follow the head,
//! and a unique index turns any append that slips past the lock into a
//! failed insert rather than a fork.

use toolhost_audit::chain::{
    ChainCheck, GENESIS, Next, OwnLink, TenantCheck, TenantSummary, row_hash,
};
use toolhost_audit::{AuditEvent, ChainBreak, ChainSummary, Effect};

use crate::StorageError;
use sqlx::{Connection, SqliteConnection};

use crate::connect::{Pools, on_pool};
use crate::effects::EffectError;
use crate::record::{Columns, Stored};

/// The key of the PostgreSQL advisory lock appends take: the bytes of
/// `"thaudit1"`, a number no other lock in the host uses. Advisory locks
/// are per database, so hosts whose audit tables live in different schemas
/// of one database share it (they wait microseconds for each other).
pub const APPEND_LOCK: i64 = i64::from_be_bytes(*b"thaudit1");

/// Rows read per query by a walk: bounds its memory, whatever the table's size.
const WALK_PAGE: i64 = 1000;

/// The chain's head: the hash and place of its last row. Rows without a
/// place (written before the chain, or by hand without a hash) are skipped
/// here and refused by a walk.
const SELECT_HEAD: &str = "SELECT row_hash, chain_seq FROM audit WHERE chain_seq IS NOT NULL \
     ORDER BY chain_seq DESC LIMIT 1";

/// The columns of an audit row, in `INSERT` order.
const INSERT_COLUMNS: &str = "INSERT INTO audit (call_id, at, principal, tenant, client_id, tool, \
     plugin, catalog_version, plugin_digest, argument_digest, outcome, error_code, duration_us, \
     gate_id, receipt_sha256, client_rounds, definition_digest, prev_hash, row_hash, chain_seq) ";

/// `SELECT` of every column of `audit`, then `$rest`: a string literal, so
/// each query is one `&'static str`.
macro_rules! select_audit {
    ($rest:literal) => {
        concat!(
            "SELECT id, call_id, at, principal, tenant, client_id, tool, plugin, \
             catalog_version, plugin_digest, argument_digest, outcome, error_code, duration_us, \
             gate_id, receipt_sha256, client_rounds, definition_digest, prev_hash, row_hash \
             FROM audit ",
            $rest
        )
    };
}
pub(crate) use select_audit;

/// One page of a walk: the rows after id `$1`, at most `$2` of them.
const SELECT_PAGE: &str = select_audit!("WHERE id > $1 ORDER BY id LIMIT $2");

/// One page of a tenant's walk: the tenant `$1`'s rows after id `$2`, at
/// most `$3`, each with what the walk may see of its neighbours in the
/// chain (the row before: its `row_hash`; the row after: its `prev_hash`)
/// and the chain's last place, to tell its head from a gap after it. The
/// neighbours are found by `chain_seq`, which is indexed.
const SELECT_TENANT_PAGE: &str = "SELECT a.*, prev_row.row_hash AS before_hash, \
     next_row.id AS after_id, next_row.prev_hash AS after_prev, \
     (SELECT max(chain_seq) FROM audit) AS last_place \
     FROM audit a \
     LEFT JOIN audit prev_row ON prev_row.chain_seq = a.chain_seq - 1 \
     LEFT JOIN audit next_row ON next_row.chain_seq = a.chain_seq + 1 \
     WHERE a.tenant = $1 AND a.id > $2 ORDER BY a.id LIMIT $3";

/// A tenant's row as [`SELECT_TENANT_PAGE`] reads it.
struct Neighboured {
    stored: Stored,
    place: Option<i64>,
    before: Option<String>,
    after_id: Option<i64>,
    after_prev: Option<String>,
    last_place: Option<i64>,
}

impl Neighboured {
    fn own_link(&self) -> OwnLink<'_> {
        let after = match (self.after_id, self.place, self.last_place) {
            (Some(_), _, _) => Next::Links(self.after_prev.as_deref()),
            (None, Some(place), Some(last)) if place < last => Next::Missing,
            (None, _, _) => Next::Head,
        };
        OwnLink {
            link: self.stored.link(),
            place: self.place,
            before: self.before.as_deref(),
            after,
        }
    }
}

/// The `VALUES` of a multi-row `INSERT` (`$insert`, after
/// [`INSERT_COLUMNS`]): each of `$columns` with its `(prev_hash, row_hash)`
/// from `$links`, at the places after `$place`.
macro_rules! push_rows {
    ($insert:expr, $columns:expr, $links:expr, $place:expr) => {
        let rows = $columns.iter().zip($links).zip($place + 1..);
        $insert.push_values(rows, |mut row, ((c, (prev, hash)), place)| {
            row.push_bind(c.call_id)
                .push_bind(c.at_ms)
                .push_bind(c.principal)
                .push_bind(c.tenant)
                .push_bind(c.client_id.as_deref())
                .push_bind(c.tool.as_ref())
                .push_bind(c.plugin)
                .push_bind(c.catalog_version)
                .push_bind(c.plugin_digest.as_deref())
                .push_bind(c.argument_digest.as_str())
                .push_bind(c.outcome)
                .push_bind(c.error_code)
                .push_bind(c.duration_us)
                .push_bind(c.gate_id.as_deref())
                .push_bind(c.receipt_sha256)
                .push_bind(c.client_rounds.as_deref())
                .push_bind(c.definition_digest.as_deref())
                .push_bind(prev.as_str())
                .push_bind(hash.as_str())
                .push_bind(place);
        });
    };
}

/// Where the chain ends: the hash and the place of its last row.
#[derive(Debug)]
pub(crate) struct Head {
    pub(crate) hash: String,
    pub(crate) place: i64,
}

impl Head {
    /// The head once `links` are appended after the row at `place` whose
    /// hash is `hash`.
    fn after(hash: &str, place: i64, links: &[(String, String)]) -> Head {
        Head {
            hash: links
                .last()
                .map_or(hash, |(_, last)| last.as_str())
                .to_owned(),
            place: place + links.len() as i64,
        }
    }
}

/// The transaction of an append on `$source` (a pool, or a connection of
/// its own): begin with `$begin`, take `$lock` if any, read the head, one
/// multi-row `INSERT`, the effects, commit. A macro so each engine and each
/// kind of source compiles the same statements.
macro_rules! append_in {
    ($source:expr, $begin:expr, $lock:expr, $columns:expr, $effects:expr) => {
        async {
            let mut tx = $source.begin_with($begin).await?;
            let written: Result<(Vec<i64>, Head), EffectError> = async {
                if let Some(lock) = $lock {
                    sqlx::query(lock)
                        .bind(APPEND_LOCK)
                        .execute(&mut *tx)
                        .await?;
                }
                let head: Option<(String, i64)> =
                    sqlx::query_as(SELECT_HEAD).fetch_optional(&mut *tx).await?;
                let (head, place) = head
                    .as_ref()
                    .map_or((GENESIS, 0), |(hash, place)| (hash.as_str(), *place));
                let links = hashes(head, $columns);
                let mut insert = sqlx::QueryBuilder::new(INSERT_COLUMNS);
                push_rows!(insert, $columns, &links, place);
                insert.push(" RETURNING id");
                let ids: Vec<i64> = insert.build_query_scalar().fetch_all(&mut *tx).await?;
                crate::effects::apply(&mut *tx, $effects).await?;
                Ok((ids, Head::after(head, place, &links)))
            }
            .await;
            match written {
                Ok(written) => {
                    tx.commit().await?;
                    Ok::<_, EffectError>(written)
                }
                // Whatever failed (a duplicate call id, a refused effect),
                // release the chain's lock now rather than when the dropped
                // transaction's rollback is flushed, and answer with the
                // failure itself, not the rollback's.
                Err(e) => {
                    let _ = tx.rollback().await;
                    Err(e)
                }
            }
        }
    };
}

/// Appends `events`, in order, each chained to the one before, and applies
/// their effects: one transaction (lock, read the head, one multi-row
/// `INSERT`, the effects), so all of them or none, and one commit, synced
/// as the pool's connections sync. Returns their row ids. A call id already
/// recorded fails the whole batch, with [`StorageError::DuplicateCallId`]
/// when the batch is that one event.
pub(crate) async fn append(
    pools: &Pools,
    events: &[(&AuditEvent, &[Effect])],
) -> Result<Vec<i64>, StorageError> {
    let columns: Vec<Columns<'_>> = events.iter().map(|(e, _)| Columns::of(e)).collect();
    let effects: Vec<&Effect> = events.iter().flat_map(|(_, fx)| fx.iter()).collect();
    let appended = match pools {
        Pools::Sqlite(pool) => {
            append_in!(pool, "BEGIN IMMEDIATE", None::<&str>, &columns, &effects).await
        }
        Pools::Postgres(pool) => {
            let lock = Some("SELECT pg_advisory_xact_lock($1)");
            append_in!(pool, "BEGIN", lock, &columns, &effects).await
        }
    };
    appended
        .map(|(ids, _)| ids)
        .map_err(|e| append_error(e, events))
}

/// [`append`] on a SQLite connection of the caller's (the pipelined audit
/// writer's, whose commits do not wait for the disk: `src/group.rs` syncs
/// them). Returns the chain's new head.
pub(crate) async fn append_on(
    conn: &mut SqliteConnection,
    events: &[(&AuditEvent, &[Effect])],
) -> Result<Head, StorageError> {
    let columns: Vec<Columns<'_>> = events.iter().map(|(e, _)| Columns::of(e)).collect();
    let effects: Vec<&Effect> = events.iter().flat_map(|(_, fx)| fx.iter()).collect();
    let appended = append_in!(conn, "BEGIN IMMEDIATE", None::<&str>, &columns, &effects).await;
    appended
        .map(|(_, head)| head)
        .map_err(|e| append_error(e, events))
}

/// [`append_on`] after a head the caller already knows (the one its last
/// append returned), for rows without effects: `BEGIN IMMEDIATE`, the
/// `INSERT` and `COMMIT` reach SQLite as one list of statements, one trip
/// to sqlx's worker thread, where [`append_on`] takes four (begin, read the
/// head, insert, commit). If `head` is no longer the chain's (another
/// writer appended since), the head trigger refuses the rows; whatever
/// fails, the transaction is rolled back and the error returned, and the
/// caller appends with [`append_on`], which reads the head.
pub(crate) async fn append_after(
    conn: &mut SqliteConnection,
    head: &Head,
    events: &[&AuditEvent],
) -> Result<Head, sqlx::Error> {
    let columns: Vec<Columns<'_>> = events.iter().map(|e| Columns::of(e)).collect();
    let links = hashes(&head.hash, &columns);
    let mut statements = sqlx::QueryBuilder::new("BEGIN IMMEDIATE; ");
    statements.push(INSERT_COLUMNS);
    push_rows!(statements, &columns, &links, head.place);
    statements.push("; COMMIT");
    match statements.build().execute(&mut *conn).await {
        Ok(_) => Ok(Head::after(&head.hash, head.place, &links)),
        Err(e) => {
            // No transaction is open if `BEGIN` itself failed; then this
            // fails too, and that is fine.
            let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
            Err(e)
        }
    }
}

/// The store's error for a failed append of `events`.
fn append_error(e: EffectError, events: &[(&AuditEvent, &[Effect])]) -> StorageError {
    let e = match e {
        EffectError::Lost(effect) => return StorageError::EffectLost { effect },
        EffectError::Sql(e) => e,
    };
    match (e.as_database_error(), events) {
        (Some(db), [(one, _)]) if db.is_unique_violation() && names_call_id(db) => {
            StorageError::DuplicateCallId {
                call_id: one.call_id.clone(),
            }
        }
        _ => StorageError::query("append audit rows")(e),
    }
}

/// `(prev_hash, row_hash)` of each row, chained from `head`.
fn hashes(head: &str, columns: &[Columns<'_>]) -> Vec<(String, String)> {
    let mut prev = head.to_owned();
    columns
        .iter()
        .map(|c| {
            let hash = row_hash(&prev, &c.chained()).to_string();
            (std::mem::replace(&mut prev, hash.clone()), hash)
        })
        .collect()
}

/// Whether a unique violation is the call id's (and not, say, the
/// `prev_hash` index's). PostgreSQL names the constraint; SQLite names the
/// column in its message.
fn names_call_id(db: &dyn sqlx::error::DatabaseError) -> bool {
    db.constraint().map_or_else(
        || db.message().contains("call_id"),
        |c| c.contains("call_id"),
    )
}

/// Walks every row in id order, a page at a time, checking each against
/// the chain. The outer error is the store's (the rows could not be read);
/// the inner one is the chain's (the first row that does not fit). Rows
/// appended during the walk are checked if the walk reaches them.
pub(crate) async fn verify(
    pools: &Pools,
) -> Result<Result<ChainSummary, ChainBreak>, StorageError> {
    let mut check = ChainCheck::new();
    let mut after = i64::MIN;
    loop {
        let page: Vec<Stored> = on_pool!(pools, pool => {
            sqlx::query(SELECT_PAGE)
                .bind(after)
                .bind(WALK_PAGE)
                .fetch_all(pool)
                .await
                .and_then(|rows| rows.iter().map(Stored::read).collect())
        })
        .map_err(StorageError::query("read audit rows for the chain walk"))?;
        for stored in &page {
            if let Err(broken) = check.check(&stored.link()) {
                return Ok(Err(broken));
            }
        }
        match page.last() {
            Some(last) if page.len() as i64 == WALK_PAGE => after = last.link().id,
            _ => return Ok(Ok(check.summary())),
        }
    }
}

/// Walks `tenant`'s rows in id order, a page at a time, checking each
/// and its links to its neighbours ([`TenantCheck`]): only the tenant's
/// rows are read whole, and nothing host-wide is reported. Outer error:
/// the store's; inner: the first of the tenant's rows that does not fit.
pub(crate) async fn verify_tenant(
    pools: &Pools,
    tenant: &str,
) -> Result<Result<TenantSummary, ChainBreak>, StorageError> {
    let mut check = TenantCheck::new();
    let mut after = i64::MIN;
    loop {
        let page: Vec<Neighboured> = on_pool!(pools, pool => {
            sqlx::query(SELECT_TENANT_PAGE)
                .bind(tenant)
                .bind(after)
                .bind(WALK_PAGE)
                .fetch_all(pool)
                .await
                .and_then(|rows| {
                    rows.iter()
                        .map(|r| {
                            use sqlx::Row;
                            Ok(Neighboured {
                                stored: Stored::read(r)?,
                                place: r.try_get("chain_seq")?,
                                before: r.try_get("before_hash")?,
                                after_id: r.try_get("after_id")?,
                                after_prev: r.try_get("after_prev")?,
                                last_place: r.try_get("last_place")?,
                            })
                        })
                        .collect()
                })
        })
        .map_err(StorageError::query(
            "read a tenant's audit rows for its chain walk",
        ))?;
        for row in &page {
            if let Err(broken) = check.check(&row.own_link()) {
                return Ok(Err(broken));
            }
        }
        match page.last() {
            Some(last) if page.len() as i64 == WALK_PAGE => after = last.stored.link().id,
            _ => return Ok(Ok(check.summary())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_event::test_event;

    /// The rows' call ids and places, in id order, read on `conn`.
    async fn placed(conn: &mut SqliteConnection) -> Vec<(String, i64)> {
        sqlx::query_as("SELECT call_id, chain_seq FROM audit ORDER BY id")
            .fetch_all(conn)
            .await
            .expect("rows")
    }

    #[tokio::test]
    async fn an_append_after_a_known_head_commits_in_one_list_and_a_moved_head_changes_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("a.db").display());
        let store = crate::Store::connect(&url).await.expect("a store");
        let mut conn = SqliteConnection::connect(&url).await.expect("open");
        let first = append_on(&mut conn, &[(&test_event("a"), &[])])
            .await
            .expect("appended");
        assert_eq!(first.place, 1);

        let (b, c) = (test_event("b"), test_event("c"));
        let after = append_after(&mut conn, &first, &[&b, &c])
            .await
            .expect("appended after the known head");
        assert_eq!(after.place, 3);
        // Committed: the store's own connections see the rows, chained.
        let summary = store.verify_chain().await.expect("read").expect("intact");
        assert_eq!(summary.verified, 3);
        assert_eq!(summary.head.expect("a head").1, after.hash);

        // Another writer appends: the head this one knows is stale.
        store
            .append(&test_event("elsewhere"))
            .await
            .expect("appended");
        let refused = append_after(&mut conn, &after, &[&test_event("d")])
            .await
            .expect_err("after a head that moved");
        assert!(
            refused.to_string().contains("audit_chain_head"),
            "{refused}"
        );
        // Nothing was written, and no transaction was left open: the usual
        // append, which begins one, reads the head and goes on.
        let last = append_on(&mut conn, &[(&test_event("d"), &[])])
            .await
            .expect("appended after reading the head");
        assert_eq!(last.place, 5);
        assert_eq!(
            placed(&mut conn).await,
            [("a", 1), ("b", 2), ("c", 3), ("elsewhere", 4), ("d", 5)]
                .map(|(call, place)| (call.to_owned(), place))
        );
        let summary = store.verify_chain().await.expect("read").expect("intact");
        assert_eq!(summary.verified, 5);
    }
}
