"""A stdio server whose tool reads its environment (install's --env must reach it)."""

from __future__ import annotations

import os

from jsonrpc_mcp import Server

server = Server("env-tool")


@server.tool()
def getenv(key: str) -> str:
    """The value of an environment variable ("" when unset)."""
    return os.environ.get(key, "")
