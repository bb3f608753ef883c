"""Where exceptions become what goes on the wire: the one function, used by every entry.

MCP has two error planes. A failure the *model* should read (a tool that raised, a tool called with
arguments its schema refuses, from 2025-11-25 on) is a tool result with ``isError: true``; anything
else is a JSON-RPC error object, the plane the *client* reads. Which plane, and which code, depend
on the revision: -32002 or -32602 for a missing resource, -32021 (2026-07-28) for a capability the
client did not declare, and so on. :func:`to_wire` decides all of it, from the exception and the
revision's data; the request router calls it for every request of every transport and era, and
:meth:`Server.call_tool` for what escapes a tool. An unexpected exception is logged with its
traceback (on stderr) and becomes -32603 ``Internal error``: its text never reaches the client
through this path.

Masking (``Server(mask_errors=True)``, the default): an unexpected exception escaping a tool or a
resource/prompt handler may carry paths, queries or secrets in its text, so the client is told only
that it failed and a reference (``Tool 'x' failed: an internal error (reference 3f9a...)``), and
the log line with the traceback carries the same reference. A :class:`ToolError` or a
:class:`JsonRpcError` raised on purpose is the message the author chose and keeps it; so does the
client's own failure to help (a capability or client error, a request to it that timed out).
``mask_errors=False`` shows the exception's type and text, for development.
"""

from __future__ import annotations

import logging
import os
from types import TracebackType
from typing import Any

from ..errors import (
    CapabilityError,
    ClientError,
    MissingClientCapability,
    ResourceNotFound,
    ToolError,
    UrlElicitationRequired,
)
from ..jsonrpc.errors import ConnectionClosed, InternalError, InvalidParams, JsonRpcError, RequestTimeout
from ..revisions import Revision

__all__ = ["InvalidArguments", "to_wire", "tool_error"]

logger = logging.getLogger("jsonrpc_mcp.server")


class InvalidArguments(InvalidParams):
    """A tool's arguments break its input schema (``data.errors`` lists each problem): -32602, or
    from 2025-11-25 an ``isError`` result, so that the model can fix its call."""

    def __init__(self, tool: str, errors: list[str]) -> None:
        super().__init__(f"Invalid arguments for tool {tool!r}: " + "; ".join(errors), {"errors": errors})


def tool_error(text: str) -> dict[str, Any]:
    """A tool result reporting a failure to the model."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


def reference() -> str:
    """A short random id tying a masked error's answer to its log line."""
    return os.urandom(6).hex()


def to_wire(
    exc: Exception,
    revision: Revision | None,
    method: str,
    *,
    tool: str | None = None,
    handler: str | None = None,
    mask: bool = True,
) -> JsonRpcError | dict[str, Any]:
    """What ``exc``, escaping the handler of ``method``, becomes: a JSON-RPC error, or (``tool``
    given: it escaped that tool or its argument check) possibly an ``isError`` tool result.
    ``handler`` names the resource or prompt whose function raised, for the -32603 message;
    ``mask`` hides an unexpected exception's text behind a reference (see the module docs).

    Call it from the ``except`` block (an unexpected exception is logged with its traceback).
    """
    if tool is not None:
        result = _tool_plane(exc, revision, tool, mask)
        if result is not None:
            return result
    elif handler is not None and not isinstance(exc, MissingClientCapability):
        if isinstance(exc, (CapabilityError, ClientError)):  # the client could not help: our failure
            logger.warning("%s: %s", handler, exc.message)
            return InternalError(f"Internal error: the handler of {handler} failed: {exc.message}")
        if not isinstance(exc, JsonRpcError):  # (a JsonRpcError is the wire error the handler chose)
            if mask:
                ref = reference()
                logger.error(
                    "%s: the handler raised (reference %s)", handler, ref, exc_info=_from_author(exc)
                )
                return InternalError(f"Internal error: the handler of {handler} failed (reference {ref})")
            logger.error("%s: the handler raised", handler, exc_info=_from_author(exc))
            return InternalError(
                f"Internal error: the handler of {handler} failed: {type(exc).__name__}: {exc}"
            )
    if isinstance(exc, JsonRpcError):
        if revision is None:
            return exc
        if isinstance(exc, MissingClientCapability):
            code = revision.missing_capability_code
            return exc if code is None or code == exc.code else JsonRpcError(exc.message, exc.data, code=code)
        if isinstance(exc, ResourceNotFound) and exc.code != revision.resource_not_found_code:
            return JsonRpcError(exc.message, exc.data, code=revision.resource_not_found_code)
        return exc
    logger.exception("unhandled error while serving %r", method)
    return InternalError("Internal error")


def _tool_plane(exc: Exception, revision: Revision | None, tool: str, mask: bool) -> dict[str, Any] | None:
    """The ``isError`` result for an exception of the tool-result plane, else None."""
    if isinstance(exc, ToolError):
        return tool_error(str(exc))
    if isinstance(exc, InvalidArguments):
        return (
            tool_error(exc.message)
            if revision is not None and revision.input_errors_as_tool_results
            else None
        )
    if isinstance(exc, UrlElicitationRequired):
        if revision is None or revision.has_url_elicitation:
            return None  # -32042 is the answer
        text = f"Tool {tool!r} needs the user to visit a URL; this protocol revision cannot ask"
        logger.warning("%s: %s", text, exc.message)
        return tool_error(text)
    if isinstance(exc, MissingClientCapability):
        return None  # 2026-07-28: the request is answered -32021
    if isinstance(exc, (CapabilityError, ClientError)):  # the client cannot or did not help
        logger.info("tool %r: %s", tool, exc.message)
        return tool_error(f"Tool {tool!r} failed: {exc.message}")
    if isinstance(exc, (RequestTimeout, ConnectionClosed)):  # the client did not answer the tool's ask
        logger.info("tool %r: %s", tool, exc)
        return tool_error(f"Tool {tool!r} failed: {type(exc).__name__}: {exc}")
    if isinstance(exc, JsonRpcError):
        return None
    if mask:
        ref = reference()
        logger.error("tool %r raised (reference %s)", tool, ref, exc_info=_from_author(exc))
        return tool_error(f"Tool {tool!r} failed: an internal error (reference {ref})")
    logger.error("tool %r raised", tool, exc_info=_from_author(exc))
    return tool_error(f"Tool {tool!r} failed: {type(exc).__name__}: {exc}")


def _library_dirs() -> tuple[str, ...]:
    import asyncio
    import concurrent.futures

    import anyio

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the jsonrpc_mcp package
    found = [here, *(os.path.dirname(os.path.abspath(m.__file__ or "")) for m in (anyio, asyncio))]
    found.append(os.path.dirname(os.path.abspath(concurrent.futures.__file__ or "")))
    return tuple(os.path.join(path, "") for path in found)  # "/a/anyio/", not a prefix of "/a/anyio2"


_LIBRARY_DIRS: tuple[str, ...] | None = None


def _from_author(exc: BaseException) -> tuple[type[BaseException], BaseException, TracebackType | None]:
    """``exc_info`` for the log line of an author's handler that raised: its traceback from the
    author's first frame on, without the frames of this package and of the event loop that led
    there (which say nothing about the bug and fill a terminal); all of it if no frame is theirs."""
    global _LIBRARY_DIRS
    if _LIBRARY_DIRS is None:
        _LIBRARY_DIRS = _library_dirs()
    tb = exc.__traceback__
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_LIBRARY_DIRS):
        tb = tb.tb_next
    return type(exc), exc, tb if tb is not None else exc.__traceback__
