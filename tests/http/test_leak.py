"""Sessions are freed: 1,000 sessions opened and deleted leave nothing behind.

In process: ``app.sessions`` is empty and no session object survives a garbage collection. In a
``serve --http`` subprocess: its resident set size has not grown beyond noise.
"""

from __future__ import annotations

import gc

import anyio
import httpx
import pytest

from jsonrpc_mcp.http import McpHttpApp
from jsonrpc_mcp.http.app import HttpSession
from jsonrpc_mcp.server._session import ServerSession
from tests import timeouts

from .servers.toolbox import build_server
from .support import JSON_HEADERS, TOOLBOX, initialize, post, rss_kib, serving, spawned

pytestmark = pytest.mark.anyio

SESSIONS = 1000
CONCURRENCY = 8
RSS_NOISE_KIB = 2 * 1024  # measured noise: ~0.3-0.4 MiB; one leaked session costs ~6 KiB


async def open_and_delete(url: str, count: int) -> None:
    """``count`` sessions, ``CONCURRENCY`` at a time: initialize, then DELETE."""
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    async with httpx.AsyncClient(timeout=timeouts.STEP, limits=limits) as client:

        async def worker(share: int) -> None:
            for _ in range(share):
                opened = await post(client, url, initialize(), JSON_HEADERS)
                assert opened.status_code == 200
                deleted = await client.delete(
                    url, headers={"mcp-session-id": opened.headers["mcp-session-id"]}
                )
                assert deleted.status_code == 200

        async with anyio.create_task_group() as tg:
            for index in range(CONCURRENCY):
                tg.start_soon(worker, count // CONCURRENCY + (index < count % CONCURRENCY))


def live(kind: type) -> int:
    gc.collect()
    return sum(1 for obj in gc.get_objects() if type(obj) is kind)


async def test_a_thousand_sessions_opened_and_deleted_leave_nothing_in_the_app() -> None:
    server = build_server()
    app = McpHttpApp(server)
    async with serving(app) as base:
        with anyio.fail_after(timeouts.RUN):
            await open_and_delete(base + "/mcp", SESSIONS)
        assert app.sessions == {}
        assert len(server._sessions) == 0
        assert live(HttpSession) == 0
        assert live(ServerSession) == 0


async def test_a_thousand_sessions_do_not_grow_the_server_process() -> None:
    with spawned(TOOLBOX) as server:
        pid = server.process.pid
        url = server.url + "/mcp"
        with anyio.fail_after(timeouts.RUN):
            await open_and_delete(url, 200)  # warm up: imports, caches, allocator arenas
            before = rss_kib(pid)
            await open_and_delete(url, SESSIONS)
            after = rss_kib(pid)
    assert after - before < RSS_NOISE_KIB, f"RSS grew by {after - before} KiB over {SESSIONS} sessions"
