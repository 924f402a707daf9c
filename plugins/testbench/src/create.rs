//! `create_api_scenario`: a new API scenario in a project, and its plan.

use toolhost_sdk::prelude::*;

use crate::api::{self, TestRow};
use crate::listing::resolve_project;

/// Arguments of `create_api_scenario`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateScenarioArgs {
    /// The project to create it in, by name or id. Required: when omitted,
    /// ambiguous or unknown, the answer is a question listing the projects.
    #[serde(default)]
    pub project: Option<NameOrId>,
    /// The new scenario's name.
    pub name: String,
    /// Its tags (default: none).
    #[serde(default)]
    pub tags: Vec<String>,
}

/// Creates the scenario; answers the backend's new row.
pub fn create(_ctx: &Ctx, args: CreateScenarioArgs) -> Result<TestRow, ToolError> {
    let name = checked_name(&args.name)?;
    let project = resolve_project(args.project)?;
    api::create_scenario(project.id, name, &args.tags)
}

/// Names the project the scenario would be created in; asks the backend
/// nothing (the project's name is the resolver's).
pub fn plan(_ctx: &Ctx, args: &CreateScenarioArgs) -> Result<Plan, ToolError> {
    let name = checked_name(&args.name)?;
    let project = resolve_project(args.project.clone())?;
    let summary = format!("Create API scenario {name:?} in project {}", project.name);
    let target = Target::new("project", project.id.to_string(), project.name);
    Ok(Plan::new(Risk::Medium, summary).target(target))
}

/// The name, trimmed; a blank one is invalid.
fn checked_name(name: &str) -> Result<&str, ToolError> {
    match name.trim() {
        "" => Err(ToolError::InvalidArguments("name must not be blank".into())),
        name => Ok(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blank_name_is_invalid_and_others_are_trimmed() {
        assert!(matches!(
            checked_name("  "),
            Err(ToolError::InvalidArguments(_))
        ));
        assert_eq!(checked_name(" Cart ").expect("a name"), "Cart");
    }

    #[test]
    fn tags_default_to_none_and_the_project_may_be_an_id() {
        let a: CreateScenarioArgs =
            serde_json::from_str(r#"{"project": 1, "name": "Cart"}"#).expect("fits");
        assert_eq!((a.project, a.tags.len()), (Some(NameOrId::Id(1)), 0));
    }
}
