"""``jsonrpc-mcp serve --http --auth-*``: a real subprocess protected by JWTs checked against a
JWKS on 127.0.0.1, or by RFC 7662 introspection with the client secret from the environment; a
configuration that cannot work is one line on stderr and exit status 2."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from jsonrpc_mcp._auth_options import auth_settings, auth_spec
from jsonrpc_mcp._serve_options import serve_options as _serve_options
from jsonrpc_mcp.http import audience_matches
from tests import timeouts

from .issuer import Issuer, rsa_key, running_issuer
from .support import JSON_HEADERS, REPO, TOOLBOX, initialize, spawned

KEY = rsa_key("cli-key")


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running_issuer() as running:
        running.published = [KEY]
        yield running


def _token(issuer: Issuer, audience: str, scope: str = "mcp:use") -> str:
    now = int(time.time())
    claims = {"iss": issuer.url, "aud": audience, "sub": "u", "exp": now + 300, "scope": scope}
    return KEY.sign(claims)


def _post(url: str, token: str | None) -> httpx.Response:
    headers = dict(JSON_HEADERS)
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return httpx.post(url, json=initialize(), headers=headers, timeout=timeouts.STEP)


@pytest.mark.parametrize("workers", [[], ["--workers", "2", "--stateless"]], ids=["one", "workers"])
def test_serve_verifies_jwts_against_the_jwks(issuer: Issuer, workers: list[str]) -> None:
    options = ["--auth-issuer", issuer.url, "--auth-jwt-jwks", issuer.jwks_url]
    with spawned(TOOLBOX, *options, "--auth-required-scope", "mcp:use", *workers) as served:
        mcp = served.url + "/mcp"
        assert _post(mcp, _token(issuer, mcp)).status_code == 200
        refused = _post(mcp, _token(issuer, "https://other.example/mcp"))
        assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["www-authenticate"]
        assert _post(mcp, _token(issuer, mcp, scope="other")).status_code == 403
        anonymous = _post(mcp, None)
        assert anonymous.status_code == 401
        prm = f"{served.url}/.well-known/oauth-protected-resource/mcp"
        assert f'resource_metadata="{prm}"' in anonymous.headers["www-authenticate"]
        document = httpx.get(prm, timeout=timeouts.STEP).json()
        assert document["resource"] == mcp and document["authorization_servers"] == [issuer.url]


def test_serve_introspects_with_the_secret_from_the_environment(
    issuer: Issuer, monkeypatch: pytest.MonkeyPatch
) -> None:
    client_id, secret = issuer.client
    monkeypatch.setenv("TEST_INTROSPECTION_SECRET", secret)
    options = [
        *("--auth-introspection-url", issuer.introspection_url, "--auth-client-id", client_id),
        *("--auth-client-secret-env", "TEST_INTROSPECTION_SECRET"),
        *("--auth-authorization-server", issuer.url),
    ]
    with spawned(TOOLBOX, *options) as served:
        mcp = served.url + "/mcp"
        issuer.tokens["opaque-1"] = {"active": True, "aud": mcp, "client_id": "app"}
        assert _post(mcp, "opaque-1").status_code == 200
        assert _post(mcp, "opaque-2").status_code == 401  # unknown to the issuer: inactive


def _serve(*options: str, **env: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(TOOLBOX), "--port", "0", *options]
    return subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, timeout=timeouts.STARTUP, env=env or None
    )


JWT = ["--auth-issuer", "http://i", "--auth-jwt-jwks", "http://i/j"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--auth-jwt-jwks", "http://127.0.0.1:9/jwks"], "--auth-issuer"),
        (["--auth-issuer", "http://i", "--auth-jwt-jwks", "http://i/j", "--auth-introspection-url", "http://i/x"],
         "exactly one"),
        (["--auth-introspection-url", "http://i/x", "--auth-client-secret-env", "NO_SUCH_VAR_HERE",
          "--auth-client-id", "c", "--auth-authorization-server", "http://i"], "NO_SUCH_VAR_HERE is not set"),
        ([*JWT, "--host", "0.0.0.0"], "--auth-resource"),
        ([*JWT, "--auth-jwt-algorithm", "none"], "none"),
        ([*JWT, "--auth-jwt-algorithm", "HS256"], "shared_secret"),
    ],
)  # fmt: skip
def test_a_bad_auth_configuration_is_one_line_and_exit_2(options: list[str], message: str) -> None:
    done = _serve("--http", *options)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert " at http" not in done.stderr  # refused before serving


def test_auth_options_without_http_are_refused() -> None:
    done = _serve("--auth-issuer", "http://i", "--auth-jwt-jwks", "http://i/j")
    assert done.returncode == 2 and "--auth-* options need --http" in done.stderr


def _documented_commands() -> list[list[str]]:
    text = (REPO / "docs" / "auth.md").read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            if line.startswith("jsonrpc-mcp serve"):
                commands.append(shlex.split(line))
    return commands


def test_the_documented_command_lines_are_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/auth.md's ``sh`` blocks: every option exists and the configuration is consistent."""
    monkeypatch.setenv("MCP_INTROSPECTION_SECRET", "x")
    commands = _documented_commands()
    assert len(commands) == 2
    for argv in commands:
        options, unknown = _serve_options().parse_known_args(argv[2:])
        assert unknown == ["server.py"]
        spec = auth_spec(options, "http://127.0.0.1:8000/mcp")
        settings = auth_settings(spec)
        assert settings is not None and settings.resource_server_url == "https://mcp.example.com/mcp"


@pytest.mark.parametrize(
    ("claim", "accepted", "prefix", "ok"),
    [
        ("https://h.example/mcp", ["https://h.example/mcp"], False, True),
        ("HTTPS://H.example:443/mcp/", ["https://h.example/mcp"], False, True),
        (["https://a.example", "https://h.example/mcp"], ["https://h.example/mcp"], False, True),
        ("https://h.example/mcp/t1", ["https://h.example/mcp"], False, False),
        ("https://h.example/mcp/t1", ["https://h.example/mcp"], True, True),
        ("https://h.example/mcpx", ["https://h.example/mcp"], True, False),
        ("https://evil.example/mcp/t1", ["https://h.example/mcp"], True, False),
        ("http://h.example/mcp", ["https://h.example/mcp"], False, False),
        ("https://h.example/mcp?x=1", ["https://h.example/mcp"], True, False),
        (None, ["https://h.example/mcp"], False, False),
        ([1, None], ["https://h.example/mcp"], False, False),
        ("https://h.example/other", ["https://h.example/mcp", "https://h.example/other"], False, True),
    ],
)
def test_the_audience_policy(claim: object, accepted: list[str], prefix: bool, ok: bool) -> None:
    assert audience_matches(claim, accepted, prefix=prefix) is ok
