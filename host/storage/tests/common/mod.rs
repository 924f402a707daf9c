//! What every storage test binary shares: a private database per test, of
//! either engine, and the macro that runs one body on both.
//!
//! PostgreSQL tests use `TOOLHOST_TEST_PG_URL`, default
//! `postgres://postgres@127.0.0.1:5432/test`. Each test gets its own schema,
//! selected through the URL's `options[search_path]`, and drops it when done
//! (also when the test fails). An unreachable server fails the tests: CI has
//! one, and a skipped suite would hide a broken one.

// Each test binary compiles this module and uses a different part of it.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;
use sqlx::{AssertSqlSafe, Connection, PgConnection, SqliteConnection};
use toolhost_audit::{AuditEvent, argument_digest};
use toolhost_auth::AuthStore;
use toolhost_storage::Store;
use toolhost_types::Digest;

const DEFAULT_PG_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// A database of one engine, private to one test.
pub enum TestDb {
    Sqlite {
        _dir: tempfile::TempDir,
        url: String,
    },
    Postgres {
        admin_url: String,
        schema: String,
        url: String,
    },
}

impl TestDb {
    /// A SQLite file that does not exist yet, in a fresh temp directory.
    pub fn sqlite() -> TestDb {
        let dir = tempfile::tempdir().expect("a temp directory");
        let path = dir.path().join("audit.db");
        let url = format!("sqlite://{}?mode=rwc", path.display());
        TestDb::Sqlite { _dir: dir, url }
    }

    /// A fresh, empty schema on the test server; panics (fails the test)
    /// with the URL in the message if the server cannot be reached.
    pub async fn postgres() -> TestDb {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let admin_url = std::env::var("TOOLHOST_TEST_PG_URL").unwrap_or(DEFAULT_PG_URL.into());
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("clock after 1970");
        let schema = format!(
            "toolhost_test_{}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            nanos.subsec_nanos()
        );
        let mut admin = PgConnection::connect(&admin_url).await.unwrap_or_else(|e| {
            panic!(
                "PostgreSQL for the storage tests is unreachable at {admin_url}: {e}\n\
                 Start it, or point TOOLHOST_TEST_PG_URL at one (tests fail rather than skip)."
            )
        });
        let create = format!("CREATE SCHEMA {schema}");
        sqlx::raw_sql(AssertSqlSafe(create))
            .execute(&mut admin)
            .await
            .expect("creating the test schema");
        let sep = if admin_url.contains('?') { '&' } else { '?' };
        let url = format!("{admin_url}{sep}options[search_path]={schema}");
        TestDb::Postgres {
            admin_url,
            schema,
            url,
        }
    }

    pub fn url(&self) -> &str {
        match self {
            TestDb::Sqlite { url, .. } | TestDb::Postgres { url, .. } => url,
        }
    }

    pub async fn store(&self) -> Store {
        Store::connect(self.url())
            .await
            .unwrap_or_else(|e| panic!("connecting to {}: {e}", self.url()))
    }

    /// How many rows `table` holds, read on a connection of its own.
    #[allow(dead_code)]
    pub async fn count(&self, table: &str) -> i64 {
        use sqlx::Row as _;
        let sql = format!("SELECT COUNT(*) AS n FROM {table}");
        let query = sqlx::raw_sql(AssertSqlSafe(sql));
        let n = match self {
            TestDb::Sqlite { url, .. } => {
                let mut c = SqliteConnection::connect(url).await.expect("connects");
                query
                    .fetch_one(&mut c)
                    .await
                    .and_then(|r| r.try_get::<i64, _>("n"))
            }
            TestDb::Postgres { url, .. } => {
                let mut c = PgConnection::connect(url).await.expect("connects");
                query
                    .fetch_one(&mut c)
                    .await
                    .and_then(|r| r.try_get::<i64, _>("n"))
            }
        };
        n.unwrap_or_else(|e| panic!("counting {table}: {e}"))
    }

    /// Runs `sql` on a connection of its own, bypassing the store.
    /// The first column of the first row `sql` returns, as text or integer.
    pub async fn scalar<T>(&self, sql: String) -> T
    where
        T: for<'r> sqlx::Decode<'r, sqlx::Sqlite>
            + sqlx::Type<sqlx::Sqlite>
            + for<'r> sqlx::Decode<'r, sqlx::Postgres>
            + sqlx::Type<sqlx::Postgres>
            + Send
            + Unpin,
    {
        use sqlx::Row as _;
        let query = sqlx::raw_sql(AssertSqlSafe(sql));
        match self {
            TestDb::Sqlite { url, .. } => {
                let mut c = SqliteConnection::connect(url).await.expect("connects");
                query
                    .fetch_one(&mut c)
                    .await
                    .and_then(|r| r.try_get::<T, _>(0))
            }
            TestDb::Postgres { url, .. } => {
                let mut c = PgConnection::connect(url).await.expect("connects");
                query
                    .fetch_one(&mut c)
                    .await
                    .and_then(|r| r.try_get::<T, _>(0))
            }
        }
        .expect("one value")
    }

    pub async fn raw(&self, sql: String) -> Result<(), sqlx::Error> {
        let sql = sqlx::raw_sql(AssertSqlSafe(sql));
        match self {
            TestDb::Sqlite { url, .. } => {
                sql.execute(&mut SqliteConnection::connect(url).await?)
                    .await?;
            }
            TestDb::Postgres { url, .. } => {
                sql.execute(&mut PgConnection::connect(url).await?).await?;
            }
        }
        Ok(())
    }
}

impl Drop for TestDb {
    /// Drops the PostgreSQL schema, on a thread with its own runtime since
    /// `Drop` cannot await. Runs during unwinding too, so failed tests clean up.
    fn drop(&mut self) {
        let TestDb::Postgres {
            admin_url, schema, ..
        } = self
        else {
            return;
        };
        let (admin_url, drop_schema) = (admin_url.clone(), format!("DROP SCHEMA {schema} CASCADE"));
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            rt.block_on(async {
                let mut admin = PgConnection::connect(&admin_url).await?;
                sqlx::raw_sql(AssertSqlSafe(drop_schema))
                    .execute(&mut admin)
                    .await?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("warning: test schema {schema} was not dropped: {dropped:?}");
        }
    }
}

/// Declares each named body as a module with a `sqlite` and a `postgres` test
/// (`#[macro_use] mod common;` brings it into scope).
macro_rules! on_both_engines {
    ($($body:ident),* $(,)?) => {$(
        mod $body {
            #[tokio::test]
            async fn sqlite() {
                super::$body(&$crate::common::TestDb::sqlite()).await
            }
            #[tokio::test]
            async fn postgres() {
                super::$body(&$crate::common::TestDb::postgres().await).await
            }
        }
    )*};
}

/// A call of `greet` by alice in acme that ran, at `at_ms` (whole
/// milliseconds and microseconds: the audit table's precision), with no
/// gate. Tests change the fields they are about.
pub fn event(call_id: &str, at_ms: u64) -> AuditEvent {
    let digest = argument_digest(&json!({"name": "world"}));
    AuditEvent {
        call_id: call_id.into(),
        at: UNIX_EPOCH + Duration::from_millis(at_ms),
        client_id: Some("client-1".into()),
        plugin: Some("hello".into()),
        catalog_version: Some("0.1.0".into()),
        plugin_digest: Some(Digest::of(b"hello.wasm")),
        duration: Duration::from_micros(1_234),
        ..AuditEvent::new("acme", "alice", "greet", digest)
    }
}

/// A store of `db` with each of `tenants`, created at `at` (unix seconds).
pub async fn store_with_tenants(db: &TestDb, tenants: &[&str], at: i64) -> Store {
    let store = db.store().await;
    for tenant in tenants {
        store.ensure_tenant(tenant, at).await.expect("tenant");
    }
    store
}

/// Awaits concurrent opens of one row and asserts that they all answered
/// the same row; `show` names what each answered when they did not.
pub async fn opened_alike<T: PartialEq, E: std::fmt::Debug>(
    opens: impl IntoIterator<Item = tokio::task::JoinHandle<Result<T, E>>>,
    show: impl Fn(&[T]) -> String,
) -> Vec<T> {
    let mut opened = Vec::new();
    for task in opens {
        opened.push(task.await.expect("task").expect("open"));
    }
    assert!(opened.windows(2).all(|w| w[0] == w[1]), "{}", show(&opened));
    opened
}

/// A run's spec: `tool` of `plugin`'s active revision (0.1.0) with
/// `arguments` and the default budget.
pub fn run_spec(tool: &str, plugin: &str, arguments: serde_json::Value) -> toolhost_runs::RunSpec {
    toolhost_runs::RunSpec {
        tool: tool.into(),
        source: toolhost_runs::RunSource::Active,
        revision: toolhost_runs::RevisionRef {
            id: None,
            plugin: plugin.into(),
            version: "0.1.0".into(),
            component_sha256: toolhost_types::Digest::of(b"testbench.wasm").to_string(),
            manifest_sha256: None,
            signer: None,
            catalog_version: Some("1.0.0".into()),
        },
        argument_digest: argument_digest(&arguments).to_string(),
        arguments,
        budget: toolhost_limits::RunBudget::DEFAULT,
        client: None,
    }
}
