"""One tool: a typed Python function, its description for the host, its
schemas, its plan.

`@tool(...)` (see `toolhost_sdk.plugin.Plugin.tool`) builds a `ToolDef`
from a function. The function stays callable as it was, so a unit test may
call it directly; the SDK calls it through `ToolDef.run_call`, which
parses, checks and converts the arguments first and serializes the answer.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from . import content, schema
from ._declared import TOOL_NAME, Declared
from .ctx import Ctx
from .errors import Failed, InvalidArguments

__all__ = ["Output", "Plan", "Target", "Risk", "ToolDef", "ToolOutput"]

#: How risky an invocation is, as the plugin sees it. A hint: the host's
#: risk rules may raise it, never lower it.
Risk = Literal["low", "medium", "high"]
RISKS: tuple[Risk, ...] = ("low", "medium", "high")

T = TypeVar("T")


@dataclass
class Output(Generic[T]):
    """A structured answer plus the text MCP clients show in place of the
    JSON. Return `Output(greeting, text="Hello!")` instead of `greeting`
    when the host's rendering of the JSON is not what a person should read;
    annotate the function `-> Output[Greeting]`."""

    structured: T
    text: str | None = None
    #: Content blocks sent after the text (`toolhost_sdk.content`).
    content: list[content.Block] = field(default_factory=list)


@dataclass(frozen=True)
class ToolOutput:
    """A tool's answer as the WIT carries it: `structured` is JSON text."""

    structured: str
    text: str | None = None
    content: tuple[content.Block, ...] = ()

    @property
    def value(self) -> Any:
        """`structured`, parsed back (for unit tests)."""
        return json.loads(self.structured)


@dataclass
class Target:
    """A thing a call would act on, named by a plan: its `kind` (`file`,
    `environment`…), a stable `id`, a display `name`, and tags the host's
    risk rules may match (`prod`)."""

    kind: str
    id: str
    name: str
    tags: list[str] = field(default_factory=list)


@dataclass
class Plan:
    """What `plan` answers: the call's risk, one `summary` line a person
    reads when asked to approve it, and the targets it would act on."""

    risk: Risk
    summary: str
    targets: list[Target] = field(default_factory=list)

    def target(self, target: Target) -> Plan:
        """Names one more thing the call would act on; answers the plan."""
        self.targets.append(target)
        return self


class ToolDef(Declared):
    """A tool built by `@tool`: call it as the function it decorates.

    Conservative defaults, as in the Rust SDK: a tool changes state
    (`mutating`, so the host's gates apply) unless it says
    `read_only=True`; its risk is `low` unless it says otherwise, and
    `destructive=True` raises it to `high`. Annotation hints left None are
    not sent.
    """

    kind = "tool"

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        read_only: bool | None,
        destructive: bool | None,
        idempotent: bool | None,
        open_world: bool | None,
        risk: Risk,
        **declared: Any,
    ) -> None:
        """`declared`: `name`, `permission`, `description`, `title` (see `Declared`)."""
        super().__init__(fn, **declared)
        where = self.where
        if risk not in RISKS:
            raise ValueError(f"{where}: risk {risk!r} is not one of {', '.join(RISKS)}")
        if read_only and destructive:
            raise ValueError(f"{where}: a read-only tool cannot be destructive")
        self.mutating = not read_only
        self.risk: Risk = "high" if destructive else risk
        self.annotations = {
            "read_only": read_only,
            "destructive": destructive,
            "idempotent": idempotent,
            "open_world": open_world,
        }
        self._compile(where)
        self._plan: Callable[..., Plan] | None = None

    def _compile(self, where: str) -> None:
        """Schemas and the argument converter, from the function's hints."""
        try:
            hints = typing.get_type_hints(self.fn, include_extras=True)
            params = list(inspect.signature(self.fn).parameters.values())
            for p in params:
                if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
                    raise TypeError(f"argument {p.name!r}: *args, **kwargs and positional-only arguments have no JSON names")
            self.wants_ctx = bool(params) and (hints.get(params[0].name) is Ctx or params[0].name == "ctx")
            if self.wants_ctx:
                params = params[1:]
            docs = schema.sections(self.fn.__doc__).get("args", {})
            self.arguments = schema.params_shape(f"{self.name} arguments", params, hints, docs)
            self.output = _output_shape(hints.get("return", dict))
            self.input_schema = schema.root_schema(self.arguments)
            self.output_schema = schema.root_schema(self.output)
        except (TypeError, NameError) as e:  # NameError: a string hint that names nothing
            raise TypeError(f"{where}: {e}") from None

    def plan(self, fn: Callable[..., Plan]) -> Callable[..., Plan]:
        """Replaces the default plan (no targets, the tool's risk, "call
        NAME") with `fn`, which receives the context and the same checked
        arguments as the tool. Use it as a decorator, `@greet.plan`.

        It must have no side effects: the host denies every side-effecting
        capability while a plan runs (backend GET and HEAD still work, and
        so does `resolve`, whose question becomes the call's answer).
        A function that cannot take those arguments is refused here."""
        names = {f.name: None for f in self.arguments.fields}
        try:
            inspect.signature(fn).bind(*([None] if self.wants_ctx else []), **names)
        except TypeError as e:
            raise TypeError(f"the plan of tool {self.name!r} must take {self._takes()}: {e}") from None
        self._plan = fn
        return fn

    def _takes(self) -> str:
        names = [f.name for f in self.arguments.fields]
        return ", ".join((["ctx"] if self.wants_ctx else []) + names) or "no arguments"

    def run_plan(self, ctx: Ctx, arguments: str) -> Plan:
        """The custom plan, or the default one once the arguments check."""
        args = self.parse(arguments)
        if self._plan is None:
            return Plan(self.risk, f"call {self.name}")
        plan = self._plan(ctx, **args) if self.wants_ctx else self._plan(**args)
        if not isinstance(plan, Plan) or plan.risk not in RISKS:
            raise TypeError(f"the plan of tool {self.name!r} must answer a Plan with a risk in {RISKS}, not {plan!r}")
        return plan

    def run_call(self, ctx: Ctx, arguments: str) -> ToolOutput:
        """Runs the tool on `arguments` (a JSON object as text)."""
        args = self.parse(arguments)
        answer = self.fn(ctx, **args) if self.wants_ctx else self.fn(**args)
        return serialize(self.name, answer)

    def parse(self, arguments: str | dict[str, Any]) -> dict[str, Any]:
        """The arguments as keyword arguments of the function, checked and
        converted; `InvalidArguments` naming the field otherwise."""
        value = parse_json(arguments) if isinstance(arguments, str) else arguments
        if not isinstance(value, dict):
            raise InvalidArguments(f"the arguments must be a JSON object, not {schema.quote(value)}")
        return self.arguments.convert(value, "")


def serialize(tool: str, answer: Any) -> ToolOutput:
    """A tool's answer as JSON text; `Failed` if it is not a JSON object."""
    text, blocks = None, ()
    if isinstance(answer, Output):
        answer, text, answer_content = answer.structured, answer.text, answer.content
        try:
            blocks = content.check(answer_content)
        except TypeError as e:
            raise Failed(str(e)) from None
    try:
        value = schema.to_json(answer)
        structured = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise Failed(f"output does not serialize to JSON: {e}") from None
    if not isinstance(value, dict):
        raise Failed(f"tool {tool} answered {schema.quote(value)}: an answer is a JSON object")
    return ToolOutput(structured, text, blocks)


def parse_json(text: str) -> Any:
    """JSON text as values: `InvalidArguments` for text that is not JSON,
    for `NaN` and `Infinity`, and for an object that repeats a key."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in items:
            if k in out:
                raise InvalidArguments(f"duplicate field {json.dumps(k)}")
            out[k] = v
        return out

    def constant(name: str) -> Any:
        raise InvalidArguments(f"{name} is not JSON")

    try:
        return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except ValueError as e:
        raise InvalidArguments(f"the arguments are not JSON: {e}") from None


def _output_shape(hint: Any) -> schema.Shape:
    """The answer's shape: the annotation, unwrapped from `Output[...]`,
    which must be an object (MCP structured content is one)."""
    if hint is Output or typing.get_origin(hint) is Output:
        args = typing.get_args(hint)
        hint = args[0] if args else dict
    shape = schema.shape_of(hint)
    if not isinstance(shape, (schema.ObjectShape, schema.DictShape)):
        raise TypeError(f"the answer must be a dict or a dataclass (MCP structured content is an object), not {hint!r}")
    return shape
