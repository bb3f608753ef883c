"""MCP-level exceptions: what handlers raise, and what misuse looks like."""

from __future__ import annotations

from typing import Any

from .jsonrpc.errors import JsonRpcError

__all__ = ["McpError", "RegistrationError", "ResourceNotFound", "ToolError"]


class ToolError(Exception):
    """Raise from a tool to report a tool execution error: a result with ``isError: true``.

    The message is shown to the model, so make it say what went wrong and how to fix the call.
    """


class ResourceNotFound(JsonRpcError):
    """No resource has this URI. The code is the negotiated revision's (-32002 before 2026-07-28)."""

    code = -32002

    def __init__(self, uri: str, message: str | None = None) -> None:
        super().__init__(message or f"Resource not found: {uri}", {"uri": uri})
        self.uri = uri


class McpError(JsonRpcError):
    """A JSON-RPC error with an MCP-specific code (raised by the client for error responses, too)."""

    def __init__(self, message: str, data: Any = None, *, code: int) -> None:
        super().__init__(message, data, code=code)


class RegistrationError(ValueError):
    """A tool, resource or prompt was defined wrongly (a developer error, raised at registration)."""
