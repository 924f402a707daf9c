//! The human review of an execution, pure: what the plugin tells the host's
//! checkpoint about a `WAITING_HUMAN` execution (subject, title, evidence),
//! the disposition a decided checkpoint asks the backend to record, and the
//! texts `get_execution_status` answers with.
//!
//! The host owns the checkpoint and its decision; the backend owns the
//! execution. This room only translates between the two:
//!
//! | checkpoint outcome | disposition `outcome` sent | execution then |
//! |--------------------|----------------------------|----------------|
//! | none (waiting)     | nothing is sent            | `WAITING_HUMAN`|
//! | `passed`           | `passed`                   | `PASSED`       |
//! | `inconclusive`     | `inconclusive`             | `INCONCLUSIVE` |

use toolhost_sdk::prelude::*;

use crate::executions::Execution;

/// The backend's status of an execution waiting for a person.
pub const WAITING_HUMAN: &str = "WAITING_HUMAN";

/// What `get_execution_status` adds about an execution's checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckpointRef {
    /// The host's checkpoint id (`chk_…`), for `decide_checkpoint`.
    pub checkpoint_id: String,
    /// Its version, for `decide_checkpoint`'s `expected_version`.
    pub version: u32,
    /// `waiting` or `decided`.
    pub state: String,
}

impl From<&CheckpointInfo> for CheckpointRef {
    fn from(c: &CheckpointInfo) -> Self {
        CheckpointRef {
            checkpoint_id: c.id.clone(),
            version: c.version,
            state: c.state.clone(),
        }
    }
}

/// The body of `POST /api/executions/{id}/disposition`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Disposition {
    /// `passed` or `inconclusive`.
    pub outcome: &'static str,
    /// Who decided, as far as the plugin knows: the checkpoint (the host
    /// does not tell plugins which person decided it).
    pub decided_by: String,
}

/// The checkpoint's subject: one per execution.
pub fn subject(ex: &Execution) -> String {
    format!("execution:{}", ex.execution_id)
}

/// One line for the person: what waits, and where.
pub fn title(ex: &Execution) -> String {
    format!(
        "{} {:?} in {} needs a person's review",
        ex.kind.noun(),
        ex.target_name,
        ex.environment
    )
}

/// One short paragraph: the target, the environment and every step.
pub fn evidence(ex: &Execution) -> String {
    let steps: Vec<String> = (ex.steps.iter())
        .map(|s| format!("{} {}", s.name, s.status))
        .collect();
    format!(
        "{} {:?} (id {}) ran as execution {} in {} (environment {}). Steps: {}.",
        ex.kind.noun(),
        ex.target_name,
        ex.target_id,
        ex.execution_id,
        ex.environment,
        ex.environment_id,
        match steps.is_empty() {
            true => "none reported".to_owned(),
            false => steps.join("; "),
        }
    )
}

/// What to ask the backend to record for a checkpoint: nothing while it
/// waits; its outcome once decided. An outcome the backend does not know
/// is [`ToolError::Failed`] (the host broke its contract: nothing is sent).
pub fn disposition(info: &CheckpointInfo) -> Result<Option<Disposition>, ToolError> {
    let outcome = match info.outcome.as_deref() {
        None => return Ok(None),
        Some("passed") => "passed",
        Some("inconclusive") => "inconclusive",
        Some(other) => {
            return Err(ToolError::Failed(format!(
                "checkpoint {} records outcome {other:?}, which is not passed or inconclusive",
                info.id
            )));
        }
    };
    Ok(Some(Disposition {
        outcome,
        decided_by: format!("checkpoint {}", info.id),
    }))
}

/// The text of an execution still waiting: how a person decides it.
pub fn waiting_text(ex: &Execution, info: &CheckpointInfo) -> String {
    format!(
        "Execution {} ({} {:?} in {}) is {WAITING_HUMAN}: a person must review it. \
         Decide checkpoint {} with decide_checkpoint (expected_version {}): confirm records PASSED, \
         false_positive or inconclusive record INCONCLUSIVE. Then read this execution's status again.",
        ex.execution_id,
        ex.kind.noun(),
        ex.target_name,
        ex.environment,
        info.id,
        info.version
    )
}

/// The text of an execution whose checkpoint was decided and carried.
pub fn decided_text(ex: &Execution, info: &CheckpointInfo) -> String {
    format!(
        "Execution {} ({} {:?} in {}) is {}: checkpoint {} was decided {}.",
        ex.execution_id,
        ex.kind.noun(),
        ex.target_name,
        ex.environment,
        ex.status,
        info.id,
        info.disposition.as_deref().unwrap_or("by a person")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting() -> Execution {
        serde_json::from_str(
            r#"{"executionId":"ex-3","kind":"api_scenario","target_id":207,
                "target_name":"Checkout manual review","environment_id":12,"environment":"staging",
                "status":"WAITING_HUMAN","steps":[
                  {"name":"prepare staging","status":"PASSED"},
                  {"name":"run Checkout manual review","status":"PASSED"},
                  {"name":"human review","status":"WAITING_HUMAN"}]}"#,
        )
        .expect("the backend's shape")
    }

    fn info(outcome: Option<&str>) -> CheckpointInfo {
        CheckpointInfo {
            id: "chk_1".into(),
            version: if outcome.is_some() { 2 } else { 1 },
            state: if outcome.is_some() {
                "decided"
            } else {
                "waiting"
            }
            .into(),
            disposition: outcome.map(|o| if o == "passed" { "confirm" } else { o }.into()),
            outcome: outcome.map(str::to_owned),
        }
    }

    #[test]
    fn the_checkpoint_names_the_execution_and_says_what_waits_where() {
        let ex = waiting();
        assert_eq!(subject(&ex), "execution:ex-3");
        assert_eq!(
            title(&ex),
            r#"API scenario "Checkout manual review" in staging needs a person's review"#
        );
    }

    #[test]
    fn the_evidence_is_one_paragraph_with_target_environment_and_steps() {
        let text = evidence(&waiting());
        assert_eq!(
            text,
            "API scenario \"Checkout manual review\" (id 207) ran as execution ex-3 in staging \
             (environment 12). Steps: prepare staging PASSED; run Checkout manual review PASSED; \
             human review WAITING_HUMAN."
        );
        assert!(!text.contains('\n'));
        let bare = Execution {
            steps: vec![],
            ..waiting()
        };
        assert!(evidence(&bare).ends_with("Steps: none reported."));
    }

    #[test]
    fn each_outcome_maps_to_its_disposition_and_a_waiting_checkpoint_to_none() {
        assert_eq!(disposition(&info(None)), Ok(None));
        for outcome in ["passed", "inconclusive"] {
            let d = disposition(&info(Some(outcome))).expect("known");
            assert_eq!(
                d,
                Some(Disposition {
                    outcome,
                    decided_by: "checkpoint chk_1".into()
                })
            );
        }
        let body = serde_json::to_value(disposition(&info(Some("passed"))).expect("known"));
        assert_eq!(
            body.expect("JSON"),
            serde_json::json!({"outcome": "passed", "decided_by": "checkpoint chk_1"})
        );
        let err = disposition(&info(Some("failed"))).expect_err("unknown outcome");
        assert!(
            matches!(&err, ToolError::Failed(m) if m.contains("\"failed\"")),
            "{err:?}"
        );
    }

    #[test]
    fn the_waiting_text_tells_the_person_how_to_decide_it() {
        let text = waiting_text(&waiting(), &info(None));
        for part in [
            "ex-3",
            "WAITING_HUMAN",
            "decide_checkpoint",
            "chk_1",
            "expected_version 1",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
        let reference = CheckpointRef::from(&info(None));
        assert_eq!(
            serde_json::to_value(reference).expect("JSON"),
            serde_json::json!({"checkpoint_id": "chk_1", "version": 1, "state": "waiting"})
        );
    }

    #[test]
    fn the_decided_text_says_the_new_status_and_the_disposition() {
        let ex = Execution {
            status: "INCONCLUSIVE".into(),
            ..waiting()
        };
        assert_eq!(
            decided_text(&ex, &info(Some("inconclusive"))),
            "Execution ex-3 (API scenario \"Checkout manual review\" in staging) is INCONCLUSIVE: \
             checkpoint chk_1 was decided inconclusive."
        );
    }
}
