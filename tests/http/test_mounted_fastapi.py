"""``server.http_app()`` mounted under a prefix in a FastAPI application (``app.mount``), beside
FastAPI's own routes, with the server's lifespan run from FastAPI's: both eras, real HTTP."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
from fastapi import FastAPI

from jsonrpc_mcp import Client, Context, Server
from jsonrpc_mcp.http import McpHttpApp
from tests import timeouts

from .support import serving

pytestmark = pytest.mark.anyio

TIMEOUT = timeouts.STARTUP


def _app() -> tuple[FastAPI, McpHttpApp, list[str]]:
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[str]:
        events.append("enter")
        yield "ready"
        events.append("exit")

    server = Server("fastapi-mounted", lifespan=lifespan)

    @server.tool()
    def add(a: int, b: int, ctx: Context) -> str:
        """Add two integers (and say what the lifespan yielded)."""
        return f"{a + b} {ctx.lifespan}"

    mcp: McpHttpApp = server.http_app()

    @contextlib.asynccontextmanager
    async def outer(app: FastAPI) -> AsyncIterator[None]:
        async with server.running():
            yield

    api = FastAPI(lifespan=outer)

    @api.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    api.mount("/tools", mcp)
    return api, mcp, events


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_streamable_http_under_a_fastapi_mount(mode: str) -> None:
    api, mcp, events = _app()
    with anyio.fail_after(TIMEOUT):
        async with serving(api, mcp_app=mcp) as base:
            async with Client.http(f"{base}/tools/mcp", mode=mode) as client:
                result = await client.call_tool("add", {"a": 2, "b": 3})
            async with httpx.AsyncClient() as http:
                health = await http.get(f"{base}/health")
                outside = await http.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert events == ["enter"]
    assert result["content"][0]["text"] == "5 ready"
    assert health.json() == {"status": "ok"}
    assert outside.status_code == 404  # the endpoint is under the prefix only
    assert events == ["enter", "exit"]


async def test_the_legacy_transport_under_a_fastapi_mount() -> None:
    api, mcp, _ = _app()
    with anyio.fail_after(TIMEOUT):
        async with serving(api, mcp_app=mcp) as base, Client.http(f"{base}/tools/sse", legacy=True) as client:
            result = await client.call_tool("add", {"a": 1, "b": 1})
    assert result["content"][0]["text"] == "2 ready"


async def test_a_protected_server_under_a_mount_points_clients_to_metadata_they_can_fetch() -> None:
    from jsonrpc_mcp.http import AccessToken, AuthSettings, StaticTokenVerifier

    api, mcp, _ = _app()
    tokens = {"good": AccessToken("good", "client", frozenset())}
    with anyio.fail_after(TIMEOUT):
        async with serving(api, mcp_app=mcp) as base:
            mcp.auth = AuthSettings(
                verifier=StaticTokenVerifier(tokens),
                resource_server_url=f"{base}/tools/mcp",
                authorization_servers=["https://auth.example.com/"],
            )
            async with httpx.AsyncClient() as http:
                refused = await http.post(
                    f"{base}/tools/mcp",
                    json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                    headers={"accept": "application/json, text/event-stream"},
                )
                assert refused.status_code == 401
                challenge = refused.headers["www-authenticate"]
                (metadata_url,) = [
                    part.split("=", 1)[1].strip('"')
                    for part in challenge.removeprefix("Bearer ").split(", ")
                    if part.startswith("resource_metadata=")
                ]
                assert metadata_url == f"{base}/tools/.well-known/oauth-protected-resource/mcp"
                document = await http.get(metadata_url)  # served: the mount is where the app lives
                assert document.status_code == 200
                assert document.json()["resource"] == f"{base}/tools/mcp"
                assert document.json()["authorization_servers"] == ["https://auth.example.com/"]
                async with Client.http(f"{base}/tools/mcp", headers={"Authorization": "Bearer good"}) as c:
                    assert (await c.call_tool("add", {"a": 1, "b": 2}))["content"][0]["text"] == "3 ready"
