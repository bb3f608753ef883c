"""Redis going away under a running app: readiness fails with the reason, sessions and calls carry
on (their events reach the live connection), nothing hangs; when Redis is back, so is readiness and
the notification bus."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import orjson
import pytest

from jsonrpc_mcp.http import McpHttpApp

from ..http.servers.toolbox import build_server
from ..http.support import (
    JSON_HEADERS,
    TIMEOUT,
    SseReader,
    assert_error_body,
    call,
    initialize,
    messages,
    open_session,
    post,
    request,
    serving,
    session_headers,
)
from .support import RedisServer
from .test_scale_out import listening

pytestmark = pytest.mark.anyio


async def test_calls_carry_on_while_redis_is_down_and_readiness_recovers(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    app = McpHttpApp(build_server(), redis=redis_server.url)
    other = McpHttpApp(build_server(), redis=redis_server.url)  # another instance, same Redis
    async with serving(app) as base, serving(other) as other_base:
        url = base + "/mcp"
        with anyio.fail_after(TIMEOUT * 2):
            assert (await http.get(base + "/readyz")).status_code == 200
            session_id = await open_session(http, url)
            redis_server.stop()
            down = await http.get(base + "/readyz")
            # a session no other instance could ever find is not opened: the client is told to retry
            refused = await post(http, url, initialize(), JSON_HEADERS)
            body = orjson.dumps(call(3, "progress", {"steps": 2}, progress_token="t"))
            async with http.stream("POST", url, content=body, headers=session_headers(session_id)) as r:
                streamed = messages(await SseReader(r).rest())
            redis_server.start()
            up = await http.get(base + "/readyz")
            async with listening(http, url, "tools", toolsListChanged=True) as tools:
                changed = await _published_elsewhere(redis_server, tools)
            fresh = await open_session(http, url)  # Redis is back: recorded, so found elsewhere too
            elsewhere = await post(
                http, other_base + "/mcp", request(9, "tools/list"), session_headers(fresh)
            )
    assert down.status_code == 503 and "unreachable" in down.json()["reason"]
    error = assert_error_body(refused, 503)
    assert (
        "the session store (Redis) cannot be reached" in error["message"] and refused.headers["retry-after"]
    )
    assert "mcp-session-id" not in refused.headers
    assert [m.get("method") for m in streamed] == ["notifications/progress"] * 2 + [None]
    assert streamed[-1]["result"]["content"][0]["text"] == "done after 2 steps"
    assert up.status_code == 200
    assert changed["method"] == "notifications/tools/list_changed"  # the bus is back
    assert elsewhere.status_code == 200 and "tools" in messages_or_result(elsewhere)


def messages_or_result(response: httpx.Response) -> dict[str, Any]:
    """The result of a POST answered with JSON or with an SSE stream."""
    if response.headers["content-type"].startswith("application/json"):
        return response.json()["result"]  # type: ignore[no-any-return]
    from jsonrpc_mcp.transports.sse import SseParser

    events = SseParser().feed(response.content)
    return [orjson.loads(e.data) for e in events if e.data][-1]["result"]  # type: ignore[no-any-return]


async def _published_elsewhere(redis_server: RedisServer, tools: SseReader) -> dict[str, Any]:
    """What another instance's list change brings to ``tools``, published as soon as the app's
    bus has subscribed again (PUBLISH says how many subscribers got it: polled, bounded)."""
    import redis.asyncio

    client: Any = redis.asyncio.from_url(redis_server.url)
    try:
        message = orjson.dumps({"k": "list", "v": "tool", "o": "another instance"})
        while await client.publish("jsonrpc-mcp:bus", message) == 0:  # noqa: ASYNC110
            await anyio.sleep(0.05)
    finally:
        await client.aclose()
    _, changed = await tools.message()
    return changed
