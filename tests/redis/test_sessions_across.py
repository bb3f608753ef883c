"""Handshake-era sessions with ``--redis``: a session held by one instance gets the list changes and
resource updates made on another, and its stream, written to Redis by an instance killed with
SIGKILL, is resumed through another instance with ``Last-Event-ID``: nothing lost, nothing twice."""

from __future__ import annotations

import signal
from typing import Any

import anyio
import httpx
import pytest

from ..http.support import LATEST, TIMEOUT, SseReader, open_session, post, request, session_headers
from .servers import shared
from .support import RedisServer
from .test_scale_out import call_tool, instances

pytestmark = pytest.mark.anyio

TARGET = shared.__file__


def stream_headers(session_id: str, last_event_id: str | None = None) -> dict[str, str]:
    headers = {"accept": "text/event-stream", "mcp-session-id": session_id, "mcp-protocol-version": LATEST}
    if last_event_id is not None:
        headers["last-event-id"] = last_event_id
    return headers


async def test_a_session_on_one_instance_hears_of_changes_made_on_another(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    with instances(2, "--redis", redis_server.url) as (a, b):
        url = b.url + "/mcp"
        session_id = await open_session(http, url)
        subscribed = await post(
            http, url, request(2, "resources/subscribe", {"uri": "res://doc"}), session_headers(session_id)
        )
        with anyio.fail_after(TIMEOUT * 2):
            async with http.stream("GET", url, headers=stream_headers(session_id)) as response:
                reader = SseReader(response)
                await reader.next()  # the priming event
                await call_tool(http, a.url + "/mcp", "grow", {"name": "extra"})
                _, changed = await reader.message()
                await call_tool(http, a.url + "/mcp", "touch", {"uri": "res://doc"})
                _, updated = await reader.message()
    assert subscribed.status_code == 200
    assert changed["method"] == "notifications/tools/list_changed"
    assert updated == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "res://doc"},
    }


async def _stored(redis_server: RedisServer, key: str, count: int) -> None:
    import redis.asyncio

    client: Any = redis.asyncio.from_url(redis_server.url)
    try:
        # written by another process: polled, bounded by the caller's fail_after
        while await client.xlen(key) < count:  # noqa: ASYNC110
            await anyio.sleep(0.02)
    finally:
        await client.aclose()


async def test_a_session_outlives_its_instance_killed_with_sigkill(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    with instances(2, "--redis", redis_server.url) as (a, b):
        session_id = await open_session(http, a.url + "/mcp")
        with anyio.fail_after(TIMEOUT * 2):
            async with http.stream("GET", a.url + "/mcp", headers=stream_headers(session_id)) as response:
                priming = await SseReader(response).next()
            assert priming is not None and priming.id  # then the connection drops
            await call_tool(http, a.url + "/mcp", "grow", {"name": "missed"})  # a list_changed, unseen
            await _stored(redis_server, f"jsonrpc-mcp:events:{session_id}:_", 2)
            a.process.send_signal(signal.SIGKILL)
            a.process.wait(TIMEOUT)
            headers = stream_headers(session_id, priming.id)
            async with http.stream("GET", b.url + "/mcp", headers=headers) as resumed:
                reader = SseReader(resumed)
                missed, replayed = await reader.message()  # what A stored, replayed by B
                listed = await post(
                    http, b.url + "/mcp", request(5, "tools/list"), session_headers(session_id)
                )
                await call_tool(http, b.url + "/mcp", "grow", {"name": "live"})
                live, changed = await reader.message()  # then the stream goes on, on B
            stranger = await http.get(b.url + "/mcp", headers=stream_headers("not-a-session", priming.id))
    assert resumed.status_code == 200
    assert replayed["method"] == changed["method"] == "notifications/tools/list_changed"
    assert missed.id != live.id  # nothing twice
    assert listed.status_code == 200 and listed.json()["result"]["tools"]  # B serves A's session
    assert stranger.status_code == 404


async def test_a_rolling_restart_hands_the_session_over_and_delete_ends_it_everywhere(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    with instances(2, "--redis", redis_server.url) as (a, b):
        session_id = await open_session(http, a.url + "/mcp")
        with anyio.fail_after(TIMEOUT * 2):
            async with http.stream("GET", a.url + "/mcp", headers=stream_headers(session_id)) as response:
                reader = SseReader(response)
                await reader.next()  # the priming event
                a.process.send_signal(signal.SIGTERM)  # a graceful stop: the stream ends, reconnect
                final = await reader.rest()
            a.process.wait(TIMEOUT)
            headers = stream_headers(session_id, final[-1].id)
            async with http.stream("GET", b.url + "/mcp", headers=headers) as resumed:
                reader = SseReader(resumed)
                await call_tool(http, b.url + "/mcp", "grow", {"name": "after"})
                _, changed = await reader.message()
                deleted = await http.delete(b.url + "/mcp", headers=session_headers(session_id))
                ended = await reader.rest()  # the session ended: so does its stream
            gone = await http.get(b.url + "/mcp", headers=stream_headers(session_id))
    assert [e.data for e in final] == [""] and final[-1].id  # the final event: an id to resume from
    assert resumed.status_code == 200
    assert changed["method"] == "notifications/tools/list_changed"
    assert deleted.status_code == 200 and ended == []
    assert gone.status_code == 404


async def test_any_instance_serves_any_session_and_a_delete_holds_everywhere(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    with instances(3, "--redis", redis_server.url) as servers:
        urls = [s.url + "/mcp" for s in servers]
        session_id = await open_session(http, urls[0])
        headers = session_headers(session_id)
        answers = [await post(http, urls[n % 3], request(10 + n, "tools/list"), headers) for n in range(6)]
        await post(http, urls[1], request(20, "tools/list"), headers)  # held by the second one too
        deleted = await http.delete(urls[2], headers=headers)
        with anyio.fail_after(TIMEOUT):
            # the others hear of the DELETE on the bus (soon: polled, bounded)
            while (late := await post(http, urls[0], request(30, "tools/list"), headers)).status_code == 200:  # noqa: ASYNC110
                await anyio.sleep(0.02)
        elsewhere = await post(http, urls[1], request(31, "tools/list"), headers)
    assert [a.status_code for a in answers] == [200] * 6
    assert all(a.json()["result"]["tools"] for a in answers)
    assert deleted.status_code == 200
    assert late.status_code == elsewhere.status_code == 404
