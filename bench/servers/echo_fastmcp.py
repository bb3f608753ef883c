"""The echo benchmark server written with FastMCP (PyPI ``fastmcp``), over stdio or Streamable HTTP.

Usage: ``python bench/servers/echo_fastmcp.py`` (stdio) or ``... --http PORT`` (else
``MCPBENCH_PORT``): FastMCP's ``http_app(json_response=True)``, stateful, served on 127.0.0.1 by
``uvicorn.run`` with the same options as ``jsonrpc-mcp serve --http``. ``MCPBENCH_TOOLS`` (default
0) registers that many extra dummy tools ``tool_0001`` ...

``fastmcp`` is optional (installed by ``make bench``), so it is imported by name: the module is
type-checked without it.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from pydantic_complex import WANTED, complex_tool

fastmcp: Any = importlib.import_module("fastmcp")
server: Any = fastmcp.FastMCP("bench-echo-fastmcp", version="0.1.0")


async def echo(message: str) -> str:
    """Echo the message back."""
    return message


async def _dummy(x: int = 0) -> str:
    return str(x)


server.tool(echo)
for _i in range(1, int(os.environ.get("MCPBENCH_TOOLS", "0") or 0) + 1):
    server.tool(_dummy, name=f"tool_{_i:04d}", description=f"Dummy tool number {_i}.")


if WANTED:
    server.tool(complex_tool, name="complex", description="A tool with a complex schema.")


def stack() -> dict[str, Any]:
    """uvicorn's event loop and HTTP parser: ``$MCPBENCH_UVICORN_LOOP`` / ``$MCPBENCH_UVICORN_HTTP``,
    else the default stack (asyncio, h11), pinned so that an installed uvloop changes nothing."""
    return {
        "loop": os.environ.get("MCPBENCH_UVICORN_LOOP", "asyncio"),
        "http": os.environ.get("MCPBENCH_UVICORN_HTTP", "h11"),
    }


def main(argv: list[str]) -> None:
    if "--http" not in argv:
        server.run(transport="stdio", show_banner=False)
        return
    import uvicorn

    positional = [arg for arg in argv if not arg.startswith("--")]
    port = int(positional[0] if positional else os.environ.get("MCPBENCH_PORT", "8000"))
    app = server.http_app(path="/mcp", json_response=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False, **stack())


if __name__ == "__main__":
    main(sys.argv[1:])
