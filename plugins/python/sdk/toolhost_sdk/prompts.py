"""Prompts a plugin exports (MCP `prompts/list`, `prompts/get`), through
the WIT `prompts` export:

    from toolhost_sdk import Ctx, Message, prompt

    @prompt(permission="testbench:read", completes={"project": "project"})
    def review_plan(ctx: Ctx, project: str, focus: str | None = None) -> list[Message]:
        \"""Review a project's test plan.

        Args:
            project: The project, by name.
            focus: What to look at first.
        \"""
        return [Message.user(f"Review the test plan of {project}" + (f", {focus} first." if focus else "."))]

A prompt is a function whose parameters after `ctx` are its arguments,
each `str` (required unless it has a default) or `str | None` (optional);
descriptions come from the docstring's `Args:` (or `Annotated[str,
"text"]`). `completes={"argument": "kind"}` marks an argument that names
a thing of an entity kind the plugin lists (`@entities`): the host
completes it (`completion/complete`) from the caller's tenant's names. It
answers a `str` (one user message), a `Message`, or a list of them.

A prompt needs a permission, as a tool does, and the manifest declares it
(`[prompts.NAME] permission = "…"`). `get` runs in a fresh sandbox that may
not have side effects (GET and HEAD backend requests only) but may ask the
client (`toolhost_sdk.client`). Raise a `ToolError` to fail.
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from . import content, schema
from .ctx import Ctx
from .errors import Failed, InvalidArguments
from ._declared import TOOL_NAME, Declared

__all__ = ["Message", "PromptArgument", "PromptDef"]

#: Who says a message.
Role = Literal["user", "assistant"]


@dataclass(frozen=True)
class Message:
    """One message of a filled-in prompt: its role and one content block
    (`Message.user("text")`, `Message.assistant(content.Image(...))`)."""

    role: Role
    content: content.Block

    @classmethod
    def user(cls, body: str | content.Block) -> Message:
        """A message of the user's: text, or a content block."""
        return cls("user", _block(body))

    @classmethod
    def assistant(cls, body: str | content.Block) -> Message:
        """A message of the assistant's: text, or a content block."""
        return cls("assistant", _block(body))


def _block(body: str | content.Block) -> content.Block:
    return content.Text(body) if isinstance(body, str) else content.check([body])[0]


@dataclass(frozen=True)
class PromptArgument:
    """One argument of a prompt, as the host lists it."""

    name: str
    description: str | None
    required: bool
    #: The entity kind whose names complete it, if any.
    completes: str | None = None


class PromptDef(Declared):
    """A prompt built by `@prompt`: call it as the function it decorates."""

    kind = "prompt"

    def __init__(self, fn: Callable[..., Any], *, completes: Mapping[str, str] | None, **declared: Any) -> None:
        """`declared`: `name`, `permission`, `description`, `title` (see `Declared`)."""
        super().__init__(fn, **declared)
        self._compile(self.where, dict(completes or {}))

    def _compile(self, where: str, completes: dict[str, str]) -> None:
        try:
            hints = typing.get_type_hints(fn := self.fn, include_extras=True)
        except NameError as e:
            raise TypeError(f"{where}: {e}") from None
        params = list(inspect.signature(fn).parameters.values())
        self.wants_ctx = bool(params) and (hints.get(params[0].name) is Ctx or params[0].name == "ctx")
        if self.wants_ctx:
            params = params[1:]
        docs = schema.sections(fn.__doc__).get("args", {})
        self.arguments: list[PromptArgument] = []
        self.defaults: dict[str, Any] = {}
        for p in params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
                raise TypeError(f"{where}: argument {p.name!r}: *args, **kwargs and positional-only arguments have no names")
            if not TOOL_NAME.match(p.name):
                raise ValueError(f"{where}: argument {p.name!r} is not 1-64 of [A-Za-z0-9_.-]")
            hint, text = _unannotated(hints.get(p.name, str))
            nullable = _nullable_str(hint)
            if hint is not str and not nullable:
                raise TypeError(f"{where}: argument {p.name!r} must be str or str | None (prompt arguments are strings)")
            required = p.default is inspect.Parameter.empty and not nullable
            if not required:
                self.defaults[p.name] = None if p.default is inspect.Parameter.empty else p.default
            kind = completes.pop(p.name, None)
            if kind is not None and (not isinstance(kind, str) or not kind):
                raise TypeError(f"{where}: argument {p.name!r} completes an entity kind, a non-empty str")
            self.arguments.append(PromptArgument(p.name, text or docs.get(p.name), required, kind))
        if completes:
            raise ValueError(f"{where}: completes {', '.join(map(repr, completes))}, which it does not take")


    def run(self, ctx: Ctx, arguments: Mapping[str, str]) -> tuple[Message, ...]:
        """The prompt filled in with `arguments` (strings by name):
        `InvalidArguments` for an unknown argument or a missing required
        one (the host checks both before it asks)."""
        known = {a.name for a in self.arguments}
        for k, v in arguments.items():
            if k not in known:
                raise InvalidArguments(f"unknown argument {json.dumps(k)} (expected one of: {', '.join(sorted(known)) or 'none'})")
            if not isinstance(v, str):
                raise InvalidArguments(f"{k}: expected a string, got {schema.quote(v)}")
        args: dict[str, Any] = {}
        for a in self.arguments:
            if a.name in arguments:
                args[a.name] = arguments[a.name]
            elif a.required:
                raise InvalidArguments(f"missing required argument {json.dumps(a.name)}")
            else:
                args[a.name] = self.defaults[a.name]
        answer = self.fn(ctx, **args) if self.wants_ctx else self.fn(**args)
        return messages(self.name, answer)


def messages(name: str, answer: Any) -> tuple[Message, ...]:
    """A prompt's answer as messages: a `str` is one user message; a
    `Message` or a list of `Message`s (or strs) as they are."""
    items = answer if isinstance(answer, (list, tuple)) else [answer]
    out = []
    for i, m in enumerate(items):
        if isinstance(m, str):
            m = Message.user(m)
        if not isinstance(m, Message):
            raise Failed(f"prompt {name} answered {type(m).__name__} as message {i}: answer a str, a Message or a list of them")
        try:
            content.check([m.content])
        except TypeError as e:
            raise Failed(f"prompt {name}, message {i}: {e}") from None
        out.append(m)
    return tuple(out)


def _unannotated(hint: Any) -> tuple[Any, str | None]:
    """`hint` without `Annotated`, and the description it carried."""
    if typing.get_origin(hint) is typing.Annotated:
        text = next((m for m in hint.__metadata__ if isinstance(m, str)), None)
        return hint.__origin__, text
    return hint, None


def _nullable_str(hint: Any) -> bool:
    """Whether `hint` is `str | None` (or `Optional[str]`)."""
    if typing.get_origin(hint) not in (typing.Union, types.UnionType):
        return False
    return set(typing.get_args(hint)) == {str, type(None)}
