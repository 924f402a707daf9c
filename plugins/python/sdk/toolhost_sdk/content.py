"""Content blocks: images, audio, links and embedded resources a tool's
answer carries beside its structured result (MCP content).

    from toolhost_sdk import Output, content

    @tool(permission="charts:read")
    def chart(ctx: Ctx) -> Output[Summary]:
        return Output(Summary(weeks=4), text="The weekly chart.",
                      content=[content.Image(png_bytes, "image/png")])

The host counts every block against the call's output budget, refuses an
answer that carries a credential, and keeps a block too large to send
inline as an artifact, sending a link to it instead. Blocks are sent after
the text, in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

__all__ = ["Audio", "Block", "Embedded", "Image", "Link", "Text"]


@dataclass(frozen=True)
class Text:
    """A text block."""

    text: str


@dataclass(frozen=True)
class Image:
    """An image: its bytes and MIME type (`image/png`...)."""

    data: bytes
    mime_type: str


@dataclass(frozen=True)
class Audio:
    """An audio clip: its bytes and MIME type (`audio/wav`...)."""

    data: bytes
    mime_type: str


@dataclass(frozen=True)
class Link:
    """A link to a resource the client may read."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None


@dataclass(frozen=True)
class Embedded:
    """A resource's contents, sent with the answer: `text` or `blob`."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: bytes | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise TypeError("an embedded resource has text or a blob, one of them")


#: One content block.
Block = Union[Text, Image, Audio, Link, Embedded]


def check(blocks: list[Block] | tuple[Block, ...]) -> tuple[Block, ...]:
    """`blocks` as a tuple, each one of the block types (a `TypeError`
    naming the first that is not)."""
    for i, b in enumerate(blocks):
        if not isinstance(b, (Text, Image, Audio, Link, Embedded)):
            raise TypeError(f"content block {i} is a {type(b).__name__}, not a toolhost_sdk.content block")
    return tuple(blocks)
