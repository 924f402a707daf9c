//! Identities minted by the host.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Identifies one call across logs, metrics and the audit trail.
///
/// Unique within a host process and, with overwhelming likelihood, across
/// restarts: the process start time (ns) is mixed with a counter.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallId(u128);

static COUNTER: AtomicU64 = AtomicU64::new(0);

impl CallId {
    /// A new id, never equal to an earlier one of this process.
    pub fn new() -> Self {
        let start = START.get_or_init(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or_default()
        });
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        Self((u128::from(*start) << 64) | u128::from(n))
    }
}

static START: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

impl Default for CallId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl fmt::Debug for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CallId({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_ids_are_distinct() {
        let a = CallId::new();
        let b = CallId::new();
        assert_ne!(a, b);
        assert_eq!(a.to_string().len(), 32);
    }
}
