"""JSON or SSE, chosen per request: SSE only when something goes to the client before the result."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import orjson
import pytest

from jsonrpc_mcp.http import McpHttpApp

from .servers.toolbox import build_server
from .support import (
    TIMEOUT,
    SseReader,
    call,
    initialize,
    messages,
    open_session,
    post,
    request,
    serving,
    session_headers,
)

pytestmark = pytest.mark.anyio

RETRY_MS = 1234


@pytest.fixture(scope="module")
async def url() -> AsyncIterator[str]:
    async with serving(McpHttpApp(build_server(), retry_ms=RETRY_MS)) as base:
        yield base + "/mcp"


@pytest.fixture(scope="module")
async def json_url() -> AsyncIterator[str]:
    async with serving(McpHttpApp(build_server(), json_response=True)) as base:
        yield base + "/mcp"


async def test_progress_makes_an_event_stream_with_the_progress_then_the_result(
    http: httpx.AsyncClient, url: str
) -> None:
    session_id = await open_session(http, url)
    body = orjson.dumps(call(5, "progress", {"steps": 2}, progress_token="p-5"))
    with anyio.fail_after(TIMEOUT):
        async with http.stream("POST", url, content=body, headers=session_headers(session_id)) as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/event-stream"
            assert response.headers["x-accel-buffering"] == "no"
            assert response.headers["cache-control"] == "no-cache"
            assert response.headers["mcp-session-id"] == session_id
            events = await SseReader(response).rest()  # returns only once the server ends the stream
    received = messages(events)
    assert [m.get("method") for m in received] == ["notifications/progress", "notifications/progress", None]
    assert [m["params"]["progress"] for m in received[:2]] == [1, 2]
    assert all(m["params"]["progressToken"] == "p-5" for m in received[:2])
    assert received[2]["id"] == 5
    assert received[2]["result"]["content"][0]["text"] == "done after 2 steps"


async def test_the_2025_11_25_event_stream_starts_with_a_priming_event(
    http: httpx.AsyncClient, url: str
) -> None:
    session_id = await open_session(http, url)
    body = orjson.dumps(call(1, "progress", {"steps": 1}, progress_token=1))
    with anyio.fail_after(TIMEOUT):
        async with http.stream("POST", url, content=body, headers=session_headers(session_id)) as response:
            events = await SseReader(response).rest()
    first = events[0]
    assert first.id and first.data == "" and first.retry == RETRY_MS
    assert all(event.id for event in events)
    assert len({event.id for event in events}) == len(events)


async def test_an_older_revision_gets_no_priming_event(http: httpx.AsyncClient, url: str) -> None:
    session_id = await open_session(http, url, "2025-06-18")
    body = orjson.dumps(call(1, "progress", {"steps": 1}, progress_token=1))
    headers = session_headers(session_id, "2025-06-18")
    with anyio.fail_after(TIMEOUT):
        async with http.stream("POST", url, content=body, headers=headers) as response:
            events = await SseReader(response).rest()
    assert all(event.data for event in events)
    assert [m.get("method") for m in messages(events)] == ["notifications/progress", None]


async def test_without_a_progress_token_the_same_tool_answers_with_json(
    http: httpx.AsyncClient, url: str
) -> None:
    session_id = await open_session(http, url)
    response = await post(http, url, call(2, "progress", {"steps": 3}), session_headers(session_id))
    assert response.headers["content-type"] == "application/json"
    assert response.json()["result"]["content"][0]["text"] == "done after 3 steps"


async def test_a_plain_tool_answers_with_json(http: httpx.AsyncClient, url: str) -> None:
    session_id = await open_session(http, url)
    response = await post(http, url, call(3, "add", {"a": 20, "b": 22}), session_headers(session_id))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {"content": [{"type": "text", "text": "42"}]},
    }


async def test_a_log_message_before_the_result_makes_an_event_stream(
    http: httpx.AsyncClient, url: str
) -> None:
    session_id = await open_session(http, url)
    body = orjson.dumps(call(4, "say", {"text": "hello"}))
    with anyio.fail_after(TIMEOUT):
        async with http.stream("POST", url, content=body, headers=session_headers(session_id)) as response:
            assert response.headers["content-type"] == "text/event-stream"
            received = messages(await SseReader(response).rest())
    assert received[0]["method"] == "notifications/message"
    assert received[0]["params"]["data"] == "hello"
    assert received[1]["id"] == 4


async def test_a_request_to_the_client_goes_on_the_event_stream_and_its_answer_is_posted(
    http: httpx.AsyncClient, url: str
) -> None:
    session_id = await open_session(http, url)
    body = orjson.dumps(call(6, "ask_roots", {}))
    headers = session_headers(session_id)
    with anyio.fail_after(TIMEOUT):
        async with http.stream("POST", url, content=body, headers=headers) as response:
            assert response.headers["content-type"] == "text/event-stream"
            reader = SseReader(response)
            _, asked = await reader.message()
            assert asked["method"] == "roots/list"
            roots = {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}
            answered = await post(http, url, {"jsonrpc": "2.0", "id": asked["id"], "result": roots}, headers)
            assert answered.status_code == 202
            assert answered.content == b""
            _, result = await reader.message()
            assert await reader.next() is None  # the stream ends after the result
    assert result["id"] == 6
    assert orjson.loads(result["result"]["content"][0]["text"]) == roots


async def test_a_batch_under_2025_03_26_with_progress_ends_its_stream_with_the_array(
    http: httpx.AsyncClient, url: str
) -> None:
    session_id = await open_session(http, url, "2025-03-26")
    batch = orjson.dumps([call(1, "progress", {"steps": 1}, progress_token="b"), request(2, "ping")])
    headers = session_headers(session_id, "2025-03-26")
    with anyio.fail_after(TIMEOUT):
        async with http.stream("POST", url, content=batch, headers=headers) as response:
            assert response.headers["content-type"] == "text/event-stream"
            events = await SseReader(response).rest()
    progress, answers = orjson.loads(events[0].data), orjson.loads(events[-1].data)
    assert progress["method"] == "notifications/progress"
    assert sorted(answer["id"] for answer in answers) == [1, 2]


# -- JSON-only mode -------------------------------------------------------------------------------
async def test_json_only_mode_never_answers_with_an_event_stream(
    http: httpx.AsyncClient, json_url: str
) -> None:
    session_id = await open_session(http, json_url)
    response = await post(
        http, json_url, call(1, "progress", {"steps": 2}, progress_token="t"), session_headers(session_id)
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json()["result"]["content"][0]["text"] == "done after 2 steps"


async def test_json_only_mode_accepts_a_client_that_accepts_only_json(
    http: httpx.AsyncClient, json_url: str
) -> None:
    headers = {"content-type": "application/json", "accept": "application/json"}
    response = await post(http, json_url, initialize(), headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"


async def test_json_only_mode_sends_a_request_to_the_client_on_the_get_stream(
    http: httpx.AsyncClient, json_url: str
) -> None:
    session_id = await open_session(http, json_url)
    headers = session_headers(session_id)
    stream_headers = {"accept": "text/event-stream", "mcp-session-id": session_id}
    answers: list[httpx.Response] = []
    with anyio.fail_after(TIMEOUT):
        async with http.stream("GET", json_url, headers=stream_headers) as standalone:
            reader = SseReader(standalone)
            async with anyio.create_task_group() as tg:

                async def ask() -> None:
                    answers.append(await post(http, json_url, call(9, "ask_roots", {}), headers))

                tg.start_soon(ask)
                _, asked = await reader.message()
                assert asked["method"] == "roots/list"
                reply = {"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": []}}
                assert (await post(http, json_url, reply, headers)).status_code == 202
    assert answers[0].headers["content-type"] == "application/json"
    assert answers[0].json()["id"] == 9
