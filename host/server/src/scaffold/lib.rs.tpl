//! `{{name}}`: {{description}}
//!
//! One tool to start from. Each tool is a function from typed arguments to
//! a typed answer; the SDK derives both JSON Schemas, and the host runs
//! every call in a fresh sandbox with the permission the manifest
//! (`toolhost.toml`) declares.

use toolhost_sdk::prelude::*;

/// Arguments of `greet`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GreetArgs {
    /// Who to greet.
    pub name: String,
}

/// What `greet` answers.
#[derive(Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Greeting {
    /// The greeting.
    pub message: String,
}

/// Greets someone by name; a blank name is invalid.
pub fn greet(_ctx: &Ctx, args: GreetArgs) -> Result<Greeting, ToolError> {
    let name = args.name.trim();
    if name.is_empty() {
        return Err(ToolError::InvalidArguments("name must not be blank".into()));
    }
    log::info!("greeting {name}");
    Ok(Greeting {
        message: format!("Hello, {name}!"),
    })
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("greet", "Greets someone by name.", greet)
            .title("Greet")
            .permission("{{name}}", "read")
            .read_only(),
    ]
}

toolhost_sdk::export_plugin!(tools);

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx {
        Ctx::new("call-1", "local", "cli")
    }

    #[test]
    fn greet_greets_by_the_trimmed_name_and_refuses_a_blank_one() {
        let args: GreetArgs =
            serde_json::from_str(r#"{"name": " Ada "}"#).expect("fits the schema");
        let message = greet(&ctx(), args).expect("greets").message;
        assert_eq!(message, "Hello, Ada!");
        let blank = GreetArgs { name: "  ".into() };
        assert!(matches!(
            greet(&ctx(), blank),
            Err(ToolError::InvalidArguments(_))
        ));
    }
}
