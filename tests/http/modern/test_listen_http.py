"""subscriptions/listen over HTTP: an event stream that opens with the acknowledgement, carries only
the notification types asked for (each tagged with the subscription id), ends when the client closes
it, and is answered with the final result when the server shuts down."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import orjson
import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.http import McpHttpApp
from jsonrpc_mcp.transports.sse import KEEPALIVE

from ..support import (
    TIMEOUT,
    SseReader,
    assert_error_body,
    open_session,
    serving,
)
from .support import (
    ACKNOWLEDGED,
    SUBSCRIPTION_ID,
    TOOLS_CHANGED,
    UPDATED,
    build_modern_server,
    headers_for,
    modern_request,
    send,
    valid,
    wait_until,
)

pytestmark = pytest.mark.anyio

LISTEN = "subscriptions/listen"


@pytest.fixture(scope="module")
async def served() -> AsyncIterator[tuple[str, McpHttpApp]]:
    app = McpHttpApp(build_modern_server())
    async with serving(app) as base:
        yield base + "/mcp", app


@pytest.fixture
def url(served: tuple[str, McpHttpApp]) -> str:
    return served[0]


@pytest.fixture
def server(served: tuple[str, McpHttpApp]) -> Server:
    return served[1].server


def listen_request(rid: Any, **notifications: Any) -> dict[str, Any]:
    return modern_request(rid, LISTEN, {"notifications": notifications})


@contextlib.asynccontextmanager
async def listening(
    client: httpx.AsyncClient, url: str, rid: Any, **notifications: Any
) -> AsyncIterator[tuple[httpx.Response, SseReader, dict[str, Any]]]:
    """Open a listen stream; yield the response, its reader and the acknowledgement (checked)."""
    body = listen_request(rid, **notifications)
    with anyio.fail_after(TIMEOUT):
        async with client.stream(
            "POST", url, content=orjson.dumps(body), headers=headers_for(body)
        ) as response:
            assert response.status_code == 200, await response.aread()
            reader = SseReader(response)
            _, ack = await reader.message()
            valid(ack)
            yield response, reader, ack


async def next_message(reader: SseReader) -> dict[str, Any]:
    _, message = await reader.message()
    return valid(message, LISTEN)


async def call_tool(client: httpx.AsyncClient, url: str, name: str, arguments: dict[str, Any]) -> str:
    response = await send(
        client, url, modern_request(900, "tools/call", {"name": name, "arguments": arguments})
    )
    text: str = valid(response.json(), "tools/call")["result"]["content"][0]["text"]
    return text


# -- opening -----------------------------------------------------------------------------------------
async def test_listen_answers_with_an_event_stream_opening_with_the_acknowledgement(
    http: httpx.AsyncClient, url: str
) -> None:  # E19, D25
    async with listening(http, url, 7, toolsListChanged=True) as (response, _, ack):
        assert response.headers["content-type"] == "text/event-stream"
        assert response.headers["x-accel-buffering"] == "no"
        assert "mcp-session-id" not in response.headers
    assert ack["method"] == ACKNOWLEDGED
    assert ack["params"]["_meta"] == {SUBSCRIPTION_ID: 7}


async def test_the_acknowledgement_names_the_honoured_subset(
    http: httpx.AsyncClient, url: str
) -> None:  # D26
    async with listening(
        http, url, "sub", toolsListChanged=True, promptsListChanged=False, resourceSubscriptions=["res://doc"]
    ) as (_, _, ack):
        pass
    assert ack["params"]["notifications"] == {
        "toolsListChanged": True,
        "resourceSubscriptions": ["res://doc"],
    }


async def test_a_server_without_prompts_does_not_honour_prompt_changes(
    http: httpx.AsyncClient,
) -> None:  # D26
    bare = Server("bare")
    bare.add_tool("only", lambda: "x")
    async with (
        serving(McpHttpApp(bare)) as base,
        listening(http, base + "/mcp", 1, promptsListChanged=True, toolsListChanged=True) as (_, _, ack),
    ):
        pass
    assert ack["params"]["notifications"] == {"toolsListChanged": True}


async def test_listen_without_accepting_an_event_stream_is_406(http: httpx.AsyncClient, url: str) -> None:
    body = listen_request(1, toolsListChanged=True)
    response = await send(http, url, body, headers_for(body, accept="application/json"))
    assert_error_body(response, 406)


async def test_a_malformed_filter_is_32602(http: httpx.AsyncClient, url: str) -> None:
    response = await send(http, url, listen_request(2, toolsListChanged="yes"))
    assert valid(response.json())["error"]["code"] == -32602


# -- delivering --------------------------------------------------------------------------------------
async def test_a_tool_list_change_arrives_tagged(http: httpx.AsyncClient, url: str) -> None:  # D27
    async with listening(http, url, "tools", toolsListChanged=True) as (_, reader, _):
        assert await call_tool(http, url, "grow", {"name": "grown_a"}) == "grew grown_a"
        changed = await next_message(reader)
    assert changed == {
        "jsonrpc": "2.0",
        "method": TOOLS_CHANGED,
        "params": {"_meta": {SUBSCRIPTION_ID: "tools"}},
    }


async def test_a_subscribed_resource_update_arrives_tagged_including_below_it(
    http: httpx.AsyncClient, url: str
) -> None:
    async with listening(http, url, 3, resourceSubscriptions=["res://dir"]) as (_, reader, _):
        assert await call_tool(http, url, "touch", {"uri": "res://dirt"}) == "told 0"
        assert await call_tool(http, url, "touch", {"uri": "res://dir/a"}) == "told 1"
        updated = await next_message(reader)
    assert updated["method"] == UPDATED
    assert updated["params"] == {"_meta": {SUBSCRIPTION_ID: 3}, "uri": "res://dir/a"}


async def test_only_the_types_asked_for_are_sent(http: httpx.AsyncClient, url: str) -> None:  # D28
    async with listening(http, url, 4, resourceSubscriptions=["res://doc"]) as (_, reader, _):
        await call_tool(http, url, "grow", {"name": "grown_b"})  # a tools list_changed would come first
        await call_tool(http, url, "touch", {"uri": "res://doc"})
        first = await next_message(reader)
    assert first["method"] == UPDATED


async def test_no_progress_or_log_message_goes_on_a_listen_stream(http: httpx.AsyncClient, url: str) -> None:
    body = modern_request(
        5,
        LISTEN,
        {"notifications": {"toolsListChanged": True}},
        progressToken="p",
        **{"io.modelcontextprotocol/logLevel": "debug"},
    )  # D29
    with anyio.fail_after(TIMEOUT):
        async with http.stream(
            "POST", url, content=orjson.dumps(body), headers=headers_for(body)
        ) as response:
            reader = SseReader(response)
            await call_tool(http, url, "grow", {"name": "grown_c"})
            methods = [(await next_message(reader))["method"], (await next_message(reader))["method"]]
    assert methods == [ACKNOWLEDGED, TOOLS_CHANGED]


async def test_every_listener_gets_the_change(http: httpx.AsyncClient, url: str) -> None:
    async with (
        listening(http, url, "a", toolsListChanged=True) as (_, first, _),
        listening(http, url, "b", toolsListChanged=True) as (_, second, _),
    ):
        await call_tool(http, url, "grow", {"name": "grown_d"})
        tags = [(await next_message(r))["params"]["_meta"][SUBSCRIPTION_ID] for r in (first, second)]
    assert tags == ["a", "b"]


async def test_a_handshake_session_and_a_listener_both_get_a_resource_update(
    http: httpx.AsyncClient, url: str
) -> None:
    session_id = await open_session(http, url)
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-session-id": session_id,
        "mcp-protocol-version": "2025-11-25",
    }
    subscribe = {"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "res://doc"}}
    with anyio.fail_after(TIMEOUT):
        assert (await http.post(url, content=orjson.dumps(subscribe), headers=headers)).status_code == 200
    async with listening(http, url, 6, resourceSubscriptions=["res://doc"]) as (_, reader, _):
        assert await call_tool(http, url, "touch", {"uri": "res://doc"}) == "told 2"
        assert (await next_message(reader))["params"]["uri"] == "res://doc"


# -- ending ------------------------------------------------------------------------------------------
async def test_closing_the_stream_ends_the_subscription(
    http: httpx.AsyncClient, url: str, server: Server
) -> None:
    async with listening(http, url, 8, toolsListChanged=True):
        assert any(listener.id == 8 for listener in server.subscriptions.listeners())
    await wait_until(lambda: all(listener.id != 8 for listener in server.subscriptions.listeners()))


async def test_a_shutdown_ends_the_stream_with_the_final_result(http: httpx.AsyncClient) -> None:
    app = McpHttpApp(build_modern_server())
    async with (
        serving(app) as base,
        listening(http, base + "/mcp", "bye", toolsListChanged=True) as (_, reader, _),
    ):
        app.begin_shutdown()
        final = await next_message(reader)
        assert messages_left(await reader.rest()) == []
    assert final["id"] == "bye"
    assert final["result"]["resultType"] == "complete"
    assert final["result"]["_meta"][SUBSCRIPTION_ID] == "bye"


async def test_a_listen_arriving_during_shutdown_is_answered_at_once(http: httpx.AsyncClient) -> None:
    app = McpHttpApp(build_modern_server())
    async with serving(app) as base:
        app.begin_shutdown()
        body = listen_request("late", toolsListChanged=True)
        with anyio.fail_after(TIMEOUT):
            async with http.stream(
                "POST", base + "/mcp", content=orjson.dumps(body), headers=headers_for(body)
            ) as response:
                events = await SseReader(response).rest()
    received = [orjson.loads(e.data) for e in events if e.data]
    assert [m.get("method") for m in received] == [ACKNOWLEDGED, None]
    assert valid(received[-1], LISTEN)["result"]["_meta"][SUBSCRIPTION_ID] == "late"


async def test_a_quiet_listen_stream_is_kept_alive_with_comments(http: httpx.AsyncClient) -> None:
    body = listen_request(10, toolsListChanged=True)
    async with serving(McpHttpApp(build_modern_server(), keepalive=0.01)) as base:
        with anyio.fail_after(TIMEOUT):
            async with http.stream(
                "POST", base + "/mcp", content=orjson.dumps(body), headers=headers_for(body)
            ) as response:
                seen = b""
                async for chunk in response.aiter_raw():
                    seen += chunk
                    if KEEPALIVE in seen:
                        break
    assert seen.startswith(b"data: ") and ACKNOWLEDGED.encode() in seen


async def test_json_only_mode_still_streams_listen(http: httpx.AsyncClient) -> None:
    app = McpHttpApp(build_modern_server(), json_response=True)
    async with serving(app) as base:
        url = base + "/mcp"
        async with listening(http, url, 9, toolsListChanged=True) as (response, reader, _):
            assert response.headers["content-type"] == "text/event-stream"
            await call_tool(http, url, "grow", {"name": "grown_e"})
            assert (await next_message(reader))["method"] == TOOLS_CHANGED


def messages_left(events: list[Any]) -> list[Any]:
    return [event for event in events if event.data]
