"""A session adopted from Redis stays its opener's: another principal's request naming it is
answered as if the session did not exist, on the instance that adopts it as on the one that made it."""

from __future__ import annotations

import contextlib

import httpx
import pytest

from jsonrpc_mcp.http import AccessToken, AuthSettings, McpHttpApp, StaticTokenVerifier

from ..http.servers.toolbox import build_server
from ..http.support import JSON_HEADERS, initialize, post, request, serving, session_headers
from .support import RedisServer

pytestmark = pytest.mark.anyio

ALICE = AccessToken("alice-token", "client-a", frozenset(), claims={"sub": "alice"})
MALLORY = AccessToken("mallory-token", "client-a", frozenset(), claims={"sub": "mallory"})


def _bearer(token: AccessToken, headers: dict[str, str]) -> dict[str, str]:
    return {**headers, "authorization": f"Bearer {token.token}"}


async def test_another_principal_cannot_use_an_adopted_session(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    first, second = (McpHttpApp(build_server(), redis=redis_server.url) for _ in range(2))
    async with contextlib.AsyncExitStack() as stack:
        bases = [await stack.enter_async_context(serving(app)) for app in (first, second)]
        for app, base in zip((first, second), bases, strict=True):
            app.auth = AuthSettings(
                verifier=StaticTokenVerifier({t.token: t for t in (ALICE, MALLORY)}),
                resource_server_url=base + "/mcp",
                authorization_servers=["https://auth.example"],
            )
        opened = await post(http, bases[0] + "/mcp", initialize(), _bearer(ALICE, JSON_HEADERS))
        session_id = opened.headers["mcp-session-id"]
        listing = request(2, "tools/list")
        stolen = await post(http, bases[1] + "/mcp", listing, _bearer(MALLORY, session_headers(session_id)))
        owned = await post(http, bases[1] + "/mcp", listing, _bearer(ALICE, session_headers(session_id)))
        stolen_again = await post(
            http, bases[1] + "/mcp", listing, _bearer(MALLORY, session_headers(session_id))
        )
    assert opened.status_code == 200
    assert stolen.status_code == 404 and stolen.json()["error"]["code"] == -32001
    assert owned.status_code == 200 and owned.json()["result"]["tools"]
    assert stolen_again.status_code == 404  # adopted now, and still Alice's
