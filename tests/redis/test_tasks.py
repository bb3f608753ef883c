"""Tasks with ``--redis``: a task created on one instance is read, and cancelled, through another
(the Tasks extension's store is in Redis); its run stays where it started."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from jsonrpc_mcp.http._redis_tasks import RedisTaskStore

from ..http.modern.support import headers_for, modern_request, send
from ..http.support import TIMEOUT
from .support import RedisServer
from .test_scale_out import ENVELOPE, instances

pytestmark = pytest.mark.anyio

TASKS = "io.modelcontextprotocol/tasks"
META = {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}


async def rpc(http: httpx.AsyncClient, url: str, method: str, params: dict[str, Any], name: str) -> Any:
    body = modern_request(1, method, params)
    body["params"]["_meta"] = META
    response = await send(http, url, body, headers_for(body, mcp_name=name))
    assert response.status_code == 200, response.text
    return response.json()["result"]


async def test_a_task_made_on_one_instance_is_followed_and_cancelled_on_another(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    with instances(2, "--redis", redis_server.url) as (a, b), anyio.fail_after(TIMEOUT * 2):
        quick = await rpc(
            http, a.url + "/mcp", "tools/call", {"name": "compute", "arguments": {"seconds": 0.2}}, "compute"
        )
        slow = await rpc(
            http, a.url + "/mcp", "tools/call", {"name": "compute", "arguments": {"seconds": 60}}, "compute"
        )
        assert quick["resultType"] == slow["resultType"] == "task"
        seen = await rpc(http, b.url + "/mcp", "tasks/get", {"taskId": quick["taskId"]}, quick["taskId"])
        while seen["status"] == "working":  # the run is in another process: polled (bounded)
            await anyio.sleep(0.05)
            seen = await rpc(http, b.url + "/mcp", "tasks/get", {"taskId": quick["taskId"]}, quick["taskId"])
        await rpc(http, b.url + "/mcp", "tasks/cancel", {"taskId": slow["taskId"]}, slow["taskId"])
        cancelled = await rpc(http, a.url + "/mcp", "tasks/get", {"taskId": slow["taskId"]}, slow["taskId"])
    assert seen["status"] == "completed"
    assert seen["result"]["content"][0]["text"] == f"computed by {a.process.pid}"
    assert cancelled["status"] == "cancelled"


async def test_the_store_keeps_a_terminal_status_and_the_ttl(redis_server: RedisServer) -> None:
    import redis.asyncio

    client: Any = redis.asyncio.from_url(redis_server.url)
    try:
        store = RedisTaskStore(client, "t")
        await store.create({"taskId": "x", "status": "working", "ttlMs": 60_000})
        assert 0 < await client.pttl("t:task:x") <= 60_000
        done = await store.update(
            "x", {"status": "completed", "result": {"content": []}, "statusMessage": None}
        )
        assert done is not None and done["result"] == {"content": []}  # an empty list stays a list
        assert await store.update("x", {"status": "working"}) is None  # terminal: never changes
        assert (await store.get("x") or {})["status"] == "completed"
        assert 0 < await client.pttl("t:task:x") <= 60_000  # KEEPTTL
        assert await store.get("nothing") is None and await store.update("nothing", {}) is None
    finally:
        await client.aclose()


async def test_a_change_of_a_task_on_one_instance_reaches_a_listener_on_another(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    import orjson

    from ..http.support import SseReader

    with instances(2, "--redis", redis_server.url) as (a, b), anyio.fail_after(TIMEOUT * 2):
        slow = await rpc(
            http, a.url + "/mcp", "tools/call", {"name": "compute", "arguments": {"seconds": 60}}, "compute"
        )
        task_id = slow["taskId"]
        body = modern_request(7, "subscriptions/listen", {"notifications": {"taskIds": [task_id]}})
        body["params"]["_meta"] = META
        async with http.stream(
            "POST", b.url + "/mcp", content=orjson.dumps(body), headers=headers_for(body)
        ) as response:
            reader = SseReader(response)
            _, ack = await reader.message()
            await rpc(http, a.url + "/mcp", "tasks/cancel", {"taskId": task_id}, task_id)  # on A
            # the task's "working" may come first: A published it on the bus when the task began,
            # and B's subscriber can hand it over after the listener was acknowledged
            told = [(await reader.message())[1]]
            while told[-1]["params"]["status"] == "working":
                told.append((await reader.message())[1])
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert {m["method"] for m in told} == {"notifications/tasks"}
    assert {m["params"]["taskId"] for m in told} == {task_id}
    assert told[-1]["params"]["status"] == "cancelled" and len(told) <= 2
