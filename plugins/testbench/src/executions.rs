//! `get_execution_status` and `summarize_execution`: read an execution the
//! run tools queued. Neither takes names, so neither resolves anything.
//!
//! An execution of a human-step test stops at `WAITING_HUMAN`. Then
//! `get_execution_status` opens (or reads again) the execution's human
//! checkpoint on the host, and once a person decided it there, records the
//! decision on the execution (`POST …/disposition`): so it may write, and
//! is a mutating tool. `summarize_execution` only reads.

use toolhost_sdk::prelude::*;

use crate::api;
use crate::kind::TestKind;
use crate::review::{self, CheckpointRef, WAITING_HUMAN};

/// Arguments of `get_execution_status` and `summarize_execution`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecutionArgs {
    /// The execution's id, as a run tool answered it (`executionId`).
    pub execution_id: String,
    /// What the execution runs, if known; checked against the execution.
    #[serde(default)]
    pub kind: Option<TestKind>,
}

/// An execution's state, as the backend reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Execution {
    /// The execution's id.
    #[serde(rename = "executionId")]
    pub execution_id: String,
    /// What it runs.
    pub kind: TestKind,
    /// The id of the test or pipeline it runs.
    pub target_id: i64,
    /// Its name.
    pub target_name: String,
    /// The environment's id.
    pub environment_id: i64,
    /// The environment's name.
    pub environment: String,
    /// `QUEUED`, `RUNNING`, `WAITING_HUMAN` (a person must review it),
    /// `PASSED`, `FAILED` or `INCONCLUSIVE` (the person could not confirm it).
    pub status: String,
    /// Its steps so far.
    #[serde(default)]
    pub steps: Vec<Step>,
    /// Who decided its human review, once someone did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
}

/// What `get_execution_status` answers: the execution, and its human
/// checkpoint when it waited for one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExecutionStatus {
    /// The execution, as the backend reports it (after recording a
    /// decision, if one was carried).
    #[serde(flatten)]
    pub execution: Execution,
    /// The execution's human checkpoint: present when it waited for a
    /// person (`state` `waiting`), or when this call carried the person's
    /// decision to it (`state` `decided`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<CheckpointRef>,
}

/// One step of an execution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    /// The step's name.
    pub name: String,
    /// Its status.
    pub status: String,
}

/// An execution's outcome in brief.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// The execution's id.
    #[serde(rename = "executionId")]
    pub execution_id: String,
    /// Its status.
    pub status: String,
    /// Steps passed.
    pub passed: u64,
    /// Steps failed.
    pub failed: u64,
    /// One paragraph a person can read.
    pub summary: String,
}

/// `get_execution_status`: the execution; if it waits for a person, its
/// checkpoint too, and the person's decision recorded once there is one.
pub fn status(_ctx: &Ctx, args: ExecutionArgs) -> Result<Output<ExecutionStatus>, ToolError> {
    let execution: Execution = api::execution(checked_id(&args.execution_id)?, "")?;
    check_kind(&execution, args.kind)?;
    if execution.status != WAITING_HUMAN {
        return Ok(Output::new(ExecutionStatus {
            execution,
            checkpoint: None,
        }));
    }
    let info = checkpoint::open(
        &review::subject(&execution),
        &review::title(&execution),
        &review::evidence(&execution),
    )?;
    let Some(disposition) = review::disposition(&info)? else {
        let text = review::waiting_text(&execution, &info);
        return Ok(with_checkpoint(execution, &info).with_text(text));
    };
    let id = &execution.execution_id;
    let decided = match api::dispose(id, &disposition)? {
        Some(decided) => decided,
        // Another call recorded it first: the execution as it is now.
        None => api::execution(id, "")?,
    };
    let text = review::decided_text(&decided, &info);
    Ok(with_checkpoint(decided, &info).with_text(text))
}

fn with_checkpoint(execution: Execution, info: &CheckpointInfo) -> Output<ExecutionStatus> {
    Output::new(ExecutionStatus {
        execution,
        checkpoint: Some(CheckpointRef::from(info)),
    })
}

/// `summarize_execution`. A given `kind` costs one more request (the
/// summary does not say its kind).
pub fn summary(_ctx: &Ctx, args: ExecutionArgs) -> Result<Summary, ToolError> {
    let id = checked_id(&args.execution_id)?;
    if args.kind.is_some() {
        check_kind(&api::execution(id, "")?, args.kind)?;
    }
    api::execution(id, "/summary")
}

fn checked_id(id: &str) -> Result<&str, ToolError> {
    match id.trim() {
        "" => Err(ToolError::InvalidArguments(
            "execution_id must not be blank".into(),
        )),
        id => Ok(id),
    }
}

/// The execution, if it is of the `expected` kind (or none was given).
fn check_kind(execution: &Execution, expected: Option<TestKind>) -> Result<(), ToolError> {
    match expected {
        Some(k) if k != execution.kind => Err(ToolError::InvalidArguments(format!(
            "execution {} is of kind {}, not {}",
            execution.execution_id,
            execution.kind.as_str(),
            k.as_str()
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn execution() -> Execution {
        serde_json::from_str(
            r#"{"executionId":"ex-1","kind":"api_scenario","target_id":204,"target_name":"Login flow",
                "environment_id":12,"environment":"staging","status":"RUNNING",
                "steps":[{"name":"login","status":"PASSED"}]}"#,
        )
        .expect("the backend's shape")
    }

    #[test]
    fn an_execution_relays_with_the_backends_key_names() {
        let v = serde_json::to_value(execution()).expect("JSON");
        assert_eq!(v["executionId"], "ex-1");
        assert_eq!(v["steps"][0]["status"], "PASSED");
    }

    #[test]
    fn a_status_flattens_the_execution_and_adds_the_checkpoint_only_when_there_is_one() {
        let plain = ExecutionStatus {
            execution: execution(),
            checkpoint: None,
        };
        let v = serde_json::to_value(&plain).expect("JSON");
        assert_eq!(v["executionId"], "ex-1");
        assert!(v.get("checkpoint").is_none() && v.get("decided_by").is_none());
        let waiting = ExecutionStatus {
            checkpoint: Some(CheckpointRef {
                checkpoint_id: "chk_1".into(),
                version: 1,
                state: "waiting".into(),
            }),
            ..plain
        };
        let v = serde_json::to_value(&waiting).expect("JSON");
        assert_eq!(
            v["checkpoint"],
            serde_json::json!({"checkpoint_id": "chk_1", "version": 1, "state": "waiting"})
        );
    }

    #[test]
    fn outside_wasm_reading_a_status_fails_instead_of_trapping() {
        let args = ExecutionArgs {
            execution_id: "ex-1".into(),
            kind: None,
        };
        let err = status(&Ctx::new("c1", "demo", "alice"), args).expect_err("no host");
        assert!(matches!(err, ToolError::Failed(_)), "{err:?}");
    }

    #[test]
    fn a_kind_that_does_not_match_the_execution_is_invalid() {
        assert!(check_kind(&execution(), None).is_ok());
        assert!(check_kind(&execution(), Some(TestKind::ApiScenario)).is_ok());
        let err = check_kind(&execution(), Some(TestKind::UiTest)).expect_err("mismatch");
        assert_eq!(
            err,
            ToolError::InvalidArguments(
                "execution ex-1 is of kind api_scenario, not ui_test".into()
            )
        );
    }

    #[test]
    fn a_blank_execution_id_is_invalid() {
        assert!(checked_id(" ").is_err());
        assert_eq!(checked_id(" ex-1 ").expect("an id"), "ex-1");
    }
}
