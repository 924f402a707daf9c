"""Asking the MCP client for input while a call runs, through the host's
`client` import: a form for the person (elicitation), the client's model
(sampling, when the plugin's reviewed manifest grants it), the client's
roots.

    from toolhost_sdk import Failed, client, log

    form = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    answer = client.elicit("user_name", "What is your name?", form)
    if not answer.accepted:
        raise Failed("the person declined")
    log.info("hello %s", answer.content["name"])

**Ask before acting.** On a 2026-07-28 request the host answers the
client `input_required` and runs the call again, from the start, with the
answers: the round ends the call inside `ask` (the instance stops there,
no `except` or `finally` runs), so each request's key (1–64 of
`[A-Za-z0-9_.-]`) must be the same on every run, and a call that already
wrote to a backend or opened a checkpoint is refused. Ask several things
at once with `ask`: on a 2026-07-28 request they then cost one round. A
call asks at most 8 rounds; plans and entity listings cannot ask. A
failed ask raises `ClientError` (a `Failed`), whose `kind` says why.
Outside a component (native unit tests) nothing can be asked: every ask
is `ClientError` `unsupported`; `toolhost_sdk.testing.FakeHost` answers.
"""

from __future__ import annotations

from typing import Any

from . import _host
from ._records import Elicitation, Form, Input, Root, Sampled, SamplingMessage, SamplingRequest, Support
from .errors import ClientError

__all__ = [
    "ClientError",
    "Elicitation",
    "Form",
    "Input",
    "Root",
    "Sampled",
    "SamplingMessage",
    "SamplingRequest",
    "Support",
    "ask",
    "elicit",
    "prompt",
    "roots",
    "sample",
    "supports",
]


def supports() -> Support:
    """What the client can answer (`sampling`: also whether the manifest
    grants it). Outside a component: nothing."""
    return _host.current().supports()


def ask(requests: list[Input]) -> list[Elicitation | Sampled | tuple[Root, ...]]:
    """Asks every request at once (`Input.elicit`, `.sample`, `.roots`);
    answers in the same order: an `Elicitation`, a `Sampled` or a tuple of
    `Root`s. A failure is `ClientError`."""
    return _host.current().ask(list(requests))


def elicit(key: str, message: str, schema: Any) -> Elicitation:
    """Asks the person one form (see `Input.elicit`)."""
    return _one(Input.elicit(key, message, schema), Elicitation)


def sample(key: str, request: SamplingRequest) -> Sampled:
    """Asks the client's model one request (see `prompt`)."""
    return _one(Input.sample(key, request), Sampled)


def roots(key: str) -> tuple[Root, ...]:
    """Asks the client for its roots."""
    return _one(Input.roots(key), tuple)


def prompt(text: str, max_tokens: int) -> SamplingRequest:
    """A one-message text request of at most `max_tokens`."""
    return SamplingRequest((SamplingMessage("user", text),), max_tokens)


def _one(request: Input, kind: type) -> Any:
    answers = ask([request])
    if len(answers) != 1 or not isinstance(answers[0], kind):
        raise ClientError("failed", f"unexpected answer {answers!r}")
    return answers[0]
