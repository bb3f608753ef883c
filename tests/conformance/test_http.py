"""The harness's HTTP mode: examples/everything and examples/memory over Streamable HTTP pass every
applicable requirement in every revision that has Streamable HTTP (the transport-neutral fixtures
included), and each fault an ASGI wrapper injects fails exactly the requirements it breaks."""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp.http import McpHttpApp
from jsonrpc_mcp_conformance import Fixture, HttpTarget, Run, check, load_spec
from jsonrpc_mcp_conformance.cli import EXIT_OK, EXIT_USAGE, main
from jsonrpc_mcp_conformance.fixtures import TRANSPORT_REVISIONS, expand_revisions
from tests import timeouts

from ..http.support import REPO, serving, spawned

pytestmark = pytest.mark.anyio

SPEC = load_spec()
EVERYTHING = REPO / "examples" / "everything" / "server.py"
MEMORY = REPO / "examples" / "memory" / "server.py"
HTTP_IDS = {f.id for f in SPEC.fixtures if f.area == "http"}
HTTP_REVISIONS = TRANSPORT_REVISIONS["http"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def _failed(run: Run) -> set[tuple[str, str]]:
    return {(v.id, v.revision) for v in run.verdicts if v.status in ("fail", "error")}


def _wants_status(fixture: Fixture, revision: str, status: int) -> bool:
    """Whether a step of ``fixture`` taken in ``revision`` wants this HTTP status (alone, or as one of
    the readings of a ``$one_of``): a server answering 200 instead fails it."""
    for step in fixture.steps:
        if "revisions" in step and revision not in expand_revisions(step["revisions"]):
            continue
        pattern = step.get("expect_http", step.get("http", {}).get("expect", {}))
        readings = [pattern, *pattern.get("$one_of", [])] if isinstance(pattern, dict) else []
        if any(isinstance(r, dict) and r.get("status") == status for r in readings):
            return True
    return False


def _strips_origin(app: App) -> App:
    """A proxy that drops the Origin header, so the server never sees (nor checks) it."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k.lower() != b"origin"]}
        await app(scope, receive, send)

    return wrapped


def _answers_200_for(status: int) -> Callable[[App], App]:
    """A proxy that turns every ``status`` answer into 200 OK."""

    def wrap(app: App) -> App:
        async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
            async def send_200(message: Message) -> None:
                if message["type"] == "http.response.start" and message["status"] == status:
                    message = {**message, "status": 200}
                await send(message)

            await app(scope, receive, send_200)

        return wrapped

    return wrap


async def _run_wrapped(wrap: Callable[[App], App]) -> Run:
    mcp_app = McpHttpApp(load_target(str(EVERYTHING)))
    async with serving(wrap(mcp_app), mcp_app=mcp_app) as base:
        with anyio.fail_after(timeouts.LONG_RUN):
            return await check(HttpTarget(f"{base}/mcp", timeout=5), timeout=5, spec=SPEC)


@pytest.mark.parametrize("example", [EVERYTHING, MEMORY], ids=["everything", "memory"])
async def test_example_served_over_http_passes_every_applicable_requirement(
    example: Path, tmp_path: Path
) -> None:
    options = ["--data-dir", str(tmp_path)] if example == MEMORY else []
    with spawned(example, *options) as server:
        with anyio.fail_after(timeouts.LONG_RUN):
            run = await check(HttpTarget(f"{server.url}/mcp", timeout=5), timeout=5, spec=SPEC)
    assert _failed(run) == set()
    assert {r.revision for r in run.revisions if r.supported} == set(HTTP_REVISIONS)
    assert {v.revision for v in run.verdicts} == set(HTTP_REVISIONS)  # 2024-11-05 had no Streamable HTTP
    passed = [v for v in run.verdicts if v.status == "pass"]
    per_revision = Counter(v.revision for v in passed)
    assert all(per_revision[r] > 110 for r in HTTP_REVISIONS), per_revision
    if example == EVERYTHING:  # it has every tool the http fixtures look for (memory lacks some)
        assert {v.id for v in passed} >= HTTP_IDS
    # the transport-neutral areas ran over HTTP too, not only the http fixtures
    per_area = Counter(v.fixture.area for v in passed)
    assert min(per_area[a] for a in ("jsonrpc", "batch", "lifecycle", "features", "modern")) > 15, per_area


async def test_stripping_the_origin_header_fails_exactly_the_origin_requirements() -> None:
    run = await _run_wrapped(_strips_origin)
    assert _failed(run) == {
        ("http:origin:validated", "2025-03-26"),
        ("http:origin:validated", "2025-06-18"),
        ("http:origin:forbidden", "2025-11-25"),
        ("http:modern:origin-forbidden", "2026-07-28"),
    }


@pytest.mark.parametrize(
    ("status", "examples"),
    [
        # notifications (C01, B06, A09; the http area's C01/E14)
        (
            202,
            {
                ("jsonrpc:notification:empty-params", "2025-06-18"),
                ("jsonrpc:batch:notifications-only", "2025-03-26"),
                ("lifecycle:initialized:no-response", "2025-11-25"),
                ("http:post:notification-accepted", "2025-03-26"),
            },
        ),
        # 2026-07-28 unknown and removed methods (A05/E12, D08; C08's terminated session)
        (
            404,
            {
                ("jsonrpc:method-not-found:foobar", "2026-07-28"),
                ("modern:removed:ping", "2026-07-28"),
                ("http:modern:unknown-method-404", "2026-07-28"),
                ("http:session:terminated", "2025-11-25"),
            },
        ),
    ],
)
async def test_answering_200_instead_fails_exactly_the_requirements_on_that_status(
    status: int, examples: set[tuple[str, str]]
) -> None:
    run = await _run_wrapped(_answers_200_for(status))
    ran = {(v.id, v.revision) for v in run.verdicts if v.status != "skip"}
    expected = {
        (f.id, revision)
        for f in SPEC.fixtures
        for revision in f.revisions
        if f.applies(revision, "http") and _wants_status(f, revision, status)
    }
    assert examples <= expected & ran
    assert ("jsonrpc:method-not-found:foobar", "2025-11-25") not in expected  # 404 is 2026-07-28's rule
    assert _failed(run) == expected & ran


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
    assert (
        "revision 2024-11-05: not supported (not checked: http is a transport of 2025-03-26" in out.getvalue()
    )
