"""Progress of a long call, through the host's `progress` import.

The host relays each report to the MCP client as `notifications/progress`
when the client asked for progress, and drops it otherwise; each report
counts against the call's host-call budget, and a message is cut at 1 KiB.
Outside a component (native unit tests) reports go to stderr.

    from toolhost_sdk import progress
    for i, row in enumerate(rows):
        progress.report(i + 1, len(rows), f"checked {row['name']}")
"""

from __future__ import annotations

from . import _host


def report(progress: float, total: float | None = None, message: str | None = None) -> None:
    """Reports that the call has come to `progress` (of `total`, when
    known), with an optional one-line `message`. `progress` should
    increase; the host ignores non-finite numbers."""
    _host.current().report(float(progress), None if total is None else float(total), message)
