//! What can go wrong in storage, in words that outlive the driver.
//!
//! `sqlx::Error` never leaves this crate: it is mapped here, keeping its
//! message, so callers match on our variants and log our text.

use std::fmt;

use toolhost_types::StoreUnavailable;

/// Which database engine a [`Store`](crate::Store) talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// A single SQLite file (or an in-memory database), bundled into the binary.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Engine::Sqlite => "sqlite",
            Engine::Postgres => "postgres",
        })
    }
}

/// Why a storage operation failed. URLs in messages have their password
/// replaced by `***`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    /// The URL names neither `sqlite:` nor `postgres://` / `postgresql://`.
    #[error("database url {url:?} names no supported engine (expected sqlite:… or postgres://…)")]
    UnsupportedUrl {
        /// The refused URL, password redacted.
        url: String,
    },
    /// The URL could not be parsed, or no connection could be opened within
    /// the acquire timeout.
    #[error("cannot open {engine} database {url}: {message}")]
    Connect {
        /// The engine the URL selected.
        engine: Engine,
        /// The URL, password redacted.
        url: String,
        /// The driver's message.
        message: String,
    },
    /// The embedded migrations could not be applied (for example, the
    /// database was migrated by a newer or different build).
    #[error("migrating {engine} database {url}: {message}")]
    Migrate {
        /// The engine the URL selected.
        engine: Engine,
        /// The URL, password redacted.
        url: String,
        /// The migrator's message.
        message: String,
    },
    /// An audit row with this call id exists already; nothing was written.
    #[error("audit row for call {call_id:?} already exists")]
    DuplicateCallId {
        /// The call id that was refused.
        call_id: String,
    },
    /// A stored row holds a value this build cannot read back (written by
    /// hand, or by a build with different words).
    #[error("audit row {id}: column {column} holds {value:?}: {problem}")]
    Corrupt {
        /// The row's id.
        id: i64,
        /// The offending column.
        column: &'static str,
        /// The stored value, as text.
        value: String,
        /// What is wrong with it.
        problem: String,
    },
    /// Any other database failure: connection lost, constraint, timeout…
    #[error("{operation}: {message}")]
    Query {
        /// What the store was doing, e.g. `"insert audit row"`.
        operation: &'static str,
        /// The driver's message.
        message: String,
    },
    /// The database could not be reached (see [`unreachable`]).
    #[error(transparent)]
    Unavailable(#[from] StoreUnavailable),
    /// An effect written with an audit row found its state not as it
    /// expected (see `toolhost_audit::AuditError::Lost`): nothing was
    /// written.
    #[error("effect {effect} of the audit row lost to another writer")]
    EffectLost {
        /// The effect's place among the row's effects.
        effect: usize,
    },
    /// The store's audit writer has stopped (the store was closed).
    #[error("the store is closed")]
    Closed,
}

impl StorageError {
    /// Maps a driver error met while doing `operation`.
    pub(crate) fn query(operation: &'static str) -> impl FnOnce(sqlx::Error) -> StorageError {
        move |e| match unreachable(operation, &e) {
            Some(u) => StorageError::Unavailable(u),
            None => StorageError::Query {
                operation,
                message: e.to_string(),
            },
        }
    }
}

/// `Some` when `e` says the database could not be reached, rather than
/// that it refused or failed what was asked: the connection was refused,
/// lost or broken, no pooled connection came free in time, or the server
/// is shutting down, starting or out of connections (PostgreSQL's class 08,
/// 57P01–57P03 and 53300; SQLite's busy and locked), or its disk is full
/// (PostgreSQL's 53100, SQLite's `SQLITE_FULL`): each passes without the
/// request changing, so each is worth a retry.
pub(crate) fn unreachable(operation: &str, e: &sqlx::Error) -> Option<StoreUnavailable> {
    let down = match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            code.starts_with("08")
                || matches!(&*code, "57P01" | "57P02" | "57P03" | "53300" | "53100")
                || matches!(&*code, "5" | "6" | "261" | "262" | "517" | "13")
        }),
        _ => false,
    };
    down.then(|| StoreUnavailable {
        operation: operation.to_owned(),
        message: e.to_string(),
    })
}

/// `url` with any password replaced by `***`, fit for messages and logs.
/// Handles `scheme://user:password@host…` and a `password=` query parameter.
pub(crate) fn redact(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(start) = out.find("://").map(|i| i + 3) {
        let authority_end = out[start..]
            .find(['/', '?'])
            .map_or(out.len(), |i| start + i);
        if let Some(at) = out[start..authority_end].rfind('@').map(|i| start + i)
            && let Some(colon) = out[start..at].find(':').map(|i| start + i)
        {
            out.replace_range(colon + 1..at, "***");
        }
    }
    if let Some(query) = out.find('?') {
        let (head, tail) = out.split_at(query + 1);
        let params: Vec<String> = tail
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => p.to_owned(),
            })
            .collect();
        out = format!("{head}{}", params.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_hides_passwords_and_nothing_else() {
        let cases = [
            (
                "postgres://u:secret@h:5432/db",
                "postgres://u:***@h:5432/db",
            ),
            ("postgres://u@h/db", "postgres://u@h/db"),
            (
                "postgres://h/db?password=secret&x=1",
                "postgres://h/db?password=***&x=1",
            ),
            ("postgres://u:p@ss@h/db", "postgres://u:***@h/db"),
            ("sqlite://audit.db?mode=rwc", "sqlite://audit.db?mode=rwc"),
            ("sqlite::memory:", "sqlite::memory:"),
        ];
        for (url, want) in cases {
            assert_eq!(redact(url), want, "{url}");
        }
    }
}
