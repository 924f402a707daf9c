//! `get_execution_status` and `summarize_execution`: read an execution the
//! run tools queued. Neither takes names, so neither resolves anything.

use toolhost_sdk::prelude::*;

use crate::api;
use crate::kind::TestKind;

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
    /// `QUEUED`, `RUNNING`, `PASSED` or `FAILED`.
    pub status: String,
    /// Its steps so far.
    #[serde(default)]
    pub steps: Vec<Step>,
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

/// `get_execution_status`.
pub fn status(_ctx: &Ctx, args: ExecutionArgs) -> Result<Execution, ToolError> {
    let execution: Execution = api::execution(checked_id(&args.execution_id)?, "")?;
    check_kind(&execution, args.kind)?;
    Ok(execution)
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
