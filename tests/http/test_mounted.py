"""``server.http_app()`` mounted under a prefix in a Starlette application (``root_path``) serves
Streamable HTTP and the legacy transport under that prefix."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from jsonrpc_mcp import Client, Context, Server
from jsonrpc_mcp.http import McpHttpApp
from tests import timeouts

from .support import serving

pytestmark = pytest.mark.anyio

TIMEOUT = timeouts.STARTUP


def _mounted() -> tuple[Starlette, McpHttpApp]:
    server = Server("mounted")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    mcp: McpHttpApp = server.http_app()

    async def home(request: object) -> PlainTextResponse:
        return PlainTextResponse("home")

    return Starlette(routes=[Route("/", home), Mount("/api", app=mcp)]), mcp


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_streamable_http_under_a_mount_prefix(mode: str) -> None:
    app, mcp = _mounted()
    with anyio.fail_after(TIMEOUT):
        async with serving(app, mcp_app=mcp) as base, Client.http(f"{base}/api/mcp", mode=mode) as client:
            result = await client.call_tool("add", {"a": 2, "b": 3})
    assert result["content"][0]["text"] == '{"result":5}'


async def test_the_legacy_transport_under_a_mount_prefix() -> None:
    app, mcp = _mounted()
    with anyio.fail_after(TIMEOUT):
        async with serving(app, mcp_app=mcp) as base, Client.http(f"{base}/api/sse", legacy=True) as client:
            result = await client.call_tool("add", {"a": 2, "b": 3})
    assert result["content"][0]["text"] == '{"result":5}'


async def test_the_unprefixed_path_is_not_the_endpoint() -> None:
    import httpx

    app, mcp = _mounted()
    with anyio.fail_after(TIMEOUT):
        async with serving(app, mcp_app=mcp) as base, httpx.AsyncClient() as http:
            outside = await http.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            home = await http.get(f"{base}/")
    assert outside.status_code == 404 and home.text == "home"


async def test_a_mounted_servers_lifespan_runs_from_the_outer_apps_lifespan() -> None:
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[str]:
        events.append("enter")
        yield "ready"
        events.append("exit")

    server = Server("mounted-life", lifespan=lifespan)

    @server.tool()
    def state(ctx: Context) -> str:
        """The lifespan's value."""
        return str(ctx.lifespan)

    @contextlib.asynccontextmanager
    async def outer(app: Starlette) -> AsyncIterator[None]:  # the outer app's own lifespan runs ours
        async with server.running():
            yield

    mcp: McpHttpApp = server.http_app()
    app = Starlette(routes=[Mount("/api", app=mcp)], lifespan=outer)
    with anyio.fail_after(TIMEOUT):
        async with serving(app, mcp_app=mcp) as base, Client.http(f"{base}/api/mcp") as client:
            result = await client.call_tool("state", {})
            assert events == ["enter"]
    assert result["content"][0]["text"] == "ready"
    assert events == ["enter", "exit"]
