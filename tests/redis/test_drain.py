"""``serve --http --drain-delay D --drain-grace G`` on SIGTERM: readiness fails at once while the
server still accepts (new sessions refused with 503 and Retry-After), then the GET streams end with a
final event, the request in flight finishes within the grace period, and the process exits 0."""

from __future__ import annotations

import signal

import anyio
import httpx
import orjson
import pytest

from ..http.support import (
    JSON_HEADERS,
    STOP_TIMEOUT,
    TIMEOUT,
    SseReader,
    call,
    initialize,
    messages,
    open_session,
    post,
    session_headers,
    spawned,
)
from .servers import shared
from .support import RedisServer

pytestmark = pytest.mark.anyio


async def test_sigterm_drains_then_shuts_down_gracefully(http: httpx.AsyncClient) -> None:
    await _drains(http)


async def test_under_workers_on_redis_each_worker_drains_the_same_way(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    # the supervisor passes SIGTERM on to both workers: wherever the probe, the GET stream and the
    # call land, each drains, ends its GET streams with a final event and finishes what is in flight
    await _drains(http, "--workers", "2", "--redis", redis_server.url)


async def _drains(http: httpx.AsyncClient, *options: str) -> None:
    with spawned(shared.__file__, "--drain-delay", "1.5", "--drain-grace", "8", *options) as server:
        url, process = server.url + "/mcp", server.process
        session_id = await open_session(http, url)
        get_headers = {"accept": "text/event-stream", "mcp-session-id": session_id}
        body = orjson.dumps(call(7, "slow", {"seconds": 2.5}, progress_token="p"))
        with anyio.fail_after(TIMEOUT + 5):
            async with (
                http.stream("GET", url, headers=get_headers) as listening,
                http.stream("POST", url, content=body, headers=session_headers(session_id)) as posted,
            ):
                standalone, in_flight = SseReader(listening), SseReader(posted)
                await standalone.next()  # the priming event: the GET stream is open
                _, progress = await in_flight.message()  # the call is in flight
                process.send_signal(signal.SIGTERM)
                async with httpx.AsyncClient(timeout=TIMEOUT) as fresh:
                    # the signal is handled on the server's loop, in another process: polled (bounded)
                    while (ready := await fresh.get(server.url + "/readyz")).status_code == 200:  # noqa: ASYNC110
                        await anyio.sleep(0.02)
                    live = await fresh.get(server.url + "/healthz")
                    refused = await post(fresh, url, initialize(), JSON_HEADERS)
                final = await standalone.rest()
                rest = messages(await in_flight.rest())
        status = process.wait(STOP_TIMEOUT)
        stderr = server.stderr()
    assert progress["method"] == "notifications/progress"
    assert (ready.status_code, ready.json()["reason"]) == (503, "draining")
    assert live.status_code == 200
    assert refused.status_code == 503 and refused.headers["retry-after"] == "5"
    assert [(e.data, e.retry, bool(e.id)) for e in final] == [("", 1000, True)]  # reconnect elsewhere
    assert rest[-1]["id"] == 7 and rest[-1]["result"]["content"][0]["text"] == "slept 2.5"
    assert status == 0, stderr
    assert b"Traceback" not in stderr
