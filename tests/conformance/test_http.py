"""The harness's HTTP mode: examples/everything over Streamable HTTP passes every requirement, and
each fault an ASGI wrapper injects fails exactly the requirements it breaks."""

from __future__ import annotations

import io
import json
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from conformance import HttpTarget, Run, check, load_spec
from conformance.cli import EXIT_OK, EXIT_USAGE, main
from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp.http import McpHttpApp

from ..http.support import REPO, serving, spawned

SPEC = load_spec()
EVERYTHING = REPO / "examples" / "everything" / "server.py"
HTTP_IDS = {f.id for f in SPEC.fixtures if f.transports == ("http",)}

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def _failed(run: Run) -> set[tuple[str, str]]:
    return {(v.id, v.revision) for v in run.verdicts if v.status in ("fail", "error")}


def _strips_origin(app: App) -> App:
    """A proxy that drops the Origin header, so the server never sees (nor checks) it."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k.lower() != b"origin"]}
        await app(scope, receive, send)

    return wrapped


def _answers_notifications_with_200(app: App) -> App:
    """A proxy that turns every 202 Accepted into 200 OK."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_200(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 202:
                message = {**message, "status": 200}
            await send(message)

        await app(scope, receive, send_200)

    return wrapped


async def _run_wrapped(wrap: Callable[[App], App]) -> Run:
    mcp_app = McpHttpApp(load_target(str(EVERYTHING)))
    async with serving(wrap(mcp_app), mcp_app=mcp_app) as base:
        with anyio.fail_after(30):
            return await check(HttpTarget(f"{base}/mcp", timeout=5), timeout=5, spec=SPEC)


@pytest.mark.anyio
async def test_everything_served_over_http_passes_every_requirement() -> None:
    with spawned(EVERYTHING) as server:
        with anyio.fail_after(30):
            run = await check(HttpTarget(f"{server.url}/mcp", timeout=5), timeout=5, spec=SPEC)
    assert _failed(run) == set()
    passed = {v.id for v in run.verdicts if v.status == "pass"}
    assert passed >= HTTP_IDS


@pytest.mark.anyio
async def test_stripping_the_origin_header_fails_exactly_the_origin_requirements() -> None:
    run = await _run_wrapped(_strips_origin)
    assert _failed(run) == {
        ("http:origin:forbidden", "2025-11-25"),
        ("http:modern:origin-forbidden", "2026-07-28"),
    }


@pytest.mark.anyio
async def test_answering_notifications_with_200_fails_exactly_the_202_requirements() -> None:
    run = await _run_wrapped(_answers_notifications_with_200)
    assert _failed(run) == {
        ("http:post:notification-accepted", revision)
        for revision in ("2025-03-26", "2025-06-18", "2025-11-25")
    } | {("http:modern:notification-accepted", "2026-07-28")}


def test_http_needs_exactly_one_url() -> None:
    assert main(["http"], out=io.StringIO()) == EXIT_USAGE


def test_a_config_entry_with_a_url_is_checked_over_http(tmp_path: Path) -> None:
    with spawned(EVERYTHING) as server:
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"everything": {"url": f"{server.url}/mcp"}}}))
        out = io.StringIO()
        code = main(["--config", str(config), "--server", "everything", "--only", "http:*"], out=out)
    expected = sum(len(f.revisions) for f in SPEC.fixtures if f.id in HTTP_IDS)
    assert code == EXIT_OK, out.getvalue()
    assert f"{expected} passed, 0 failed" in out.getvalue()
