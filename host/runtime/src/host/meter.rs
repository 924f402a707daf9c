//! The host-call budget shared by every capability of one call.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::Breach;

/// Counts down the host calls one call may still make.
#[derive(Debug, Clone)]
pub(crate) struct HostCallMeter {
    left: Arc<AtomicU32>,
    limit: u32,
}

impl HostCallMeter {
    pub(crate) fn new(limit: u32) -> Self {
        Self {
            left: Arc::new(AtomicU32::new(limit)),
            limit,
        }
    }

    /// Charges one host call; past the budget the call must trap.
    pub(crate) fn charge(&self) -> Result<(), Breach> {
        self.left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .map(|_| ())
            .map_err(|_| Breach::HostCalls { limit: self.limit })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_meter_refuses_the_call_after_the_last_one_allowed() {
        let m = HostCallMeter::new(2);
        assert!(m.charge().is_ok() && m.clone().charge().is_ok());
        assert_eq!(m.charge(), Err(Breach::HostCalls { limit: 2 }));
    }
}
