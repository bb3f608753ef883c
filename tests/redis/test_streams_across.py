"""The copies of one handshake-era session on three instances (``--redis``) share what the client
set and see the same streams: a resource subscribed on B, updated on C, is notified once on the GET
stream held by A; a log level set on B holds on C; a request's stream still being written on A is
followed from B with ``Last-Event-ID`` until its answer."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import orjson
import pytest

from ..http.support import TIMEOUT, SseReader, call, messages, post, request, session_headers
from .support import RedisServer
from .test_asking_across import open_capable_session
from .test_scale_out import instances
from .test_sessions_across import stream_headers

pytestmark = pytest.mark.anyio


async def streamed(
    http: httpx.AsyncClient, url: str, body: Any, headers: dict[str, str]
) -> list[dict[str, Any]]:
    """POST ``body``; every message of its answer (JSON or SSE)."""
    with anyio.fail_after(TIMEOUT):
        async with http.stream("POST", url, content=orjson.dumps(body), headers=headers) as response:
            assert response.status_code == 200, await response.aread()
            if response.headers["content-type"].startswith("application/json"):
                return [orjson.loads(await response.aread())]
            return messages(await SseReader(response).rest())


async def test_a_subscription_made_on_one_instance_is_notified_once_on_a_stream_held_by_another(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    with instances(3, "--redis", redis_server.url) as (a, b, c):
        session_id = await open_capable_session(http, a.url + "/mcp")
        headers = session_headers(session_id)
        await post(http, c.url + "/mcp", request(1, "tools/list"), headers)  # C holds a copy too
        with anyio.fail_after(TIMEOUT * 2):
            async with http.stream("GET", a.url + "/mcp", headers=stream_headers(session_id)) as response:
                reader = SseReader(response)
                await reader.next()  # the priming event
                subscribed = await post(
                    http, b.url + "/mcp", request(2, "resources/subscribe", {"uri": "res://doc"}), headers
                )
                await streamed(http, c.url + "/mcp", call(3, "touch", {"uri": "res://doc"}), headers)
                _, updated = await reader.message()
                await streamed(http, c.url + "/mcp", call(4, "grow", {"name": "extra"}), headers)
                _, changed = await reader.message()  # not a second resources/updated
                await streamed(http, b.url + "/mcp", call(5, "grow", {"name": "more"}), headers)
                _, again = await reader.message()
    assert subscribed.status_code == 200
    assert updated["method"] == "notifications/resources/updated" and updated["params"]["uri"] == "res://doc"
    assert changed["method"] == again["method"] == "notifications/tools/list_changed"


async def test_a_log_level_set_on_one_instance_holds_on_the_others(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    with instances(3, "--redis", redis_server.url) as (a, b, c):
        session_id = await open_capable_session(http, a.url + "/mcp")
        headers = session_headers(session_id)
        before = await streamed(http, c.url + "/mcp", call(1, "chatty", {}), headers)  # C adopts it now
        level = await post(
            http, b.url + "/mcp", request(2, "logging/setLevel", {"level": "warning"}), headers
        )
        with anyio.fail_after(TIMEOUT):
            while True:  # C hears of it on the bus (soon: polled, bounded)
                after = await streamed(http, c.url + "/mcp", call(3, "chatty", {}), headers)
                if len(after) == 2:
                    break
        on_a = await streamed(http, a.url + "/mcp", call(4, "chatty", {}), headers)
        fresh = await streamed(http, b.url + "/mcp", call(5, "chatty", {}), headers)
    assert level.status_code == 200
    assert [m["params"]["level"] for m in before if m.get("method")] == ["debug", "info", "warning"]
    assert [m["params"]["level"] for m in after if m.get("method")] == ["warning"]
    assert [m["params"]["level"] for m in on_a if m.get("method")] == ["warning"]
    assert [m["params"]["level"] for m in fresh if m.get("method")] == ["warning"]


async def test_a_request_stream_still_written_on_one_instance_is_followed_from_another(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    with instances(2, "--redis", redis_server.url) as (a, b):
        session_id = await open_capable_session(http, a.url + "/mcp")
        headers = session_headers(session_id)
        body = orjson.dumps(call(9, "slow", {"seconds": 1.0}, progress_token="p"))
        with anyio.fail_after(TIMEOUT * 2):
            async with http.stream("POST", a.url + "/mcp", content=body, headers=headers) as response:
                event, progress = await SseReader(response).message()
            assert event.id  # then the connection drops, the request still running on A
            async with http.stream(
                "GET", b.url + "/mcp", headers=stream_headers(session_id, event.id)
            ) as resumed:
                rest = messages(await SseReader(resumed).rest())
    assert progress["method"] == "notifications/progress"
    assert resumed.status_code == 200
    assert rest == [{"jsonrpc": "2.0", "id": 9, "result": rest[-1]["result"]}]
    assert rest[-1]["result"]["content"][0]["text"] == "slept 1.0"
