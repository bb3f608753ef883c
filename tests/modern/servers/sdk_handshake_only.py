"""A server written with the official MCP Python SDK that speaks only the handshake era.

The SDK's ``Server.run`` serves both eras (the first request decides); ``serve_loop`` is its
handshake-only loop, what a server built on a pre-2026 SDK does. Run as
``python tests/modern/servers/sdk_handshake_only.py`` (serves stdio until stdin closes).
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server

server = MCPServer("sdk-handshake-only", version="5.0.0")


@server.tool()
def echo(text: str) -> str:
    """Echo the text."""
    return text


async def main() -> None:
    lowlevel = server._lowlevel_server  # the MCPServer's protocol server (no public accessor)
    async with lowlevel.lifespan(lowlevel) as state, stdio_server() as (read_stream, write_stream):
        await serve_loop(
            lowlevel,
            read_stream,
            write_stream,
            lifespan_state=state,
            init_options=lowlevel.create_initialization_options(),
        )


if __name__ == "__main__":
    anyio.run(main)
