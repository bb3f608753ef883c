"""Fixtures for the interoperability tests against the official MCP Python SDK (``mcp``).

``anyio_backend`` is module-scoped here so that a module can share one (slow to start) server
subprocess between its tests through a module-scoped async fixture.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

SERVERS = Path(__file__).resolve().parent / "servers"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def ours_command() -> Callable[..., list[str]]:
    """``ours_command(*args)``: the command serving servers/ours.py with jsonrpc_mcp's CLI."""

    def command(*args: str) -> list[str]:
        return [sys.executable, "-m", "jsonrpc_mcp", "serve", str(SERVERS / "ours.py"), *args]

    return command


@pytest.fixture(scope="session")
def sdk_server_command() -> list[str]:
    """The command running servers/sdk_server.py (a server written with the official SDK)."""
    return [sys.executable, str(SERVERS / "sdk_server.py")]
