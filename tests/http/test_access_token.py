"""``Call.access_token``: a middleware sees the token the verifier accepted for the HTTP request
that carried the call, in both eras over real HTTP on 127.0.0.1; None without auth and off HTTP."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client, Context, Server, get_context
from jsonrpc_mcp.http import AccessToken, AuthSettings, McpHttpApp, StaticTokenVerifier
from jsonrpc_mcp.testing import connect

from .support import TIMEOUT, serving

pytestmark = pytest.mark.anyio

TOKENS = {
    "t-read": AccessToken("t-read", "reporting", frozenset({"db:read"}), claims={"sub": "ann"}),
    "t-admin": AccessToken("t-admin", "console", frozenset({"db:read", "db:admin"})),
}


def _server(seen: list[tuple[str, Any]]) -> Server:
    server = Server("who")

    @server.middleware
    async def record(call: Any, call_next: Any) -> Any:
        token = call.access_token
        seen.append((call.method, None if token is None else (token.client_id, sorted(token.scopes))))
        return await call_next(call)

    @server.tool()
    def ping() -> str:
        return "pong"

    return server


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_middleware_sees_each_requests_token(mode: str) -> None:
    seen: list[tuple[str, Any]] = []
    app = McpHttpApp(_server(seen))
    with anyio.fail_after(TIMEOUT * 3):
        async with serving(app) as base:
            url = base + "/mcp"
            app.auth = AuthSettings(
                verifier=StaticTokenVerifier(TOKENS),
                resource_server_url=url,
                authorization_servers=["https://auth.example.com/"],
            )
            for token in ("t-read", "t-admin"):
                async with Client.http(
                    url, headers={"Authorization": f"Bearer {token}"}, mode=mode
                ) as client:
                    await client.call_tool("ping", {})
    calls = [who for method, who in seen if method == "tools/call"]
    assert calls == [("reporting", ["db:read"]), ("console", ["db:admin", "db:read"])]


async def test_no_auth_and_no_http_mean_no_token() -> None:
    seen: list[tuple[str, Any]] = []
    server = _server(seen)
    with anyio.fail_after(TIMEOUT * 2):
        async with serving(McpHttpApp(server)) as base, Client.http(base + "/mcp") as client:
            await client.call_tool("ping", {})
        async with connect(server) as client:
            await client.call_tool("ping", {})
    assert [who for method, who in seen if method == "tools/call"] == [None, None]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_tool_reads_the_token_from_its_context_or_get_context(mode: str) -> None:
    server = Server("who")

    def caller() -> str:  # a helper deep in the application, handed no Context
        token = get_context().access_token
        return "anonymous" if token is None else token.client_id

    @server.tool()
    def whoami(ctx: Context) -> str:  # a plain def: runs in a worker thread
        token = ctx.access_token
        return f"{None if token is None else sorted(token.scopes)} {caller()}"

    app = McpHttpApp(server)
    with anyio.fail_after(TIMEOUT * 3):
        async with serving(app) as base:
            url = base + "/mcp"
            app.auth = AuthSettings(
                verifier=StaticTokenVerifier(TOKENS),
                resource_server_url=url,
                authorization_servers=["https://auth.example.com/"],
            )
            async with Client.http(url, headers={"Authorization": "Bearer t-read"}, mode=mode) as client:
                result = await client.call_tool("whoami", {})
        async with connect(server, mode=mode) as client:
            in_memory = await client.call_tool("whoami", {})
    assert result["content"][0]["text"] == "['db:read'] reporting"
    assert in_memory["content"][0]["text"] == "None anonymous"
    with pytest.raises(RuntimeError, match="outside a request handler"):
        get_context()
