"""A mounted server is served over every transport, in both eras, through both middleware chains.

The server (tests/helpers/composed_server.py) mounts "inner" into "parent"; the mounted tool says
what carried the call as the mounted server's middleware saw it, and the parent's middleware stamps
the result: a real client reading both over the wire proves the call crossed both chains. stdio
runs a real subprocess; HTTP a real uvicorn on 127.0.0.1 (sessions, session-less POSTs, 2026-07-28
POSTs, the legacy HTTP+SSE transport).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client
from jsonrpc_mcp.testing import connect
from tests import timeouts

from ..helpers import composed_server
from ..http.support import serving

pytestmark = pytest.mark.anyio

SERVER_FILE = Path(composed_server.__file__).resolve()
TIMEOUT = timeouts.STARTUP


async def _check(client: Client, carrier: str) -> None:
    assert "inner_where" in [t["name"] for t in await client.list_tools()]
    result: dict[str, Any] = await client.call_tool("inner_where")
    assert result["content"] == [{"type": "text", "text": f"{carrier} inner lifespan"}]
    assert result["_meta"][composed_server.STAMP] == carrier
    read = await client.read_resource("memo://inner/notes/a")
    assert read["contents"][0]["uri"] == "memo://inner/notes/a" and read["contents"][0]["text"] == "note a"


@pytest.mark.parametrize(("mode", "era"), [("legacy", "handshake"), ("2026-07-28", "stateless")])
async def test_in_memory(mode: str, era: str) -> None:
    async with connect(composed_server.build(), mode=mode) as client:
        await _check(client, f"memory/{era}")


@pytest.mark.parametrize(("mode", "era"), [("legacy", "handshake"), ("2026-07-28", "stateless")])
async def test_over_stdio(mode: str, era: str) -> None:
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(SERVER_FILE)]
    with anyio.fail_after(TIMEOUT):
        async with Client.stdio(command, mode=mode) as client:
            await _check(client, f"stdio/{era}")


@pytest.mark.asyncio_only  # uvicorn runs on asyncio only
@pytest.mark.parametrize(
    ("mode", "era", "app_options"),
    [
        ("legacy", "handshake", {}),  # a Streamable HTTP session
        ("legacy", "handshake", {"stateless": True}),  # no sessions: a ready session per POST
        ("2026-07-28", "stateless", {}),  # the 2026-07-28 POST path
    ],
)
async def test_over_streamable_http(mode: str, era: str, app_options: dict[str, Any]) -> None:
    app = composed_server.server.http_app(**app_options)
    with anyio.fail_after(TIMEOUT):
        async with serving(app) as base, Client.http(f"{base}/mcp", mode=mode) as client:
            await _check(client, f"http/{era}")


@pytest.mark.asyncio_only  # uvicorn runs on asyncio only
async def test_over_the_legacy_http_sse_transport() -> None:
    app = composed_server.server.http_app()
    with anyio.fail_after(TIMEOUT):
        async with serving(app) as base, Client.http(f"{base}/sse", legacy=True) as client:
            await _check(client, "sse/handshake")
