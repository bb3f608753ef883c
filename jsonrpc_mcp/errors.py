"""MCP-level exceptions: what handlers raise, and what misuse looks like."""

from __future__ import annotations

from typing import Any

from . import wire
from .jsonrpc.errors import INTERNAL_ERROR, JsonRpcError

URL_ELICITATION_REQUIRED = wire.URL_ELICITATION_REQUIRED

__all__ = [
    "CapabilityError",
    "ClientError",
    "McpError",
    "MissingClientCapability",
    "RegistrationError",
    "ResourceNotFound",
    "ToolError",
    "UnsupportedProtocolVersion",
    "UrlElicitationRequired",
]


class ToolError(Exception):
    """Raise from a tool to report a tool execution error: a result with ``isError: true``.

    The message is shown to the model, so make it say what went wrong and how to fix the call.
    """


_QUOTED = 200  # characters of a client's URI quoted in a message
_KEPT = 2048  # the longest URI sent back whole in an error's data


class ResourceNotFound(JsonRpcError):
    """No resource has this URI. The code is the negotiated revision's (-32002 before 2026-07-28)."""

    code = -32002

    def __init__(self, uri: str, message: str | None = None) -> None:
        # the URI comes from the client and may be huge: the message quotes its start, and ``data``
        # carries it whole only while it is of a sane length (a URL's usual limit)
        shown = uri if len(uri) <= _QUOTED else f"{uri[:_QUOTED]}... ({len(uri)} characters)"
        super().__init__(
            message or f"Resource not found: {shown}", {"uri": uri} if len(uri) <= _KEPT else None
        )
        self.uri = uri


class McpError(JsonRpcError):
    """A JSON-RPC error with an MCP-specific code (raised by the client for error responses, too)."""

    def __init__(self, message: str, data: Any = None, *, code: int) -> None:
        super().__init__(message, data, code=code)


class CapabilityError(McpError):
    """A handler asked the client for something it did not declare (sampling, elicitation, roots...),
    or that the negotiated protocol revision does not have.

    Raised by the :class:`Context` methods before anything is sent. A tool that lets it escape gets
    an ``isError`` result carrying the message; a resource or prompt handler, a -32603 error.
    """

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(message, data, code=INTERNAL_ERROR)


class MissingClientCapability(CapabilityError):
    """Serving the request needs a capability the client did not declare in it (2026-07-28).

    What the Context raises in modern requests where a handshake session raises a plain
    :class:`CapabilityError`, so a handler catching ``CapabilityError`` works in both eras; let
    escape, it answers the request with the revision's code (-32021) and
    ``data.requiredCapabilities`` (e.g. ``{"elicitation": {}}``).
    """

    code = wire.MISSING_CLIENT_CAPABILITY

    def __init__(self, message: str, required: dict[str, Any]) -> None:
        JsonRpcError.__init__(
            self, message, {"requiredCapabilities": required}, code=wire.MISSING_CLIENT_CAPABILITY
        )
        self.required = required


class UnsupportedProtocolVersion(JsonRpcError):
    """The request names a revision this server does not serve (2026-07-28: -32022)."""

    code = wire.UNSUPPORTED_PROTOCOL_VERSION


class ClientError(McpError):
    """The client answered a server-to-client request (``sampling/createMessage``, ``roots/list``...)
    with an error, or with a result that is not what the method returns. ``code``, ``message`` and
    ``data`` are the client's. Escaping a tool, it becomes an ``isError`` result."""


class UrlElicitationRequired(McpError):
    """Raise from a handler to answer -32042 (2025-11-25): the request needs the user to complete
    the given URL-mode elicitations first. Each item is an ``elicitation/create`` params object
    (``mode: "url"``, ``elicitationId``, ``url``, ``message``)."""

    def __init__(self, elicitations: list[dict[str, Any]], message: str | None = None) -> None:
        super().__init__(
            message or "This request requires more information.",
            {"elicitations": elicitations},
            code=URL_ELICITATION_REQUIRED,
        )
        self.elicitations = elicitations


class RegistrationError(ValueError):
    """A tool, resource or prompt was defined wrongly (a developer error, raised at registration)."""
