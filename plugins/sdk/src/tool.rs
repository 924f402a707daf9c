//! [`Tool`]: one tool of a plugin, built from a typed Rust function.

use schemars::JsonSchema;
use serde::{Serialize, de::DeserializeOwned};

use crate::bindings::toolhost::plugin::types::{Annotations, Permission, ToolOutput, ToolSpec};
use crate::permission;
use crate::{Content, Ctx, Plan, Risk, ToolError};

type CallFn = Box<dyn Fn(&Ctx, &str) -> Result<ToolOutput, ToolError>>;
type PlanFn = Box<dyn Fn(&Ctx, &str) -> Result<Plan, ToolError>>;

/// One tool: its description for the host, and the function that runs it.
///
/// Built with [`Tool::new`] and the builder methods; a plugin lists its tools
/// in the function it passes to [`export_plugin!`](crate::export_plugin).
///
/// Conservative defaults: a tool is assumed to change state (`mutating`, so
/// the host's gates apply) until it says [`read_only`](Tool::read_only), and
/// its risk is [`Risk::Low`] until it says otherwise. The annotation hints are
/// unset unless a builder sets them.
pub struct Tool {
    pub(crate) name: String,
    title: Option<String>,
    description: String,
    permission: Option<Permission>,
    risk: Risk,
    mutating: bool,
    annotations: Annotations,
    /// Deferred so that `plan` and `call` never pay for schema generation.
    schemas: fn() -> (String, String),
    /// An input schema given as JSON text, in place of the derived one.
    input_schema: Option<String>,
    /// Parses the arguments for the default plan, which checks them.
    check: fn(&str) -> Result<(), ToolError>,
    call: CallFn,
    plan: Option<PlanFn>,
}

impl Tool {
    /// A tool named `name` (MCP: 1–64 of `[A-Za-z0-9_.-]`) that runs `run`.
    ///
    /// The input schema is derived from `A` and the output schema from the
    /// structured part of `R` (make both structs: MCP wants objects). Before
    /// `run`, the arguments JSON is deserialized into `A`; JSON that does not
    /// fit answers [`ToolError::InvalidArguments`] with serde's message.
    /// `R` is any `Serialize + JsonSchema` type, or an [`Output`] of one to
    /// add human-readable text.
    pub fn new<A, R, F>(name: impl Into<String>, description: impl Into<String>, run: F) -> Self
    where
        A: DeserializeOwned + JsonSchema,
        R: IntoOutput,
        F: Fn(&Ctx, A) -> Result<R, ToolError> + 'static,
    {
        Tool {
            name: name.into(),
            title: None,
            description: description.into(),
            permission: None,
            risk: Risk::Low,
            mutating: true,
            annotations: Annotations {
                read_only: None,
                destructive: None,
                idempotent: None,
                open_world: None,
            },
            schemas: schemas::<A, R::Structured>,
            input_schema: None,
            check: |args| parse::<A>(args).map(drop),
            call: Box::new(move |ctx, args| run(ctx, parse(args)?)?.into_output().into_wit()),
            plan: None,
        }
    }

    /// The input schema as JSON text, in place of the one derived from
    /// `A`: for tools whose arguments are data rather than a Rust type (a
    /// catalog generated from a file, with `A` a `serde_json::Value`). The
    /// host checks every call's arguments against the schema described.
    pub fn input_schema(mut self, schema: impl Into<String>) -> Self {
        self.input_schema = Some(schema.into());
        self
    }

    /// A human-readable display name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The one permission a caller needs to see and call this tool, as
    /// `resource:action` (`resource` may contain colons, `action` not).
    /// Required: `describe` panics (the host refuses the plugin) without it.
    /// It must match the tool's entry in the plugin's `toolhost.toml`.
    pub fn permission(mut self, resource: impl Into<String>, action: impl Into<String>) -> Self {
        self.permission = Some(permission::of(resource, action));
        self
    }

    /// The risk of a typical invocation (default [`Risk::Low`]). A hint: the
    /// host may raise it, never lower it. A custom [`plan`](Tool::plan) may
    /// classify each call on its own.
    pub fn risk(mut self, risk: Risk) -> Self {
        self.risk = risk;
        self
    }

    /// Declares that a call changes state somewhere (the default, stated).
    pub fn mutating(mut self) -> Self {
        self.mutating = true;
        self.annotations.read_only = Some(false);
        self
    }

    /// Declares that a call changes nothing: not mutating, MCP `readOnlyHint`.
    pub fn read_only(mut self) -> Self {
        self.mutating = false;
        self.annotations.read_only = Some(true);
        self
    }

    /// Declares that a call may destroy data: mutating, MCP
    /// `destructiveHint`, and risk raised to at least [`Risk::High`].
    pub fn destructive(mut self) -> Self {
        self = self.mutating();
        self.annotations.destructive = Some(true);
        self.risk = self.risk.max(Risk::High);
        self
    }

    /// MCP `idempotentHint`: repeating a call with the same arguments has no
    /// further effect.
    pub fn idempotent(mut self) -> Self {
        self.annotations.idempotent = Some(true);
        self
    }

    /// MCP `openWorldHint`: the tool reaches beyond a closed set of systems.
    pub fn open_world(mut self) -> Self {
        self.annotations.open_world = Some(true);
        self
    }

    /// Replaces the default plan (no targets, the tool's risk, "call NAME")
    /// with `plan`, which sees the parsed arguments. It must have no side
    /// effects: the host denies every side-effecting capability while a plan
    /// runs. `A` is normally the tool's own arguments type.
    pub fn plan<A, F>(mut self, plan: F) -> Self
    where
        A: DeserializeOwned,
        F: Fn(&Ctx, &A) -> Result<Plan, ToolError> + 'static,
    {
        self.plan = Some(Box::new(move |ctx, args| plan(ctx, &parse(args)?)));
        self
    }

    /// The WIT description of this tool, schemas included.
    pub(crate) fn spec(self) -> ToolSpec {
        let permission = permission::required(self.permission.as_ref(), "tool", &self.name);
        let (input, output) = (self.schemas)();
        ToolSpec {
            name: self.name,
            title: self.title,
            description: self.description,
            input_schema: self.input_schema.unwrap_or(input),
            output_schema: (!is_null_schema(&output)).then_some(output),
            annotations: self.annotations,
            permission,
            risk: self.risk,
            mutating: self.mutating,
        }
    }

    /// Runs the custom plan, or checks the arguments for the default one.
    pub(crate) fn run_plan(&self, ctx: &Ctx, args: &str) -> Result<Plan, ToolError> {
        match &self.plan {
            Some(plan) => plan(ctx, args),
            None => {
                (self.check)(args)?;
                Ok(Plan::new(self.risk, format!("call {}", self.name)))
            }
        }
    }

    /// Runs the tool.
    pub(crate) fn run_call(&self, ctx: &Ctx, args: &str) -> Result<ToolOutput, ToolError> {
        (self.call)(ctx, args)
    }
}

/// A structured result plus optional human-readable text and content blocks.
///
/// Return `Output::new(value).with_text("…")` instead of `value` when the
/// host's rendering of the JSON is not what a person should read, and add
/// images, audio or resources with [`with_content`](Output::with_content).
/// An `Output<()>` has no structured result (and the tool no output
/// schema): its answer is its text and content alone.
#[derive(Debug, Clone, PartialEq)]
pub struct Output<T> {
    structured: T,
    text: Option<String>,
    content: Vec<Content>,
}

impl<T> Output<T> {
    /// The structured result alone.
    pub fn new(structured: T) -> Self {
        Output {
            structured,
            text: None,
            content: Vec::new(),
        }
    }

    /// Adds the text MCP clients show in place of the JSON.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// Adds a content block (an image, audio, a link, an embedded
    /// resource, more text) after the text: blocks are sent in the order
    /// they are added. See [`Content`].
    pub fn with_content(mut self, block: impl Into<Content>) -> Self {
        self.content.push(block.into());
        self
    }
}

impl<T: Serialize> Output<T> {
    /// Serializes the structured value into a buffer of exactly its size.
    ///
    /// Measuring first costs a second serialization pass (a growing buffer
    /// copies about as much), and bounds guest memory: an answer of N bytes
    /// needs N bytes, where a doubling buffer can hold 3N at its peak and hit
    /// the memory budget before the host ever sees the answer.
    fn into_wit(self) -> Result<ToolOutput, ToolError> {
        let failed = |e: serde_json::Error| {
            ToolError::Failed(format!("output does not serialize to JSON: {e}"))
        };
        let mut size = ByteCount(0);
        serde_json::to_writer(&mut size, &self.structured).map_err(failed)?;
        let mut json = Vec::with_capacity(size.0);
        serde_json::to_writer(&mut json, &self.structured).map_err(failed)?;
        let structured = String::from_utf8(json).expect("serde_json writes UTF-8");
        Ok(ToolOutput {
            structured,
            text: self.text,
            content: self.content.into_iter().map(|c| c.0).collect(),
        })
    }
}

/// An `io::Write` that only counts.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What a tool function may return: a `Serialize + JsonSchema` value, or an
/// [`Output`] of one.
pub trait IntoOutput {
    /// The type whose schema is the tool's output schema.
    type Structured: Serialize + JsonSchema;
    /// The value with its (optional) text.
    fn into_output(self) -> Output<Self::Structured>;
}

impl<T: Serialize + JsonSchema> IntoOutput for T {
    type Structured = T;
    fn into_output(self) -> Output<T> {
        Output::new(self)
    }
}

impl<T: Serialize + JsonSchema> IntoOutput for Output<T> {
    type Structured = T;
    fn into_output(self) -> Output<T> {
        self
    }
}

fn parse<A: DeserializeOwned>(args: &str) -> Result<A, ToolError> {
    serde_json::from_str(args).map_err(|e| ToolError::InvalidArguments(e.to_string()))
}

/// The input and output JSON Schemas (draft 2020-12) as JSON text.
/// Whether `schema` (JSON text) is that of `()`: `"type": "null"`.
fn is_null_schema(schema: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(schema)
        .is_ok_and(|v| v.get("type").and_then(serde_json::Value::as_str) == Some("null"))
}

fn schemas<A: JsonSchema, O: JsonSchema>() -> (String, String) {
    let text =
        |s: schemars::Schema| serde_json::to_string(&s).expect("a schemars schema is plain JSON");
    (
        text(schemars::schema_for!(A)),
        text(schemars::schema_for!(O)),
    )
}
