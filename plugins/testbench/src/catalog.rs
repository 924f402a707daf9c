//! The `entities` export: projects, environments, scenarios, UI tests and
//! pipelines, for the host's resolver.
//!
//! A snapshot is the whole kind as the backend lists it for the caller's
//! tenant, each row with the `tenant` the backend gave (the host drops any
//! other tenant's). Children name their project as a parent, so a pinned
//! project narrows them, and carry the project's name as `detail`, so
//! namesakes get labels like `Login flow · payments`. Projects are fetched
//! for those names only when some row has a project.

use std::collections::HashMap;

use toolhost_sdk::prelude::*;

use crate::api::{self, EnvironmentRow, ProjectRow, TestRow};
use crate::kind::TestKind;

/// The kinds the tools resolve; each tool's manifest entry declares the
/// ones it asks for.
const KINDS: [&str; 5] = ["project", "environment", "scenario", "ui_test", "pipeline"];

/// The export, for `export_plugin!`.
pub fn entities() -> Entities {
    Entities::new(KINDS, snapshot)
}

fn snapshot(ctx: &Ctx, kind: &str) -> Result<Vec<Entity>, ToolError> {
    if kind == "project" {
        return Ok(api::projects()?.into_iter().map(project).collect());
    }
    if kind == "environment" {
        let rows: Vec<EnvironmentRow> = api::list("/api/environments")?;
        let names = names_if(ctx, rows.iter().any(|r| r.project_id.is_some()))?;
        return Ok(rows.into_iter().map(|r| environment(r, &names)).collect());
    }
    let test_kind = TestKind::from_entity(kind)
        .ok_or_else(|| ToolError::InvalidArguments(format!("no entities of kind {kind:?}")))?;
    let rows: Vec<TestRow> = api::list(test_kind.route())?;
    let names = names_if(ctx, !rows.is_empty())?;
    Ok(rows.into_iter().map(|r| test(r, &names)).collect())
}

/// The caller's project names by id, fetched only when `needed`.
fn names_if(ctx: &Ctx, needed: bool) -> Result<HashMap<i64, String>, ToolError> {
    if !needed {
        return Ok(HashMap::new());
    }
    Ok(project_names(&ctx.tenant, api::projects()?))
}

/// Project names by id, of `tenant`'s projects only: a detail never names
/// another tenant's project, whatever the backend sent.
fn project_names(tenant: &str, projects: Vec<ProjectRow>) -> HashMap<i64, String> {
    (projects.into_iter())
        .filter(|p| p.tenant == tenant)
        .map(|p| (p.id, p.name))
        .collect()
}

fn project(row: ProjectRow) -> Entity {
    Entity::new(row.id, row.name, row.tenant)
}

fn environment(row: EnvironmentRow, names: &HashMap<i64, String>) -> Entity {
    child(
        Entity::new(row.id, row.name, row.tenant),
        row.project_id,
        names,
    )
}

fn test(row: TestRow, names: &HashMap<i64, String>) -> Entity {
    child(
        Entity::new(row.id, row.name, row.tenant),
        Some(row.project_id),
        names,
    )
}

/// `entity` as a child of `project` (if any), labelled with its name (if known).
fn child(entity: Entity, project: Option<i64>, names: &HashMap<i64, String>) -> Entity {
    let Some(id) = project else {
        return entity;
    };
    let entity = entity.child_of("project", id);
    match names.get(&id) {
        Some(name) => entity.detail(name),
        None => entity,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> HashMap<i64, String> {
        project_names(
            "demo",
            vec![
                ProjectRow {
                    id: 1,
                    name: "payments".into(),
                    tenant: "demo".into(),
                },
                ProjectRow {
                    id: 9,
                    name: "secret".into(),
                    tenant: "acme".into(),
                },
            ],
        )
    }

    #[test]
    fn a_test_is_a_child_of_its_project_labelled_with_the_projects_name() {
        let row = TestRow {
            id: 204,
            name: "Login flow".into(),
            project_id: 1,
            tags: vec!["smoke".into()],
            tenant: "demo".into(),
        };
        let e = test(row, &names());
        assert_eq!(
            (e.id, e.name.as_str(), e.tenant.as_str()),
            (204, "Login flow", "demo")
        );
        assert_eq!(
            (e.parents[0].kind.as_str(), e.parents[0].id),
            ("project", 1)
        );
        assert_eq!(e.detail.as_deref(), Some("payments"));
    }

    #[test]
    fn a_shared_environment_has_no_parent_and_no_detail() {
        let row = EnvironmentRow {
            id: 12,
            name: "staging".into(),
            project_id: None,
            tenant: "demo".into(),
            tags: Vec::new(),
        };
        let e = environment(row, &names());
        assert!(e.parents.is_empty() && e.detail.is_none());
    }

    #[test]
    fn details_never_name_another_tenants_project_and_tenants_pass_through() {
        let row = TestRow {
            id: 5,
            name: "Leaked".into(),
            project_id: 9,
            tags: Vec::new(),
            tenant: "acme".into(),
        };
        let e = test(row, &names());
        assert_eq!((e.tenant.as_str(), e.detail), ("acme", None));
        assert_eq!(e.parents[0].id, 9);
    }
}
