"""The MCP server core: registries, sessions, per-request context, schema validation."""

from .context import Context
from .introspect import Arg
from .registry import Completer, Prompt, Resource, ResourceContent, ResourceTemplate, Tool, ToolResult
from .server import Server
from .session import ServerSession

__all__ = [
    "Arg",
    "Completer",
    "Context",
    "Prompt",
    "Resource",
    "ResourceContent",
    "ResourceTemplate",
    "Server",
    "ServerSession",
    "Tool",
    "ToolResult",
]
