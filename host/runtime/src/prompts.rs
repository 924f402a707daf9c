//! The `prompts` export (0.2.0, optional): the prompts a plugin lists at
//! load, checked here, and one prompt filled in, in a fresh sandbox that
//! may not have side effects but may ask the client.

use std::collections::BTreeMap;

use serde_json::Value;
use toolhost_limits::CallBudget;
use toolhost_types::Permission;

use crate::bindings::exports::toolhost::plugin::prompts as wit;
use crate::content::{self, ContentBlock};
use crate::error::{CallError, LoadError};
use crate::sandbox::{
    Answer, Ask, CallContext, Plugin, Runtime, check_output, refusal_at_load, tool_error,
};

/// The `prompts` export's instance name: loaded only when present.
pub(crate) const PROMPTS_EXPORT: &str = "toolhost:plugin/prompts@0.2.0";

/// Most prompts one plugin lists, arguments one prompt takes, and
/// messages one prompt answers.
pub const MAX_PROMPTS: usize = 256;
/// Most arguments one prompt takes.
pub const MAX_PROMPT_ARGUMENTS: usize = 32;
/// Most messages one prompt answers.
pub const MAX_PROMPT_MESSAGES: usize = 64;

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What it is.
    pub description: Option<String>,
    /// Whether a get must give it.
    pub required: bool,
    /// The entity kind whose names complete it, if any.
    pub completes: Option<String>,
}

/// One prompt as the plugin listed it, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSpec {
    /// 1–64 of `[A-Za-z0-9_.-]`.
    pub name: String,
    /// A display title.
    pub title: Option<String>,
    /// What it is for.
    pub description: String,
    /// Its arguments.
    pub arguments: Vec<PromptArgument>,
    /// What a caller needs to list and get it.
    pub permission: Permission,
}

/// Who speaks a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptRole {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptMessage {
    /// Who speaks it.
    pub role: PromptRole,
    /// What it says.
    pub content: ContentBlock,
}

/// A prompt filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// What it is for.
    pub description: Option<String>,
    /// Its messages.
    pub messages: Vec<PromptMessage>,
}

/// A get's answer: the prompt, or the client's input it needs first.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptReply {
    /// The prompt.
    Prompt(Prompt),
    /// Requests the client must answer first, by the plugin's key.
    NeedsInput(BTreeMap<String, Value>),
}

fn valid_name(n: &str) -> bool {
    (1..=64).contains(&n.len())
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

/// The listed prompts, or what is wrong with the first bad one.
pub(crate) fn checked(
    specs: Vec<wit::PromptSpec>,
    kinds: &[String],
) -> Result<Vec<PromptSpec>, String> {
    if specs.len() > MAX_PROMPTS {
        return Err(format!("{} prompts, more than {MAX_PROMPTS}", specs.len()));
    }
    let mut out: Vec<PromptSpec> = Vec::with_capacity(specs.len());
    for s in specs {
        let name = s.name.clone();
        if !valid_name(&name) || out.iter().any(|o| o.name == name) {
            return Err(format!(
                "prompt {name:?} is not 1–64 of [A-Za-z0-9_.-], or is listed twice"
            ));
        }
        if s.arguments.len() > MAX_PROMPT_ARGUMENTS {
            return Err(format!(
                "prompt {name:?} takes more than {MAX_PROMPT_ARGUMENTS} arguments"
            ));
        }
        let mut arguments: Vec<PromptArgument> = Vec::with_capacity(s.arguments.len());
        for a in s.arguments {
            if !valid_name(&a.name) || arguments.iter().any(|o| o.name == a.name) {
                return Err(format!(
                    "prompt {name:?}: argument {:?} is not 1–64 of [A-Za-z0-9_.-], or is listed twice",
                    a.name
                ));
            }
            if let Some(kind) = a.completes.as_ref().filter(|k| !kinds.contains(k)) {
                return Err(format!(
                    "prompt {name:?}: argument {:?} completes kind {kind:?}, which the plugin's entities do not list",
                    a.name
                ));
            }
            arguments.push(PromptArgument {
                name: a.name,
                description: a.description,
                required: a.required,
                completes: a.completes,
            });
        }
        let permission = Permission::new(&s.permission.resource, &s.permission.action)
            .map_err(|e| format!("prompt {name:?}: {e}"))?;
        out.push(PromptSpec {
            name,
            title: s.title,
            description: s.description,
            arguments,
            permission,
        });
    }
    Ok(out)
}

/// A get's answer, checked: messages bounded, each block checked as a
/// tool's, the whole within the output budget.
fn answer(p: wit::Prompt, budget: &CallBudget) -> Result<Prompt, CallError> {
    if p.messages.len() > MAX_PROMPT_MESSAGES {
        return Err(CallError::InvalidOutput {
            detail: format!("more than {MAX_PROMPT_MESSAGES} prompt messages"),
        });
    }
    let roles: Vec<PromptRole> = (p.messages.iter())
        .map(|m| match m.role {
            wit::Role::User => PromptRole::User,
            wit::Role::Assistant => PromptRole::Assistant,
        })
        .collect();
    let blocks = content::checked(p.messages.into_iter().map(|m| m.content).collect())
        .map_err(|detail| CallError::InvalidOutput { detail })?;
    let size = blocks.iter().map(ContentBlock::size).sum::<usize>()
        + p.description.as_ref().map_or(0, String::len);
    check_output(size, budget)?;
    Ok(Prompt {
        description: p.description,
        messages: roles
            .into_iter()
            .zip(blocks)
            .map(|(role, content)| PromptMessage { role, content })
            .collect(),
    })
}

impl Runtime {
    pub(crate) async fn load_prompts(&self, plugin: &Plugin) -> Result<Vec<PromptSpec>, LoadError> {
        if !plugin.contract.has_prompts() {
            return Ok(Vec::new());
        }
        let refuse = refusal_at_load(plugin, "prompts: ");
        let answer = self
            .ask_at_load(plugin, Ask::Prompts)
            .await
            .map_err(|e| refuse(e.to_string()))?;
        let Answer::Prompts(specs) = answer else {
            unreachable!("prompts answers prompts")
        };
        checked(specs, plugin.kinds()).map_err(refuse)
    }

    /// Prompt `name` of `plugin` with `arguments`, for `ctx`, in a fresh
    /// sandbox that may not have side effects but may ask the client. A
    /// name the plugin does not list is [`CallError::UnknownTool`].
    pub async fn prompt(
        &self,
        plugin: &Plugin,
        ctx: &CallContext,
        name: &str,
        arguments: &[(String, String)],
        budget: &CallBudget,
    ) -> Result<PromptReply, CallError> {
        if !plugin.prompts().iter().any(|p| p.name == name) {
            return Err(CallError::UnknownTool(name.to_owned()));
        }
        let wctx = ctx.wit();
        let ask = Ask::PromptGet(&wctx, name, arguments);
        match self.sandboxed(plugin, ctx, budget, ask).await {
            Err(CallError::InputRequired { requests }) => Ok(PromptReply::NeedsInput(requests)),
            Err(e) => Err(e),
            Ok(Answer::PromptGet(Ok(p))) => answer(p, budget).map(PromptReply::Prompt),
            Ok(Answer::PromptGet(Err(e))) => Err(tool_error(e, budget)),
            Ok(_) => unreachable!("a get answers a prompt"),
        }
    }
}

impl Plugin {
    /// The prompts its `prompts` export lists (none without one), checked
    /// at load, in the plugin's order.
    pub fn prompts(&self) -> &[PromptSpec] {
        &self.prompts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::toolhost::plugin::types::Permission as WitPermission;

    fn spec(name: &str, args: &[(&str, Option<&str>)]) -> wit::PromptSpec {
        wit::PromptSpec {
            name: name.into(),
            title: None,
            description: "d".into(),
            arguments: (args.iter())
                .map(|(n, kind)| wit::PromptArgument {
                    name: (*n).into(),
                    description: None,
                    required: true,
                    completes: kind.map(str::to_owned),
                })
                .collect(),
            permission: WitPermission {
                resource: "hello".into(),
                action: "read".into(),
            },
        }
    }

    #[test]
    fn listed_prompts_are_checked_names_arguments_kinds_and_permission() {
        let kinds = vec!["project".to_owned()];
        let ok = checked(
            vec![spec("review", &[("project", Some("project"))])],
            &kinds,
        )
        .expect("valid");
        assert_eq!(ok[0].arguments[0].completes.as_deref(), Some("project"));
        assert_eq!(ok[0].permission.to_string(), "hello:read");
        let many: Vec<(&str, Option<&str>)> = Vec::new();
        let cases = [
            (vec![spec("a b", &many)], "is not 1–64"),
            (vec![spec("a", &many), spec("a", &many)], "listed twice"),
            (
                vec![spec("a", &[("x", None), ("x", None)])],
                "argument \"x\"",
            ),
            (
                vec![spec("a", &[("p", Some("planet"))])],
                "completes kind \"planet\"",
            ),
        ];
        for (specs, want) in cases {
            let err = checked(specs, &kinds).expect_err("refused");
            assert!(err.contains(want), "{err} should say {want}");
        }
        let mut bad = spec("a", &many);
        bad.permission.action = String::new();
        assert!(checked(vec![bad], &kinds).is_err());
    }
}
