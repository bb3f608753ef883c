"""Logging to the client: the RFC 5424 levels of ``notifications/message``, and a ``logging.Logger``
whose records go to the client instead of to stderr."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["LEVELS", "ClientLogHandler", "ClientLogger", "level_index", "level_of_record"]

# RFC 5424 severities, least severe first (the order logging/setLevel thresholds use)
LEVELS: tuple[str, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_INDEX = {name: index for index, name in enumerate(LEVELS)}

# Python level numbers for the RFC 5424 levels Python has no name for
NOTICE = 25
ALERT = 55
EMERGENCY = 60

PREFIX = "jsonrpc_mcp.client_log"


def level_index(level: str) -> int:
    """The rank of a level name (debug = 0 ... emergency = 7); KeyError for anything else."""
    return _INDEX[level]


def level_of_record(levelno: int) -> str:
    """The RFC 5424 level for a Python level number: DEBUG debug, INFO info, 25 notice, WARNING
    warning, ERROR error, CRITICAL critical, 55 alert, 60 emergency (in between: the level below)."""
    if levelno >= EMERGENCY:
        return "emergency"
    if levelno >= ALERT:
        return "alert"
    if levelno >= logging.CRITICAL:
        return "critical"
    if levelno >= logging.ERROR:
        return "error"
    if levelno >= logging.WARNING:
        return "warning"
    if levelno >= NOTICE:
        return "notice"
    if levelno >= logging.INFO:
        return "info"
    return "debug"


class ClientLogHandler(logging.Handler):
    """Turns records into ``notifications/message`` for one request's client (from any thread).

    The message is the data (with the traceback appended when there is one); a record whose msg is
    a dict or list and has no args sends that JSON value as the data. The notification's ``logger``
    is the logger's name without the ``jsonrpc_mcp.client_log.`` prefix.
    """

    def __init__(self, ctx: Context) -> None:
        super().__init__()
        self._ctx = ctx

    def emit(self, record: logging.LogRecord) -> None:
        try:
            data: Any
            if isinstance(record.msg, (dict, list)) and not record.args:
                data = record.msg
            else:
                data = self.format(record)
            name = record.name
            if name.startswith(PREFIX + "."):
                name = name[len(PREFIX) + 1 :]
            self._ctx._log_from_record(level_of_record(record.levelno), data, name)
        except Exception:
            self.handleError(record)


class ClientLogger(logging.Logger):
    """A logger bound to one request: not registered with ``logging.getLogger`` (so nothing else sees
    its records, and nothing is kept once the request is over), children included."""

    def getChild(self, suffix: str) -> ClientLogger:
        child = ClientLogger(f"{self.name}.{suffix}")
        child.parent = self
        return child
