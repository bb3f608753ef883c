"""/healthz and /readyz: unauthenticated, before the Host/Origin check, paths configurable; readiness
fails while starting and draining, and a draining app refuses new sessions (503, Retry-After)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.http import AuthSettings, McpHttpApp, StaticTokenVerifier
from jsonrpc_mcp.http.app import Message

from .servers.toolbox import build_server
from .support import JSON_HEADERS, TIMEOUT, assert_error_body, initialize, post, serving

pytestmark = pytest.mark.anyio


async def get(http: httpx.AsyncClient, url: str, **headers: str) -> httpx.Response:
    with anyio.fail_after(TIMEOUT):
        return await http.get(url, headers=headers)


async def test_liveness_and_readiness_answer_200_when_ready(http: httpx.AsyncClient) -> None:
    async with serving(McpHttpApp(build_server())) as base:
        live = await get(http, base + "/healthz")
        ready = await get(http, base + "/readyz")
        with anyio.fail_after(TIMEOUT):
            head = await http.head(base + "/readyz")
    assert (live.status_code, live.json()) == (200, {"status": "ok"})
    assert (ready.status_code, ready.json()) == (200, {"status": "ok"})
    assert head.status_code == 200 and head.content == b""
    assert ready.headers["cache-control"] == "no-store"


async def test_probes_skip_the_host_check_and_authentication(http: httpx.AsyncClient) -> None:
    app = McpHttpApp(build_server())
    async with serving(app) as base:
        app.auth = AuthSettings(
            verifier=StaticTokenVerifier({}),
            resource_server_url=base + "/mcp",
            authorization_servers=["https://auth.example"],
        )
        foreign = {"host": "evil.example", "origin": "https://evil.example"}
        mcp = await get(http, base + "/mcp", **foreign)
        unauthenticated = await post(http, base + "/mcp", initialize(), JSON_HEADERS)
        ready = await get(http, base + "/readyz", **foreign)
        live = await get(http, base + "/healthz", **foreign)
    assert mcp.status_code in (403, 421)  # the MCP endpoint keeps both checks
    assert unauthenticated.status_code == 401
    assert ready.status_code == live.status_code == 200


async def test_the_paths_are_configurable_and_none_serves_no_probe(http: httpx.AsyncClient) -> None:
    app = McpHttpApp(build_server(), health_path="/live", ready_path=None)
    async with serving(app) as base:
        moved = await get(http, base + "/live")
        old = await get(http, base + "/healthz")
        none = await get(http, base + "/readyz")
    assert moved.status_code == 200
    assert old.status_code == none.status_code == 404


async def test_draining_fails_readiness_and_refuses_new_sessions_only(http: httpx.AsyncClient) -> None:
    app = McpHttpApp(build_server())
    async with serving(app) as base:
        url = base + "/mcp"
        opened = await post(http, url, initialize(), JSON_HEADERS)
        session = opened.headers["mcp-session-id"]
        app.begin_drain()
        ready = await get(http, base + "/readyz")
        live = await get(http, base + "/healthz")
        refused = await post(http, url, initialize(), JSON_HEADERS)
        headers = {**JSON_HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
        listed = await post(http, url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers)
    assert (ready.status_code, ready.json()) == (503, {"status": "unavailable", "reason": "draining"})
    assert ready.headers["retry-after"] == "5"
    assert live.status_code == 200
    error = assert_error_body(refused, 503)
    assert "shutting down" in error["message"]
    assert refused.headers["retry-after"] == "5"
    assert listed.status_code == 200 and listed.json()["result"]["tools"]  # an open session carries on


async def test_a_failing_readiness_check_fails_readiness_with_its_reason(http: httpx.AsyncClient) -> None:
    app = McpHttpApp(build_server())
    problems: list[str | None] = ["the database is down", None]

    async def check() -> str | None:
        return problems.pop(0) if problems else None

    async def broken() -> str | None:
        raise OSError("no route")

    app.readiness_checks.append(check)
    async with serving(app) as base:
        down = await get(http, base + "/readyz")
        up = await get(http, base + "/readyz")
        app.readiness_checks.append(broken)
        failing = await get(http, base + "/readyz")
    assert (down.status_code, down.json()["reason"]) == (503, "the database is down")
    assert up.status_code == 200
    assert failing.status_code == 503 and "OSError: no route" in failing.json()["reason"]


async def test_readiness_fails_until_the_lifespan_has_started() -> None:
    started = anyio.Event()
    release = anyio.Event()

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[None]:
        started.set()
        await release.wait()
        yield

    app = McpHttpApp(Server("slow-start", "1.0.0", lifespan=lifespan))
    to_app: Any
    to_app, from_test = anyio.create_memory_object_stream[Message](8)
    lifespan_out: list[Message] = []
    answered = anyio.Event()

    async def lifespan_send(message: Message) -> None:
        lifespan_out.append(message)
        answered.set()

    async def probe() -> int:
        sent: list[Message] = []

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Message) -> None:
            sent.append(message)

        scope: Message = {
            "type": "http",
            "method": "GET",
            "path": "/readyz",
            "headers": [],
            "query_string": b"",
        }
        await app(scope, receive, send)
        return int(sent[0]["status"])

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(app, {"type": "lifespan"}, from_test.receive, lifespan_send)
            await to_app.send({"type": "lifespan.startup"})
            await started.wait()
            starting = await probe()
            release.set()
            await answered.wait()
            ready = await probe()
            await to_app.send({"type": "lifespan.shutdown"})
    assert lifespan_out[0]["type"] == "lifespan.startup.complete"
    assert (starting, ready) == (503, 200)


async def test_a_draining_app_opens_no_legacy_sse_session(http: httpx.AsyncClient) -> None:
    app = McpHttpApp(build_server())
    async with serving(app) as base:
        app.begin_drain()
        refused = await get(http, base + "/sse", accept="text/event-stream")
    assert_error_body(refused, 503)
    assert refused.headers["retry-after"] == "5"
