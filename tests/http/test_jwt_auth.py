"""Real token verification on the wire: JWTs signed with keys generated here and checked against a
JWKS served on 127.0.0.1 (tests/http/issuer.py), and RFC 7662 introspection. Every refusal is a
plain 401 ``invalid_token`` whose reason is in the log and nowhere in the answer."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx
import pytest

from jsonrpc_mcp import Client, Server
from jsonrpc_mcp.http import AuthSettings, IntrospectionVerifier, JwtVerifier, McpHttpApp, TokenVerifier
from tests import timeouts

from .issuer import Issuer, ec_key, rsa_key, running_issuer
from .support import JSON_HEADERS, assert_error_body, initialize, post, refused_port, serving

pytestmark = pytest.mark.anyio

K1, K2, STRANGER, EC1 = rsa_key("k1"), rsa_key("k2"), rsa_key("stranger"), ec_key("e1")
AUTH_LOG = "jsonrpc_mcp.http.auth"


def _server() -> Server:
    server = Server("protected")

    @server.tool()
    def whoami() -> str:
        return "hello"

    return server


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running_issuer() as running:
        yield running


@pytest.fixture(scope="module")
async def site() -> AsyncIterator[tuple[McpHttpApp, str]]:
    app = McpHttpApp(_server())
    async with serving(app) as url:
        yield app, url


@pytest.fixture(autouse=True)
def _fresh_issuer(issuer: Issuer) -> None:
    issuer.published = [K1, EC1]
    issuer.jwks_status, issuer.stall, issuer.tokens = 200, 0.0, {}


def _protect(site: tuple[McpHttpApp, str], verifier: TokenVerifier) -> str:
    app, url = site
    app.auth = AuthSettings(
        verifier=verifier, resource_server_url=url + "/mcp", authorization_servers=["http://127.0.0.1"]
    )
    return url + "/mcp"


def _jwt_verifier(issuer: Issuer, mcp_url: str, **options: Any) -> JwtVerifier:
    return JwtVerifier(issuer=issuer.url, audience=mcp_url, jwks_url=issuer.jwks_url, **options)


def _claims(issuer: Issuer, audience: str, **changes: Any) -> dict[str, Any]:
    now = int(time.time())
    claims = {"iss": issuer.url, "aud": audience, "sub": "alice", "client_id": "app-1", "iat": now}
    claims.update({"exp": now + 300, "scope": "mcp:use", **changes})
    return {k: v for k, v in claims.items() if v is not None}


def _bearer(token: str, **extra: str) -> dict[str, str]:
    return {**JSON_HEADERS, "authorization": f"Bearer {token}", **extra}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _forged(header: dict[str, Any], claims: dict[str, Any], key: bytes | None) -> str:
    signing_input = _b64(json.dumps(header).encode()) + "." + _b64(json.dumps(claims).encode())
    signature = hmac.new(key, signing_input.encode(), hashlib.sha256).digest() if key else b""
    return signing_input + "." + _b64(signature)


async def _refused(http: httpx.AsyncClient, url: str, token: str) -> httpx.Response:
    response = await post(http, url, initialize(), _bearer(token))
    assert_error_body(response, 401)
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    return response


async def test_a_valid_jwt_is_served_through_the_projects_client(site: Any, issuer: Issuer) -> None:
    url = _protect(site, _jwt_verifier(issuer, site[1] + "/mcp"))
    token = K1.sign(_claims(issuer, url))
    with anyio.fail_after(timeouts.STEP):
        async with Client.http(url, headers={"Authorization": f"Bearer {token}"}) as client:
            assert [tool["name"] for tool in await client.list_tools()] == ["whoami"]
    ec_token = EC1.sign(_claims(issuer, url))  # an EC key from the same set
    async with httpx.AsyncClient(timeout=timeouts.STEP) as http:
        assert (await post(http, url, initialize(), _bearer(ec_token))).status_code == 200


def _bad_tokens(issuer: Issuer, url: str) -> dict[str, tuple[str, str]]:
    """name -> (token, the reason the log gives)."""
    now = int(time.time())
    good = K1.sign(_claims(issuer, url))
    head, body, signature = good.split(".")
    other = json.loads(base64.urlsafe_b64decode(body + "==")) | {"sub": "mallory"}
    return {
        "expired": (K1.sign(_claims(issuer, url, iat=now - 7200, exp=now - 3600)), "ExpiredSignatureError"),
        "not yet valid": (K1.sign(_claims(issuer, url, nbf=now + 3600)), "ImmatureSignatureError"),
        "wrong issuer": (K1.sign(_claims(issuer, url, iss="https://evil.example")), "InvalidIssuerError"),
        "wrong audience": (K1.sign(_claims(issuer, "https://other.example/mcp")), "audience"),
        "look-alike audience": (K1.sign(_claims(issuer, url + "x")), "audience"),
        "no audience": (K1.sign(_claims(issuer, url, aud=None)), "aud"),
        "no exp": (K1.sign(_claims(issuer, url, exp=None)), "exp"),
        "alg none": (_forged({"alg": "none", "typ": "JWT"}, _claims(issuer, url), None), "'none'"),
        "alg HS256": (_forged({"alg": "HS256", "kid": "k1"}, _claims(issuer, url), b"guess"), "'HS256'"),
        "unknown kid": (STRANGER.sign(_claims(issuer, url)), "no key in the JWKS for kid 'stranger'"),
        "kid of another key": (STRANGER.sign(_claims(issuer, url), kid="k1"), "InvalidSignatureError"),
        "tampered claims": (f"{head}.{_b64(json.dumps(other).encode())}.{signature}", "InvalidSignature"),
        "not a JWT": ("opaque-garbage", "malformed JWT"),
    }


BAD = list(_bad_tokens(Issuer(url="http://x"), "http://x/mcp"))


@pytest.mark.parametrize("name", BAD)
async def test_a_bad_jwt_is_401_and_only_the_log_says_why(
    site: Any, issuer: Issuer, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    url = _protect(site, _jwt_verifier(issuer, site[1] + "/mcp", refetch_interval=0))
    token, reason = _bad_tokens(issuer, url)[name]
    caplog.set_level(logging.INFO, logger=AUTH_LOG)
    async with httpx.AsyncClient(timeout=timeouts.STEP) as http:
        response = await _refused(http, url, token)
    logged = [r.getMessage() for r in caplog.records if r.name == AUTH_LOG and "refused" in r.getMessage()]
    assert any(reason in line for line in logged), logged
    assert token not in " ".join(logged)  # a fingerprint, never the token
    wire = response.text + response.headers["www-authenticate"]
    assert reason not in wire and "kid" not in wire and "Error" not in wire.replace("error=", "")


async def test_a_rotated_key_is_picked_up_and_unknown_kids_are_rate_limited(
    site: Any, issuer: Issuer
) -> None:
    url = _protect(site, _jwt_verifier(issuer, site[1] + "/mcp", refetch_interval=60))
    async with httpx.AsyncClient(timeout=timeouts.STEP) as http:
        good = K1.sign(_claims(issuer, url))
        assert (await post(http, url, initialize(), _bearer(good))).status_code == 200
        fetched = issuer.jwks_fetches
        # a burst of made-up kids: refused, and the issuer is not asked again
        with anyio.fail_after(timeouts.STEP):
            async with anyio.create_task_group() as tg:
                for n in range(8):
                    token = STRANGER.sign(_claims(issuer, url), kid=f"made-up-{n}")
                    tg.start_soon(_refused, http, url, token)
        assert issuer.jwks_fetches == fetched

    url = _protect(site, _jwt_verifier(issuer, site[1] + "/mcp", refetch_interval=0))
    async with httpx.AsyncClient(timeout=timeouts.STEP) as http:
        rotated = K2.sign(_claims(issuer, url))
        await _refused(http, url, rotated)  # not published yet
        issuer.published = [K2]  # the issuer rotates: k1 retired, k2 in
        assert (await post(http, url, initialize(), _bearer(rotated))).status_code == 200
        await _refused(http, url, K1.sign(_claims(issuer, url)))  # the retired key no longer works


@pytest.mark.parametrize("trouble", ["unreachable", "slow"])
async def test_an_unreachable_or_slow_jwks_is_503_never_a_hang(
    site: Any, issuer: Issuer, trouble: str
) -> None:
    mcp = site[1] + "/mcp"
    with refused_port() as nowhere:
        if trouble == "slow":
            issuer.stall = 3.0
            verifier = _jwt_verifier(issuer, mcp, timeout=0.3)
        else:
            verifier = JwtVerifier(issuer=issuer.url, audience=mcp, jwks_url=f"http://127.0.0.1:{nowhere}/j")
        await _two_answers_503(issuer, _protect(site, verifier))


async def _two_answers_503(issuer: Issuer, url: str) -> None:
    async with httpx.AsyncClient(timeout=timeouts.STEP) as http:
        for _ in range(2):  # the second within the refetch interval: answered at once, no new fetch
            with anyio.fail_after(2.5):
                response = await post(http, url, initialize(), _bearer(K1.sign(_claims(issuer, url))))
            assert_error_body(response, 503)
            assert int(response.headers["retry-after"]) >= 1
            assert "www-authenticate" not in response.headers  # nothing wrong with the token


async def test_keys_held_keep_working_while_the_issuer_is_down(site: Any, issuer: Issuer) -> None:
    url = _protect(site, _jwt_verifier(issuer, site[1] + "/mcp", jwks_ttl=0, refetch_interval=0))
    async with httpx.AsyncClient(timeout=timeouts.STEP) as http:
        token = K1.sign(_claims(issuer, url))
        assert (await post(http, url, initialize(), _bearer(token))).status_code == 200
        issuer.jwks_status = 500
        before = issuer.jwks_fetches
        assert (await post(http, url, initialize(), _bearer(token))).status_code == 200
        assert issuer.jwks_fetches > before  # it tried to refresh, failed, kept the old keys
        response = await post(http, url, initialize(), _bearer(K2.sign(_claims(issuer, url))))
        assert_error_body(response, 503)  # a key it cannot get: cannot tell, not "invalid"


async def test_the_session_belongs_to_the_principal_that_opened_it(site: Any, issuer: Issuer) -> None:
    url = _protect(site, _jwt_verifier(issuer, site[1] + "/mcp"))
    alice, bob = K1.sign(_claims(issuer, url)), K1.sign(_claims(issuer, url, sub="bob"))
    async with httpx.AsyncClient(timeout=timeouts.STEP) as http:
        opened = await post(http, url, initialize(), _bearer(alice))
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        assert_error_body(await post(http, url, ping, _bearer(bob, **session)), 404)
        assert (await post(http, url, ping, _bearer(alice, **session))).status_code == 200


async def test_hmac_tokens_need_an_explicit_shared_secret(site: Any, issuer: Issuer) -> None:
    with pytest.raises(ValueError, match="shared_secret"):
        JwtVerifier(issuer=issuer.url, audience="x", jwks_url=issuer.jwks_url, algorithms=["HS256"])
    with pytest.raises(ValueError, match="none"):
        JwtVerifier(issuer=issuer.url, audience="x", jwks_url=issuer.jwks_url, algorithms=["none"])
    secret = b"a-shared-secret-of-at-least-32-bytes!"
    url = _protect(site, JwtVerifier(issuer=issuer.url, audience=site[1] + "/mcp", shared_secret=secret))
    token = _forged({"alg": "HS256"}, _claims(issuer, url), secret)
    async with httpx.AsyncClient(timeout=timeouts.STEP) as http:
        assert (await post(http, url, initialize(), _bearer(token))).status_code == 200
        await _refused(http, url, _forged({"alg": "HS256"}, _claims(issuer, url), b"not-the-secret"))


def _introspection(server: Issuer, url: str, **options: Any) -> IntrospectionVerifier:
    client_id, secret = server.client
    return IntrospectionVerifier(
        url=server.introspection_url, audience=url, client_id=client_id, client_secret=secret, **options
    )


async def test_introspection_active_inactive_and_cached(
    site: Any, issuer: Issuer, caplog: pytest.LogCaptureFixture
) -> None:
    url = _protect(site, _introspection(issuer, site[1] + "/mcp", issuer=issuer.url))
    now = int(time.time())
    answer = {"active": True, "iss": issuer.url, "aud": url, "client_id": "app", "scope": "mcp:use"}
    issuer.tokens = {
        "opaque-good": answer | {"exp": now + 300},
        "opaque-revoked": {"active": False},
        "opaque-elsewhere": answer | {"aud": "https://other.example/mcp"},
        "opaque-foreign-issuer": answer | {"iss": "https://evil.example"},
    }
    caplog.set_level(logging.INFO, logger=AUTH_LOG)
    async with httpx.AsyncClient(timeout=timeouts.STEP) as http:
        before = issuer.introspections
        for _ in range(3):
            assert (await post(http, url, initialize(), _bearer("opaque-good"))).status_code == 200
        assert issuer.introspections == before + 1  # cached until exp or the TTL
        for token, reason in [
            ("opaque-revoked", "inactive"),
            ("opaque-unknown", "inactive"),
            ("opaque-elsewhere", "audience"),
            ("opaque-foreign-issuer", "issuer"),
        ]:
            response = await _refused(http, url, token)
            assert reason not in response.text
            assert any(reason in r.getMessage() for r in caplog.records if r.name == AUTH_LOG)


async def test_introspection_with_bad_credentials_or_down_is_503(site: Any, issuer: Issuer) -> None:
    wrong = IntrospectionVerifier(
        url=issuer.introspection_url, audience=site[1] + "/mcp", client_id="mcp-server", client_secret="no"
    )
    with refused_port() as nowhere:
        down = IntrospectionVerifier(url=f"http://127.0.0.1:{nowhere}/i", audience=site[1] + "/mcp")
        await _each_answers_503(site, issuer, [wrong, down])
    slow = _introspection(issuer, site[1] + "/mcp", timeout=0.3)
    await _each_answers_503(site, issuer, [slow], stall=3.0)


async def _each_answers_503(site: Any, issuer: Issuer, verifiers: list[Any], stall: float = 0.0) -> None:
    async with httpx.AsyncClient(timeout=timeouts.STEP) as http:
        for verifier in verifiers:
            url = _protect(site, verifier)
            issuer.stall = stall
            with anyio.fail_after(2.5):
                assert_error_body(await post(http, url, initialize(), _bearer("opaque-good")), 503)
        issuer.stall = 0.0
