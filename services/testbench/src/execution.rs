//! Executions: what `POST /api/executions` starts, and how its status moves
//! `QUEUED → RUNNING → PASSED | FAILED`; for a test with a human step,
//! `QUEUED → RUNNING → WAITING_HUMAN`, where it stays until a person's
//! disposition (`POST /api/executions/{id}/disposition`) makes it `PASSED`
//! or `INCONCLUSIVE`. A human-step test whose run fails ends `FAILED`: there
//! is nothing for a person to review.
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
    /// first read says `RUNNING`, the second the outcome (or
    /// `WAITING_HUMAN`). Deterministic, for tests. The summary route never
    /// moves it.
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
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// Created, nothing ran yet.
    Queued,
    /// The environment is ready; the target runs.
    Running,
    /// The target ran; a person must review it (a human-step test). Stays
    /// so until a disposition arrives, in both advance modes.
    WaitingHuman,
    /// Finished, the target passed (and its review, if any, confirmed it).
    Passed,
    /// Finished, the target failed.
    Failed,
    /// Finished: the person reviewing it could not confirm it.
    Inconclusive,
}

/// The status of one step of an execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
enum StepStatus {
    Pending,
    Running,
    WaitingHuman,
    Passed,
    Failed,
    Inconclusive,
    /// The human review of a run that failed: nothing to review.
    Skipped,
}

/// What a person decided, as `POST /api/executions/{id}/disposition`
/// carries it: `passed` or `inconclusive` (anything else is a 400).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Reviewed {
    /// The person confirmed the run.
    Passed,
    /// The person could not confirm it, or found it a false positive.
    Inconclusive,
}

impl Reviewed {
    fn status(self) -> Status {
        match self {
            Reviewed::Passed => Status::Passed,
            Reviewed::Inconclusive => Status::Inconclusive,
        }
    }
}

/// A person's review of a human-step execution, once given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Review {
    pub(crate) outcome: Reviewed,
    /// Who decided, as the caller named them (free text, checked for length).
    pub(crate) decided_by: String,
}

/// A disposition for an execution that is not `WAITING_HUMAN` (not yet,
/// never, or already decided).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct NotWaiting;

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
    /// Whether a person reviews a passed run before it finishes.
    pub(crate) human_step: bool,
    /// That review, once a disposition arrived.
    pub(crate) review: Option<Review>,
    pub(crate) created: Instant,
    /// Steps taken by reads, under [`Advance::OnRead`].
    pub(crate) reads: u32,
}

/// What an execution runs and where: the fields its answers open with.
#[derive(Serialize)]
pub(crate) struct Run<'a> {
    #[serde(rename = "executionId")]
    id: &'a str,
    kind: Kind,
    target_id: u64,
    target_name: &'a str,
    environment_id: u64,
}

/// The answer to `POST /api/executions`.
#[derive(Serialize)]
pub(crate) struct Created<'a> {
    #[serde(flatten)]
    run: Run<'a>,
    status: Status,
}

/// The answer to `GET /api/executions/{id}`.
#[derive(Serialize)]
pub(crate) struct Details<'a> {
    #[serde(flatten)]
    run: Run<'a>,
    environment: &'a str,
    status: Status,
    steps: Vec<Step>,
    /// Who decided its human review; absent until someone did.
    #[serde(skip_serializing_if = "Option::is_none")]
    decided_by: Option<&'a str>,
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
            (_, Outcome::Failed) => Status::Failed,
            (_, Outcome::Passed) if !self.human_step => Status::Passed,
            (_, Outcome::Passed) => self
                .review
                .as_ref()
                .map_or(Status::WaitingHuman, |r| r.outcome.status()),
        }
    }

    /// Records `review` if the execution is `WAITING_HUMAN` now, and
    /// answers its new status. Never moves it otherwise: a review cannot
    /// come early, and a decided one cannot be replaced.
    pub(crate) fn decide(
        &mut self,
        review: Review,
        advance: Advance,
        now: Instant,
    ) -> Result<Status, NotWaiting> {
        if self.status(advance, now) != Status::WaitingHuman {
            return Err(NotWaiting);
        }
        self.review = Some(review);
        Ok(self.status(advance, now))
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
            run: self.run(),
            status: Status::Queued,
        }
    }

    pub(crate) fn details(&self, status: Status) -> Details<'_> {
        Details {
            run: self.run(),
            environment: &self.environment,
            status,
            steps: self.steps(status),
            decided_by: self.review.as_ref().map(|r| r.decided_by.as_str()),
        }
    }

    fn run(&self) -> Run<'_> {
        Run {
            id: &self.id,
            kind: self.kind,
            target_id: self.target_id,
            target_name: &self.target_name,
            environment_id: self.environment_id,
        }
    }

    pub(crate) fn summary(&self, status: Status) -> Summary<'_> {
        let steps = self.steps(status);
        let count = |s| steps.iter().filter(|step| step.status == s).count();
        let (passed, failed) = (count(StepStatus::Passed), count(StepStatus::Failed));
        let review = match (&self.review, status) {
            (Some(r), _) => format!("; reviewed by {}", r.decided_by),
            (None, Status::WaitingHuman) => "; waiting for a person's review".to_owned(),
            (None, _) => String::new(),
        };
        let summary = format!(
            "{} {:?} in {}: {} ({passed} of {} steps passed, {failed} failed{review})",
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

    /// Preparing the environment, running the target, and for a human-step
    /// test a third step, `human review`.
    fn steps(&self, status: Status) -> Vec<Step> {
        use StepStatus as S;
        let (prepare, run, review) = match status {
            Status::Queued => (S::Pending, S::Pending, S::Pending),
            Status::Running => (S::Passed, S::Running, S::Pending),
            Status::WaitingHuman => (S::Passed, S::Passed, S::WaitingHuman),
            Status::Passed => (S::Passed, S::Passed, S::Passed),
            Status::Failed => (S::Passed, S::Failed, S::Skipped),
            Status::Inconclusive => (S::Passed, S::Passed, S::Inconclusive),
        };
        let step = |name: String, status| Step { name, status };
        let mut steps = vec![
            step(format!("prepare {}", self.environment), prepare),
            step(format!("run {}", self.target_name), run),
        ];
        if self.human_step {
            steps.push(step("human review".to_owned(), review));
        }
        steps
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
        Status::WaitingHuman => "WAITING_HUMAN",
        Status::Passed => "PASSED",
        Status::Failed => "FAILED",
        Status::Inconclusive => "INCONCLUSIVE",
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
            human_step: false,
            review: None,
            created,
            reads: 0,
        }
    }

    fn review(outcome: Reviewed) -> Review {
        Review {
            outcome,
            decided_by: "checkpoint chk_1".into(),
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
        let reads = [
            (1, Status::Queued),
            (1, Status::Queued),
            (3, Status::Running),
            (60, Status::Passed),
        ];
        for (secs, want) in reads {
            let read = ex.read(every, start + Duration::from_secs(secs));
            assert_eq!(read, want, "a read at {secs} s");
        }
        assert_eq!(
            ex.status(Advance::Every(Duration::ZERO), start),
            Status::Passed
        );
    }

    #[test]
    fn a_human_step_waits_for_a_review_in_both_advance_modes() {
        let start = Instant::now();
        for advance in [Advance::OnRead, Advance::Every(Duration::from_secs(2))] {
            let mut ex = execution(Outcome::Passed, start);
            ex.human_step = true;
            let later = |secs| start + Duration::from_secs(secs);
            let seen: Vec<Status> = [1, 3, 60, 3600]
                .into_iter()
                .map(|s| ex.read(advance, later(s)))
                .collect();
            let want = match advance {
                Advance::OnRead => [Status::Running, Status::WaitingHuman],
                Advance::Every(_) => [Status::Queued, Status::Running],
            };
            assert_eq!(seen[..2], want, "{advance:?}");
            assert_eq!(seen[2..], [Status::WaitingHuman; 2], "{advance:?}");
        }
    }

    #[test]
    fn a_review_finishes_a_waiting_execution_once_and_only_then() {
        let now = Instant::now();
        let mut ex = execution(Outcome::Passed, now);
        ex.human_step = true;
        let early = ex.decide(review(Reviewed::Passed), Advance::OnRead, now);
        assert_eq!(early, Err(NotWaiting), "still queued");
        ex.read(Advance::OnRead, now);
        ex.read(Advance::OnRead, now);
        let decided = ex.decide(review(Reviewed::Inconclusive), Advance::OnRead, now);
        assert_eq!(decided, Ok(Status::Inconclusive));
        let again = ex.decide(review(Reviewed::Passed), Advance::OnRead, now);
        assert_eq!(again, Err(NotWaiting), "a decided review stays");
        assert_eq!(ex.read(Advance::OnRead, now), Status::Inconclusive);
    }

    #[test]
    fn a_failed_human_step_run_ends_failed_with_its_review_skipped() {
        let mut ex = execution(Outcome::Failed, Instant::now());
        ex.human_step = true;
        let zero = Advance::Every(Duration::ZERO);
        assert_eq!(ex.status(zero, Instant::now()), Status::Failed);
        assert_eq!(
            ex.decide(review(Reviewed::Passed), zero, Instant::now()),
            Err(NotWaiting)
        );
        let steps = serde_json::to_value(ex.details(Status::Failed).steps).expect("JSON");
        assert_eq!(
            steps[2],
            serde_json::json!({"name": "human review", "status": "SKIPPED"})
        );
    }

    #[test]
    fn a_summary_says_who_reviewed_or_that_a_review_is_awaited() {
        let mut ex = execution(Outcome::Passed, Instant::now());
        ex.human_step = true;
        assert_eq!(
            ex.summary(Status::WaitingHuman).summary,
            r#"API scenario "Cart" in staging: WAITING_HUMAN (2 of 3 steps passed, 0 failed; waiting for a person's review)"#
        );
        ex.review = Some(review(Reviewed::Passed));
        let s = ex.summary(Status::Passed);
        assert_eq!((s.passed, s.failed), (3, 0));
        assert_eq!(
            s.summary,
            r#"API scenario "Cart" in staging: PASSED (3 of 3 steps passed, 0 failed; reviewed by checkpoint chk_1)"#
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
