"""Tools a client must not call: in a stateless revision over HTTP, a tool whose ``x-mcp-header``
declarations are invalid is left out of the listing and refused by name (the revision's rule; see
:func:`jsonrpc_mcp.transports.http._mcp_headers.invalid_header_declarations`)."""

from __future__ import annotations

import logging
import sys
from typing import Any

from ..transports.http._mcp_headers import invalid_header_declarations

__all__ = ["RejectedToolError", "ToolScreen", "mirrors_headers", "named"]

logger = logging.getLogger("jsonrpc_mcp.client")


class RejectedToolError(ValueError):
    """A call of a tool :meth:`Client.list_tools` left out: its ``x-mcp-header`` declarations break
    the rules of the stateless revision over HTTP, so it may not be called. Nothing was sent.
    ``tool`` is its name, ``reasons`` what is wrong (one line per invalid declaration)."""

    def __init__(self, tool: str, reasons: tuple[str, ...]) -> None:
        super().__init__(
            f"tool {tool!r} was left out of tools/list and is not called: its x-mcp-header declarations "
            f"are invalid ({'; '.join(reasons)})"
        )
        self.tool = tool
        self.reasons = reasons


class ToolScreen:
    """Remembers which tools the last listing left out, and why."""

    def __init__(self) -> None:
        self.rejected: dict[str, tuple[str, ...]] = {}

    def screen(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The tools that may be called; a warning names each one left out (once, not at every
        listing, unless its reasons change)."""
        kept: list[dict[str, Any]] = []
        rejected: dict[str, tuple[str, ...]] = {}
        for tool in tools:
            problems = invalid_header_declarations(tool.get("inputSchema")) if isinstance(tool, dict) else []
            if not problems:
                kept.append(tool)
                continue
            name = tool.get("name")
            if not isinstance(name, str):
                continue  # (nothing can call it by name anyway)
            reasons = tuple(map(str, problems))
            if self.rejected.get(name) != reasons:
                logger.warning(
                    "tool %r left out of tools/list: invalid x-mcp-header (%s)", name, "; ".join(reasons)
                )
            rejected[name] = reasons
        self.rejected = rejected
        return kept

    def refuse(self, name: str) -> None:
        """Raise :class:`RejectedToolError` for a tool the last listing left out."""
        reasons = self.rejected.get(name)
        if reasons is not None:
            raise RejectedToolError(name, reasons)


def mirrors_headers(is_modern: bool, transport: str | None, stream: object) -> bool:
    """Whether ``tools/call`` mirrors arguments into headers: a stateless revision over HTTP (a client
    made by ``Client.http``, whose ``transport`` says so, or one over an HTTP client stream made by
    hand)."""
    if not is_modern:
        return False
    if transport is not None:
        return transport == "http"
    # not imported for the test: a stream of that class exists only once its module is loaded
    core = sys.modules.get("jsonrpc_mcp.transports.http._core")
    return core is not None and isinstance(stream, core.StreamCore)


def named(name: str, arguments: Any) -> dict[str, Any]:
    """The params of a ``tools/call`` or ``prompts/get``: the name, and the arguments when given."""
    return {"name": name} if arguments is None else {"name": name, "arguments": arguments}
