"""The echo benchmark server written with the official MCP Python SDK (``MCPServer``, stdio).

``MCPBENCH_TOOLS`` (default 0) registers that many extra dummy tools ``tool_0001`` ...
"""

from __future__ import annotations

import os
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

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


class Item(BaseModel):
    id: int
    label: str
    weight: float | None = None


class Options(BaseModel):
    dry_run: bool | None = None
    depth: int | None = Field(default=None, ge=1)


async def _complex(
    name: Annotated[str, Field(min_length=1, max_length=64)],
    count: Annotated[int, Field(ge=0, le=1000)],
    items: list[Item],
    mode: Literal["fast", "safe", "slow"] | None = None,
    tags: Annotated[list[str], Field(max_length=16)] | None = None,
    options: Options | None = None,
) -> str:
    """A tool with a complex schema (the same as complex_schema.json), validated by pydantic."""
    return f"{name}:{count}:{len(items)}"


if os.environ.get("MCPBENCH_COMPLEX") == "1":
    server.add_tool(_complex, name="complex", description="A tool with a complex schema.")

if __name__ == "__main__":
    server.run()
