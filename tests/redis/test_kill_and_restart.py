"""An instance killed with SIGKILL mid-session: the session goes on through the others, its GET
stream resumes elsewhere with ``Last-Event-ID`` and nothing is lost or doubled (what the survivors
emitted meanwhile is stored once). A Redis restart under a GET stream: the stream carries on, the
notices after the restart reach it, nothing hangs."""

from __future__ import annotations

import signal
from typing import Any

import anyio
import httpx
import orjson
import pytest

from jsonrpc_mcp.http import McpHttpApp

from ..http.support import TIMEOUT, SseReader, post, request, serving, session_headers
from .servers import shared
from .support import RedisServer, teller_gone
from .test_asking_across import open_capable_session
from .test_scale_out import instances
from .test_sessions_across import stream_headers
from .test_streams_across import streamed

pytestmark = pytest.mark.anyio

LIST_CHANGED = "notifications/tools/list_changed"


async def test_a_session_goes_on_when_the_instance_holding_its_get_stream_is_killed(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    with instances(3, "--redis", redis_server.url) as (a, b, c):
        session_id = await open_capable_session(http, a.url + "/mcp")
        headers = session_headers(session_id)
        for other in (b, c):  # each holds a copy of the session: each hears of every change
            await post(http, other.url + "/mcp", request(1, "tools/list"), headers)
        with anyio.fail_after(TIMEOUT * 3):
            async with http.stream("GET", a.url + "/mcp", headers=stream_headers(session_id)) as response:
                reader = SseReader(response)
                await reader.next()  # the priming event
                await streamed(
                    http,
                    b.url + "/mcp",
                    request(2, "tools/call", {"name": "grow", "arguments": {"name": "one"}}),
                    headers,
                )
                seen, first = await reader.message()
                a.process.send_signal(signal.SIGKILL)
                a.process.wait(TIMEOUT)
            await teller_gone(redis_server, session_id)
            # while no GET is open: changes on B and C, each stored once
            await streamed(
                http,
                c.url + "/mcp",
                request(3, "tools/call", {"name": "grow", "arguments": {"name": "two"}}),
                headers,
            )
            # (list changes are coalesced in a burst, on one instance too: one at a time)
            await _stored_notices(redis_server, session_id, 2)
            await streamed(
                http,
                b.url + "/mcp",
                request(4, "tools/call", {"name": "grow", "arguments": {"name": "three"}}),
                headers,
            )
            async with http.stream(
                "GET", b.url + "/mcp", headers=stream_headers(session_id, seen.id)
            ) as resumed:
                reader = SseReader(resumed)
                replayed = [await reader.message() for _ in range(2)]
                await streamed(
                    http,
                    c.url + "/mcp",
                    request(5, "tools/call", {"name": "grow", "arguments": {"name": "four"}}),
                    headers,
                )
                live, changed = await reader.message()
            listed = await post(http, c.url + "/mcp", request(6, "tools/list"), headers)
            stored = await _stored_notices(redis_server, session_id, 4)
    assert first["method"] == LIST_CHANGED
    assert resumed.status_code == 200
    assert [m["method"] for _, m in replayed] == [LIST_CHANGED, LIST_CHANGED]
    assert changed["method"] == LIST_CHANGED
    ids = [seen.id, *(e.id for e, _ in replayed), live.id]
    assert len(set(ids)) == 4  # nothing twice
    assert stored == 4  # one event per change: no copy told it twice
    assert listed.status_code == 200 and "two" in {t["name"] for t in listed.json()["result"]["tools"]}


async def _stored_notices(redis_server: RedisServer, session_id: str, at_least: int) -> int:
    """How many list changes the session's standalone stream holds, once there are ``at_least``
    (written by other processes: polled, bounded by the caller)."""
    import redis.asyncio

    client: Any = redis.asyncio.from_url(redis_server.url)
    try:
        while True:
            entries = await client.xrange(f"jsonrpc-mcp:events:{session_id}:_")
            count = sum(1 for _, fields in entries if LIST_CHANGED.encode() in fields[b"m"])
            if count >= at_least:
                return count
            await anyio.sleep(0.02)
    finally:
        await client.aclose()


async def test_a_get_stream_carries_on_through_a_redis_restart(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    app = McpHttpApp(shared.server, redis=redis_server.url)
    async with serving(app) as base:
        url = base + "/mcp"
        with anyio.fail_after(TIMEOUT * 3):
            session_id = await open_capable_session(http, url)
            headers = session_headers(session_id)
            async with http.stream("GET", url, headers=stream_headers(session_id)) as response:
                reader = SseReader(response)
                await reader.next()  # the priming event
                redis_server.stop()
                during = await post(http, url, request(2, "tools/list"), headers)  # served from memory
                redis_server.start()
                while (await http.get(base + "/readyz")).status_code != 200:  # noqa: ASYNC110
                    await anyio.sleep(0.05)
                body = request(3, "tools/call", {"name": "grow", "arguments": {"name": "after"}})
                await streamed(http, url, body, headers)
                _, changed = await reader.message()
            gone = await http.post(
                url, content=orjson.dumps(request(4, "tools/list")), headers=session_headers("unknown")
            )
    assert during.status_code == 200
    assert changed["method"] == LIST_CHANGED
    assert gone.status_code == 404


async def test_with_redis_down_a_session_held_elsewhere_is_a_clear_503_not_a_404(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    with instances(2, "--redis", redis_server.url) as (a, b):
        session_id = await open_capable_session(http, a.url + "/mcp")
        headers = session_headers(session_id)
        with anyio.fail_after(TIMEOUT * 2):
            redis_server.stop()
            held = await post(http, a.url + "/mcp", request(1, "tools/list"), headers)  # A holds it
            elsewhere = await post(http, b.url + "/mcp", request(2, "tools/list"), headers)
            stream = await http.get(b.url + "/mcp", headers=stream_headers(session_id))
            redis_server.start()
            while (await http.get(b.url + "/readyz")).status_code != 200:  # noqa: ASYNC110
                await anyio.sleep(0.05)
            lost = await post(http, b.url + "/mcp", request(3, "tools/list"), headers)
    assert held.status_code == 200
    for refused in (elsewhere, stream):
        assert refused.status_code == 503 and refused.headers["retry-after"] == "5"
        message = refused.json()["error"]["message"]
        assert "cannot look it up" in message and "unreachable" in message, message
    assert lost.status_code == 404  # Redis restarted empty: the record is gone; start a new session
