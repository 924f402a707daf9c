"""The Python MCP SDK uses what plugins speak of MCP beyond JSON, in both
eras, against the conformance plugin.

    .venv/bin/python tests/e2e/python_features.py http://127.0.0.1:PORT/mcp

Content blocks: `test_image_content` answers an image block (a PNG, by its
signature), `test_audio_content` an audio block (a WAV), and
`test_multiple_content_types` a text, an image and an embedded JSON
resource, in that order, in both eras.

Asking the client (the plugin's `client` import), in both eras (a
session is asked live; 2026-07-28 answers `input_required` and the SDK
retries with the answers): `test_input_required_result_multiple_inputs`
asks a form, the model and the roots at once, and the answers the
`elicitation_callback`, `sampling_callback` and `list_roots_callback` give
come back in its text; `test_elicitation` gets the form the callback
accepts; a client without callbacks gets a tool error naming what it
lacks.

Prompts, in both eras: `prompts/list` names the conformance prompts,
`test_prompt_with_arguments` comes back filled in, `test_prompt_with_image`
carries its image, `test_input_required_result_prompt` asks the
`elicitation_callback` first (a session: in session; 2026-07-28: an
input-required round the SDK drives), and `completion/complete` answers for
a prompt argument.

Resources, in both eras: `resources/list` shows the fixed resources and
`resources/templates/list` the template; reading
`test://template/123/data` fills the template in, and the static binary
comes back as the PNG it is.

Resource updates: a session that subscribed to `test://watched-resource`
hears `notifications/resources/updated` when `test_touch_watched_resource`
tells of a change, and hears nothing after unsubscribing; a session of
another tenant (`TOOLHOST_E2E_OTHER_TOKEN`, tenant `acme`) subscribed to
the same URI hears nothing of the first tenant's change, only its own (a
marker it touches afterwards arrives first). 2026-07-28: a
`subscriptions/listen` stream naming the URI gets the `ResourceUpdated`
event.

Logging: calls `test_tool_with_logging` (three lines at info) and counts
the `notifications/message` its `logging_callback` hears:

* 2025-11-25: none before `logging/setLevel`, none at `warning`, the three
  lines in order at `info`, each from logger `conformance`;
* 2026-07-28: none without a level (the request carries no
  `io.modelcontextprotocol/logLevel`), the three with `log_level="debug"`,
  none with `log_level="error"`.

Prints one line per step; exits 1 with the reason on the first failure.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys

import anyio
from mcp import Client, types
from mcp.client.subscriptions import ResourceUpdated
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import (
    AudioContent,
    CreateMessageResult,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    Implementation,
    ListRootsResult,
    PromptReference,
    LoggingMessageNotificationParams,
    Root,
    TextContent,
)

from checks import check, run

TOOL = "test_tool_with_logging"
LINES = ["Tool execution started", "Tool processing data", "Tool execution completed"]
CLIENT_INFO = Implementation(name="toolhost-e2e-python-features", version="0.1.0")


def connect(
    url: str, mode: str, heard: list[LoggingMessageNotificationParams], log_level=None, token=None, **callbacks
) -> Client:
    token = token or os.environ["TOOLHOST_E2E_TOKEN"]
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})

    async def hear(params: LoggingMessageNotificationParams) -> None:
        heard.append(params)

    transport = streamable_http_client(url, http_client=http)
    client = Client(
        transport,
        mode=mode,
        client_info=CLIENT_INFO,
        read_timeout_seconds=30,
        logging_callback=hear,
        log_level=log_level,
        **callbacks,
    )
    return http, client


async def call(client: Client, label: str) -> None:
    result = await client.call_tool(TOOL, {})
    check(not result.is_error, f"{label}: {TOOL} answered isError: {result}")


def texts(heard: list[LoggingMessageNotificationParams]) -> list[str]:
    return [str(p.data) for p in heard]


async def all_heard(heard: list[LoggingMessageNotificationParams], n: int) -> None:
    """Waits (at most two seconds) until `n` lines were heard: the client
    runs its logging callback in a task of its own, so a line sent before
    the answer may reach the callback just after the call returns."""
    for _ in range(200):
        if len(heard) >= n:
            return
        await asyncio.sleep(0.01)


async def legacy(url: str) -> None:
    heard: list[LoggingMessageNotificationParams] = []
    http, client = connect(url, "legacy", heard)
    async with http, client:
        await call(client, "legacy, no level")
        check(heard == [], f"legacy: lines before any logging/setLevel: {texts(heard)}")
        await client.set_logging_level("warning")
        await call(client, "legacy, warning")
        check(heard == [], f"legacy: info lines at level warning: {texts(heard)}")
        await client.set_logging_level("info")
        await call(client, "legacy, info")
        await all_heard(heard, len(LINES))
        check(texts(heard) == LINES, f"legacy: at info heard {texts(heard)}, expected {LINES}")
        check(
            all(p.level == "info" and p.logger == "conformance" for p in heard),
            f"legacy: levels and loggers {[(p.level, p.logger) for p in heard]}",
        )
    print(f"ok  legacy: none before setLevel or at warning, {len(heard)} lines at info from 'conformance'")


async def stateless(url: str, log_level, want: list[str]) -> None:
    heard: list[LoggingMessageNotificationParams] = []
    http, client = connect(url, "2026-07-28", heard, log_level)
    async with http, client:
        await call(client, f"2026-07-28, log_level={log_level!r}")
    check(texts(heard) == want, f"2026-07-28 log_level={log_level!r}: heard {texts(heard)}, expected {want}")
    print(f"ok  2026-07-28 log_level={log_level!r}: {len(heard)} lines")


async def content(url: str, mode: str) -> None:
    http, client = connect(url, mode, [])
    async with http, client:
        image = await client.call_tool("test_image_content", {})
        check(not image.is_error and len(image.content) == 1, f"{mode}: image answer {image}")
        block = image.content[0]
        check(isinstance(block, ImageContent) and block.mime_type == "image/png", f"{mode}: {block}")
        check(base64.b64decode(block.data).startswith(b"\x89PNG\r\n\x1a\n"), f"{mode}: not a PNG")
        check(image.structured_content is None, f"{mode}: a content-only answer has no structured content")

        audio = (await client.call_tool("test_audio_content", {})).content[0]
        check(isinstance(audio, AudioContent) and audio.mime_type == "audio/wav", f"{mode}: {audio}")
        check(base64.b64decode(audio.data)[8:12] == b"WAVE", f"{mode}: not a WAV")

        mixed = (await client.call_tool("test_multiple_content_types", {})).content
        kinds = [type(b) for b in mixed]
        check(kinds == [TextContent, ImageContent, EmbeddedResource], f"{mode}: mixed content {kinds}")
        resource = mixed[2].resource
        check(str(resource.uri) == "test://mixed-content-resource", f"{mode}: {resource}")
        check(json.loads(resource.text) == {"test": "data", "value": 123}, f"{mode}: {resource}")
    print(f"ok  {mode}: image, audio and mixed content blocks")


async def asks(url: str, mode: str) -> None:
    asked: list[str] = []

    async def on_elicit(context, params) -> ElicitResult:
        asked.append(f"form:{params.message}")
        fields = params.requested_schema["properties"]
        content = {"name": "Ada"} if "name" in fields else {"username": "ada", "email": "ada@example.com"}
        return ElicitResult(action="accept", content=content)

    async def on_sample(context, params) -> CreateMessageResult:
        asked.append(f"model:{params.messages[0].content.text}")
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text="Bonjour"), model="e2e-model")

    async def on_roots(context) -> ListRootsResult:
        asked.append("roots")
        return ListRootsResult(roots=[Root(uri="file:///work/e2e", name="e2e")])

    callbacks = {"elicitation_callback": on_elicit, "sampling_callback": on_sample, "list_roots_callback": on_roots}
    http, client = connect(url, mode, [], **callbacks)
    async with http, client:
        many = await client.call_tool("test_input_required_result_multiple_inputs", {})
        said = many.content[0].text if many.content else ""
        check(not many.is_error, f"{mode}: multiple inputs answered isError: {many}")
        for want in ['"name":"Ada"', 'sampled "Bonjour"', "1 roots"]:
            check(want in said, f"{mode}: {want!r} not in {said!r}")
        check(
            sorted(asked) == sorted(["form:What is your name?", "model:Generate a greeting", "roots"]),
            f"{mode}: asked {asked}",
        )
        form = await client.call_tool("test_elicitation", {"message": "Who are you?"})
        check("ada@example.com" in form.content[0].text, f"{mode}: elicitation answer {form.content}")
    http, client = connect(url, mode, [])
    async with http, client:
        bare = await client.call_tool("test_elicitation", {"message": "Who are you?"})
        text = bare.content[0].text if bare.content else ""
        check(bare.is_error and "elicitation" in text, f"{mode}: without a callback: {bare}")
    print(f"ok  {mode}: a form, the model and the roots answered by the callbacks; none without them")


async def prompts(url: str, mode: str) -> None:
    async def on_elicit(context, params) -> ElicitResult:
        return ElicitResult(action="accept", content={"context": "release review"})

    http, client = connect(url, mode, [], elicitation_callback=on_elicit)
    async with http, client:
        listed = await client.list_prompts()
        names = {p.name for p in listed.prompts}
        check({"test_simple_prompt", "test_prompt_with_arguments"} <= names, f"{mode}: prompts {names}")
        filled = await client.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
        text = filled.messages[0].content.text
        check(text == "Prompt with arguments: arg1='hello', arg2='world'", f"{mode}: {text!r}")
        image = await client.get_prompt("test_prompt_with_image")
        check(isinstance(image.messages[0].content, ImageContent), f"{mode}: {image.messages}")
        asked = await client.get_prompt("test_input_required_result_prompt")
        said = asked.messages[0].content.text
        check(said == "Use this context: release review", f"{mode}: {said!r}")
        done = await client.complete(
            PromptReference(type="ref/prompt", name="test_prompt_with_arguments"), {"name": "arg1", "value": "h"}
        )
        check(done.completion.values == [], f"{mode}: an argument naming no kind completes nothing: {done}")
    print(f"ok  {mode}: prompts listed, filled in (one after asking the person), an argument completed")


async def resources(url: str, mode: str) -> None:
    http, client = connect(url, mode, [])
    async with http, client:
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        check({"test://static-text", "test://static-binary"} <= listed, f"{mode}: resources {listed}")
        shapes = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        check("test://template/{id}/data" in shapes, f"{mode}: templates {shapes}")
        read = (await client.read_resource("test://template/123/data")).contents[0]
        data = json.loads(read.text)
        check(data == {"id": "123", "templateTest": True, "data": "Data for ID: 123"}, f"{mode}: {data}")
        blob = (await client.read_resource("test://static-binary")).contents[0]
        check(base64.b64decode(blob.blob).startswith(b"\x89PNG"), f"{mode}: not a PNG")
    print(f"ok  {mode}: resources and templates listed, a templated resource and a binary one read")


WATCHED = "test://watched-resource"
TOUCH = "test_touch_watched_resource"
WAIT_SECONDS = 30


class Updates:
    """The `notifications/resources/updated` one session hears, in order."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self.arrived = anyio.Event()

    async def handler(self, message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.uris.append(str(message.params.uri))
            self.arrived.set()
        await anyio.lowlevel.checkpoint()

    async def until(self, count: int, what: str) -> None:
        with anyio.move_on_after(WAIT_SECONDS):
            while len(self.uris) < count:
                self.arrived = anyio.Event()
                await self.arrived.wait()
        check(len(self.uris) >= count, f"{what}: heard {self.uris} within {WAIT_SECONDS}s")


async def touch(client: Client, uri: str = WATCHED) -> None:
    done = await client.call_tool(TOUCH, {"uri": uri})
    check(not done.is_error, f"{TOUCH} {uri}: {done}")


async def subscriptions_legacy(url: str) -> None:
    mine, theirs = Updates(), Updates()
    http, client = connect(url, "legacy", [], message_handler=mine.handler)
    other_http, other = connect(url, "legacy", [], token=os.environ["TOOLHOST_E2E_OTHER_TOKEN"], message_handler=theirs.handler)
    marker = "test://template/marker/data"
    async with http, client, other_http, other:
        await client.subscribe_resource(WATCHED)
        await other.subscribe_resource(WATCHED)
        await other.subscribe_resource(marker)
        await touch(client)
        await mine.until(1, "legacy: the subscriber")
        check(mine.uris == [WATCHED], f"legacy: heard {mine.uris}")
        # Updates reach each session in the order calls told of them: had
        # the other tenant heard the first, it would come before its marker.
        await touch(other, marker)
        await theirs.until(1, "legacy: the other tenant's own update")
        check(theirs.uris == [marker], f"legacy: another tenant heard {theirs.uris}")
        await client.unsubscribe_resource(WATCHED)
        await touch(client)
        await client.subscribe_resource(marker)
        await touch(client, marker)
        await mine.until(2, "legacy: after subscribing again")
        check(mine.uris == [WATCHED, marker], f"legacy: heard {mine.uris} after unsubscribing")
        refused = await client.call_tool(TOUCH, {"uri": "test://not-this-plugins"})
        said = refused.content[0].text if refused.content else ""
        check(refused.is_error and "not a resource this plugin exports" in said, f"legacy: {refused}")
    print("ok  legacy: a subscriber hears its resource's update, not after unsubscribing, not another tenant's")


async def subscriptions_stateless(url: str) -> None:
    http, client = connect(url, "2026-07-28", [])
    async with http, client:
        async with client.listen(resource_subscriptions=[WATCHED]) as sub:
            await touch(client)
            heard = None
            with anyio.move_on_after(WAIT_SECONDS):
                async for event in sub:
                    if isinstance(event, ResourceUpdated):
                        heard = event
                        break
            check(heard is not None and heard.uri == WATCHED, f"2026-07-28: heard {heard}")
    print("ok  2026-07-28: a listen stream naming the resource hears its update")


async def main(url: str) -> None:
    await subscriptions_legacy(url)
    await subscriptions_stateless(url)
    await resources(url, "legacy")
    await resources(url, "2026-07-28")
    await prompts(url, "legacy")
    await prompts(url, "2026-07-28")
    await asks(url, "legacy")
    await asks(url, "2026-07-28")
    await content(url, "legacy")
    await content(url, "2026-07-28")
    await legacy(url)
    await stateless(url, None, [])
    await stateless(url, "debug", LINES)
    await stateless(url, "error", [])


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python_features.py http://127.0.0.1:PORT/mcp")
    run(main(sys.argv[1]))
