"""Three ``serve --http --redis`` instances behind a round-robin proxy with no affinity
(conformance/jsonrpc_mcp_conformance/official/proxy.py): every request may land on any instance. The official
Python SDK runs whole handshake-era sessions through it (lists, calls with progress and logging, a
sampling request it answers, a resource update made on another instance, DELETE), and the
2026-07-28 era is driven through it with raw requests (stateless: any instance serves any call; a
multi round-trip retry sealed by one is verified by another)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from jsonrpc_mcp_conformance.official.proxy import RoundRobinProxy
from tests import timeouts

from ..http.modern.support import headers_for, modern_request
from ..http.support import TIMEOUT, Spawned
from .support import RedisServer
from .test_scale_out import ENVELOPE, instances

pytestmark = pytest.mark.anyio

CONNECT_TIMEOUT = timeouts.STARTUP


@contextlib.asynccontextmanager
async def behind_proxy(servers: list[Spawned]) -> AsyncIterator[RoundRobinProxy]:
    upstreams = [("127.0.0.1", int(s.url.rsplit(":", 1)[1])) for s in servers]
    async with RoundRobinProxy(upstreams) as proxy:
        yield proxy


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")
async def test_the_sdk_runs_a_whole_session_through_three_instances(
    redis_server: RedisServer,
) -> None:
    seen: list[float] = []
    logged: list[str] = []
    updated = anyio.Event()
    updates: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(str(params.data))

    async def on_sampling(
        context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="forty-two"), model="test"
        )

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))
            updated.set()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    with instances(3, "--redis", redis_server.url) as servers:
        async with behind_proxy(servers) as proxy:
            with anyio.fail_after(CONNECT_TIMEOUT):
                async with Client(
                    proxy.url + "/mcp",
                    mode="legacy",
                    read_timeout_seconds=TIMEOUT,
                    logging_callback=on_log,
                    sampling_callback=on_sampling,
                    message_handler=on_message,
                ) as sdk:
                    tools = await sdk.list_tools()
                    resources = await sdk.list_resources()
                    slept = await sdk.call_tool("slow", {"seconds": 0.1}, progress_callback=on_progress)
                    chatted = await sdk.call_tool("chatty", {})
                    sampled = await sdk.call_tool("sample", {"prompt": "the answer?"})
                    await sdk.subscribe_resource("res://doc")
                    # made (most likely) on another instance than the one holding the GET stream
                    touched = [await sdk.call_tool("touch", {"uri": "res://doc"}) for _ in range(3)]
                    await updated.wait()
                    many = [await sdk.call_tool("whoami", {}) for _ in range(6)]
            served = list(proxy.served)
        left = await _session_records(redis_server)
    assert {"slow", "chatty", "sample", "touch"} <= {tool.name for tool in tools.tools}
    assert [str(r.uri) for r in resources.resources] == ["res://doc"]
    assert texts(slept) == ["slept 0.1"] and seen == [0]
    assert texts(chatted) == ["logged"] and logged[-3:] == ["a debug line", "an info line", "a warning line"]
    assert texts(sampled)[0].startswith("the model said 'forty-two'")
    assert all(not t.is_error for t in touched)
    assert updates and set(updates) == {"res://doc"}
    assert len({texts(r)[0] for r in many}) == 3  # every instance answered some of them
    assert all(count > 3 for count in served)  # no affinity: requests spread over all three
    assert left == []  # the SDK's DELETE on the way out ended the session everywhere


async def _session_records(redis_server: RedisServer) -> list[bytes]:
    import redis.asyncio

    client: Any = redis.asyncio.from_url(redis_server.url)
    try:
        return list(await client.keys("jsonrpc-mcp:session:*"))
    finally:
        await client.aclose()


async def test_the_sdk_in_auto_mode_speaks_2026_07_28_through_three_instances(
    redis_server: RedisServer,
) -> None:
    seen: list[float] = []

    async def on_sampling(
        context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="modern"), model="test"
        )

    async def on_elicit(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"ok": True})

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    with instances(3, "--redis", redis_server.url) as servers:
        async with behind_proxy(servers) as proxy:
            with anyio.fail_after(CONNECT_TIMEOUT):
                async with Client(
                    proxy.url + "/mcp",
                    mode="auto",
                    read_timeout_seconds=TIMEOUT,
                    sampling_callback=on_sampling,
                    elicitation_callback=on_elicit,
                ) as sdk:
                    version = sdk.protocol_version
                    tools = await sdk.list_tools()
                    slept = await sdk.call_tool("slow", {"seconds": 0.1}, progress_callback=on_progress)
                    confirmed = [await sdk.call_tool("confirm", {"item": f"i{n}"}) for n in range(3)]
                    sampled = await sdk.call_tool("sample", {"prompt": "p"})
                    many = [await sdk.call_tool("whoami", {}) for _ in range(6)]
    assert version == "2026-07-28"
    assert "confirm" in {tool.name for tool in tools.tools}
    assert texts(slept) == ["slept 0.1"]
    assert all(texts(c)[0].startswith(f"i{n}: accept") for n, c in enumerate(confirmed))
    assert texts(sampled)[0].startswith("the model said 'modern'")
    assert len({texts(r)[0] for r in many}) == 3


async def test_the_sdk_sampling_request_is_answered_whichever_instance_gets_the_answer(
    redis_server: RedisServer,
) -> None:
    async def on_sampling(
        context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="yes"), model="test"
        )

    with instances(3, "--redis", redis_server.url) as servers:
        async with behind_proxy(servers) as proxy:
            with anyio.fail_after(CONNECT_TIMEOUT):
                async with Client(
                    proxy.url + "/mcp",
                    mode="legacy",
                    read_timeout_seconds=TIMEOUT,
                    sampling_callback=on_sampling,
                ) as sdk:
                    answers = [await sdk.call_tool("sample", {"prompt": f"q{n}"}) for n in range(6)]
    assert all(texts(a)[0].startswith("the model said 'yes'") for a in answers)
    assert len({texts(a)[0].rsplit(" ", 1)[1] for a in answers}) > 1  # asked by several instances


async def test_the_stateless_era_runs_through_three_instances(redis_server: RedisServer) -> None:
    import httpx
    import orjson

    with instances(3, "--redis", redis_server.url) as servers:
        async with behind_proxy(servers) as proxy, httpx.AsyncClient(timeout=TIMEOUT) as http:
            url = proxy.url + "/mcp"

            async def send(body: dict[str, Any]) -> dict[str, Any]:
                body.setdefault("params", {})["_meta"] = ENVELOPE
                response = await http.post(url, content=orjson.dumps(body), headers=headers_for(body))
                assert response.status_code == 200, response.text
                return response.json()  # type: ignore[no-any-return]

            with anyio.fail_after(TIMEOUT * 3):
                listed = await send(modern_request(1, "tools/list", {}))
                who = [
                    await send(modern_request(2 + n, "tools/call", {"name": "whoami", "arguments": {}}))
                    for n in range(6)
                ]
                asked = await send(
                    modern_request(10, "tools/call", {"name": "confirm", "arguments": {"item": "x"}})
                )
                result = asked["result"]
                retry = modern_request(
                    11,
                    "tools/call",
                    {
                        "name": "confirm",
                        "arguments": {"item": "x"},
                        "inputResponses": {
                            key: {"action": "accept", "content": {"ok": True}}
                            for key in result["inputRequests"]
                        },
                        "requestState": result["requestState"],
                    },
                )
                confirmed = await send(retry)
    assert {"whoami", "confirm"} <= {tool["name"] for tool in listed["result"]["tools"]}
    assert len({w["result"]["content"][0]["text"] for w in who}) == 3
    assert result["resultType"] == "input_required"
    assert confirmed["result"]["content"][0]["text"].startswith("x: accept")


async def test_the_proxy_skips_an_upstream_that_refuses_and_says_502_when_none_is_left() -> None:
    import httpx

    from jsonrpc_mcp.http import McpHttpApp

    from ..http.servers.toolbox import build_server
    from ..http.support import open_session, refused_port, serving

    async with serving(McpHttpApp(build_server())) as base:
        live = ("127.0.0.1", int(base.rsplit(":", 1)[1]))
        with refused_port() as port:
            dead = ("127.0.0.1", port)  # bound, never listening: every connection is refused
            async with RoundRobinProxy([dead, live]) as proxy, httpx.AsyncClient(timeout=TIMEOUT) as http:
                with anyio.fail_after(TIMEOUT):
                    session_ids = [await open_session(http, proxy.url + "/mcp") for _ in range(3)]
                served = list(proxy.served)
            async with RoundRobinProxy([dead]) as nowhere, httpx.AsyncClient(timeout=TIMEOUT) as http:
                with anyio.fail_after(TIMEOUT):
                    refused = await http.get(nowhere.url + "/healthz")
    assert len(set(session_ids)) == 3
    assert served[0] == 0 and served[1] == 6  # initialize + initialized, three times, all on the live one
    assert refused.status_code == 502 and refused.text == "no upstream is reachable"
