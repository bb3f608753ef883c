"""The echo benchmark server written with jsonrpc_mcp (ours).

Served by the runner as ``python -m jsonrpc_mcp serve bench/servers/echo.py`` (the CLI
loads the module attribute ``server``); ``python bench/servers/echo.py`` works too.
``MCPBENCH_TOOLS`` (default 0) registers that many extra dummy tools ``tool_0001`` ...;
``MCPBENCH_COMPLEX=1`` adds ``complex``, whose arguments are validated against
``complex_schema.json`` (nested objects, arrays, enums, bounds) on every call.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from jsonrpc_mcp import Server

server = Server("bench-echo", version="0.1.0")


@server.tool()
async def echo(message: str) -> str:
    """Echo the message back."""
    return message


async def _dummy(x: int = 0) -> str:
    return str(x)


def _register_dummy_tools(count: int) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}}
    for i in range(1, count + 1):
        server.add_tool(f"tool_{i:04d}", _dummy, description=f"Dummy tool number {i}.", input_schema=schema)


async def _complex(name: str, count: int, items: list[Any], **rest: Any) -> str:
    return f"{name}:{count}:{len(items)}"


_register_dummy_tools(int(os.environ.get("MCPBENCH_TOOLS", "0") or 0))
if os.environ.get("MCPBENCH_COMPLEX") == "1":
    complex_schema = json.loads((Path(__file__).parent / "complex_schema.json").read_text())
    server.add_tool(
        "complex", _complex, description="A tool with a complex schema.", input_schema=complex_schema
    )

if __name__ == "__main__":
    server.run()
