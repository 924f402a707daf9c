"""What a tool, a prompt, a resource and a template declare alike: the
function they are built from (which stays callable as it was), a name, a
permission, a description and a title, checked once here.

`ToolDef`, `PromptDef`, `ResourceDef` and `TemplateDef` extend `Declared`
with what is their own; their constructors pass these on as keywords.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from . import schema

#: MCP tool names: 1–64 of `[A-Za-z0-9_.-]`.
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class Declared:
    """A function declared as a `kind` (`tool`, `prompt`, `resource`,
    `template`): its name (the function's unless given), permission
    (`resource:action`, split at the last colon) and description (the
    docstring's summary unless given). A bad one is `ValueError` naming it
    (`where`: `tool 'greet'`)."""

    #: What errors call it; each subclass names its own.
    kind: ClassVar[str]

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None,
        permission: str,
        description: str | None,
        title: str | None,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.where = f"{self.kind} {self.name!r}"
        if not TOOL_NAME.match(self.name):
            raise ValueError(f"{self.where}: a name is 1-64 of [A-Za-z0-9_.-]")
        self.resource, self.action = _permission(self.where, permission)
        self.description = description or schema.summary(fn.__doc__) or ""
        if not self.description:
            raise ValueError(f"{self.where}: give a description (or a docstring)")
        self.title = title

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}>"


def _permission(where: str, permission: str) -> tuple[str, str]:
    """`resource:action` split at the last colon (a resource may hold colons)."""
    resource, sep, action = permission.rpartition(":")
    if not sep or not resource or not action:
        raise ValueError(f"{where}: permission {permission!r} is not RESOURCE:ACTION")
    return resource, action
