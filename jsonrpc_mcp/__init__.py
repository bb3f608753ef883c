"""jsonrpc-mcp: JSON-RPC 2.0 and the Model Context Protocol, protocol first, in pure Python.

The public API is what ``__all__`` lists. ``jsonrpc_mcp.jsonrpc`` is the MCP-free JSON-RPC engine;
``jsonrpc_mcp.testing`` has an in-memory client/server pair for tests.
"""

__version__ = "0.1.0"

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
from .jsonrpc import JsonRpcError
from .server import (
    Arg,
    Context,
    ResourceContent,
    Server,
    ToolResult,
)

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
