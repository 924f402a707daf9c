//! A run's states.

/// Where a run is. Stored as the lowercase name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunState {
    /// Waiting for a worker.
    Queued,
    /// A worker holds its lease and runs it.
    Running,
    /// Running, and someone asked for it to stop: its worker interrupts
    /// the guest at the next epoch tick and settles it `cancelled`.
    Cancelling,
    /// The tool answered.
    Succeeded,
    /// The tool failed, broke a bound, or the host gave up on it.
    Failed,
    /// Stopped on request (before or while running).
    Cancelled,
    /// Its guest asked its client for input that has no answer yet: no
    /// worker holds it; once every request is answered it is queued again
    /// (a cancel settles it `cancelled` at once, as a queued run).
    InputRequired,
    /// Its time budget ran out.
    TimedOut,
}

impl RunState {
    const ALL: [RunState; 8] = [
        RunState::Queued,
        RunState::Running,
        RunState::Cancelling,
        RunState::Succeeded,
        RunState::Failed,
        RunState::Cancelled,
        RunState::TimedOut,
        RunState::InputRequired,
    ];

    /// Every state's stored name, in lifecycle order: the choices of a
    /// listing's `state` filter.
    pub const NAMES: [&'static str; 8] = [
        RunState::Queued.as_str(),
        RunState::Running.as_str(),
        RunState::Cancelling.as_str(),
        RunState::InputRequired.as_str(),
        RunState::Succeeded.as_str(),
        RunState::Failed.as_str(),
        RunState::Cancelled.as_str(),
        RunState::TimedOut.as_str(),
    ];

    /// The stored name, e.g. `timed_out`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            RunState::Queued => "queued",
            RunState::Running => "running",
            RunState::Cancelling => "cancelling",
            RunState::Succeeded => "succeeded",
            RunState::Failed => "failed",
            RunState::Cancelled => "cancelled",
            RunState::TimedOut => "timed_out",
            RunState::InputRequired => "input_required",
        }
    }

    /// The state named `s`.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Whether the run is over: terminal states never change again.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            RunState::Succeeded | RunState::Failed | RunState::Cancelled | RunState::TimedOut
        )
    }
}

impl std::fmt::Display for RunState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_parses_back_and_four_are_terminal() {
        for s in RunState::ALL {
            assert_eq!(RunState::parse(s.as_str()), Some(s));
        }
        let terminal = RunState::ALL.iter().filter(|s| s.is_terminal()).count();
        assert_eq!(terminal, 4);
        assert_eq!(RunState::parse("done"), None);
    }
}
