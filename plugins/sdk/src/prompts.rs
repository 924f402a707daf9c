//! Prompts a plugin exports (MCP `prompts/list`, `prompts/get`), through
//! the `prompts` export:
//!
//! ```
//! use toolhost_sdk::prelude::*;
//!
//! fn prompts() -> Vec<Prompt> {
//!     vec![
//!         Prompt::new("review_plan", "Review a project's test plan.", |_ctx, args| {
//!             let project = args.get("project").unwrap_or("the project");
//!             Ok(vec![Message::user(format!("Review the test plan of {project}."))])
//!         })
//!         .argument("project", "The project, by name.", true)
//!         .completes("project")
//!         .permission("testbench", "read"),
//!     ]
//! }
//! ```
//!
//! A prompt needs a permission, as a tool does, and the manifest declares
//! it (`[prompts.NAME] permission = "…"`). `get` runs in a fresh sandbox
//! that may not have side effects (GET and HEAD backend requests only) but
//! may ask the client ([`crate::client`]). An argument that `completes` an
//! entity kind is completed by the host from the caller's tenant's names.

use std::collections::BTreeMap;

use crate::bindings::exports::toolhost::plugin::prompts as wit;
use crate::bindings::toolhost::plugin::types::Permission;
use crate::permission;
use crate::{Content, Ctx, ToolError};

type GetFn = Box<dyn Fn(&Ctx, &PromptArgs) -> Result<Vec<Message>, ToolError>>;

/// One prompt: its name, description, arguments, permission and how it is
/// filled in.
pub struct Prompt {
    pub(crate) name: String,
    title: Option<String>,
    description: String,
    arguments: Vec<wit::PromptArgument>,
    permission: Option<Permission>,
    get: GetFn,
}

/// A prompt's arguments, as the client gave them (strings).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptArgs(BTreeMap<String, String>);

impl PromptArgs {
    /// Argument `name`, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

/// One message of a filled-in prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    role: wit::Role,
    content: Content,
}

impl Message {
    /// A message of the user's.
    pub fn user(content: impl Into<Content>) -> Self {
        Message {
            role: wit::Role::User,
            content: content.into(),
        }
    }

    /// A message of the assistant's.
    pub fn assistant(content: impl Into<Content>) -> Self {
        Message {
            role: wit::Role::Assistant,
            content: content.into(),
        }
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::text(text)
    }
}

impl Prompt {
    /// A prompt named `name` (1–64 of `[A-Za-z0-9_.-]`) that `get` fills in.
    pub fn new<F>(name: impl Into<String>, description: impl Into<String>, get: F) -> Self
    where
        F: Fn(&Ctx, &PromptArgs) -> Result<Vec<Message>, ToolError> + 'static,
    {
        Prompt {
            name: name.into(),
            title: None,
            description: description.into(),
            arguments: Vec::new(),
            permission: None,
            get: Box::new(get),
        }
    }

    /// A display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Adds an argument.
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        self.arguments.push(wit::PromptArgument {
            name: name.into(),
            description: Some(description.into()),
            required,
            completes: None,
        });
        self
    }

    /// The last argument added names a thing of entity `kind` (one the
    /// plugin's entities list): the host completes it.
    pub fn completes(mut self, kind: impl Into<String>) -> Self {
        if let Some(last) = self.arguments.last_mut() {
            last.completes = Some(kind.into());
        }
        self
    }

    /// The permission a caller needs to list and get it.
    pub fn permission(mut self, resource: impl Into<String>, action: impl Into<String>) -> Self {
        self.permission = Some(permission::of(resource, action));
        self
    }

    pub(crate) fn spec(&self) -> wit::PromptSpec {
        let permission = permission::required(self.permission.as_ref(), "prompt", &self.name);
        wit::PromptSpec {
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            arguments: self.arguments.clone(),
            permission,
        }
    }

    pub(crate) fn fill(
        &self,
        ctx: &Ctx,
        arguments: Vec<(String, String)>,
    ) -> Result<wit::Prompt, ToolError> {
        let messages = (self.get)(ctx, &PromptArgs(arguments.into_iter().collect()))?;
        Ok(wit::Prompt {
            description: None,
            messages: messages
                .into_iter()
                .map(|m| wit::PromptMessage {
                    role: m.role,
                    content: m.content.0,
                })
                .collect(),
        })
    }
}

/// A plugin that exports no prompts: [`export_plugin!`](crate::export_plugin)'s default.
pub fn none() -> Vec<Prompt> {
    Vec::new()
}
