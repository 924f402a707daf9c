"""What an exploration run leaves behind, through the host's `artifacts`
import: candidate test plans, traces, reports.

A tool whose manifest entry says `run = { … }` runs as an exploration run
(queued, durable, cancellable); each `put` there keeps one artifact, owned
by the run, and answers where the run's principal reads it back (`uri`,
MCP `resources/read`) and its SHA-256, which the run's receipt also lists:

    kept = artifacts.put_json("plan-staging.json", {"scenarios": [204, 205]})
    log.info("kept %s (%d bytes)", kept.uri, kept.size)

Limits, all the host's: only a call inside an exploration run may keep
artifacts (anywhere else every `put` is refused); the run's budget bounds
how many it keeps and their total bytes; each `put` counts against the
host-call budget. A refusal is `Failed` with the host's reason, never a
trap, so a tool decides whether it can go on without the artifact.
"""

from __future__ import annotations

import json
from typing import Any

from . import _host
from ._records import ArtifactInfo
from .errors import Failed

__all__ = ["ArtifactInfo", "put", "put_json", "MAX_NAME_CHARS", "JSON"]

#: The longest name the host accepts, in characters (and it must not be empty).
MAX_NAME_CHARS = 128
#: The media type `put_json` keeps its bodies as.
JSON = "application/json"


def put(name: str, mime_type: str, body: bytes | str) -> ArtifactInfo:
    """Keeps `body` (text is kept as UTF-8) as the artifact `name`
    (1–`MAX_NAME_CHARS` characters) of type `mime_type`
    (`application/json`, `text/plain`, `text/markdown`…). A refusal is
    `Failed` naming the artifact and quoting the host's reason."""
    data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    try:
        return _host.current().put_artifact(name, mime_type, data)
    except _host.Refused as e:
        raise Failed(f"artifact {json.dumps(name)} was not kept: {e.why}") from None


def put_json(name: str, value: Any) -> ArtifactInfo:
    """Keeps `value` as indented JSON (`application/json`) under `name`,
    for people to read back; a value that does not serialize is `Failed`
    before the host is asked."""
    try:
        body = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise Failed(f"artifact {json.dumps(name)} does not serialize to JSON: {e}") from None
    return put(name, JSON, body)
