"""`{{name}}`: {{description}}

One tool to start from. Each tool is a typed function: the SDK derives its
JSON Schemas from the type hints and the docstring, checks the arguments
before it runs, and the host runs every call in a fresh sandbox with the
permission the manifest (`toolhost.toml`) declares.
"""

from dataclasses import dataclass

from toolhost_sdk import Ctx, InvalidArguments, log, tool
from toolhost_sdk.exports import Authoring, Entities, Prompts, Resources, Tool  # noqa: F401 (the world's exports, for componentize-py)


@dataclass
class Greeting:
    """What `greet` answers.

    Attributes:
        message: The greeting.
    """

    message: str


@tool(permission="{{name}}:read", read_only=True)
def greet(ctx: Ctx, name: str) -> Greeting:
    """Greets someone by name; a blank name is invalid.

    Args:
        name: Who to greet.
    """
    name = name.strip()
    if not name:
        raise InvalidArguments("name must not be blank")
    log.info("greeting %s", name)
    return Greeting(f"Hello, {name}!")
