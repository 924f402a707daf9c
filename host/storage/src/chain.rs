//! The audit trail's hash chains in SQL: appending rows to the writer's
//! own chain, and (`walk`) walking every chain to check them. What a hash
//! covers and what a walk accepts is decided in `toolhost_audit::chain` and
//! `toolhost_audit::anchor`; this module only moves rows.
//!
//! Each writer (a store's audit writer task; on PostgreSQL several per
//! store, so several batches are in flight) opens a chain of its own on its
//! first append ([`WriterChain::open`]: a random id, recorded in
//! `audit_chains`) and is the only one to append to it. So it knows its
//! chain's head without reading it, and no lock is shared with any other
//! writer: a batch without effects is one `INSERT` of every row, committed
//! on its own (one round trip); a batch with effects is that `INSERT` and
//! the effects in one transaction. The unique index on
//! `(chain_id, chain_seq)` refuses a second row at a place. After a failure
//! whose outcome is unknown (a connection lost during the commit) the
//! writer reads its head back before its next append.
//!
//! About once a second each store records its chains' moved heads in the
//! anchor chain (`anchors`), the one serialized write: on PostgreSQL under
//! the advisory lock [`ANCHOR_LOCK`], on SQLite under the database's own
//! write lock.

mod anchors;
mod export;
mod walk;

use toolhost_audit::{AuditEvent, Effect, Encoding};

use crate::StorageError;
use sqlx::{Connection, SqliteConnection};

use crate::connect::Pools;
use crate::effects::EffectError;
use crate::record::Columns;

pub(crate) use anchors::Anchorer;
pub(crate) use export::export;
pub use export::{ExportError, ExportRequest};
pub(crate) use walk::{verify, verify_tenant};

/// The key of the PostgreSQL advisory lock an anchor append takes: the
/// bytes of `"thaudit1"`, a number no other lock in the host uses.
/// Advisory locks are per database, so hosts whose audit tables live in
/// different schemas of one database share it (they wait microseconds for
/// each other, about once a second).
pub const ANCHOR_LOCK: i64 = i64::from_be_bytes(*b"thaudit1");

/// The columns of an audit row, in `INSERT` order.
const INSERT_COLUMNS: &str = "INSERT INTO audit (call_id, at, principal, tenant, client_id, tool, \
     plugin, catalog_version, plugin_digest, argument_digest, outcome, error_code, duration_us, \
     gate_id, receipt_sha256, client_rounds, definition_digest, prev_hash, row_hash, chain_seq, \
     chain_id) ";

/// `SELECT` of every column of `audit`, then `$rest`: a string literal, so
/// each query is one `&'static str`.
macro_rules! select_audit {
    ($rest:literal) => {
        concat!(
            "SELECT id, call_id, at, principal, tenant, client_id, tool, plugin, \
             catalog_version, plugin_digest, argument_digest, outcome, error_code, duration_us, \
             gate_id, receipt_sha256, client_rounds, definition_digest, prev_hash, row_hash, \
             chain_seq, chain_id FROM audit ",
            $rest
        )
    };
}
pub(crate) use select_audit;

/// A chain's head: the newest row's place, 0 before any.
const SELECT_HEAD: &str = "SELECT row_hash, chain_seq FROM audit WHERE chain_id = $1 \
     AND chain_seq IS NOT NULL ORDER BY chain_seq DESC LIMIT 1";

/// Records a newly opened chain.
const INSERT_CHAIN: &str =
    "INSERT INTO audit_chains (chain_id, writer, opened_at, encoding) VALUES ($1, $2, $3, $4)";

/// The `VALUES` of a multi-row `INSERT` (`$insert`, after
/// [`INSERT_COLUMNS`]): each of `$columns` with its `(prev_hash, row_hash)`
/// from `$links`, at the places after `$place` of chain `$chain`.
macro_rules! push_rows {
    ($insert:expr, $columns:expr, $links:expr, $place:expr, $chain:expr) => {
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
                .push_bind(place)
                .push_bind($chain);
        });
    };
}

/// Where a chain ends: the hash and the place of its last row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) hash: String,
    pub(crate) place: i64,
}

impl Head {
    /// The head of an empty chain `chain` hashed in `encoding`: its
    /// genesis, at place 0.
    fn genesis(chain: &str, encoding: Encoding) -> Head {
        Head {
            hash: encoding.genesis(chain),
            place: 0,
        }
    }

    /// The head once `links` are appended after this one.
    fn after(&self, links: &[(String, String)]) -> Head {
        Head {
            hash: links
                .last()
                .map_or(self.hash.as_str(), |(_, last)| last.as_str())
                .to_owned(),
            place: self.place + links.len() as i64,
        }
    }
}

/// A chain one writer owns: its id, how its rows are hashed, and its head
/// as the writer's last append left it.
#[derive(Debug, Clone)]
pub(crate) struct WriterChain {
    pub(crate) id: String,
    pub(crate) encoding: Encoding,
    pub(crate) head: Head,
}

/// A fresh chain id: 16 random bytes in hex.
fn new_chain_id() -> Result<String, StorageError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| StorageError::Query {
        operation: "draw a chain id",
        message: e.to_string(),
    })?;
    Ok(hex::encode(bytes))
}

/// Who opens a chain, as `audit_chains.writer` records it.
fn writer_label() -> String {
    format!("pid {}", std::process::id())
}

/// Runs `$body` with `$exec` bound to the writer's connection: a pool's
/// (either engine) or the SQLite file writer's own connection.
macro_rules! on_source {
    ($source:expr, $exec:ident => $body:expr) => {
        match $source {
            Source::Pools(Pools::Sqlite($exec)) => $body,
            Source::Pools(Pools::Postgres($exec)) => $body,
            Source::Sqlite($exec) => {
                let $exec = &mut **$exec;
                $body
            }
        }
    };
}

/// Where a writer appends.
pub(crate) enum Source<'a> {
    /// Through the store's pool.
    Pools(&'a Pools),
    /// On a SQLite connection of the writer's own (`src/group.rs`), whose
    /// commits sync the log.
    Sqlite(&'a mut SqliteConnection),
}

/// The transaction of an append with effects on `$exec` (a pool, or a
/// connection of its own): begin with `$begin`, the rows' `INSERT`, the
/// effects, commit; rolled back at once on any failure, so the chain's
/// rows and the effects' locks are released now rather than when the
/// dropped transaction's rollback is flushed.
macro_rules! in_transaction {
    ($exec:expr, $begin:expr, $insert:expr, $effects:expr) => {
        async {
            let mut tx = $exec.begin_with($begin).await?;
            let written: Result<(), EffectError> = async {
                $insert.build().execute(&mut *tx).await?;
                crate::effects::apply(&mut *tx, $effects).await?;
                Ok(())
            }
            .await;
            match written {
                Ok(()) => tx.commit().await.map_err(EffectError::Sql),
                Err(e) => {
                    let _ = tx.rollback().await;
                    Err(e)
                }
            }
        }
        .await
    };
}

impl WriterChain {
    /// Opens a new chain on `source`, hashed in [`Encoding::CURRENT`]:
    /// records it in `audit_chains`, empty.
    pub(crate) async fn open(source: &mut Source<'_>) -> Result<WriterChain, StorageError> {
        let id = new_chain_id()?;
        let encoding = Encoding::CURRENT;
        let now = crate::record::unix_millis(std::time::SystemTime::now());
        on_source!(source, exec => sqlx::query(INSERT_CHAIN)
            .bind(&id)
            .bind(writer_label())
            .bind(now)
            .bind(encoding.number())
            .execute(exec)
            .await
            .map(drop))
        .map_err(StorageError::query("open an audit chain"))?;
        Ok(WriterChain {
            head: Head::genesis(&id, encoding),
            encoding,
            id,
        })
    }

    /// Reads this chain's head back from the database: after a failure
    /// whose outcome is unknown, the only way to know it.
    pub(crate) async fn reread(&mut self, source: &mut Source<'_>) -> Result<(), StorageError> {
        let head: Option<(String, i64)> = on_source!(source, exec => sqlx::query_as(SELECT_HEAD)
            .bind(&self.id)
            .fetch_optional(exec)
            .await)
        .map_err(StorageError::query("read an audit chain's head"))?;
        self.head = match head {
            Some((hash, place)) => Head { hash, place },
            None => Head::genesis(&self.id, self.encoding),
        };
        Ok(())
    }

    /// Appends `events`, in order, each chained to the one before, after
    /// this chain's head, and applies their effects: without effects one
    /// `INSERT` committed on its own; with effects that `INSERT` and the
    /// effects in one transaction. So all of them or none. On success the
    /// head moves past them; on failure it stays, and the caller rereads
    /// it unless the failure is one the database reported for the rows
    /// (then nothing was written). A call id already recorded fails the
    /// whole batch, with [`StorageError::DuplicateCallId`] when the batch
    /// is that one event. A place already taken (this writer's head was
    /// stale: a commit whose outcome it could not learn, and a reread that
    /// failed too, say while the database restarted) wrote nothing: the
    /// head is read back and the rows appended after it, once.
    pub(crate) async fn append(
        &mut self,
        source: &mut Source<'_>,
        events: &[(&AuditEvent, &[Effect])],
    ) -> Result<(), StorageError> {
        match self.append_at_head(source, events).await {
            Err(Failed::PlaceTaken(_)) => {
                self.reread(source).await?;
                self.append_at_head(source, events)
                    .await
                    .map_err(Failed::into_error)
            }
            done => done.map_err(Failed::into_error),
        }
    }

    /// [`Self::append`] after the head this writer knows.
    async fn append_at_head(
        &mut self,
        source: &mut Source<'_>,
        events: &[(&AuditEvent, &[Effect])],
    ) -> Result<(), Failed> {
        let columns: Vec<Columns<'_>> = events.iter().map(|(e, _)| Columns::of(e)).collect();
        let effects: Vec<&Effect> = events.iter().flat_map(|(_, fx)| fx.iter()).collect();
        let links = hashes(self.encoding, &self.head.hash, &columns);
        let (place, chain) = (self.head.place, self.id.as_str());
        let written: Result<(), EffectError> = if effects.is_empty() {
            on_source!(source, exec => {
                let mut insert = sqlx::QueryBuilder::new(INSERT_COLUMNS);
                push_rows!(insert, &columns, &links, place, chain);
                insert.build().execute(exec).await.map(drop)
            })
            .map_err(EffectError::Sql)
        } else {
            let begin = match source {
                Source::Pools(Pools::Postgres(_)) => "BEGIN",
                _ => "BEGIN IMMEDIATE",
            };
            on_source!(source, exec => {
                let mut insert = sqlx::QueryBuilder::new(INSERT_COLUMNS);
                push_rows!(insert, &columns, &links, place, chain);
                in_transaction!(exec, begin, insert, &effects)
            })
        };
        written.map_err(|e| append_error(e, events))?;
        self.head = self.head.after(&links);
        Ok(())
    }
}

/// Whether `e`, an append's failure, was the database refusing the rows
/// or an effect (then nothing was written and the chain's head stands),
/// rather than a failure whose outcome is unknown.
pub(crate) fn refused(e: &StorageError) -> bool {
    matches!(
        e,
        StorageError::DuplicateCallId { .. } | StorageError::EffectLost { .. }
    )
}

/// Why an append at the known head failed.
enum Failed {
    /// The database already holds a row at the place the first row was
    /// to take: the head was stale, nothing was written.
    PlaceTaken(StorageError),
    /// Anything else.
    Other(StorageError),
}

impl Failed {
    fn into_error(self) -> StorageError {
        match self {
            Failed::PlaceTaken(e) | Failed::Other(e) => e,
        }
    }
}

/// The store's error for a failed append of `events`.
fn append_error(e: EffectError, events: &[(&AuditEvent, &[Effect])]) -> Failed {
    let e = match e {
        EffectError::Lost(effect) => return Failed::Other(StorageError::EffectLost { effect }),
        EffectError::Sql(e) => e,
    };
    match (e.as_database_error(), events) {
        (Some(db), [(one, _)]) if db.is_unique_violation() && names_call_id(db) => {
            Failed::Other(StorageError::DuplicateCallId {
                call_id: one.call_id.clone(),
            })
        }
        (Some(db), _) if db.is_unique_violation() && names_place(db) => {
            Failed::PlaceTaken(StorageError::query("append audit rows")(e))
        }
        _ => Failed::Other(StorageError::query("append audit rows")(e)),
    }
}

/// Whether a unique violation is the chain's place index's
/// (`audit_chain_place`: PostgreSQL names the constraint, SQLite the
/// columns).
fn names_place(db: &dyn sqlx::error::DatabaseError) -> bool {
    db.constraint().map_or_else(
        || db.message().contains("chain_seq"),
        |c| c == "audit_chain_place",
    )
}

/// `(prev_hash, row_hash)` of each row, chained from `head` in `encoding`.
fn hashes(encoding: Encoding, head: &str, columns: &[Columns<'_>]) -> Vec<(String, String)> {
    let mut prev = head.to_owned();
    columns
        .iter()
        .map(|c| {
            let hash = encoding.row_hash(&prev, &c.chained()).to_string();
            (std::mem::replace(&mut prev, hash.clone()), hash)
        })
        .collect()
}

/// Whether a unique violation is the call id's (and not, say, the
/// chain's place index's). PostgreSQL names the constraint; SQLite names
/// the column in its message.
fn names_call_id(db: &dyn sqlx::error::DatabaseError) -> bool {
    db.constraint().map_or_else(
        || db.message().contains("call_id"),
        |c| c.contains("call_id"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_event::test_event;

    /// The rows' call ids, chains and places, in id order.
    async fn placed(pools: &Pools) -> Vec<(String, String, i64)> {
        let Pools::Sqlite(pool) = pools else {
            unreachable!("SQLite")
        };
        sqlx::query_as("SELECT call_id, chain_id, chain_seq FROM audit ORDER BY id")
            .fetch_all(pool)
            .await
            .expect("rows")
    }

    #[tokio::test]
    async fn two_writers_append_to_chains_of_their_own_that_interleave_and_verify() {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("a.db").display());
        let store = crate::Store::connect(&url).await.expect("a store");
        let pools = store.pools.clone();
        let mut source = Source::Pools(&pools);
        let mut one = WriterChain::open(&mut source).await.expect("opened");
        let mut two = WriterChain::open(&mut source).await.expect("opened");
        assert_ne!(one.id, two.id);
        let (a, b, c) = (test_event("a"), test_event("b"), test_event("c"));
        one.append(&mut source, &[(&a, &[]), (&b, &[])])
            .await
            .expect("appended");
        two.append(&mut source, &[(&c, &[])])
            .await
            .expect("appended");
        one.append(&mut source, &[(&test_event("d"), &[])])
            .await
            .expect("appended");
        assert_eq!((one.head.place, two.head.place), (3, 1));
        let rows = placed(&pools).await;
        let expected = [
            ("a", &one.id, 1),
            ("b", &one.id, 2),
            ("c", &two.id, 1),
            ("d", &one.id, 3),
        ]
        .map(|(call, chain, place)| (call.to_owned(), chain.clone(), place));
        assert_eq!(rows, expected);
        let summary = store.verify_chain().await.expect("read").expect("intact");
        assert_eq!((summary.verified, summary.chains), (4, 2));

        // A refused row leaves the head where it was; the chain goes on.
        let refused = one
            .append(&mut source, &[(&test_event("a"), &[])])
            .await
            .expect_err("a duplicate call id");
        assert!(super::refused(&refused), "{refused}");
        assert_eq!(one.head.place, 3);

        // A writer whose head is stale (a commit it could not confirm, and
        // a reread that failed too) is refused by the place index, reads
        // its head back and appends after it: its caller sees no error.
        let mut stale = one.clone();
        stale.head = Head::genesis(&one.id, one.encoding);
        stale
            .append(&mut source, &[(&test_event("e"), &[])])
            .await
            .expect("appended after the head read back");
        assert_eq!(stale.head.place, one.head.place + 1);
        let summary = store.verify_chain().await.expect("read").expect("intact");
        assert_eq!(summary.verified, 5);
        // A duplicate call id at a stale head is still refused as one.
        stale.head = Head::genesis(&one.id, one.encoding);
        let refused = stale
            .append(&mut source, &[(&test_event("e"), &[])])
            .await
            .expect_err("a duplicate call id");
        assert!(
            matches!(refused, StorageError::DuplicateCallId { .. }),
            "{refused}"
        );
    }
}
