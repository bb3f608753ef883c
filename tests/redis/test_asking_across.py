"""Server-to-client requests across instances (``--redis``): a question sent by instance A on a
POST's stream, answered by a POST that lands on instance B, reaches the handler waiting on A; a
timeout on A is A's as on one instance (a late answer through B is harmless); a cancellation posted
to B cancels the request running on A."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import orjson
import pytest

from ..http.support import (
    JSON_HEADERS,
    LATEST,
    TIMEOUT,
    SseReader,
    call,
    messages,
    notification,
    post,
    request,
    session_headers,
)
from .support import RedisServer
from .test_scale_out import instances
from .test_sessions_across import stream_headers

pytestmark = pytest.mark.anyio

CAPABILITIES: dict[str, Any] = {"elicitation": {}, "roots": {}, "sampling": {}}


async def open_capable_session(http: httpx.AsyncClient, url: str) -> str:
    """initialize (the client can elicit, sample, list roots) + notifications/initialized."""
    params = {
        "protocolVersion": LATEST,
        "capabilities": CAPABILITIES,
        "clientInfo": {"name": "t", "version": "0"},
    }
    response = await post(http, url, request(0, "initialize", params), JSON_HEADERS)
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    ready = await post(http, url, notification("notifications/initialized"), session_headers(session_id))
    assert ready.status_code == 202, ready.text
    return session_id


def answer(rid: Any, result: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "result": result})


async def test_an_elicitation_sent_by_one_instance_is_answered_through_another(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    with instances(2, "--redis", redis_server.url) as (a, b):
        session_id = await open_capable_session(http, a.url + "/mcp")
        headers = session_headers(session_id)
        body = orjson.dumps(call(1, "confirm", {"item": "the order"}))
        with anyio.fail_after(TIMEOUT * 2):
            async with http.stream("POST", a.url + "/mcp", content=body, headers=headers) as response:
                reader = SseReader(response)
                _, question = await reader.message()
                accepted = await http.post(
                    b.url + "/mcp",
                    content=answer(question["id"], {"action": "accept", "content": {"ok": True}}),
                    headers=headers,
                )
                rest = messages(await reader.rest())
    assert question["method"] == "elicitation/create"
    assert type(question["id"]) is int and question["id"] > 2**22  # numbered from A's own base
    assert accepted.status_code == 202
    assert rest[-1]["id"] == 1
    assert rest[-1]["result"]["content"][0]["text"] == f"the order: accept (answered by {a.process.pid})"


async def test_a_timeout_stays_on_the_instance_that_asked_and_a_late_answer_is_harmless(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    with instances(2, "--redis", redis_server.url) as (a, b):
        session_id = await open_capable_session(http, a.url + "/mcp")
        headers = session_headers(session_id)
        body = orjson.dumps(call(1, "ask_briefly", {}))
        with anyio.fail_after(TIMEOUT * 2):
            async with http.stream("POST", a.url + "/mcp", content=body, headers=headers) as response:
                reader = SseReader(response)
                _, question = await reader.message()
                rest = messages(await reader.rest())  # no answer: A gives up after 0.5 s
            late = await http.post(
                b.url + "/mcp", content=answer(question["id"], {"roots": []}), headers=headers
            )
            # the session goes on: the next question is answered through B in time
            async with http.stream(
                "POST", a.url + "/mcp", content=orjson.dumps(call(2, "ask_briefly", {})), headers=headers
            ) as response:
                reader = SseReader(response)
                _, again = await reader.message()
                await http.post(
                    b.url + "/mcp",
                    content=answer(again["id"], {"roots": [{"uri": "file:///w"}]}),
                    headers=headers,
                )
                answered = messages(await reader.rest())
    assert question["method"] == "roots/list"
    assert rest[-1]["result"]["content"][0]["text"] == "no answer: RequestTimeout"
    assert late.status_code == 202
    assert again["id"] != question["id"]
    assert answered[-1]["result"]["content"][0]["text"] == "roots: 1"


async def test_a_cancellation_posted_to_another_instance_cancels_the_request(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    with instances(2, "--redis", redis_server.url) as (a, b):
        session_id = await open_capable_session(http, a.url + "/mcp")
        headers = session_headers(session_id)
        body = orjson.dumps(call(7, "slow", {"seconds": 30}, progress_token="p"))
        with anyio.fail_after(TIMEOUT * 2):
            async with http.stream("POST", a.url + "/mcp", content=body, headers=headers) as response:
                reader = SseReader(response)
                _, progress = await reader.message()
                cancel = notification(
                    "notifications/cancelled", {"requestId": 7, "reason": "changed my mind"}
                )
                told = await post(http, b.url + "/mcp", cancel, headers)
                rest = messages(await reader.rest())  # ends without an answer, well before 30 s
    assert progress["method"] == "notifications/progress"
    assert told.status_code == 202
    assert [m for m in rest if "result" in m or "error" in m] == []


async def test_a_question_on_the_get_stream_held_by_another_instance_is_answered_through_a_third(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    # JSON-only responses: a request to the client goes on the session's GET stream, here held by B
    with instances(3, "--redis", redis_server.url, "--json-response") as (a, b, c):
        session_id = await open_capable_session(http, a.url + "/mcp")
        headers = session_headers(session_id)
        with anyio.fail_after(TIMEOUT * 2):
            async with http.stream("GET", b.url + "/mcp", headers=stream_headers(session_id)) as stream:
                reader = SseReader(stream)
                await reader.next()  # the priming event
                async with anyio.create_task_group() as tg:
                    answers: list[httpx.Response] = []

                    async def call_on_a() -> None:
                        answers.append(
                            await post(http, a.url + "/mcp", call(1, "confirm", {"item": "z"}), headers)
                        )

                    tg.start_soon(call_on_a)
                    _, question = await reader.message()
                    content = answer(question["id"], {"action": "decline"})
                    accepted = await http.post(c.url + "/mcp", content=content, headers=headers)
    assert question["method"] == "elicitation/create"
    assert accepted.status_code == 202
    assert answers[0].json()["result"]["content"][0]["text"] == f"z: decline (answered by {a.process.pid})"
