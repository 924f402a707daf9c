//! The read tools that list a project's things: applications,
//! environments, API scenarios, UI tests and pipelines. Each resolves its
//! `project` with the host's default question, then answers with the
//! project's name (the resolver's) and the caller's rows (one GET).

use toolhost_sdk::prelude::*;

use crate::api::{self, TestRow};
use crate::kind::TestKind;

/// Arguments of the tools that list one project's things.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectArgs {
    /// The project, by name or id. Required: when omitted, ambiguous or
    /// unknown, the answer is a question listing the projects to choose from.
    #[serde(default)]
    pub project: Option<NameOrId>,
}

/// Arguments of `find_scenarios` and `find_ui_tests`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindArgs {
    /// The project, by name or id. Required: when omitted, ambiguous or
    /// unknown, the answer is a question listing the projects to choose from.
    #[serde(default)]
    pub project: Option<NameOrId>,
    /// Only tests with this tag (several: comma-separated, any of them).
    #[serde(default)]
    pub tag: Option<String>,
}

/// A thing with an id and a name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Item {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
}

/// An environment a project can run in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Environment {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Whether the whole instance shares it (else it is the project's own).
    pub shared: bool,
    /// Its tags (`prod` marks production).
    pub tags: Vec<String>,
}

/// An API scenario or a UI test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TestItem {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its tags.
    pub tags: Vec<String>,
}

/// The answer of `list_project_applications`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Applications {
    /// The project's name.
    pub project: String,
    /// Its applications.
    pub applications: Vec<Item>,
}

/// The answer of `list_environments`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Environments {
    /// The project's name.
    pub project: String,
    /// The environments it can run in, its own and the shared ones.
    pub environments: Vec<Environment>,
}

/// The answer of `find_scenarios`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Scenarios {
    /// The project's name.
    pub project: String,
    /// The tag filter, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// The project's API scenarios (with the tag).
    pub scenarios: Vec<TestItem>,
}

/// The answer of `find_ui_tests`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct UiTests {
    /// The project's name.
    pub project: String,
    /// The tag filter, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// The project's UI tests (with the tag).
    pub ui_tests: Vec<TestItem>,
}

/// The answer of `list_pipelines`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Pipelines {
    /// The project's name.
    pub project: String,
    /// Its pipelines.
    pub pipelines: Vec<Item>,
}

/// `project` resolved with the host's default question: its id and name.
pub fn resolve_project(project: Option<NameOrId>) -> Result<Resolved, ToolError> {
    resolve(Query::new("project", "project", project))
}

/// `list_project_applications`.
pub fn applications(ctx: &Ctx, args: ProjectArgs) -> Result<Applications, ToolError> {
    let Resolved { id, name: project } = resolve_project(args.project)?;
    let applications = (api::applications(ctx, id)?.into_iter())
        .map(|a| Item {
            id: a.id,
            name: a.name,
        })
        .collect();
    Ok(Applications {
        project,
        applications,
    })
}

/// `list_environments`.
pub fn environments(ctx: &Ctx, args: ProjectArgs) -> Result<Environments, ToolError> {
    let Resolved { id, name: project } = resolve_project(args.project)?;
    let environments = (api::environments(ctx, Some(id))?.into_iter())
        .map(|e| Environment {
            id: e.id,
            name: e.name,
            shared: e.project_id.is_none(),
            tags: e.tags,
        })
        .collect();
    Ok(Environments {
        project,
        environments,
    })
}

/// `find_scenarios`.
pub fn scenarios(ctx: &Ctx, args: FindArgs) -> Result<Scenarios, ToolError> {
    let (project, tag, scenarios) = find(ctx, TestKind::ApiScenario, args)?;
    Ok(Scenarios {
        project,
        tag,
        scenarios,
    })
}

/// `find_ui_tests`.
pub fn ui_tests(ctx: &Ctx, args: FindArgs) -> Result<UiTests, ToolError> {
    let (project, tag, ui_tests) = find(ctx, TestKind::UiTest, args)?;
    Ok(UiTests {
        project,
        tag,
        ui_tests,
    })
}

/// `list_pipelines`.
pub fn pipelines(ctx: &Ctx, args: ProjectArgs) -> Result<Pipelines, ToolError> {
    let Resolved { id, name: project } = resolve_project(args.project)?;
    let pipelines = (api::tests(ctx, TestKind::Pipeline, Some(id), &[])?.into_iter())
        .map(|p| Item {
            id: p.id,
            name: p.name,
        })
        .collect();
    Ok(Pipelines { project, pipelines })
}

/// A project's tests of `kind` with the tag: its name, the tag, the tests.
fn find(
    ctx: &Ctx,
    kind: TestKind,
    args: FindArgs,
) -> Result<(String, Option<String>, Vec<TestItem>), ToolError> {
    let tags = split_tags(args.tag.as_deref());
    let Resolved { id, name: project } = resolve_project(args.project)?;
    let rows = api::tests(ctx, kind, Some(id), &tags)?;
    Ok((project, args.tag, rows.into_iter().map(test_item).collect()))
}

fn test_item(row: TestRow) -> TestItem {
    TestItem {
        id: row.id,
        name: row.name,
        tags: row.tags,
    }
}

/// A `tag` argument as tags: split at commas, trimmed, blanks dropped.
fn split_tags(tag: Option<&str>) -> Vec<String> {
    (tag.unwrap_or_default().split(','))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_argument_splits_at_commas_and_drops_blanks() {
        assert_eq!(split_tags(Some(" smoke, fast ,,")), ["smoke", "fast"]);
        assert!(split_tags(None).is_empty());
        assert!(split_tags(Some(" ")).is_empty());
    }

    #[test]
    fn the_project_argument_takes_a_name_or_an_id_and_may_be_omitted() {
        let schema = serde_json::to_value(schemars::schema_for!(ProjectArgs)).expect("JSON");
        let project = &schema["properties"]["project"];
        let text = project.to_string();
        assert!(
            text.contains(r#"{"type":"string"}"#) && text.contains(r#"{"type":"integer"}"#),
            "{text}"
        );
        assert!(schema.get("required").is_none(), "{schema}");
        let args: ProjectArgs = serde_json::from_str(r#"{"project": 1}"#).expect("an id");
        assert_eq!(args.project, Some(NameOrId::Id(1)));
    }
}
