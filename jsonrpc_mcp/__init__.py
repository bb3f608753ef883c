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
    from .client import Client, UnsupportedProtocolVersion
    from .errors import (
        CapabilityError,
        ClientError,
        McpError,
        RegistrationError,
        ResourceNotFound,
        ToolError,
        UrlElicitationRequired,
    )
    from .jsonrpc.errors import JsonRpcError
    from .server.context import Context
    from .server.introspect import Arg
    from .server.registry import ResourceContent, ToolResult
    from .server.server import Server

__all__ = [
    "Arg",
    "CapabilityError",
    "Client",
    "ClientError",
    "Context",
    "JsonRpcError",
    "McpError",
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
]

# public name -> the module that defines it (relative to this package)
_LAZY: dict[str, str] = {
    "Arg": ".server.introspect",
    "CapabilityError": ".errors",
    "Client": ".client.client",
    "ClientError": ".errors",
    "Context": ".server.context",
    "JsonRpcError": ".jsonrpc.errors",
    "McpError": ".errors",
    "RegistrationError": ".errors",
    "ResourceContent": ".server.registry",
    "ResourceNotFound": ".errors",
    "Server": ".server.server",
    "ToolError": ".errors",
    "ToolResult": ".server.registry",
    "UnsupportedProtocolVersion": ".client.client",
    "UrlElicitationRequired": ".errors",
}


if not TYPE_CHECKING:  # hidden from type checkers, which would take any unknown name for Any
    __getattr__, __dir__ = lazy_names(globals(), _LAZY, modules=("content",))
