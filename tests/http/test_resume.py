"""Resumability: event ids, GET + Last-Event-ID after a dropped connection, same stream only."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import orjson
import pytest

from jsonrpc_mcp.http import McpHttpApp
from jsonrpc_mcp.http._events import EventStream
from jsonrpc_mcp.http.app import Receive, Scope, Send

from .servers.toolbox import Controls, build_server
from .support import (
    LATEST,
    TIMEOUT,
    SseReader,
    assert_error_body,
    call,
    messages,
    open_session,
    serving,
    session_headers,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def controls() -> Controls:
    """One set of controls for the module's shared server (each test uses gates of its own)."""
    return Controls()


@pytest.fixture(scope="module")
async def served(controls: Controls) -> AsyncIterator[tuple[str, McpHttpApp]]:
    app = McpHttpApp(build_server(controls))
    async with serving(app) as base:
        yield base + "/mcp", app


def resume_headers(session_id: str, last_event_id: str) -> dict[str, str]:
    return {
        "accept": "text/event-stream",
        "mcp-session-id": session_id,
        "mcp-protocol-version": LATEST,
        "last-event-id": last_event_id,
    }


async def first_progress_then_drop(
    http: httpx.AsyncClient, url: str, session_id: str, rid: int, gate: str
) -> tuple[str, dict[str, Any]]:
    """POST the gated tool, read up to its first progress event, drop the connection.

    Returns the id of the last event read (the one a client would resume from) and that message.
    """
    body = orjson.dumps(call(rid, "gated", {"gate": gate}, progress_token=gate))
    async with http.stream("POST", url, content=body, headers=session_headers(session_id)) as response:
        assert response.headers["content-type"] == "text/event-stream"
        event, message = await SseReader(response).message()
    assert event.id
    return event.id, message


def the_stream(app: McpHttpApp, session_id: str, event_id: str) -> EventStream:
    """The live stream an event id belongs to (ids are ``<stream>:<n>``)."""
    return app.sessions[session_id].streams[event_id.rpartition(":")[0]]


async def test_a_stream_that_ended_while_dropped_is_replayed_in_full(
    http: httpx.AsyncClient, controls: Controls, served: tuple[str, McpHttpApp]
) -> None:
    url, app = served
    session_id = await open_session(http, url)
    with anyio.fail_after(TIMEOUT):
        last_id, first = await first_progress_then_drop(http, url, session_id, 1, "a")
        stream = the_stream(app, session_id, last_id)
        controls.gates["a"].set()
        await stream.closed.wait()  # the tool finished and its result went nowhere
        async with http.stream("GET", url, headers=resume_headers(session_id, last_id)) as resumed:
            assert resumed.status_code == 200
            assert resumed.headers["content-type"] == "text/event-stream"
            replayed = messages(await SseReader(resumed).rest())
    assert first["params"]["progress"] == 1
    assert [m.get("method") for m in replayed] == ["notifications/progress", None]
    assert replayed[0]["params"]["progress"] == 2
    assert replayed[1]["id"] == 1
    assert replayed[1]["result"]["content"][0]["text"] == "released a"


async def test_a_stream_still_running_continues_on_the_resumed_connection(
    http: httpx.AsyncClient, controls: Controls, served: tuple[str, McpHttpApp]
) -> None:
    url, _ = served
    session_id = await open_session(http, url)
    with anyio.fail_after(TIMEOUT):
        last_id, _ = await first_progress_then_drop(http, url, session_id, 2, "b")
        async with http.stream("GET", url, headers=resume_headers(session_id, last_id)) as resumed:
            assert resumed.status_code == 200
            controls.gates["b"].set()
            received = messages(await SseReader(resumed).rest())
    assert [m.get("method") for m in received] == ["notifications/progress", None]
    assert received[1]["id"] == 2


def delay_resumed_headers(app: McpHttpApp, until: anyio.Event, then: anyio.Event) -> Any:
    """Wrap ``app``: a resuming GET's response headers are held until ``until`` is set, after
    setting ``then`` (lets the test emit events in the window between the replay lookup and the
    connection being attached)."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", []))
        if scope["type"] != "http" or b"last-event-id" not in headers:
            await app(scope, receive, send)
            return

        async def held_send(message: Any) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                then.set()
                await until.wait()
            await send(message)

        await app(scope, receive, held_send)

    return wrapped


async def test_events_emitted_while_the_resume_is_being_answered_are_not_lost(
    http: httpx.AsyncClient, controls: Controls
) -> None:
    app = McpHttpApp(build_server(controls))
    headers_due = anyio.Event()
    stream_closed = anyio.Event()
    async with serving(delay_resumed_headers(app, stream_closed, headers_due), mcp_app=app) as base:
        url = base + "/mcp"
        session_id = await open_session(http, url)
        with anyio.fail_after(TIMEOUT):
            last_id, _ = await first_progress_then_drop(http, url, session_id, 3, "c")
            stream = the_stream(app, session_id, last_id)
            async with anyio.create_task_group() as tg:

                async def finish_the_tool_in_the_window() -> None:
                    await headers_due.wait()
                    controls.gates["c"].set()
                    await stream.closed.wait()
                    stream_closed.set()

                tg.start_soon(finish_the_tool_in_the_window)
                async with http.stream("GET", url, headers=resume_headers(session_id, last_id)) as resumed:
                    received = messages(await SseReader(resumed).rest())
    assert [m.get("method") for m in received] == ["notifications/progress", None]
    assert received[1]["id"] == 3


async def test_event_ids_are_unique_across_the_streams_of_a_session(
    http: httpx.AsyncClient, controls: Controls, served: tuple[str, McpHttpApp]
) -> None:
    url, app = served
    session_id = await open_session(http, url)
    ids: list[str] = []
    with anyio.fail_after(TIMEOUT):
        get_headers = {"accept": "text/event-stream", "mcp-session-id": session_id}
        async with http.stream("GET", url, headers=get_headers) as standalone:
            get_reader = SseReader(standalone)
            for rid in (1, 2, 3):
                body = orjson.dumps(call(rid, "progress", {"steps": 2}, progress_token=rid))
                async with http.stream(
                    "POST", url, content=body, headers=session_headers(session_id)
                ) as posted:
                    ids.extend(event.id for event in await SseReader(posted).rest() if event.id)
            app.server.add_tool("late_for_ids", lambda: "late")
            while True:
                event = await get_reader.next()
                assert event is not None
                assert event.id
                ids.append(event.id)
                if event.data:
                    break
    assert len(ids) == 3 * 4 + 2  # priming, 2 progress, result per POST; priming + list_changed on GET
    assert len(set(ids)) == len(ids)
    streams = {event_id.rpartition(":")[0] for event_id in ids}
    assert len(streams) == 4  # each id names its stream


async def test_a_resume_never_replays_another_streams_messages(
    http: httpx.AsyncClient, controls: Controls, served: tuple[str, McpHttpApp]
) -> None:
    url, app = served
    session_id = await open_session(http, url)
    with anyio.fail_after(TIMEOUT):
        a_id, _ = await first_progress_then_drop(http, url, session_id, 10, "A")
        b_body = orjson.dumps(call(20, "gated", {"gate": "B"}, progress_token="B"))
        async with http.stream(
            "POST", url, content=b_body, headers=session_headers(session_id)
        ) as b_response:
            b_reader = SseReader(b_response)
            await b_reader.message()
            a_stream = the_stream(app, session_id, a_id)
            controls.gates["B"].set()
            controls.gates["A"].set()
            b_rest = messages(await b_reader.rest())
            await a_stream.closed.wait()
        async with http.stream("GET", url, headers=resume_headers(session_id, a_id)) as resumed:
            replayed = messages(await SseReader(resumed).rest())
    assert [m["id"] for m in b_rest if "id" in m] == [20]
    assert [m["id"] for m in replayed if "id" in m] == [10]
    assert all(m["params"]["progressToken"] == "A" for m in replayed if "method" in m)


async def test_the_standalone_stream_is_resumed_after_a_drop(
    http: httpx.AsyncClient, served: tuple[str, McpHttpApp]
) -> None:
    url, app = served
    session_id = await open_session(http, url)
    get_headers = {"accept": "text/event-stream", "mcp-session-id": session_id}
    with anyio.fail_after(TIMEOUT):
        async with http.stream("GET", url, headers=get_headers) as standalone:
            priming = await SseReader(standalone).next()
        assert priming is not None and priming.id
        while app.sessions[session_id].standalone.attached:  # the server reads the disconnect
            await anyio.lowlevel.checkpoint()
        app.server.add_tool("late_while_dropped", lambda: "late")  # announced while nobody listens: kept
        async with http.stream("GET", url, headers=resume_headers(session_id, priming.id)) as resumed:
            _, message = await SseReader(resumed).message()
    assert message["method"] == "notifications/tools/list_changed"


@pytest.mark.parametrize("last_event_id", ["nonsense", "99:1", "_:123456", "1:1"])
async def test_an_unknown_last_event_id_is_404(
    http: httpx.AsyncClient, served: tuple[str, McpHttpApp], last_event_id: str
) -> None:
    url, _ = served
    session_id = await open_session(http, url)
    with anyio.fail_after(TIMEOUT):
        response = await http.get(url, headers=resume_headers(session_id, last_event_id))
    assert_error_body(response, 404)


async def test_another_sessions_event_id_is_404(
    http: httpx.AsyncClient, controls: Controls, served: tuple[str, McpHttpApp]
) -> None:
    url, _ = served
    owner = await open_session(http, url)
    stranger = await open_session(http, url)
    with anyio.fail_after(TIMEOUT):
        last_id, _ = await first_progress_then_drop(http, url, owner, 1, "x")
        response = await http.get(url, headers=resume_headers(stranger, last_id))
        controls.gates["x"].set()
    assert_error_body(response, 404)


async def test_a_stream_received_in_full_cannot_be_resumed(
    http: httpx.AsyncClient, served: tuple[str, McpHttpApp]
) -> None:
    url, _ = served
    session_id = await open_session(http, url)
    body = orjson.dumps(call(1, "progress", {"steps": 1}, progress_token=1))
    with anyio.fail_after(TIMEOUT):
        async with http.stream("POST", url, content=body, headers=session_headers(session_id)) as response:
            events = await SseReader(response).rest()
        last = events[-1].id
        assert last is not None
        again = await http.get(url, headers=resume_headers(session_id, last))
    assert_error_body(again, 404)
