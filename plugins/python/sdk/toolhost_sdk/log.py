"""Log lines through the host's `log` import.

The host tags each line with the plugin and the call, and counts it
against the call's log budget (bytes) and host-call budget: a line past
either ends the call with a trap. Log for diagnostics, not data.

    from toolhost_sdk import log
    log.info("greeting %s", name)   # %-style arguments, as in `logging`

Outside a component (native unit tests) lines go to stderr instead.
`print` inside a component goes to a stdout nobody reads: use this.
"""

from __future__ import annotations

from . import _host


def log(level: str, message: str, *args: object) -> None:
    """Records one line at `level` (`trace`, `debug`, `info`, `warn` or
    `error`); `message % args` when arguments are given."""
    if level not in _host.LEVELS:
        raise ValueError(f"log level {level!r} is not one of {', '.join(_host.LEVELS)}")
    _host.current().log(level, message % args if args else message)


def trace(message: str, *args: object) -> None:
    """Records one line at `trace`."""
    log("trace", message, *args)


def debug(message: str, *args: object) -> None:
    """Records one line at `debug`."""
    log("debug", message, *args)


def info(message: str, *args: object) -> None:
    """Records one line at `info`."""
    log("info", message, *args)


def warn(message: str, *args: object) -> None:
    """Records one line at `warn`."""
    log("warn", message, *args)


def error(message: str, *args: object) -> None:
    """Records one line at `error`."""
    log("error", message, *args)
