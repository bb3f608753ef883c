"""DNS rebinding: a foreign Host is refused in every HTTP revision, and a proxy that hides the
foreign Host from the server (rewriting it to the server's own) fails exactly that requirement."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
import pytest

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp.http import McpHttpApp
from jsonrpc_mcp_conformance import HttpTarget, Run, check, load_spec
from jsonrpc_mcp_conformance.fixtures import TRANSPORT_REVISIONS
from tests import timeouts

from ..http.support import REPO, serving

pytestmark = pytest.mark.anyio

SPEC = load_spec()
EVERYTHING = REPO / "examples" / "everything" / "server.py"
HOST = "http:host:foreign-refused"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
App = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]
]


def _hides_host(app: App) -> App:
    """A proxy that forwards every request under the server's own Host, whatever the client sent."""

    async def wrapped(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"host"]
            scope = {**scope, "headers": [(b"host", b"127.0.0.1"), *headers]}
        await app(scope, receive, send)

    return wrapped


async def _run(wrap: Callable[[App], App]) -> Run:
    mcp_app = McpHttpApp(load_target(str(EVERYTHING)))
    async with serving(wrap(mcp_app), mcp_app=mcp_app) as base:
        with anyio.fail_after(timeouts.LONG_RUN):
            return await check(HttpTarget(f"{base}/mcp", timeout=5), timeout=5, spec=SPEC, only=["http:*"])


def _statuses(run: Run) -> dict[tuple[str, str], str]:
    return {(v.id, v.revision): v.status for v in run.verdicts}


async def test_a_foreign_host_is_refused_in_every_http_revision() -> None:
    statuses = _statuses(await _run(lambda app: app))
    assert {k: s for k, s in statuses.items() if s in ("fail", "error")} == {}
    assert {r for (rid, r), s in statuses.items() if rid == HOST and s == "pass"} == set(
        TRANSPORT_REVISIONS["http"]
    )


async def test_hiding_the_host_from_the_server_fails_exactly_the_host_requirement() -> None:
    run = await _run(_hides_host)
    failed = {(v.id, v.revision) for v in run.verdicts if v.status in ("fail", "error")}
    assert failed == {(HOST, revision) for revision in TRANSPORT_REVISIONS["http"]}
