//! A page of sessions, newest first, found by keyset: where a page starts
//! is the last session of the one before (its creation time and id), never
//! an offset, so a page costs the same however deep it is and a session
//! opened meanwhile moves no row to another page.

use std::fmt;
use std::str::FromStr;

use crate::SessionId;

/// A session's place in the newest-first order: its creation time, then
/// its id. Written `CREATED_AT_MS.ID` as a cursor a client passes back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionKey {
    /// Unix milliseconds of its creation.
    pub created_at_ms: i64,
    /// Its id, which orders sessions created in the same millisecond.
    pub id: SessionId,
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.created_at_ms, self.id)
    }
}

impl FromStr for SessionKey {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("{s:?} is not a cursor this host gave");
        let (at, id) = s.split_once('.').ok_or_else(bad)?;
        Ok(SessionKey {
            created_at_ms: at.parse().map_err(|_| bad())?,
            id: SessionId::parse(id).ok_or_else(bad)?,
        })
    }
}

/// Where a page of sessions starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SessionsFrom {
    /// The newest sessions.
    #[default]
    Newest,
    /// The sessions just older than this one.
    OlderThan(SessionKey),
    /// The sessions just newer than this one (the page before).
    NewerThan(SessionKey),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_as_the_key_it_was_written_from() {
        let key = SessionKey {
            created_at_ms: 1_764_000_000_000,
            id: SessionId::new(),
        };
        assert_eq!(key.to_string().parse::<SessionKey>(), Ok(key));
        for bad in ["", "12", "x.ws_1", "12.nope", "12.", ".ws_1"] {
            assert!(bad.parse::<SessionKey>().is_err(), "{bad:?}");
        }
    }
}
