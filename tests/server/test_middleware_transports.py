"""A middleware sees every request of every transport and era, and can change its result.

The server (tests/helpers/middleware_server.py) stamps each tools/call result with the transport
and era its middleware saw, and replaces the text: so the stamp, read by a real client over the
wire, proves the request went through the chain. stdio runs a real subprocess; HTTP a real
uvicorn on 127.0.0.1 (sessions, 2026-07-28 POSTs, the legacy HTTP+SSE transport).
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

from ..helpers import middleware_server
from ..http.support import serving

pytestmark = pytest.mark.anyio

SERVER_FILE = Path(middleware_server.__file__).resolve()
TIMEOUT = timeouts.STARTUP


def _stamp(result: dict[str, Any]) -> tuple[str, str]:
    assert result["content"] == [{"type": "text", "text": "changed by middleware"}]
    stamp = result["_meta"][middleware_server.STAMP]
    return stamp["transport"], stamp["era"]


@pytest.mark.parametrize(("mode", "era"), [("legacy", "handshake"), ("2026-07-28", "stateless")])
async def test_in_memory(mode: str, era: str) -> None:
    async with connect(middleware_server.server, mode=mode) as client:
        assert _stamp(await client.call_tool("echo", {"text": "hi"})) == ("memory", era)


@pytest.mark.parametrize(("mode", "era"), [("legacy", "handshake"), ("2026-07-28", "stateless")])
async def test_over_stdio(mode: str, era: str) -> None:
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(SERVER_FILE)]
    with anyio.fail_after(TIMEOUT):
        async with Client.stdio(command, mode=mode) as client:
            assert _stamp(await client.call_tool("echo", {"text": "hi"})) == ("stdio", era)


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
    app = middleware_server.server.http_app(**app_options)
    with anyio.fail_after(TIMEOUT):
        async with serving(app) as base, Client.http(f"{base}/mcp", mode=mode) as client:
            assert _stamp(await client.call_tool("echo", {"text": "hi"})) == ("http", era)


@pytest.mark.asyncio_only  # uvicorn runs on asyncio only
async def test_over_the_legacy_http_sse_transport() -> None:
    app = middleware_server.server.http_app()
    with anyio.fail_after(TIMEOUT):
        async with serving(app) as base, Client.http(f"{base}/sse", legacy=True) as client:
            assert _stamp(await client.call_tool("echo", {"text": "hi"})) == ("sse", "handshake")
