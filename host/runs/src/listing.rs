//! [`RunQuery`]: which runs a listing returns, a page at a time, and
//! [`RunCursor`]: where a page starts.
//!
//! Runs are listed newest first, by when they were queued and then by id
//! (runs queued in the same millisecond). A cursor is that pair, written
//! `<created_at_ms>.<run_id>`: it is self-contained, so the store seeks to
//! it in an index and reads no run to find it, and a cursor proves
//! nothing (a forged one only starts a page somewhere else).

use std::fmt;

use crate::{Run, RunId, RunState};

/// The place of a run in the listing's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunCursor {
    /// When the run was queued (Unix milliseconds).
    pub created_at_ms: i64,
    /// The run.
    pub id: RunId,
}

impl RunCursor {
    /// The place of `run`.
    pub fn of(run: &Run) -> Self {
        RunCursor {
            created_at_ms: run.created_at_ms,
            id: run.id.clone(),
        }
    }

    /// `s` if it is a cursor as [`Display`](fmt::Display) writes one.
    pub fn parse(s: &str) -> Option<Self> {
        let (at, id) = s.split_once('.')?;
        Some(RunCursor {
            created_at_ms: at.parse().ok().filter(|at: &i64| *at >= 0)?,
            id: RunId::parse(id)?,
        })
    }
}

impl fmt::Display for RunCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.created_at_ms, self.id)
    }
}

/// Which runs [`RunStore::page`](crate::RunStore::page) returns: those of
/// `tenant` matching every filter set, newest first, at most `limit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunQuery {
    /// The tenant (always one: no listing crosses tenants).
    pub tenant: String,
    /// Only this principal's runs (a caller who does not administer the
    /// tenant sees only their own).
    pub principal: Option<String>,
    /// Only runs in this state.
    pub state: Option<RunState>,
    /// Only runs of a tool whose name contains this text, ignoring case.
    pub tool: Option<String>,
    /// Only runs of a plugin whose name contains this text, ignoring case.
    pub plugin: Option<String>,
    /// Only runs older than this place: the next page toward the oldest.
    pub before: Option<RunCursor>,
    /// Only runs newer than this place, the `limit` nearest it: the page
    /// before, toward the newest. Still returned newest first.
    pub after: Option<RunCursor>,
    /// At most this many runs.
    pub limit: u32,
}

impl RunQuery {
    /// The newest `limit` runs of `tenant` (of `principal`, when given),
    /// with no filter.
    pub fn newest(tenant: &str, principal: Option<&str>, limit: u32) -> Self {
        RunQuery {
            tenant: tenant.to_owned(),
            principal: principal.map(str::to_owned),
            state: None,
            tool: None,
            plugin: None,
            before: None,
            after: None,
            limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_as_written_and_nothing_else_reads() {
        let c = RunCursor {
            created_at_ms: 1_764_000_000_000,
            id: RunId::new(),
        };
        assert_eq!(RunCursor::parse(&c.to_string()), Some(c.clone()));
        let id = c.id.as_str();
        for bad in [
            String::new(),
            id.to_owned(),
            "1764000000000".into(),
            format!("-1.{id}"),
            format!("x.{id}"),
            "1764000000000.run_zz".into(),
            format!("1.{id}.2"),
        ] {
            assert_eq!(RunCursor::parse(&bad), None, "{bad:?}");
        }
    }
}
