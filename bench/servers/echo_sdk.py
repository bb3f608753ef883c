"""The echo benchmark server written with the official MCP Python SDK (``MCPServer``, stdio).

``MCPBENCH_TOOLS`` (default 0) registers that many extra dummy tools ``tool_0001`` ...
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer
from pydantic_complex import WANTED, complex_tool

server = MCPServer("bench-echo-sdk", version="0.1.0")


@server.tool()
async def echo(message: str) -> str:
    """Echo the message back."""
    return message


async def _dummy(x: int = 0) -> str:
    return str(x)


def _register_dummy_tools(count: int) -> None:
    for i in range(1, count + 1):
        server.add_tool(_dummy, name=f"tool_{i:04d}", description=f"Dummy tool number {i}.")


_register_dummy_tools(int(os.environ.get("MCPBENCH_TOOLS", "0") or 0))


if WANTED:
    server.add_tool(complex_tool, name="complex", description="A tool with a complex schema.")

if __name__ == "__main__":
    server.run()
