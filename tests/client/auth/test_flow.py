"""The OAuth client against a protected MCP server on the wire (our own McpHttpApp under uvicorn on
127.0.0.1, checking real JWTs against a JWKS) with an authorization server in memory (fakeas.py):
the whole dance, step-up, refresh, one registration per issuer, and every refusal a clear
AuthorizationError that carries no secret."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from jsonrpc_mcp import Client, Server
from jsonrpc_mcp.client.auth import AuthorizationError, InMemoryTokenStorage, OAuth
from jsonrpc_mcp.http import AuthSettings, JwtVerifier, McpHttpApp

from ...http.issuer import Issuer, running_issuer
from ...http.support import serving
from .fakeas import FakeAS

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn serves the protected server in-process on asyncio


def _server() -> Server:
    server = Server("protected")

    @server.tool()
    def whoami() -> str:
        return "alice"

    return server


@pytest.fixture(scope="module")
def jwks() -> Iterator[Issuer]:
    with running_issuer() as running:
        yield running


@pytest.fixture
async def site(jwks: Issuer) -> AsyncIterator[tuple[McpHttpApp, str, FakeAS]]:
    fake = FakeAS()
    jwks.published = [fake.key]
    app = McpHttpApp(_server())
    async with serving(app) as base:
        url = base + "/mcp"
        verifier = JwtVerifier(issuer=fake.issuer, audience=url, jwks_url=jwks.jwks_url)
        app.auth = AuthSettings(
            verifier=verifier,
            resource_server_url=url,
            authorization_servers=[fake.issuer],
            required_scopes=["mcp:read"],
        )
        yield app, url, fake


def _oauth(fake: FakeAS, **options: Any) -> OAuth:
    options.setdefault("agent", fake.agent())
    return OAuth(fetch=fake.fetcher(), **options)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_whole_dance_then_the_tool_answers(site: tuple[McpHttpApp, str, FakeAS], mode: str) -> None:
    _, url, fake = site
    auth = _oauth(fake)
    async with Client.http(url, auth=auth, mode=mode) as client:
        result = await client.call_tool("whoami", {})
    assert result["content"][0]["text"] == "alice"
    (registration,) = fake.requests("/register")
    assert registration.json["redirect_uris"] == ["http://127.0.0.1:9/callback"]
    assert registration.json["application_type"] == "native"
    (authorize,) = [s for s in fake.seen if s.url.startswith(fake.issuer + "/authorize")]
    query = authorize.json
    assert query["code_challenge_method"] == "S256"
    assert query["resource"] == url
    assert query["scope"] == "mcp:read"  # the challenge's scope
    assert query["client_id"] == "client-1"
    (token,) = fake.requests("/token")
    assert token.form is not None and token.form["resource"] == url and token.form["code_verifier"]


async def test_a_second_client_reuses_the_stored_token(site: tuple[McpHttpApp, str, FakeAS]) -> None:
    _, url, fake = site
    storage = InMemoryTokenStorage()
    async with Client.http(url, auth=_oauth(fake, storage=storage)) as client:
        await client.list_tools()
    agent = fake.agent()
    async with Client.http(url, auth=_oauth(fake, storage=storage, agent=agent)) as client:
        await client.list_tools()
    assert agent.visits == []  # no second trip through the browser
    assert len(fake.requests("/register")) == 1


async def test_step_up_asks_for_the_union_of_scopes(site: tuple[McpHttpApp, str, FakeAS]) -> None:
    app, url, fake = site
    agent = fake.agent()
    async with Client.http(url, auth=_oauth(fake, agent=agent)) as client:
        await client.list_tools()
        assert app.auth is not None
        app.auth.required_scopes = ["mcp:read", "mcp:write"]  # the server now wants more
        result = await client.call_tool("whoami", {})
    assert result["content"][0]["text"] == "alice"
    assert len(agent.visits) == 2
    second = [s for s in fake.seen if s.url.startswith(fake.issuer + "/authorize")][1].json
    assert second["scope"].split() == ["mcp:read", "mcp:write"]


async def test_step_ups_that_never_help_stop(site: tuple[McpHttpApp, str, FakeAS]) -> None:
    app, url, fake = site
    fake.token_scopes = "mcp:read"  # whatever is asked, only mcp:read is granted
    agent = fake.agent()
    async with Client.http(url, auth=_oauth(fake, agent=agent, max_step_ups=2)) as client:
        await client.list_tools()
        assert app.auth is not None
        app.auth.required_scopes = ["mcp:read", "mcp:admin"]
        for _ in range(4):
            with pytest.raises(AuthorizationError) as caught:
                await client.call_tool("whoami", {})
            assert caught.value.status == 403 and caught.value.error == "insufficient_scope"
    assert len(agent.visits) == 1 + 2  # the first authorization, then two step-ups at most


async def test_an_expired_token_is_refreshed_before_use(site: tuple[McpHttpApp, str, FakeAS]) -> None:
    _, url, fake = site
    fake.expires_in = 1  # inside the refresh margin: refreshed before every use
    agent = fake.agent()
    async with Client.http(url, auth=_oauth(fake, agent=agent)) as client:
        await client.list_tools()
        await client.call_tool("whoami", {})
    grants = [s.form["grant_type"] for s in fake.requests("/token") if s.form]
    assert grants[0] == "authorization_code" and "refresh_token" in grants[1:]
    assert len(agent.visits) == 1


async def test_without_auth_a_401_is_an_authorization_error_with_the_challenge(
    site: tuple[McpHttpApp, str, FakeAS],
) -> None:
    _, url, _ = site
    with pytest.raises(AuthorizationError) as caught:
        async with Client.http(url) as client:
            await client.list_tools()
    error = caught.value
    assert error.status == 401
    assert error.challenge is not None
    assert error.parsed_challenge.resource_metadata == url.replace(
        "/mcp", "/.well-known/oauth-protected-resource/mcp"
    )


async def test_a_refused_authorization_is_the_servers_error(site: tuple[McpHttpApp, str, FakeAS]) -> None:
    _, url, fake = site
    fake.deny_authorization = "access_denied"
    with pytest.raises(AuthorizationError) as caught:
        async with Client.http(url, auth=_oauth(fake)) as client:
            await client.list_tools()
    assert caught.value.error == "access_denied"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"iss_in_redirect": "wrong"}, "iss mismatch"),
        ({"iss_in_redirect": "omit"}, "lacks the iss"),
        ({"pkce": None}, "PKCE"),
        ({"metadata_issuer": "https://attacker.example.com"}, "names issuer"),
        ({"registration": False}, "pre-registered client_id"),
    ],
)
async def test_what_the_client_refuses(
    site: tuple[McpHttpApp, str, FakeAS], change: dict[str, Any], words: str
) -> None:
    _, url, fake = site
    for name, value in change.items():
        setattr(fake, name, value)
    with pytest.raises(AuthorizationError, match=words):
        async with Client.http(url, auth=_oauth(fake)) as client:
            await client.list_tools()
    assert fake.requests("/token") == []


async def test_no_token_or_secret_reaches_the_log(
    site: tuple[McpHttpApp, str, FakeAS], caplog: pytest.LogCaptureFixture
) -> None:
    _, url, fake = site
    fake.auth_methods = ["client_secret_post"]
    caplog.set_level(logging.DEBUG)
    async with Client.http(url, auth=_oauth(fake)) as client:
        await client.list_tools()
    secrets = [c["client_secret"] for c in fake.clients.values()]
    (token,) = fake.requests("/token")
    assert token.form is not None and token.form["client_secret"] in secrets  # it was used...
    logged = caplog.text
    assert all(secret not in logged for secret in secrets)  # ...and never logged
    assert "eyJ" not in logged  # no JWT either


async def test_client_credentials_with_a_secret(site: tuple[McpHttpApp, str, FakeAS]) -> None:
    _, url, fake = site
    auth = OAuth(
        grant="client_credentials",
        client_id="robot",
        client_secret="s3cret",
        scope="mcp:read",
        fetch=fake.fetcher(),
    )
    async with Client.http(url, auth=auth) as client:
        await client.list_tools()
    (token,) = fake.requests("/token")
    assert token.form is not None and token.form["grant_type"] == "client_credentials"
    assert token.headers["authorization"].startswith("Basic ")
    assert "client_secret" not in token.form


def test_the_repr_shows_no_secret() -> None:
    assert "s3cret" not in repr(OAuth(grant="client_credentials", client_id="robot", client_secret="s3cret"))


async def test_a_server_that_refuses_every_token_is_not_authorized_again_and_again(
    site: tuple[McpHttpApp, str, FakeAS],
) -> None:
    _, url, fake = site
    fake.origin_audience = True  # tokens for another resource: the server refuses each one
    agent = fake.agent()
    auth = _oauth(fake, agent=agent, max_step_ups=2)
    for attempt in range(6):
        with pytest.raises(AuthorizationError) as caught:
            async with Client.http(url, auth=auth) as client:
                await client.list_tools()
        assert caught.value.status == 401
        if attempt == 3:
            settled = len(agent.visits)
    assert 1 <= settled <= 2  # at most max_step_ups authorizations in a row...
    assert len(agent.visits) == settled  # ...and none more, however often the application retries
