//! The `resources` export (0.2.0, optional): the resources and templates a
//! plugin lists at load, checked here, and a read of one URI in a fresh
//! sandbox that may not have side effects.

use toolhost_limits::CallBudget;
use toolhost_types::Permission;

use crate::bindings::exports::toolhost::plugin::resources as wit;
use crate::content::ResourceBody;
use crate::error::{CallError, LoadError};
use crate::sandbox::{
    Answer, Ask, CallContext, Plugin, Runtime, check_output, refusal_at_load, tool_error,
};

/// The `resources` export's instance name: loaded only when present.
pub(crate) const RESOURCES_EXPORT: &str = "toolhost:plugin/resources@0.2.0";

/// Most resources plus templates one plugin lists.
pub const MAX_RESOURCES: usize = 256;
/// Most contents one read answers.
pub const MAX_READ_CONTENTS: usize = 64;
/// Longest URI or template, in bytes.
pub const MAX_URI_LEN: usize = 2048;

/// A resource at a fixed URI, as the plugin listed it, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceSpec {
    /// Its URI.
    pub uri: String,
    /// Its name (the manifest's key).
    pub name: String,
    /// A display title.
    pub title: Option<String>,
    /// What it is.
    pub description: String,
    /// Its MIME type, when known.
    pub mime_type: Option<String>,
    /// What a caller needs to list and read it.
    pub permission: Permission,
}

/// Resources at URIs of one shape, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateSpec {
    /// The RFC 6570 level 1 template.
    pub uri_template: String,
    /// Its name (the manifest's key).
    pub name: String,
    /// A display title.
    pub title: Option<String>,
    /// What they are.
    pub description: String,
    /// Their MIME type, when known.
    pub mime_type: Option<String>,
    /// What a caller needs to list and read them.
    pub permission: Permission,
    /// Variable → the entity kind completing it.
    pub completes: Vec<(String, String)>,
}

impl TemplateSpec {
    /// The template's variables, in order.
    pub fn variables(&self) -> Vec<&str> {
        parts(&self.uri_template)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|p| match p {
                Part::Var(v) => Some(v),
                Part::Lit(_) => None,
            })
            .collect()
    }

    /// The variables' values when `uri` matches this template.
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        matches(&parts(&self.uri_template)?, uri)
    }
}

/// One content of a read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceContents {
    /// Its URI.
    pub uri: String,
    /// Its MIME type, when known.
    pub mime_type: Option<String>,
    /// Text or bytes.
    pub body: ResourceBody,
}

#[derive(Debug, PartialEq, Eq)]
enum Part<'a> {
    Lit(&'a str),
    Var(&'a str),
}

/// A template's literal parts and variables; `None` when it is not level 1
/// (an operator, an empty or repeated variable, two variables in a row).
fn parts(template: &str) -> Option<Vec<Part<'_>>> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            out.push(Part::Lit(&rest[..open]));
        }
        let close = rest[open..].find('}')? + open;
        let var = &rest[open + 1..close];
        let plain = !var.is_empty() && var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        let after_var = matches!(out.last(), Some(Part::Var(_)));
        if !plain || after_var || out.contains(&Part::Var(var)) {
            return None;
        }
        out.push(Part::Var(var));
        rest = &rest[close + 1..];
    }
    if rest.contains('}') {
        return None;
    }
    if !rest.is_empty() {
        out.push(Part::Lit(rest));
    }
    Some(out)
}

/// Matches `uri` against `parts`: literals exactly, each variable one or
/// more characters other than `/`, `?`, `#` (up to the next literal).
fn matches(parts: &[Part<'_>], uri: &str) -> Option<Vec<(String, String)>> {
    let mut values = Vec::new();
    let mut rest = uri;
    for (i, part) in parts.iter().enumerate() {
        match part {
            Part::Lit(l) => rest = rest.strip_prefix(l)?,
            Part::Var(v) => {
                let end = match parts.get(i + 1) {
                    Some(Part::Lit(next)) => rest.find(next)?,
                    _ => rest.len(),
                };
                let value = &rest[..end];
                if value.is_empty() || value.contains(['/', '?', '#']) {
                    return None;
                }
                values.push(((*v).to_owned(), value.to_owned()));
                rest = &rest[end..];
            }
        }
    }
    rest.is_empty().then_some(values)
}

fn valid_name(n: &str) -> bool {
    (1..=64).contains(&n.len())
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

fn has_scheme(u: &str) -> bool {
    let scheme = u.split_once(':').map(|(s, _)| s).unwrap_or_default();
    u.len() <= MAX_URI_LEN
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
        && !u.chars().any(char::is_whitespace)
}

fn permission(p: wit::Permission, name: &str) -> Result<Permission, String> {
    Permission::new(&p.resource, &p.action).map_err(|e| format!("resource {name:?}: {e}"))
}

/// The listed resources and templates, or what is wrong with the first
/// bad one: over [`MAX_RESOURCES`], a bad or repeated name or URI, a
/// template that is not level 1, a completion of a variable it does not
/// have or of a kind the plugin's entities do not list.
pub(crate) fn checked(
    resources: Vec<wit::ResourceSpec>,
    templates: Vec<wit::TemplateSpec>,
    kinds: &[String],
) -> Result<(Vec<ResourceSpec>, Vec<TemplateSpec>), String> {
    if resources.len() + templates.len() > MAX_RESOURCES {
        return Err(format!("more than {MAX_RESOURCES} resources and templates"));
    }
    let mut names: Vec<String> = Vec::new();
    let mut name_ok = |n: &str| {
        let fresh = valid_name(n) && !names.iter().any(|o| o == n);
        names.push(n.to_owned());
        fresh
    };
    let mut out = Vec::with_capacity(resources.len());
    for r in resources {
        if !name_ok(&r.name) {
            return Err(format!(
                "resource {:?} is not 1–64 of [A-Za-z0-9_.-], or is listed twice",
                r.name
            ));
        }
        if !has_scheme(&r.uri) || out.iter().any(|o: &ResourceSpec| o.uri == r.uri) {
            return Err(format!(
                "resource {:?}: URI {:?} has no scheme, or is listed twice",
                r.name, r.uri
            ));
        }
        out.push(ResourceSpec {
            permission: permission(r.permission, &r.name)?,
            uri: r.uri,
            name: r.name,
            title: r.title,
            description: r.description,
            mime_type: r.mime_type,
        });
    }
    let mut shapes = Vec::with_capacity(templates.len());
    for t in templates {
        if !name_ok(&t.name) {
            return Err(format!(
                "template {:?} is not 1–64 of [A-Za-z0-9_.-], or is listed twice",
                t.name
            ));
        }
        let vars: Vec<String> = match parts(&t.uri_template) {
            Some(p) if has_scheme(&t.uri_template) => (p.iter())
                .filter_map(|p| match p {
                    Part::Var(v) => Some((*v).to_owned()),
                    Part::Lit(_) => None,
                })
                .collect(),
            _ => {
                return Err(format!(
                    "template {:?}: {:?} is not an RFC 6570 level 1 template with a scheme",
                    t.name, t.uri_template
                ));
            }
        };
        if let Some((var, kind)) =
            (t.completes.iter()).find(|(v, k)| !vars.contains(v) || !kinds.contains(k))
        {
            return Err(format!(
                "template {:?}: completes {var:?} with kind {kind:?}, but the template has no such variable or the plugin no such kind",
                t.name
            ));
        }
        shapes.push(TemplateSpec {
            permission: permission(t.permission, &t.name)?,
            uri_template: t.uri_template,
            name: t.name,
            title: t.title,
            description: t.description,
            mime_type: t.mime_type,
            completes: t.completes,
        });
    }
    Ok((out, shapes))
}

impl Runtime {
    pub(crate) async fn load_resources(
        &self,
        plugin: &Plugin,
    ) -> Result<(Vec<ResourceSpec>, Vec<TemplateSpec>), LoadError> {
        if !plugin.contract.has_resources() {
            return Ok((Vec::new(), Vec::new()));
        }
        let refuse = refusal_at_load(plugin, "resources: ");
        let answer = self
            .ask_at_load(plugin, Ask::Resources)
            .await
            .map_err(|e| refuse(e.to_string()))?;
        let Answer::Resources(resources, templates) = answer else {
            unreachable!("resources answer resources")
        };
        checked(resources, templates, plugin.kinds()).map_err(refuse)
    }

    /// The contents at `uri` (one the plugin listed, or matching one of its
    /// templates: the caller checks which), for `ctx`, in a fresh sandbox
    /// that may not have side effects.
    pub async fn read_resource(
        &self,
        plugin: &Plugin,
        ctx: &CallContext,
        uri: &str,
        budget: &CallBudget,
    ) -> Result<Vec<ResourceContents>, CallError> {
        let wctx = ctx.wit();
        let read = self
            .sandboxed(plugin, ctx, budget, Ask::ResourceRead(&wctx, uri))
            .await?;
        let Answer::ResourceRead(read) = read else {
            unreachable!("a read answers contents")
        };
        let contents = read.map_err(|e| tool_error(e, budget))?;
        if contents.len() > MAX_READ_CONTENTS {
            return Err(CallError::InvalidOutput {
                detail: format!("more than {MAX_READ_CONTENTS} contents"),
            });
        }
        let mut out = Vec::with_capacity(contents.len());
        let mut size = 0;
        for c in contents {
            if !has_scheme(&c.uri) {
                return Err(CallError::InvalidOutput {
                    detail: format!("content URI {:?} has no scheme", c.uri),
                });
            }
            let body = match c.body {
                crate::bindings::toolhost::plugin::types::ResourceBody::Text(t) => {
                    ResourceBody::Text(t)
                }
                crate::bindings::toolhost::plugin::types::ResourceBody::Blob(b) => {
                    ResourceBody::Blob(b)
                }
            };
            size += c.uri.len() + body.bytes().len();
            out.push(ResourceContents {
                uri: c.uri,
                mime_type: c.mime_type,
                body,
            });
        }
        check_output(size, budget)?;
        Ok(out)
    }
}

impl Plugin {
    /// The resources at fixed URIs its `resources` export lists.
    pub fn resources(&self) -> &[ResourceSpec] {
        &self.resources.0
    }

    /// The templates its `resources` export lists.
    pub fn resource_templates(&self) -> &[TemplateSpec] {
        &self.resources.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(t: &str) -> TemplateSpec {
        TemplateSpec {
            uri_template: t.into(),
            name: "t".into(),
            title: None,
            description: String::new(),
            mime_type: None,
            permission: Permission::new("a", "b").expect("valid"),
            completes: Vec::new(),
        }
    }

    #[test]
    fn a_level_1_template_matches_its_uris_and_names_the_values() {
        let t = template("test://template/{id}/data");
        assert_eq!(
            t.matches("test://template/123/data"),
            Some(vec![("id".into(), "123".into())])
        );
        for other in [
            "test://template//data",
            "test://template/1/2/data",
            "test://template/123/data/x",
            "test://other/123/data",
        ] {
            assert_eq!(t.matches(other), None, "{other}");
        }
        let two = template("db://{project}/tables/{table}");
        assert_eq!(
            two.matches("db://payments/tables/orders"),
            Some(vec![
                ("project".into(), "payments".into()),
                ("table".into(), "orders".into())
            ])
        );
        assert_eq!(two.variables(), ["project", "table"]);
        for bad in ["x://{a}{b}", "x://{+a}", "x://{a}/{a}", "x://{}", "x://a}"] {
            assert!(parts(bad).is_none(), "{bad}");
        }
    }
}
