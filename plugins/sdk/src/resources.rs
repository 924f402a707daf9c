//! Resources a plugin exports (MCP `resources/list`,
//! `resources/templates/list`, `resources/read`), through the `resources`
//! export:
//!
//! ```
//! use toolhost_sdk::Contents;
//! use toolhost_sdk::prelude::*;
//!
//! fn resources() -> Resources {
//!     Resources::new()
//!         .resource(Resource::text("docs://runbook", "runbook", "The on-call runbook.", "text/markdown", |_ctx| {
//!             Ok("# Runbook".to_owned())
//!         }).permission("docs", "read"))
//!         .template(Template::new("db://{table}/schema", "table_schema", "A table's schema.", |_ctx, vars| {
//!             Ok(Contents::text(format!("db://{}/schema", vars.get("table").unwrap_or("?")), "text/plain", "id int"))
//!         }).permission("docs", "read"))
//! }
//! ```
//!
//! Each resource and template needs a permission, and the manifest
//! declares it by name (`[resources.NAME] permission = "…"`). A read runs in
//! a fresh sandbox that may not have side effects (GET and HEAD backend
//! requests only), for a URI the plugin listed or one matching a template.
//!
//! A tool call that changes a resource tells its subscribers with
//! [`updated`]: clients of the caller's tenant that subscribed to the URI
//! (and may read it) hear `notifications/resources/updated` and read it
//! again.

use std::collections::BTreeMap;

use crate::bindings::exports::toolhost::plugin::resources as wit;
use crate::bindings::toolhost::plugin::types::{Permission, ResourceBody};
use crate::permission;
use crate::{Ctx, ToolError};

/// Tells the clients subscribed to `uri` that the resource changed: a URI
/// this plugin's resources list or one matching its templates. Only a tool
/// call may tell (a plan or a read may not); each URI counts once per call,
/// at most 16 per call. The host says why when it refuses. Outside wasm
/// (unit tests) updates go to stderr.
pub fn updated(uri: &str) -> Result<(), String> {
    #[cfg(target_arch = "wasm32")]
    return crate::bindings::toolhost::plugin::notify::resource_updated(uri);
    #[cfg(not(target_arch = "wasm32"))]
    {
        eprintln!("[resource updated] {uri}");
        Ok(())
    }
}

type ReadFn = Box<dyn Fn(&Ctx) -> Result<Contents, ToolError>>;
type ReadTemplateFn = Box<dyn Fn(&Ctx, &Vars) -> Result<Contents, ToolError>>;

/// What a read answers: one or more contents.
#[derive(Debug, Clone, PartialEq)]
pub struct Contents(pub(crate) Vec<wit::ResourceContents>);

impl Contents {
    /// Text at `uri`.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Contents(vec![wit::ResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            body: ResourceBody::Text(text.into()),
        }])
    }

    /// Bytes at `uri`.
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl Into<Vec<u8>>,
    ) -> Self {
        Contents(vec![wit::ResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            body: ResourceBody::Blob(bytes.into()),
        }])
    }

    /// These contents and `more`.
    pub fn and(mut self, more: Contents) -> Self {
        self.0.extend(more.0);
        self
    }
}

/// A template's variables, by name, from the URI read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vars(BTreeMap<String, String>);

impl Vars {
    /// Variable `name`'s value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

/// A resource at a fixed URI.
pub struct Resource {
    spec: wit::ResourceSpec,
    permission: Option<Permission>,
    read: ReadFn,
}

impl Resource {
    /// A resource at `uri`, named `name` (the manifest's key), that `read` answers.
    pub fn new<F>(
        uri: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        read: F,
    ) -> Self
    where
        F: Fn(&Ctx) -> Result<Contents, ToolError> + 'static,
    {
        Resource {
            spec: wit::ResourceSpec {
                uri: uri.into(),
                name: name.into(),
                title: None,
                description: description.into(),
                mime_type: None,
                // The builder's `.permission` is required: `specs` fills it in.
                permission: permission::of("", ""),
            },
            permission: None,
            read: Box::new(read),
        }
    }

    /// A text resource whose `read` answers its text.
    pub fn text<F>(
        uri: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        mime_type: impl Into<String>,
        read: F,
    ) -> Self
    where
        F: Fn(&Ctx) -> Result<String, ToolError> + 'static,
    {
        let (uri, mime_type) = (uri.into(), mime_type.into());
        let (at, mime) = (uri.clone(), mime_type.clone());
        let mut r = Resource::new(uri, name, description, move |ctx| {
            Ok(Contents::text(at.clone(), mime.clone(), read(ctx)?))
        });
        r.spec.mime_type = Some(mime_type);
        r
    }

    /// A display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.spec.title = Some(title.into());
        self
    }

    /// Its MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.spec.mime_type = Some(mime_type.into());
        self
    }

    /// The permission a caller needs to list and read it.
    pub fn permission(mut self, resource: impl Into<String>, action: impl Into<String>) -> Self {
        self.permission = Some(permission::of(resource, action));
        self
    }
}

/// Resources at URIs of one shape (an RFC 6570 level 1 template).
pub struct Template {
    spec: wit::TemplateSpec,
    permission: Option<Permission>,
    read: ReadTemplateFn,
}

impl Template {
    /// A template named `name` (the manifest's key) that `read` answers
    /// for each matching URI, given the variables' values.
    pub fn new<F>(
        uri_template: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        read: F,
    ) -> Self
    where
        F: Fn(&Ctx, &Vars) -> Result<Contents, ToolError> + 'static,
    {
        Template {
            spec: wit::TemplateSpec {
                uri_template: uri_template.into(),
                name: name.into(),
                title: None,
                description: description.into(),
                mime_type: None,
                // The builder's `.permission` is required: `specs` fills it in.
                permission: permission::of("", ""),
                completes: Vec::new(),
            },
            permission: None,
            read: Box::new(read),
        }
    }

    /// Its MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.spec.mime_type = Some(mime_type.into());
        self
    }

    /// Variable `var` names a thing of entity `kind`: the host completes it.
    pub fn completes(mut self, var: impl Into<String>, kind: impl Into<String>) -> Self {
        self.spec.completes.push((var.into(), kind.into()));
        self
    }

    /// The permission a caller needs to list and read them.
    pub fn permission(mut self, resource: impl Into<String>, action: impl Into<String>) -> Self {
        self.permission = Some(permission::of(resource, action));
        self
    }

    /// The variables' values when `uri` matches, `{var}` matching one or
    /// more characters other than `/`, `?`, `#`.
    fn matches(&self, uri: &str) -> Option<Vars> {
        let mut vars = BTreeMap::new();
        let mut rest = uri;
        let mut template = self.spec.uri_template.as_str();
        while let Some(open) = template.find('{') {
            rest = rest.strip_prefix(&template[..open])?;
            let close = template[open..].find('}')? + open;
            let name = &template[open + 1..close];
            template = &template[close + 1..];
            let end = match template.find('{') {
                Some(next) if next > 0 => rest.find(&template[..next])?,
                _ if !template.is_empty() => rest.find(template)?,
                _ => rest.len(),
            };
            let value = &rest[..end];
            if value.is_empty() || value.contains(['/', '?', '#']) {
                return None;
            }
            vars.insert(name.to_owned(), value.to_owned());
            rest = &rest[end..];
        }
        (rest == template).then_some(Vars(vars))
    }
}

/// A plugin's resources and templates.
#[derive(Default)]
pub struct Resources {
    resources: Vec<Resource>,
    templates: Vec<Template>,
}

impl Resources {
    /// None yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// None: [`export_plugin!`](crate::export_plugin)'s default.
    pub fn none() -> Self {
        Self::default()
    }

    /// Adds a resource at a fixed URI.
    pub fn resource(mut self, r: Resource) -> Self {
        self.resources.push(r);
        self
    }

    /// Adds a template.
    pub fn template(mut self, t: Template) -> Self {
        self.templates.push(t);
        self
    }

    pub(crate) fn specs(&self) -> Vec<wit::ResourceSpec> {
        (self.resources.iter())
            .map(|r| wit::ResourceSpec {
                permission: permission::required(r.permission.as_ref(), "resource", &r.spec.name),
                ..r.spec.clone()
            })
            .collect()
    }

    pub(crate) fn template_specs(&self) -> Vec<wit::TemplateSpec> {
        (self.templates.iter())
            .map(|t| wit::TemplateSpec {
                permission: permission::required(t.permission.as_ref(), "template", &t.spec.name),
                ..t.spec.clone()
            })
            .collect()
    }

    pub(crate) fn read(&self, ctx: &Ctx, uri: &str) -> Result<Contents, ToolError> {
        if let Some(r) = self.resources.iter().find(|r| r.spec.uri == uri) {
            return (r.read)(ctx);
        }
        for t in &self.templates {
            if let Some(vars) = t.matches(uri) {
                return (t.read)(ctx, &vars);
            }
        }
        Err(ToolError::NotFound(format!("no resource at {uri}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_hands_its_variables_to_the_read() {
        let t = Template::new("test://template/{id}/data", "t", "d", |_ctx, vars| {
            Ok(Contents::text(
                "u",
                "text/plain",
                vars.get("id").unwrap_or_default(),
            ))
        });
        assert_eq!(
            t.matches("test://template/123/data")
                .and_then(|v| v.get("id").map(str::to_owned)),
            Some("123".into())
        );
        assert!(t.matches("test://template/1/2/data").is_none());
        assert!(t.matches("test://template//data").is_none());
    }
}
