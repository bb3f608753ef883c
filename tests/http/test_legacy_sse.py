"""The legacy HTTP+SSE transport (2024-11-05) served by the same app, raw and with the SDK's client."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.sse import sse_client

from jsonrpc_mcp.http import McpHttpApp

from .servers.toolbox import build_server
from .support import (
    INITIALIZED,
    TIMEOUT,
    SseReader,
    assert_error_body,
    call,
    initialize,
    post,
    serving,
)

pytestmark = pytest.mark.anyio

POST_HEADERS = {"content-type": "application/json"}


@pytest.fixture(scope="module")
async def served() -> AsyncIterator[tuple[str, McpHttpApp]]:
    app = McpHttpApp(build_server())
    async with serving(app) as base:
        yield base, app


@contextlib.asynccontextmanager
async def legacy_stream(http: httpx.AsyncClient, base: str) -> AsyncIterator[tuple[SseReader, str]]:
    """GET /sse; yields the reader (past the endpoint event) and the message URL it named."""
    async with http.stream("GET", base + "/sse", headers={"accept": "text/event-stream"}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        assert response.headers["x-accel-buffering"] == "no"
        reader = SseReader(response)
        endpoint = await reader.next()
        assert endpoint is not None and endpoint.event == "endpoint"
        yield reader, base + endpoint.data


async def test_get_sse_sends_the_endpoint_event_first(
    http: httpx.AsyncClient, served: tuple[str, McpHttpApp]
) -> None:
    base, _ = served
    with anyio.fail_after(TIMEOUT):
        async with legacy_stream(http, base) as (_, message_url):
            assert httpx.URL(message_url).path == "/messages/"
            session_id = httpx.URL(message_url).params["session_id"]
    assert session_id and all(0x21 <= ord(c) <= 0x7E for c in session_id)


async def test_a_post_is_202_and_its_reply_arrives_on_the_stream(
    http: httpx.AsyncClient, served: tuple[str, McpHttpApp]
) -> None:
    base, _ = served
    with anyio.fail_after(TIMEOUT):
        async with legacy_stream(http, base) as (reader, message_url):
            accepted = await post(http, message_url, initialize(1, "2024-11-05"), POST_HEADERS)
            assert accepted.status_code == 202
            event, reply = await reader.message()
            assert event.event == "message"
            assert reply["id"] == 1 and reply["result"]["protocolVersion"] == "2024-11-05"
            assert (await post(http, message_url, INITIALIZED, POST_HEADERS)).status_code == 202
            assert (
                await post(http, message_url, call(2, "add", {"a": 4, "b": 5}), POST_HEADERS)
            ).status_code == 202
            _, answer = await reader.message()
    assert answer["id"] == 2 and answer["result"]["content"][0]["text"] == "9"


async def test_progress_travels_on_the_stream_before_the_result(
    http: httpx.AsyncClient, served: tuple[str, McpHttpApp]
) -> None:
    base, _ = served
    with anyio.fail_after(TIMEOUT):
        async with legacy_stream(http, base) as (reader, message_url):
            await post(http, message_url, initialize(1, "2024-11-05"), POST_HEADERS)
            await reader.message()
            await post(http, message_url, INITIALIZED, POST_HEADERS)
            await post(http, message_url, call(2, "progress", {"steps": 2}, progress_token="p"), POST_HEADERS)
            received = [(await reader.message())[1] for _ in range(3)]
    assert [m.get("method") for m in received] == ["notifications/progress", "notifications/progress", None]


async def test_a_post_without_a_session_is_400(
    http: httpx.AsyncClient, served: tuple[str, McpHttpApp]
) -> None:
    base, _ = served
    assert_error_body(await post(http, base + "/messages/", initialize(), POST_HEADERS), 400)


async def test_a_post_to_an_unknown_session_is_404(
    http: httpx.AsyncClient, served: tuple[str, McpHttpApp]
) -> None:
    base, _ = served
    response = await post(http, base + "/messages/?session_id=nope", initialize(), POST_HEADERS)
    assert_error_body(response, 404)


async def test_a_post_after_the_stream_closed_is_404(
    http: httpx.AsyncClient, served: tuple[str, McpHttpApp]
) -> None:
    base, app = served
    with anyio.fail_after(TIMEOUT):
        async with legacy_stream(http, base) as (_, message_url):
            session_id = httpx.URL(message_url).params["session_id"]
        while session_id in app.legacy_sessions:  # the server reads the disconnect
            await anyio.lowlevel.checkpoint()
    assert_error_body(await post(http, message_url, initialize(), POST_HEADERS), 404)


async def test_a_legacy_post_that_is_not_json_is_415(
    http: httpx.AsyncClient, served: tuple[str, McpHttpApp]
) -> None:
    base, _ = served
    with anyio.fail_after(TIMEOUT):
        async with legacy_stream(http, base) as (_, message_url):
            response = await post(http, message_url, b"hello", {"content-type": "text/plain"})
    assert_error_body(response, 415)


async def test_a_foreign_origin_is_403_on_the_legacy_stream(
    http: httpx.AsyncClient, served: tuple[str, McpHttpApp]
) -> None:
    base, _ = served
    with anyio.fail_after(TIMEOUT):
        response = await http.get(base + "/sse", headers={"origin": "https://evil.example"})
    assert_error_body(response, 403)


@pytest.mark.parametrize("method", ["POST", "DELETE"])
async def test_another_method_on_the_sse_path_is_405(
    http: httpx.AsyncClient, served: tuple[str, McpHttpApp], method: str
) -> None:
    base, _ = served
    with anyio.fail_after(TIMEOUT):
        response = await http.request(method, base + "/sse")
    assert_error_body(response, 405)


async def test_the_sdk_sse_client_lists_and_calls_tools(served: tuple[str, McpHttpApp]) -> None:
    base, _ = served
    with anyio.fail_after(TIMEOUT):
        async with Client(sse_client(base + "/sse"), mode="legacy", read_timeout_seconds=TIMEOUT) as client:
            tools = await client.list_tools()
            result = await client.call_tool("add", {"a": 20, "b": 22})
    assert {"add", "progress"} <= {tool.name for tool in tools.tools}
    assert [block.text for block in result.content if block.type == "text"] == ["42"]
    assert result.is_error is False


async def test_the_sdk_sse_client_gets_progress(served: tuple[str, McpHttpApp]) -> None:
    base, _ = served
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    with anyio.fail_after(TIMEOUT):
        async with Client(sse_client(base + "/sse"), mode="legacy", read_timeout_seconds=TIMEOUT) as client:
            result = await client.call_tool("progress", {"steps": 3}, progress_callback=on_progress)
    assert seen == [1, 2, 3]
    assert result.is_error is False
