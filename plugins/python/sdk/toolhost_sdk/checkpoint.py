"""Human checkpoints, through the host's `checkpoint` import.

A run that needs a person's judgement (a flaky-looking failure, a visual
check) opens a checkpoint for it with `open`; a person decides it from any
MCP client (the host's `list_checkpoints` and `decide_checkpoint` tools);
the tool reads the decision by calling `open` again on a later call, and
carries it to its backend:

    info = checkpoint.open(
        "execution:ex-3",
        "UI test 'Checkout page' in staging needs a person's review",
        "The screenshot diff of step 2 is 4% off; the run itself passed.",
    )
    if info.is_decided:
        log.info("decided: record %s", info.outcome)
    else:
        log.info("waiting for a person: checkpoint %s", info.id)

The host owns the rows: one per (tenant, plugin, subject), so opening the
same subject again never opens a second one, and no plugin can decide one.
Limits, all the host's: opening counts against the call's host-call
budget; it is refused while a `plan` runs and after a clarification (the
call may not have side effects then), so a tool that opens checkpoints is
a mutating one.
"""

from __future__ import annotations

import json

from . import _host
from ._records import CheckpointInfo
from .errors import Failed

__all__ = ["CheckpointInfo", "open", "MAX_SUBJECT_BYTES", "MAX_TITLE_BYTES", "MAX_EVIDENCE_BYTES"]

#: The longest subject the host accepts, in UTF-8 bytes (and it must not be empty).
MAX_SUBJECT_BYTES = 200
#: The longest title the host accepts, in UTF-8 bytes: one line for a person.
MAX_TITLE_BYTES = 300
#: The longest evidence the host accepts, in UTF-8 bytes: a paragraph or two.
MAX_EVIDENCE_BYTES = 4096


def open(subject: str, title: str, evidence: str) -> CheckpointInfo:  # noqa: A001 (mirrors the WIT name)
    """Opens the checkpoint of `subject` (the plugin's own name for the
    run, e.g. `execution:ex-3`), or answers the one already open for it in
    the caller's tenant, decided or not: calling it again is how a tool
    reads the decision.

    `title` (one line) and `evidence` (what the person needs to judge) are
    cut to `MAX_TITLE_BYTES` and `MAX_EVIDENCE_BYTES` at a character
    boundary, ending in `…`; they matter only when the checkpoint is first
    opened. `subject` is not cut (cutting would change which run it
    names): an empty one or one over `MAX_SUBJECT_BYTES` is refused.

    A refusal (while planning or after a clarification, no checkpoint
    store, a subject out of bounds) is `Failed` with the host's reason.
    Outside a component (native unit tests) every call fails.
    """
    title, evidence = fit(title, MAX_TITLE_BYTES), fit(evidence, MAX_EVIDENCE_BYTES)
    try:
        return _host.current().open_checkpoint(subject, title, evidence)
    except _host.Refused as e:
        raise Failed(f"checkpoint {json.dumps(subject)} could not be opened: {e.why}") from None


def fit(text: str, max_bytes: int) -> str:
    """`text` if it fits in `max_bytes` UTF-8 bytes, else its longest
    prefix that fits with a trailing `…`, cut at a character boundary."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    ellipsis = "…"
    room = max(max_bytes - len(ellipsis.encode("utf-8")), 0)
    return data[:room].decode("utf-8", errors="ignore") + ellipsis
