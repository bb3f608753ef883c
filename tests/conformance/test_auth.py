"""The ``auth`` fixtures (NOTES §10 H) against examples/everything protected by our bearer verifier:
all pass with the three kinds of token; a server that accepts any token fails exactly the
invalid-token requirement; without --auth-token they all skip."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp.http import AccessToken, AuthSettings, McpHttpApp, StaticTokenVerifier, TokenVerifier
from jsonrpc_mcp_conformance import HttpTarget, Run, check, load_spec
from jsonrpc_mcp_conformance.cli import EXIT_OK, EXIT_USAGE, main, target_from_config
from jsonrpc_mcp_conformance.httptarget import parse_bearer_challenge
from tests import timeouts

from ..http.support import REPO, serving

pytestmark = pytest.mark.anyio

SPEC = load_spec(check=False)  # other fixture files may be mid-edit; these tests run the auth ones
EVERYTHING = REPO / "examples" / "everything" / "server.py"
AUTH_IDS = {f.id for f in SPEC.fixtures if f.area == "auth"}
SCOPE = "mcp:tools"
TOKENS = {
    "good": AccessToken("good", "client", frozenset({SCOPE})),
    "other-aud": AccessToken(
        "other-aud", "client", frozenset({SCOPE}), resource="https://elsewhere.example/mcp"
    ),
    "narrow": AccessToken("narrow", "client", frozenset()),
}


class AnyToken:
    """A broken verifier: every token is valid, with every scope."""

    async def verify(self, token: str) -> AccessToken | None:
        return AccessToken(token, "client", frozenset({SCOPE}))


@pytest.fixture
async def protected() -> AsyncIterator[str]:
    async with _protected(StaticTokenVerifier(TOKENS)) as url:
        yield url


@contextlib.asynccontextmanager
async def _protected(verifier: TokenVerifier) -> AsyncIterator[str]:
    """examples/everything behind ``verifier`` under uvicorn; yields the MCP endpoint's URL."""
    settings = AuthSettings(
        verifier=verifier,
        resource_server_url="http://127.0.0.1/mcp",  # the port is known once serving: set below
        authorization_servers=["https://auth.example.com"],
        required_scopes=[SCOPE],
    )
    app = McpHttpApp(load_target(str(EVERYTHING)), auth=settings)
    async with serving(app) as base:
        settings.resource_server_url = f"{base}/mcp"
        yield settings.resource_server_url


def _by_status(run: Run, ids: set[str]) -> dict[str, set[tuple[str, str]]]:
    out: dict[str, set[tuple[str, str]]] = {}
    for v in run.verdicts:
        if v.id in ids:
            out.setdefault(v.status, set()).add((v.id, v.revision))
    return out


def _every(ids: set[str]) -> set[tuple[str, str]]:
    return {(f.id, r) for f in SPEC.fixtures if f.id in ids for r in f.revisions if r != "2024-11-05"}


async def test_a_protected_server_passes_every_auth_requirement(protected: str) -> None:
    target = HttpTarget(
        protected,
        timeout=5,
        auth_token="good",
        wrong_audience_token="other-aud",
        insufficient_scope_token="narrow",
    )
    with anyio.fail_after(timeouts.LONG_RUN):
        run = await check(target, timeout=5, spec=SPEC)
    failed = {
        (v.id, v.revision, v.problems[0] if v.problems else "")
        for v in run.verdicts
        if v.status in ("fail", "error")
    }
    assert failed == set()
    assert _by_status(run, AUTH_IDS) == {"pass": _every(AUTH_IDS)}


async def test_a_server_accepting_any_token_fails_exactly_the_invalid_token_requirement() -> None:
    async with _protected(AnyToken()) as url:
        with anyio.fail_after(timeouts.LONG_RUN):
            run = await check(
                HttpTarget(url, timeout=5, auth_token="good"), timeout=5, only=["auth:*"], spec=SPEC
            )
    failed = {(v.id, v.revision) for v in run.verdicts if v.status in ("fail", "error")}
    assert failed == _every({"auth:token:invalid-401"})
    skipped = _by_status(run, AUTH_IDS)["skip"]
    assert skipped == _every({"auth:token:wrong-audience-401", "auth:scope:insufficient-403"})
    notes = {v.note for v in run.verdicts if v.status == "skip"}
    assert notes == {
        "not applicable: no --auth-token-wrong-audience token was given",
        "not applicable: no --auth-token-insufficient-scope token was given",
    }


async def test_without_a_token_the_auth_requirements_skip_as_not_declared_protected() -> None:
    app = McpHttpApp(load_target(str(EVERYTHING)))
    async with serving(app) as base:
        with anyio.fail_after(timeouts.LONG_RUN):
            run = await check(HttpTarget(f"{base}/mcp", timeout=5), timeout=5, only=["auth:*"], spec=SPEC)
    assert {v.status for v in run.verdicts} == {"skip"}
    assert {(v.id, v.revision) for v in run.verdicts} == _every(AUTH_IDS)
    assert {v.note for v in run.verdicts} == {
        "not applicable: server not declared protected (no --auth-token)"
    }


async def test_the_cli_options_and_a_config_authorization_header(protected: str, tmp_path: Path) -> None:
    out = io.StringIO()
    argv = ["http", protected, "--only", "auth:*", "--auth-token", "good"]
    argv += ["--auth-token-wrong-audience", "other-aud", "--auth-token-insufficient-scope", "narrow"]
    code = await anyio.to_thread.run_sync(lambda: main(argv, out=out))
    assert code == EXIT_OK, out.getvalue()
    assert f"{len(_every(AUTH_IDS))} passed, 0 failed" in out.getvalue()
    config = tmp_path / "mcp.json"
    entry = {"url": protected, "headers": {"Authorization": "Bearer good"}}
    config.write_text(json.dumps({"mcpServers": {"protected": entry}}))
    out = io.StringIO()
    code = await anyio.to_thread.run_sync(
        lambda: main(["--config", str(config), "--only", "auth:*"], out=out)
    )
    assert code == EXIT_OK, out.getvalue()
    target = target_from_config(config, None)
    assert isinstance(target, HttpTarget) and target.variables["auth_token"] == "good"


def test_auth_options_are_for_http_servers_only() -> None:
    assert main(["--auth-token", "t", "stdio", "--", "true"], out=io.StringIO()) == EXIT_USAGE


def test_the_bearer_challenge_is_parsed() -> None:
    challenge = parse_bearer_challenge(
        [
            'Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="https://h/p\\"q"'
        ]
    )
    assert challenge == {
        "scheme": "Bearer",
        "error": "insufficient_scope",
        "scope": "a b",
        "scopes": ["a", "b"],
        "resource_metadata": 'https://h/p"q',
    }
    assert parse_bearer_challenge(["Bearer"]) == {"scheme": "Bearer"}
    assert parse_bearer_challenge(['Basic realm="x"']) is None
    assert parse_bearer_challenge(["bearer realm=x,scope=read"]) == {
        "scheme": "bearer",
        "realm": "x",
        "scope": "read",
        "scopes": ["read"],
    }
