"""Bearer tokens on the MCP endpoint: 401 with a resource_metadata challenge, 403 for missing scopes,
the RFC 9728 metadata document at its well-known path, and no token ever taken from the query string
(NOTES.md §7, §10 H01-H08); a session serves only the principal that opened it."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import httpx
import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.http import AccessToken, AuthSettings, McpHttpApp, StaticTokenVerifier

from .support import JSON_HEADERS, assert_error_body, initialize, post, serving

pytestmark = pytest.mark.anyio

GOOD = AccessToken("good-token", "client-a", frozenset({"mcp:use"}))
NARROW = AccessToken("narrow-token", "client-b", frozenset({"other"}))
EXPIRED = AccessToken("old-token", "client-c", frozenset({"mcp:use"}), expires_at=int(time.time()) - 60)
FOREIGN = AccessToken(
    "foreign-token", "client-d", frozenset({"mcp:use"}), resource="https://elsewhere.example/mcp"
)


def _server() -> Server:
    server = Server("protected")

    @server.tool()
    def hello() -> str:
        return "hello"

    return server


@pytest.fixture(scope="module")
async def base() -> AsyncIterator[str]:
    app = McpHttpApp(_server())
    async with serving(app) as url:
        # the resource URL names the port, known only now; every request reads app.auth afresh
        app.auth = AuthSettings(
            verifier=StaticTokenVerifier({t.token: t for t in (GOOD, NARROW, EXPIRED, FOREIGN)}),
            resource_server_url=url + "/mcp",
            authorization_servers=["https://auth.example"],
            required_scopes=["mcp:use"],
        )
        yield url


def _bearer(token: str) -> dict[str, str]:
    return {**JSON_HEADERS, "authorization": f"Bearer {token}"}


async def test_no_token_is_401_with_a_resource_metadata_challenge(http: httpx.AsyncClient, base: str) -> None:
    response = await post(http, base + "/mcp", initialize(), JSON_HEADERS)
    assert_error_body(response, 401)
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"' in challenge
    assert 'scope="mcp:use"' in challenge


@pytest.mark.parametrize("token", ["nonsense", EXPIRED.token, FOREIGN.token])
async def test_an_invalid_expired_or_foreign_token_is_401(
    http: httpx.AsyncClient, base: str, token: str
) -> None:
    response = await post(http, base + "/mcp", initialize(), _bearer(token))
    assert_error_body(response, 401)
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


async def test_a_token_without_the_required_scope_is_403(http: httpx.AsyncClient, base: str) -> None:
    response = await post(http, base + "/mcp", initialize(), _bearer(NARROW.token))
    assert_error_body(response, 403)
    challenge = response.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="mcp:use"' in challenge


async def test_a_token_in_the_query_string_is_not_accepted(http: httpx.AsyncClient, base: str) -> None:
    response = await post(http, base + f"/mcp?access_token={GOOD.token}", initialize(), JSON_HEADERS)
    assert_error_body(response, 401)


async def test_a_good_token_is_served(http: httpx.AsyncClient, base: str) -> None:
    response = await post(http, base + "/mcp", initialize(), _bearer(GOOD.token))
    assert response.status_code == 200
    assert response.json()["result"]["serverInfo"]["name"] == "protected"


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
)
async def test_the_protected_resource_metadata_is_served_without_a_token(
    http: httpx.AsyncClient, base: str, path: str
) -> None:
    response = await http.get(base + path)
    assert response.status_code == 200
    document = response.json()
    assert document["resource"] == base + "/mcp"
    assert document["authorization_servers"] == ["https://auth.example"]


OTHER = AccessToken("other-token", "client-e", frozenset({"mcp:use"}))
SAME_CLIENT_OTHER_USER = AccessToken(
    "user2-token", "client-a", frozenset({"mcp:use"}), claims={"sub": "user-2"}
)


@pytest.fixture(scope="module")
async def bound() -> AsyncIterator[str]:
    app = McpHttpApp(_server())
    async with serving(app) as url:
        tokens = (GOOD, OTHER, SAME_CLIENT_OTHER_USER)
        app.auth = AuthSettings(
            verifier=StaticTokenVerifier({t.token: t for t in tokens}),
            resource_server_url=url + "/mcp",
            authorization_servers=["https://auth.example"],
            required_scopes=["mcp:use"],
        )
        yield url


async def _open(http: httpx.AsyncClient, base: str, token: str) -> str:
    response = await post(http, base + "/mcp", initialize(), _bearer(token))
    assert response.status_code == 200
    session_id: str = response.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    headers = {**_bearer(token), "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
    assert (await post(http, base + "/mcp", initialized, headers)).status_code == 202
    return session_id


@pytest.mark.parametrize("intruder", [OTHER, SAME_CLIENT_OTHER_USER], ids=["other-client", "other-subject"])
async def test_a_session_serves_only_the_principal_that_opened_it(
    http: httpx.AsyncClient, bound: str, intruder: AccessToken
) -> None:
    session_id = await _open(http, bound, GOOD.token)
    ping = {"jsonrpc": "2.0", "id": 5, "method": "ping"}

    def headers(token: str) -> dict[str, str]:
        return {**_bearer(token), "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}

    stolen = await post(http, bound + "/mcp", ping, headers(intruder.token))
    assert_error_body(stolen, 404)  # as if the session did not exist: nothing about it leaks
    listening = await http.get(
        bound + "/mcp", headers={**headers(intruder.token), "accept": "text/event-stream"}
    )
    assert listening.status_code == 404
    deleted = await http.delete(bound + "/mcp", headers=headers(intruder.token))
    assert deleted.status_code == 404
    own = await post(http, bound + "/mcp", ping, headers(GOOD.token))
    assert own.status_code == 200 and own.json()["result"] == {}  # still the owner's, still alive
