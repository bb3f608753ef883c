"""jsonrpc-mcp: JSON-RPC 2.0 and the Model Context Protocol, protocol first, in pure Python.

The public API is what ``__all__`` lists. ``jsonrpc_mcp.jsonrpc`` is the MCP-free JSON-RPC engine;
``jsonrpc_mcp.testing`` has an in-memory client/server pair for tests.

The names are loaded on first use (PEP 562), so ``import jsonrpc_mcp`` is cheap and a server never
loads the client, nor a client the server.
"""

from __future__ import annotations

from ._lazy import lazy_names
from ._version import __version__

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing would cost more than this module
if TYPE_CHECKING:
    from . import content
    from .client import Client, NoCommonVersion
    from .errors import (
        CapabilityError,
        ClientError,
        McpError,
        MissingClientCapability,
        RegistrationError,
        ResourceNotFound,
        ToolError,
        UnsupportedProtocolVersion,
        UrlElicitationRequired,
    )
    from .jsonrpc.errors import JsonRpcError
    from .server._asking import Elicited
    from .server._context import Context, get_context
    from .server._extensions import Extension
    from .server._introspect import Arg
    from .server._pipeline import Call
    from .server._registry import ResourceContent, ToolResult
    from .server._server import Server

__all__ = [
    "Arg",
    "Call",
    "CapabilityError",
    "Client",
    "ClientError",
    "Context",
    "Elicited",
    "Extension",
    "JsonRpcError",
    "McpError",
    "MissingClientCapability",
    "NoCommonVersion",
    "RegistrationError",
    "ResourceContent",
    "ResourceNotFound",
    "Server",
    "ToolError",
    "ToolResult",
    "UnsupportedProtocolVersion",
    "UrlElicitationRequired",
    "__version__",
    "content",
    "get_context",
]

if not TYPE_CHECKING:  # hidden from type checkers, which would take any unknown name for Any
    # the TYPE_CHECKING block as data, so no source is read (tests/test_lazy.py: they agree)
    __getattr__, __dir__ = lazy_names(
        globals(),
        {
            ".": ("content",),
            ".client": ("Client", "NoCommonVersion"),
            ".errors": (
                "CapabilityError",
                "ClientError",
                "McpError",
                "MissingClientCapability",
                "RegistrationError",
                "ResourceNotFound",
                "ToolError",
                "UnsupportedProtocolVersion",
                "UrlElicitationRequired",
            ),
            ".jsonrpc.errors": ("JsonRpcError",),
            ".server._asking": ("Elicited",),
            ".server._context": ("Context", "get_context"),
            ".server._extensions": ("Extension",),
            ".server._introspect": ("Arg",),
            ".server._pipeline": ("Call",),
            ".server._registry": ("ResourceContent", "ToolResult"),
            ".server._server": ("Server",),
        },
    )
