//! Bounds on the call path: a call's arguments within the host's request
//! limits, then valid against the tool's input schema, before any plugin
//! code runs. A refusal creates no state; the call's audit row records it
//! (`limit_rejected`, or `error` with `INVALID_ARGUMENTS`).
//!
//! The limits come first: the schema validator recurses over the value,
//! so the depth bound protects it too.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};
use toolhost_catalog::{Catalog, ToolRef};
use toolhost_limits::{LimitBreach, PathStep, RequestLimits, json_path};
use toolhost_runtime::ToolSpec;

use crate::{InvokeError, Tool, Toolhost, gating};

/// The request limits every call's arguments are held to.
pub(crate) struct Bounds {
    limits: RequestLimits,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            limits: RequestLimits::DEFAULT,
        }
    }
}

/// Each plugin tool's compiled input schema, for one catalog: one slot per
/// tool, compiled on the tool's first call. A schema that does not compile
/// stays an error: the tool's calls fail until the plugin is fixed. A new
/// catalog gets new slots (a new revision may change a schema).
pub(crate) struct Schemas(BTreeMap<String, OnceLock<Result<InputSchema, String>>>);

impl Schemas {
    /// An empty slot per tool of `catalog`.
    pub(crate) fn new(catalog: &Catalog) -> Self {
        Self(
            catalog
                .tools()
                .map(|t| (t.spec().name.to_string(), OnceLock::new()))
                .collect(),
        )
    }

    /// Whether `args` may reach `tool`: within the limits (else
    /// `LIMIT_EXCEEDED`), and for a plugin tool, what the plugin would
    /// receive is valid against its input schema (else `INVALID_ARGUMENTS`
    /// with the validator's first error). Host tools check their own.
    pub(crate) fn check(
        &self,
        bounds: &Bounds,
        tool: &Tool,
        args: &Value,
    ) -> Result<(), InvokeError> {
        bounds.limits.check(args)?;
        match tool {
            Tool::Plugin(t) => self.conforms(t, args),
            Tool::Host(..) => Ok(()),
        }
    }

    fn conforms(&self, tool: &ToolRef, args: &Value) -> Result<(), InvokeError> {
        let spec = tool.spec();
        let schema = self
            .0
            .get(spec.name.as_str())
            .expect("every catalog tool has a slot")
            .get_or_init(|| InputSchema::compile(spec));
        let schema = schema.as_ref().map_err(|detail| InvokeError::InputSchema {
            tool: spec.name.to_string(),
            detail: detail.clone(),
        })?;
        let args = plugin_view(tool, args)?;
        schema
            .validate(&args)
            .map_err(|detail| InvokeError::InvalidArguments { detail })
    }
}

impl Toolhost {
    /// The bounds on every call's arguments (default:
    /// [`RequestLimits::DEFAULT`]).
    pub fn with_request_limits(mut self, limits: RequestLimits) -> Self {
        self.bounds.limits = limits;
        self
    }
}

impl From<LimitBreach> for InvokeError {
    fn from(b: LimitBreach) -> Self {
        InvokeError::LimitExceeded {
            limit: b.limit,
            value: b.value,
            max: b.max,
            path: b.path,
        }
    }
}

/// Whether `args` may reach `spec`, a draft's tool (a candidate not in any
/// catalog, so its schema is compiled for this one check): within the
/// limits, and valid against its input schema.
pub(crate) fn check_draft(
    bounds: &Bounds,
    spec: &ToolSpec,
    args: &Value,
) -> Result<(), InvokeError> {
    bounds.limits.check(args)?;
    let schema = InputSchema::compile(spec).map_err(|detail| InvokeError::InputSchema {
        tool: spec.name.to_string(),
        detail,
    })?;
    let args = match args {
        Value::Null => Value::Object(Map::new()),
        Value::Object(_) => args.clone(),
        _ => return Err(InvokeError::ArgumentsNotAnObject),
    };
    schema
        .validate(&args)
        .map_err(|detail| InvokeError::InvalidArguments { detail })
}

/// The arguments as the plugin receives them: absent is `{}`, and a
/// gateable tool's host-owned arguments are taken out (by the same
/// [`gating::split`] the call later uses).
fn plugin_view<'a>(tool: &ToolRef, args: &'a Value) -> Result<Cow<'a, Value>, InvokeError> {
    match args {
        Value::Null => Ok(Cow::Owned(Value::Object(Map::new()))),
        Value::Object(_) if gating::gateable(tool) => Ok(Cow::Owned(gating::split(args)?.0)),
        Value::Object(_) => Ok(Cow::Borrowed(args)),
        _ => Err(InvokeError::ArgumentsNotAnObject),
    }
}

/// One tool's compiled input schema.
pub(crate) struct InputSchema {
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

impl InputSchema {
    /// Compiles `spec`'s input schema: JSON Schema 2020-12 unless it says
    /// otherwise (MCP's default). References resolve within the schema
    /// only: the loader that would read `file:` URLs is replaced by one
    /// that loads nothing.
    fn compile(spec: &ToolSpec) -> Result<InputSchema, String> {
        let url = format!("toolhost://tools/{}/input.json", spec.name);
        let mut compiler = boon::Compiler::new();
        compiler.set_default_draft(boon::Draft::V2020_12);
        compiler.use_loader(Box::new(boon::SchemeUrlLoader::new()));
        let text = |e: boon::CompileError| format!("{e:#}");
        compiler
            .add_resource(&url, spec.input_schema.clone())
            .map_err(text)?;
        let mut schemas = boon::Schemas::new();
        let index = compiler.compile(&url, &mut schemas).map_err(text)?;
        Ok(InputSchema { schemas, index })
    }

    /// `Err`: the validator's first error, where and what, e.g.
    /// `$.name: want string, but got number`.
    fn validate(&self, args: &Value) -> Result<(), String> {
        let err = match self.schemas.validate(args, self.index) {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        let mut first = &err;
        while let Some(cause) = first.causes.first() {
            first = cause;
        }
        Err(format!(
            "{}: {}",
            location(&first.instance_location),
            first.kind
        ))
    }
}

/// A validator's instance location in the limits' path style (`$.a[0]`).
fn location(at: &boon::InstanceLocation) -> String {
    let steps: Vec<PathStep> = at
        .tokens
        .iter()
        .map(|t| match t {
            boon::InstanceToken::Prop(p) => PathStep::Key(p),
            boon::InstanceToken::Item(i) => PathStep::Index(*i),
        })
        .collect();
    json_path(&steps)
}

#[cfg(test)]
#[path = "bounds_tests.rs"]
mod tests;
