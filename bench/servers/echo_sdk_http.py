"""The echo benchmark server written with the official MCP SDK's ``MCPServer``, over Streamable HTTP.

The same tool as ``echo_sdk.py``, served by the SDK's ``streamable_http_app`` in JSON-response
mode (``json_response=True``) and stateful (sessions with ``Mcp-Session-Id``, the SDK default), as
ours is under ``jsonrpc-mcp serve --http --json-response``. ``--stateless`` switches the SDK to
``stateless_http=True`` (a fresh transport and server task per request) and ``--sse`` turns
JSON-response mode off (every request answered with an SSE stream), both for manual comparisons.

Usage: ``python bench/servers/echo_sdk_http.py [PORT] [--stateless] [--sse]`` (else ``MCPBENCH_PORT``,
else 8000), on 127.0.0.1 with the same ``uvicorn.run`` options as ``jsonrpc-mcp serve --http``.
``MCPBENCH_TOOLS`` (default 0) registers that many extra dummy tools ``tool_0001`` ...
"""

from __future__ import annotations

import os
import sys
from typing import Any

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


def stack() -> dict[str, Any]:
    """uvicorn's event loop and HTTP parser: ``$MCPBENCH_UVICORN_LOOP`` / ``$MCPBENCH_UVICORN_HTTP``,
    else the default stack (asyncio, h11), pinned so that an installed uvloop changes nothing."""
    return {
        "loop": os.environ.get("MCPBENCH_UVICORN_LOOP", "asyncio"),
        "http": os.environ.get("MCPBENCH_UVICORN_HTTP", "h11"),
    }


def main(argv: list[str]) -> None:
    import uvicorn

    stateless = "--stateless" in argv
    json_response = "--sse" not in argv
    positional = [arg for arg in argv if not arg.startswith("--")]
    port = int(positional[0] if positional else os.environ.get("MCPBENCH_PORT", "8000"))
    host = "127.0.0.1"
    # host= picks the SDK's DNS-rebinding allowlist for loopback, as ours checks Host and Origin.
    app = server.streamable_http_app(json_response=json_response, stateless_http=stateless, host=host)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False, **stack())


if __name__ == "__main__":
    main(sys.argv[1:])
