"""2026-07-28 traffic on the shared endpoint: no sessions, the revision's status codes, SSE scoped to
the request, cancellation by closing the response, and handshake clients served alongside."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import orjson
import pytest

from jsonrpc_mcp.http import McpHttpApp

from ..servers.toolbox import Controls
from ..support import (
    TIMEOUT,
    SseReader,
    assert_error_body,
    call,
    messages,
    open_session,
    post,
    serving,
    session_headers,
)
from .support import (
    MODERN,
    build_modern_server,
    headers_for,
    modern_request,
    send,
    valid,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def controls() -> Controls:
    return Controls()


@pytest.fixture(scope="module")
async def served(controls: Controls) -> AsyncIterator[tuple[str, McpHttpApp]]:
    app = McpHttpApp(build_modern_server(controls))
    async with serving(app) as base:
        yield base + "/mcp", app


@pytest.fixture
def url(served: tuple[str, McpHttpApp]) -> str:
    return served[0]


# -- plain requests ----------------------------------------------------------------------------------
async def test_a_request_is_answered_with_json_and_no_session(
    http: httpx.AsyncClient, url: str
) -> None:  # E15
    response = await send(http, url, modern_request(1, "tools/list"))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in response.headers
    result = valid(response.json(), "tools/list")["result"]
    assert result["resultType"] == "complete"


async def test_discover_advertises_list_changes_and_subscriptions(http: httpx.AsyncClient, url: str) -> None:
    response = await send(http, url, modern_request(2, "server/discover"))
    capabilities = valid(response.json(), "server/discover")["result"]["capabilities"]
    assert capabilities["tools"] == {"listChanged": True}
    assert capabilities["resources"] == {"subscribe": True, "listChanged": True}
    assert capabilities["prompts"] == {"listChanged": True}


async def test_a_session_id_and_last_event_id_are_ignored(
    http: httpx.AsyncClient, served: tuple[str, McpHttpApp]
) -> None:  # E11
    url, app = served
    body = modern_request(3, "tools/list")
    headers = headers_for(body, mcp_session_id="abc", last_event_id="_:1")
    response = await send(http, url, body, headers)
    assert response.status_code == 200
    assert "mcp-session-id" not in response.headers
    assert valid(response.json(), "tools/list")["id"] == 3
    assert "abc" not in app.sessions


async def test_an_unknown_method_is_404_with_32601(http: httpx.AsyncClient, url: str) -> None:  # E12
    response = await send(http, url, modern_request(4, "foo/bar"))
    assert assert_error_body(response, 404)["code"] == -32601
    assert valid(response.json())["id"] == 4


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe", "initialize"])
async def test_a_removed_method_is_404_with_32601(http: httpx.AsyncClient, url: str, method: str) -> None:
    response = await send(http, url, modern_request(5, method, {"uri": "res://doc", "level": "info"}))
    assert assert_error_body(response, 404)["code"] == -32601


async def test_a_notification_is_accepted_with_202_and_no_body(
    http: httpx.AsyncClient, url: str
) -> None:  # E14
    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}
    response = await send(http, url, body, headers_for(body))
    assert response.status_code == 202
    assert response.content == b""


async def test_a_batch_of_modern_requests_is_refused(http: httpx.AsyncClient, url: str) -> None:
    body = [modern_request(6, "tools/list"), modern_request(7, "prompts/list")]
    headers = headers_for(body[0])
    with anyio.fail_after(TIMEOUT):
        response = await http.post(url, content=orjson.dumps(body), headers=headers)
    assert assert_error_body(response, 400)["code"] == -32600


async def test_an_evil_origin_is_403(http: httpx.AsyncClient, url: str) -> None:  # E16
    body = modern_request(8, "tools/list")
    response = await send(http, url, body, headers_for(body, origin="https://evil.example"))
    error = assert_error_body(response, 403)
    assert "id" not in response.json() and error["code"] != 0


# -- GET and DELETE ----------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_get_and_delete_naming_the_modern_revision_are_405(
    http: httpx.AsyncClient, url: str, method: str
) -> None:  # E10
    headers = {"accept": "text/event-stream", "mcp-protocol-version": MODERN}
    with anyio.fail_after(TIMEOUT):
        response = await http.request(method, url, headers=headers)
    assert_error_body(response, 405)
    assert response.headers["allow"] == "POST"


# -- streamed answers --------------------------------------------------------------------------------
async def test_an_sse_answer_carries_the_requests_notifications_then_its_result(
    http: httpx.AsyncClient, url: str
) -> None:  # E17, E18
    body = modern_request(9, "tools/call", {"name": "progress", "arguments": {"steps": 2}}, progressToken="p")
    with anyio.fail_after(TIMEOUT):
        async with http.stream(
            "POST", url, content=orjson.dumps(body), headers=headers_for(body)
        ) as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/event-stream"
            assert response.headers["x-accel-buffering"] == "no"
            assert "mcp-session-id" not in response.headers
            events = await SseReader(response).rest()
    assert all(event.id is None for event in events)  # no resumability in this revision
    received = messages(events)
    assert [m.get("method") for m in received] == ["notifications/progress"] * 2 + [None]
    assert all(m["params"]["progressToken"] == "p" for m in received[:2])
    for message in received:
        valid(message, "tools/call")
    assert received[-1]["id"] == 9


async def test_closing_an_sse_answer_cancels_the_request(
    http: httpx.AsyncClient, controls: Controls, url: str
) -> None:
    body = modern_request(10, "tools/call", {"name": "hold", "arguments": {"name": "sse"}}, progressToken=1)
    with anyio.fail_after(TIMEOUT):
        async with http.stream(
            "POST", url, content=orjson.dumps(body), headers=headers_for(body)
        ) as response:
            _, first = await SseReader(response).message()
            assert first["method"] == "notifications/progress"
            await controls.started["sse"].wait()
        await controls.cancelled["sse"].wait()  # left the stream: the handler was cancelled


async def test_dropping_a_json_request_cancels_it(
    http: httpx.AsyncClient, controls: Controls, url: str
) -> None:
    body = modern_request(11, "tools/call", {"name": "hold", "arguments": {"name": "json"}})
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:

            async def call_then_hang_up() -> None:
                async with httpx.AsyncClient(timeout=TIMEOUT) as own:
                    await send(own, url, body)

            tg.start_soon(call_then_hang_up)
            await controls.started["json"].wait()
            tg.cancel_scope.cancel()  # closes that client's connection mid-request
        await controls.cancelled["json"].wait()


# -- both eras at once -------------------------------------------------------------------------------
async def test_a_handshake_session_works_between_modern_requests(
    http: httpx.AsyncClient, served: tuple[str, McpHttpApp]
) -> None:
    url, app = served
    session_id = await open_session(http, url)
    first = await send(
        http, url, modern_request(13, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    )
    legacy = await post(http, url, call(14, "add", {"a": 2, "b": 2}), session_headers(session_id))
    second = await send(http, url, modern_request(15, "tools/list"))
    assert valid(first.json(), "tools/call")["result"]["content"][0]["text"] == "3"
    assert legacy.status_code == 200 and legacy.headers["mcp-session-id"] == session_id
    assert legacy.json() == {
        "jsonrpc": "2.0",
        "id": 14,
        "result": {"content": [{"type": "text", "text": "4"}]},
    }
    assert valid(second.json(), "tools/list")["id"] == 15
    assert list(app.sessions) == [session_id]  # the modern requests made none


async def test_a_stateless_app_serves_both_eras(controls: Controls) -> None:
    app = McpHttpApp(build_modern_server(controls), stateless=True)
    async with serving(app) as base, httpx.AsyncClient(timeout=TIMEOUT) as client:
        url = base + "/mcp"
        modern = await send(client, url, modern_request(16, "tools/list"))
        legacy = await post(
            client, url, {"jsonrpc": "2.0", "id": 17, "method": "tools/list"}, session_headers(None)
        )
    assert valid(modern.json(), "tools/list")["result"]["resultType"] == "complete"
    assert "resultType" not in legacy.json()["result"]
