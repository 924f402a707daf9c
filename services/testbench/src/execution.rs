//! Executions: what `POST /api/executions` starts, and how its status moves
//! `QUEUED → RUNNING → PASSED | FAILED`.
//!
//! Pure: the clock is an argument, so the state machine is tested without
//! sleeping. Where executions are kept, and whose they are, is
//! [`crate::store`]'s business.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::seed::Outcome;

/// How an execution's status moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advance {
    /// Each `GET /api/executions/{id}` moves it one step, then answers: the
    /// first read says `RUNNING`, the second the outcome. Deterministic, for
    /// tests. The summary route never moves it.
    OnRead,
    /// One step per interval since creation, computed on read; for demos.
    /// A zero interval finishes executions at once.
    Every(Duration),
}

/// What an execution runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A scenario from `/api/scenarios`.
    ApiScenario,
    /// A UI test from `/api/ui-tests`.
    UiTest,
    /// A pipeline from `/api/pipelines`.
    Pipeline,
}

/// An execution's status, upper case on the wire as in the contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    /// Created, nothing ran yet.
    Queued,
    /// The environment is ready; the target runs.
    Running,
    /// Finished, the target passed.
    Passed,
    /// Finished, the target failed.
    Failed,
}

/// The status of one step of an execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
enum StepStatus {
    Pending,
    Running,
    Passed,
    Failed,
}

/// The last step index: 0 queued, 1 running, 2 finished.
const FINISHED: u32 = 2;

/// One execution, resolved by name when it was created so later reads need
/// not look anything up (the seed may be replaced meanwhile).
#[derive(Clone, Debug)]
pub(crate) struct Execution {
    pub(crate) id: String,
    pub(crate) tenant: String,
    pub(crate) kind: Kind,
    pub(crate) target_id: u64,
    pub(crate) target_name: String,
    pub(crate) environment_id: u64,
    pub(crate) environment: String,
    pub(crate) outcome: Outcome,
    pub(crate) created: Instant,
    /// Steps taken by reads, under [`Advance::OnRead`].
    pub(crate) reads: u32,
}

/// The answer to `POST /api/executions`.
#[derive(Serialize)]
pub(crate) struct Created<'a> {
    #[serde(rename = "executionId")]
    id: &'a str,
    kind: Kind,
    target_id: u64,
    target_name: &'a str,
    environment_id: u64,
    status: Status,
}

/// The answer to `GET /api/executions/{id}`.
#[derive(Serialize)]
pub(crate) struct Details<'a> {
    #[serde(rename = "executionId")]
    id: &'a str,
    kind: Kind,
    target_id: u64,
    target_name: &'a str,
    environment_id: u64,
    environment: &'a str,
    status: Status,
    steps: [Step; 2],
}

#[derive(Serialize)]
struct Step {
    name: String,
    status: StepStatus,
}

/// The answer to `GET /api/executions/{id}/summary`.
#[derive(Serialize)]
pub(crate) struct Summary<'a> {
    #[serde(rename = "executionId")]
    id: &'a str,
    status: Status,
    passed: usize,
    failed: usize,
    summary: String,
}

impl Execution {
    /// The status now, moving one step first under [`Advance::OnRead`].
    pub(crate) fn read(&mut self, advance: Advance, now: Instant) -> Status {
        if advance == Advance::OnRead {
            self.reads = (self.reads + 1).min(FINISHED);
        }
        self.status(advance, now)
    }

    /// The status now, without moving it.
    pub(crate) fn status(&self, advance: Advance, now: Instant) -> Status {
        match (self.step(advance, now), self.outcome) {
            (0, _) => Status::Queued,
            (1, _) => Status::Running,
            (_, Outcome::Passed) => Status::Passed,
            (_, Outcome::Failed) => Status::Failed,
        }
    }

    fn step(&self, advance: Advance, now: Instant) -> u32 {
        let taken = match advance {
            Advance::OnRead => u128::from(self.reads),
            Advance::Every(d) if d.is_zero() => u128::from(FINISHED),
            Advance::Every(d) => {
                now.saturating_duration_since(self.created).as_nanos() / d.as_nanos()
            }
        };
        u32::try_from(taken.min(u128::from(FINISHED))).unwrap_or(FINISHED)
    }

    pub(crate) fn created(&self) -> Created<'_> {
        Created {
            id: &self.id,
            kind: self.kind,
            target_id: self.target_id,
            target_name: &self.target_name,
            environment_id: self.environment_id,
            status: Status::Queued,
        }
    }

    pub(crate) fn details(&self, status: Status) -> Details<'_> {
        Details {
            id: &self.id,
            kind: self.kind,
            target_id: self.target_id,
            target_name: &self.target_name,
            environment_id: self.environment_id,
            environment: &self.environment,
            status,
            steps: self.steps(status),
        }
    }

    pub(crate) fn summary(&self, status: Status) -> Summary<'_> {
        let steps = self.steps(status);
        let count = |s| steps.iter().filter(|step| step.status == s).count();
        let (passed, failed) = (count(StepStatus::Passed), count(StepStatus::Failed));
        let summary = format!(
            "{} {:?} in {}: {} ({passed} of {} steps passed, {failed} failed)",
            kind_label(self.kind),
            self.target_name,
            self.environment,
            status_label(status),
            steps.len(),
        );
        Summary {
            id: &self.id,
            status,
            passed,
            failed,
            summary,
        }
    }

    /// Two steps: preparing the environment, then running the target.
    fn steps(&self, status: Status) -> [Step; 2] {
        use StepStatus as S;
        let (prepare, run) = match status {
            Status::Queued => (S::Pending, S::Pending),
            Status::Running => (S::Passed, S::Running),
            Status::Passed => (S::Passed, S::Passed),
            Status::Failed => (S::Passed, S::Failed),
        };
        [
            Step {
                name: format!("prepare {}", self.environment),
                status: prepare,
            },
            Step {
                name: format!("run {}", self.target_name),
                status: run,
            },
        ]
    }
}

fn kind_label(kind: Kind) -> &'static str {
    match kind {
        Kind::ApiScenario => "API scenario",
        Kind::UiTest => "UI test",
        Kind::Pipeline => "pipeline",
    }
}

fn status_label(status: Status) -> &'static str {
    match status {
        Status::Queued => "QUEUED",
        Status::Running => "RUNNING",
        Status::Passed => "PASSED",
        Status::Failed => "FAILED",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn execution(outcome: Outcome, created: Instant) -> Execution {
        Execution {
            id: "ex-1".into(),
            tenant: "demo".into(),
            kind: Kind::ApiScenario,
            target_id: 205,
            target_name: "Cart".into(),
            environment_id: 12,
            environment: "staging".into(),
            outcome,
            created,
            reads: 0,
        }
    }

    #[test]
    fn on_read_each_read_moves_one_step_and_stops_at_the_outcome() {
        let now = Instant::now();
        let mut ex = execution(Outcome::Failed, now);
        assert_eq!(ex.status(Advance::OnRead, now), Status::Queued);
        let reads: Vec<Status> = (0..3).map(|_| ex.read(Advance::OnRead, now)).collect();
        assert_eq!(reads, [Status::Running, Status::Failed, Status::Failed]);
    }

    #[test]
    fn every_interval_moves_with_elapsed_time_not_with_reads() {
        let start = Instant::now();
        let mut ex = execution(Outcome::Passed, start);
        let every = Advance::Every(Duration::from_secs(2));
        assert_eq!(
            ex.read(every, start + Duration::from_secs(1)),
            Status::Queued
        );
        assert_eq!(
            ex.read(every, start + Duration::from_secs(1)),
            Status::Queued
        );
        assert_eq!(
            ex.read(every, start + Duration::from_secs(3)),
            Status::Running
        );
        assert_eq!(
            ex.read(every, start + Duration::from_secs(60)),
            Status::Passed
        );
        assert_eq!(
            ex.status(Advance::Every(Duration::ZERO), start),
            Status::Passed
        );
    }

    #[test]
    fn a_summary_counts_steps_and_fits_on_one_line() {
        let ex = execution(Outcome::Failed, Instant::now());
        let s = ex.summary(Status::Failed);
        assert_eq!((s.passed, s.failed), (1, 1));
        assert_eq!(
            s.summary,
            r#"API scenario "Cart" in staging: FAILED (1 of 2 steps passed, 1 failed)"#
        );
    }
}
