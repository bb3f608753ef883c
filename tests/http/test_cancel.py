"""Cancellation over HTTP: notifications/cancelled on a POST of its own stops the request, unanswered.
A dropped connection is not a cancellation."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import orjson
import pytest

from jsonrpc_mcp.http import McpHttpApp

from .servers.toolbox import Controls, build_server
from .support import (
    TIMEOUT,
    SseReader,
    call,
    messages,
    notification,
    open_session,
    post,
    request,
    serving,
    session_headers,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def controls() -> Controls:
    """One set of controls for the module's shared server (each test uses gates of its own)."""
    return Controls()


@pytest.fixture(scope="module")
async def url(controls: Controls) -> AsyncIterator[str]:
    async with serving(McpHttpApp(build_server(controls))) as base:
        yield base + "/mcp"


def cancel(rid: int | str) -> dict[str, object]:
    return notification("notifications/cancelled", {"requestId": rid, "reason": "test"})


async def test_a_cancelled_json_request_is_stopped_and_not_answered(
    http: httpx.AsyncClient, controls: Controls, url: str
) -> None:
    session_id = await open_session(http, url)
    headers = session_headers(session_id)
    answers: list[httpx.Response] = []
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:

            async def blocked_call() -> None:
                answers.append(await post(http, url, call(41, "block", {"name": "j"}), headers))

            tg.start_soon(blocked_call)
            await controls.started["j"].wait()
            accepted = await post(http, url, cancel(41), headers)
            assert accepted.status_code == 202 and accepted.content == b""
            await controls.cancelled["j"].wait()
    assert answers[0].status_code == 202  # the POST ends, carrying no response for the request
    assert answers[0].content == b""
    still = await post(http, url, request(42, "ping"), headers)
    assert still.json() == {"jsonrpc": "2.0", "id": 42, "result": {}}


async def test_a_cancelled_streamed_request_ends_its_stream_without_a_response(
    http: httpx.AsyncClient, controls: Controls, url: str
) -> None:
    session_id = await open_session(http, url)
    headers = session_headers(session_id)
    body = orjson.dumps(call(43, "gated", {"gate": "s"}, progress_token="s"))
    with anyio.fail_after(TIMEOUT):
        async with http.stream("POST", url, content=body, headers=headers) as response:
            reader = SseReader(response)
            _, first = await reader.message()
            assert first["method"] == "notifications/progress"
            assert (await post(http, url, cancel(43), headers)).status_code == 202
            rest = messages(await reader.rest())
    assert rest == []
    assert not controls.finished["s"].is_set()


async def test_cancelling_an_unknown_request_is_ignored(http: httpx.AsyncClient, url: str) -> None:
    session_id = await open_session(http, url)
    headers = session_headers(session_id)
    assert (await post(http, url, cancel(999), headers)).status_code == 202
    assert (await post(http, url, request(1, "ping"), headers)).status_code == 200


async def test_a_dropped_connection_does_not_cancel_the_request(
    http: httpx.AsyncClient, controls: Controls, url: str
) -> None:
    session_id = await open_session(http, url)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:

            async def call_then_hang_up() -> None:
                async with httpx.AsyncClient(timeout=TIMEOUT) as own:
                    await post(own, url, call(44, "gated", {"gate": "d"}), session_headers(session_id))

            tg.start_soon(call_then_hang_up)
            await controls.started["d"].wait()
            tg.cancel_scope.cancel()  # closes that client's connection mid-request
        controls.gates["d"].set()
        await controls.finished["d"].wait()  # a cancelled handler would never get here
