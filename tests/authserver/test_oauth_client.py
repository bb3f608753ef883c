"""The project's OAuth client (jsonrpc_mcp.client.auth) end to end, on the wire: against the real
authorization server (oidc-provider) and against the in-repo one, with ``serve --http --auth-*``
serving examples/everything as the protected resource. Discovery, dynamic registration, PKCE,
resource indicators, refresh, and client credentials with a secret or a signed assertion."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client
from jsonrpc_mcp.client.auth import AuthorizationError, FileTokenStorage, HeadlessBrowser, OAuth
from tests import timeouts

from ..http.issuer import ec_key
from .oidc_provider import OidcProvider, running_oidc_provider
from .server import AuthServer, private_pem, running_auth_server
from .support import ProtectedServer, protected_server

pytestmark = pytest.mark.anyio

STEP = timeouts.STARTUP  # one MCP exchange, the authorization flow included
REDIRECT = "http://127.0.0.1:45556/callback"  # never contacted: the headless agent stops at it
SCOPE = ("--auth-required-scope", "mcp:read")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def served(oidc_provider: OidcProvider) -> Iterator[ProtectedServer]:
    # the server names the scope it needs (oidc-provider grants nothing to a request asking for none)
    with protected_server(oidc_provider.issuer, oidc_provider.jwks_url, *SCOPE) as server:
        yield server


async def _echo(url: str, auth: OAuth, mode: str = "legacy") -> str:
    with anyio.fail_after(STEP):
        async with Client.http(url, auth=auth, mode=mode) as client:
            names = [tool["name"] for tool in await client.list_tools()]
            assert "test_simple_text" in names
            result = await client.call_tool("test_simple_text", {})
    text: str = result["content"][0]["text"]
    return text


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_authorization_code_flow_against_oidc_provider(served: ProtectedServer, mode: str) -> None:
    auth = OAuth(agent=HeadlessBrowser(REDIRECT))
    assert "simple text response" in await _echo(served.url, auth, mode)


async def test_tokens_kept_in_a_file_need_no_second_authorization(
    served: ProtectedServer, tmp_path: Path
) -> None:
    storage = FileTokenStorage(tmp_path / "tokens.json")
    await _echo(served.url, OAuth(agent=HeadlessBrowser(REDIRECT), storage=storage))

    class NoBrowser(HeadlessBrowser):
        async def authorize(self, url: str) -> str:
            raise AssertionError("a second authorization was asked for")

    assert "simple text response" in await _echo(
        served.url, OAuth(agent=NoBrowser(REDIRECT), storage=storage)
    )
    assert "access_token" in (tmp_path / "tokens.json").read_text()


async def test_a_short_lived_token_is_refreshed_at_oidc_provider(tmp_path: Path) -> None:
    # 20 s tokens fall inside the client's 30 s margin: every use refreshes first
    with (
        running_oidc_provider(access_token_ttl=20) as provider,
        protected_server(provider.issuer, provider.jwks_url, *SCOPE) as server,
    ):
        visits: list[str] = []

        class Counting(HeadlessBrowser):
            async def authorize(self, url: str) -> str:
                visits.append(url)
                return await super().authorize(url)

        storage = FileTokenStorage(tmp_path / "tokens.json")
        auth = OAuth(agent=Counting(REDIRECT), storage=storage)
        before = None
        for _ in range(2):
            await _echo(server.url, auth)
            entry = next(iter(v for k, v in (await _entries(storage)).items() if " issuer " in k))
            after = entry["tokens"]["refresh_token"]
            assert after != before  # oidc-provider rotates refresh tokens: each use got a new one
            before = after
    assert len(visits) == 1


async def _entries(storage: FileTokenStorage) -> dict[str, Any]:
    import orjson

    data = orjson.loads(storage.path.read_bytes())
    assert isinstance(data, dict)
    return data


@pytest.fixture
def in_repo_as() -> Iterator[AuthServer]:
    with running_auth_server() as server:
        yield server


async def test_client_credentials_with_a_secret(in_repo_as: AuthServer) -> None:
    client = in_repo_as.add_client(grant_types=["client_credentials"])
    assert client.client_secret is not None
    with protected_server(in_repo_as.issuer, in_repo_as.jwks_url) as server:
        auth = OAuth(
            grant="client_credentials", client_id=client.client_id, client_secret=client.client_secret
        )
        assert "simple text response" in await _echo(server.url, auth)
    (token,) = in_repo_as.requests_to("token")
    assert token.form["grant_type"] == "client_credentials"
    assert token.form["resource"] == server.url
    assert token.headers["authorization"].startswith("Basic ")


async def test_client_credentials_with_a_signed_assertion(in_repo_as: AuthServer) -> None:
    key = ec_key("client-key")
    client = in_repo_as.add_client(
        token_endpoint_auth_method="private_key_jwt",
        grant_types=["client_credentials"],
        jwks={"keys": [key.jwk()]},
    )
    with protected_server(in_repo_as.issuer, in_repo_as.jwks_url) as server:
        auth = OAuth(
            grant="client_credentials",
            client_id=client.client_id,
            private_key=private_pem(key),
            token_endpoint_auth_method="private_key_jwt",
        )
        assert "simple text response" in await _echo(server.url, auth)
    (token,) = in_repo_as.requests_to("token")
    assert token.form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    assert token.client_assertion is not None and token.client_assertion["iss"] == client.client_id


async def test_a_wrong_secret_is_the_servers_error_and_no_secret_is_shown(in_repo_as: AuthServer) -> None:
    client = in_repo_as.add_client(grant_types=["client_credentials"])
    with protected_server(in_repo_as.issuer, in_repo_as.jwks_url) as server:
        auth = OAuth(grant="client_credentials", client_id=client.client_id, client_secret="not-the-secret")
        with pytest.raises(AuthorizationError) as caught:
            await _echo(server.url, auth)
    assert caught.value.error == "invalid_client"
    assert "not-the-secret" not in str(caught.value) and "not-the-secret" not in repr(caught.value.__dict__)
