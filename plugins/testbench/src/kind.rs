//! [`TestKind`]: the three runnable kinds of the test platform and the
//! names each goes by (execution kind, entity kind, API route). Pure.

use toolhost_sdk::prelude::*;

/// What an execution runs. Serialized as the backend's execution `kind`
/// (`api_scenario`, `ui_test`, `pipeline`). Ordered as `run_by_tag` queues:
/// API scenarios before UI tests.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TestKind {
    /// An API scenario.
    ApiScenario,
    /// A UI test.
    UiTest,
    /// A pipeline.
    Pipeline,
}

impl TestKind {
    /// Every kind, in queueing order.
    pub const ALL: [TestKind; 3] = [TestKind::ApiScenario, TestKind::UiTest, TestKind::Pipeline];

    /// The backend's execution kind.
    pub fn as_str(self) -> &'static str {
        match self {
            TestKind::ApiScenario => "api_scenario",
            TestKind::UiTest => "ui_test",
            TestKind::Pipeline => "pipeline",
        }
    }

    /// The entity kind the resolver narrows over (and plan targets carry).
    pub fn entity(self) -> &'static str {
        match self {
            TestKind::ApiScenario => "scenario",
            TestKind::UiTest => "ui_test",
            TestKind::Pipeline => "pipeline",
        }
    }

    /// The kind whose entity kind is `entity`.
    pub fn from_entity(entity: &str) -> Option<TestKind> {
        TestKind::ALL.into_iter().find(|k| k.entity() == entity)
    }

    /// The backend's list route.
    pub fn route(self) -> &'static str {
        match self {
            TestKind::ApiScenario => "/api/scenarios",
            TestKind::UiTest => "/api/ui-tests",
            TestKind::Pipeline => "/api/pipelines",
        }
    }

    /// What a person calls one.
    pub fn noun(self) -> &'static str {
        match self {
            TestKind::ApiScenario => "API scenario",
            TestKind::UiTest => "UI test",
            TestKind::Pipeline => "pipeline",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_round_trips_through_its_entity_kind_and_serializes_as_the_backends_kind() {
        for k in TestKind::ALL {
            assert_eq!(TestKind::from_entity(k.entity()), Some(k));
            assert_eq!(
                serde_json::to_value(k).expect("JSON"),
                serde_json::json!(k.as_str())
            );
        }
        assert_eq!(TestKind::from_entity("project"), None);
    }

    #[test]
    fn api_scenarios_sort_before_ui_tests() {
        assert!(TestKind::ApiScenario < TestKind::UiTest);
    }
}
