//! What [`export_plugin!`](crate::export_plugin) expands to calls: the
//! dispatch from the WIT exports to a plugin's [`Tool`]s, [`Entities`] and
//! [`Authoring`]. Not a public API.

pub use crate::bindings::exports::toolhost::plugin::authoring::CurrentState;
pub use crate::bindings::exports::toolhost::plugin::entities::Entity;
pub use crate::bindings::exports::toolhost::plugin::prompts::{Prompt as WitPrompt, PromptSpec};
pub use crate::bindings::exports::toolhost::plugin::resources::{
    ResourceContents, ResourceSpec, TemplateSpec,
};
pub use crate::bindings::toolhost::plugin::types::{
    CallContext, ToolError as WitToolError, ToolOutput, ToolSpec,
};

use crate::authoring::{AuthoringKind, Change, Problem};
use crate::{Authoring, Entities, Plan, Tool};

/// `describe`: every tool's spec, in the plugin's order.
pub fn describe(tools: Vec<Tool>) -> Vec<ToolSpec> {
    for (i, t) in tools.iter().enumerate() {
        if tools[..i].iter().any(|u| u.name == t.name) {
            panic!("two tools are named {:?}", t.name);
        }
    }
    tools.into_iter().map(Tool::spec).collect()
}

/// `plan`: the named tool's plan, or `unknown-tool`.
pub fn plan(
    tools: Vec<Tool>,
    ctx: CallContext,
    tool: &str,
    args: &str,
) -> Result<Plan, WitToolError> {
    Ok(find(tools, tool)?.run_plan(&ctx.into(), args)?)
}

/// `call`: runs the named tool, or answers `unknown-tool`.
pub fn call(
    tools: Vec<Tool>,
    ctx: CallContext,
    tool: &str,
    args: &str,
) -> Result<ToolOutput, WitToolError> {
    Ok(find(tools, tool)?.run_call(&ctx.into(), args)?)
}

/// `entities.kinds`: the kinds the plugin lists (none by default).
pub fn kinds(entities: Entities) -> Vec<String> {
    entities.kinds()
}

/// `entities.snapshot`: every entity of `kind`, or `invalid-arguments` for a
/// kind the plugin does not list.
pub fn snapshot(
    entities: Entities,
    ctx: CallContext,
    kind: &str,
) -> Result<Vec<Entity>, WitToolError> {
    Ok(entities.snapshot(&ctx.into(), kind)?)
}

/// `authoring.kinds`: the kinds the plugin authors (none by default).
pub fn authoring_kinds(authoring: Authoring) -> Vec<AuthoringKind> {
    authoring.kinds()
}

/// `authoring.current`: the subject's state, or `invalid-arguments` for a
/// kind the plugin does not author.
pub fn current(
    authoring: Authoring,
    ctx: CallContext,
    kind: &str,
    subject: i64,
) -> Result<CurrentState, WitToolError> {
    Ok(authoring.current(&ctx.into(), kind, subject)?)
}

/// `authoring.validate`: the normalized proposal, or every problem.
pub fn validate(
    authoring: Authoring,
    ctx: CallContext,
    kind: &str,
    current: &str,
    proposal: &str,
) -> Result<String, Vec<Problem>> {
    authoring.validate(&ctx.into(), kind, current, proposal)
}

/// `authoring.diff`: what promoting the normalized proposal changes.
pub fn diff(
    authoring: Authoring,
    ctx: CallContext,
    kind: &str,
    current: &str,
    normalized: &str,
) -> Result<Vec<Change>, WitToolError> {
    Ok(authoring.diff(&ctx.into(), kind, current, normalized)?)
}

fn find(tools: Vec<Tool>, name: &str) -> Result<Tool, WitToolError> {
    tools
        .into_iter()
        .find(|t| t.name == name)
        .ok_or_else(|| WitToolError::UnknownTool(name.to_owned()))
}

/// `prompts.list`: every prompt's spec, in the plugin's order.
pub fn prompt_specs(prompts: Vec<crate::Prompt>) -> Vec<PromptSpec> {
    prompts.iter().map(crate::Prompt::spec).collect()
}

/// `prompts.get`: the named prompt filled in, or `unknown-tool`.
pub fn prompt_get(
    prompts: Vec<crate::Prompt>,
    ctx: CallContext,
    name: &str,
    arguments: Vec<(String, String)>,
) -> Result<WitPrompt, WitToolError> {
    let prompt = prompts
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| WitToolError::UnknownTool(name.to_owned()))?;
    Ok(prompt.fill(&ctx.into(), arguments)?)
}

/// `resources.list`: the resources at fixed URIs.
pub fn resource_specs(resources: crate::Resources) -> Vec<ResourceSpec> {
    resources.specs()
}

/// `resources.templates`: the templates.
pub fn template_specs(resources: crate::Resources) -> Vec<TemplateSpec> {
    resources.template_specs()
}

/// `resources.read`: the contents at `uri`, or `not-found`.
pub fn resource_read(
    resources: crate::Resources,
    ctx: CallContext,
    uri: &str,
) -> Result<Vec<ResourceContents>, WitToolError> {
    Ok(resources.read(&ctx.into(), uri)?.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    #[derive(Deserialize, JsonSchema)]
    struct EchoArgs {
        /// What to echo.
        word: String,
    }

    #[derive(Serialize, JsonSchema)]
    struct Echo {
        echo: String,
    }

    fn echo(_ctx: &Ctx, args: EchoArgs) -> Result<Output<Echo>, ToolError> {
        if args.word == "missing" {
            return Err(ToolError::NotFound("no such word".into()));
        }
        Ok(Output::new(Echo {
            echo: args.word.clone(),
        })
        .with_text(args.word))
    }

    fn tools() -> Vec<Tool> {
        vec![
            Tool::new("echo", "Echoes a word.", echo)
                .permission("words", "read")
                .read_only(),
            Tool::new("erase", "Erases a word.", |_: &Ctx, _: EchoArgs| {
                Ok(Echo {
                    echo: String::new(),
                })
            })
            .permission("words", "write")
            .destructive()
            .plan(|ctx: &Ctx, args: &EchoArgs| {
                Ok(Plan::new(
                    Risk::Medium,
                    format!("erase {} for {}", args.word, ctx.principal),
                )
                .target(Target::new("word", &args.word, &args.word).tag("english")))
            }),
        ]
    }

    fn ctx() -> CallContext {
        CallContext {
            call_id: "c1".into(),
            tenant: "t1".into(),
            principal: "alice".into(),
        }
    }

    #[test]
    fn describe_carries_schemas_permission_and_conservative_flags() {
        let specs = describe(tools());
        let echo = &specs[0];
        assert_eq!(
            (
                echo.permission.resource.as_str(),
                echo.permission.action.as_str()
            ),
            ("words", "read")
        );
        assert!(!echo.mutating);
        assert_eq!(echo.annotations.read_only, Some(true));
        let input: serde_json::Value = serde_json::from_str(&echo.input_schema).expect("JSON");
        assert_eq!(input["type"], "object");
        assert_eq!(input["required"], serde_json::json!(["word"]));
        assert_eq!(input["properties"]["word"]["description"], "What to echo.");
        let output = echo.output_schema.as_deref().expect("an output schema");
        assert!(output.contains("\"echo\""), "{output}");
        let erase = &specs[1];
        assert!(erase.mutating);
        assert_eq!(erase.risk, Risk::High);
        assert_eq!(erase.annotations.destructive, Some(true));
    }

    #[test]
    fn call_parses_arguments_and_serializes_structured_output_and_text() {
        let out = call(tools(), ctx(), "echo", r#"{"word":"hi"}"#).expect("echoes");
        assert_eq!(out.structured, r#"{"echo":"hi"}"#);
        assert_eq!(out.text.as_deref(), Some("hi"));
    }

    #[test]
    fn arguments_that_do_not_fit_the_type_are_invalid_arguments_with_serdes_message() {
        let err = call(tools(), ctx(), "echo", r#"{"word":3}"#).expect_err("a number is no word");
        assert!(
            matches!(&err, WitToolError::InvalidArguments(m) if m.contains("invalid type")),
            "{err:?}"
        );
        let err = plan(tools(), ctx(), "echo", "not json").expect_err("the default plan checks");
        assert!(matches!(err, WitToolError::InvalidArguments(_)), "{err:?}");
    }

    #[test]
    fn tool_errors_map_onto_the_wit_variant_and_unknown_names_onto_unknown_tool() {
        let err = call(tools(), ctx(), "echo", r#"{"word":"missing"}"#).expect_err("not found");
        assert!(
            matches!(&err, WitToolError::NotFound(m) if m == "no such word"),
            "{err:?}"
        );
        let err = call(tools(), ctx(), "shout", "{}").expect_err("no such tool");
        assert!(
            matches!(&err, WitToolError::UnknownTool(n) if n == "shout"),
            "{err:?}"
        );
    }

    #[test]
    fn default_plan_has_no_targets_and_the_tools_risk_and_custom_plans_see_arguments() {
        let p = plan(tools(), ctx(), "echo", r#"{"word":"hi"}"#).expect("plans");
        assert_eq!(
            (p.targets.len(), p.risk, p.summary.as_str()),
            (0, Risk::Low, "call echo")
        );
        let p = plan(tools(), ctx(), "erase", r#"{"word":"hi"}"#).expect("plans");
        assert_eq!(
            (p.risk, p.summary.as_str()),
            (Risk::Medium, "erase hi for alice")
        );
        assert_eq!(
            (p.targets[0].id.as_str(), p.targets[0].tags.as_slice()),
            ("hi", &["english".to_owned()][..])
        );
    }

    #[test]
    fn a_plugin_without_entities_lists_no_kinds_and_refuses_snapshots_naming_the_kind() {
        assert!(kinds(Entities::none()).is_empty());
        let err = snapshot(Entities::none(), ctx(), "project").expect_err("no kinds");
        assert!(
            matches!(&err, WitToolError::InvalidArguments(m) if m.contains("\"project\"")),
            "{err:?}"
        );
    }

    #[test]
    fn a_snapshot_reaches_the_plugins_function_with_the_callers_context() {
        let entities = Entities::new(["project"], |ctx: &Ctx, _: &str| {
            Ok(vec![
                Entity::new(1, "payments", ctx.tenant.clone()).child_of("org", 9),
            ])
        });
        let rows = snapshot(entities, ctx(), "project").expect("a listed kind");
        assert_eq!((rows[0].id, rows[0].tenant.as_str()), (1, "t1"));
        assert_eq!(rows[0].parents[0].id, 9);
    }

    #[test]
    fn a_plugin_that_authors_nothing_lists_no_kinds_and_maps_refusals_onto_the_wit() {
        assert!(authoring_kinds(Authoring::none()).is_empty());
        let err = current(Authoring::none(), ctx(), "test_plan", 1).expect_err("no kinds");
        assert!(
            matches!(&err, WitToolError::InvalidArguments(m) if m.contains("\"test_plan\"")),
            "{err:?}"
        );
        let problems = validate(Authoring::none(), ctx(), "test_plan", "{}", "{}");
        assert_eq!(problems.expect_err("no kinds")[0].path, "");
        let err = diff(Authoring::none(), ctx(), "test_plan", "{}", "{}").expect_err("no kinds");
        assert!(matches!(err, WitToolError::InvalidArguments(_)), "{err:?}");
    }

    #[test]
    #[should_panic(expected = "has no permission")]
    fn describe_refuses_a_tool_without_permission() {
        describe(vec![Tool::new("echo", "Echoes.", echo)]);
    }
}
