//! A page of a tenant's gates, newest first, from a keyset cursor: the
//! listing's filters go to the store, which walks its index from the
//! cursor instead of reading the newest gates and filtering them.

use std::fmt;
use std::str::FromStr;

use crate::{Gate, GateState};

/// A gate's place in its tenant's list, newest first: when it opened,
/// then its id. Written `created_at.id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateCursor {
    /// Its `created_at` (unix milliseconds).
    pub created_at: i64,
    /// Its id.
    pub id: String,
}

impl GateCursor {
    /// `gate`'s place.
    pub fn of(gate: &Gate) -> GateCursor {
        GateCursor {
            created_at: gate.opened.created_at,
            id: gate.id().as_str().to_owned(),
        }
    }
}

impl fmt::Display for GateCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.created_at, self.id)
    }
}

impl FromStr for GateCursor {
    type Err = String;

    fn from_str(s: &str) -> Result<GateCursor, String> {
        let bad = || format!("{s:?} is not a cursor a listing answered");
        let (at, id) = s.split_once('.').ok_or_else(bad)?;
        let created_at = at.parse().map_err(|_| bad())?;
        if !id.starts_with("gate_") {
            return Err(bad());
        }
        Ok(GateCursor {
            created_at,
            id: id.to_owned(),
        })
    }
}

/// Which gates of a tenant, newest first.
#[derive(Debug, Clone, Copy)]
pub struct GateQuery<'a> {
    /// In these states (every state if empty).
    pub states: &'a [GateState],
    /// Of this tool only.
    pub tool: Option<&'a str>,
    /// Older than this place (the last gate of the page before).
    pub before: Option<&'a GateCursor>,
    /// At most this many.
    pub limit: u32,
}

#[cfg(test)]
mod tests {
    use super::GateCursor;

    #[test]
    fn a_cursor_reads_back_as_written_and_nothing_else_reads() {
        let c = GateCursor {
            created_at: 1_764_000_000_000,
            id: "gate_00ff".into(),
        };
        assert_eq!(c.to_string().parse::<GateCursor>(), Ok(c));
        for bad in ["", "12", "x.gate_1", "12.svc", "12."] {
            assert!(bad.parse::<GateCursor>().is_err(), "{bad:?}");
        }
    }
}
