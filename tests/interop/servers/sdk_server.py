"""A server written with the official MCP Python SDK, for jsonrpc_mcp's client to drive over stdio.

Run as ``python tests/interop/servers/sdk_server.py`` (serves stdio until stdin closes).
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer(
    "interop-sdk", version="9.8.7", instructions="A test server written with the official SDK."
)


@server.tool()
def multiply(a: int, b: int) -> str:
    """Multiply two integers."""
    return str(a * b)


@server.tool()
def explode(reason: str) -> str:
    """Always fails with the given reason."""
    raise ToolError(f"exploded: {reason}")


@server.resource("sdk://motd", name="motd", mime_type="text/plain", description="Message of the day")
def motd() -> str:
    return "served by the official SDK"


@server.prompt(name="greet", description="Greet someone by name")
def greet(name: str) -> str:
    return f"Please greet {name} warmly."


if __name__ == "__main__":
    server.run()
