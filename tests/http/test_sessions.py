"""Session lifecycle over Streamable HTTP: the GET stream, DELETE, idle expiry, shutdown, stateless."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import anyio
import httpx
import orjson
import pytest

import jsonrpc_mcp.http._sessions as app_module
from jsonrpc_mcp.http import McpHttpApp

from .servers.toolbox import Controls, build_server
from .support import (
    INITIALIZED,
    JSON_HEADERS,
    LATEST,
    TIMEOUT,
    SseReader,
    assert_error_body,
    call,
    delete_session,
    initialize,
    messages,
    notification,
    open_session,
    post,
    request,
    serving,
    session_headers,
)

pytestmark = pytest.mark.anyio

TOOLS_CHANGED = "notifications/tools/list_changed"


def stream_headers(session_id: str) -> dict[str, str]:
    return {"accept": "text/event-stream", "mcp-session-id": session_id, "mcp-protocol-version": LATEST}


@contextlib.asynccontextmanager
async def standalone(http: httpx.AsyncClient, url: str, session_id: str) -> AsyncIterator[SseReader]:
    """The session's GET stream, past its priming event."""
    async with http.stream("GET", url, headers=stream_headers(session_id)) as response:
        assert response.status_code == 200
        reader = SseReader(response)
        priming = await reader.next()
        assert priming is not None and priming.data == ""
        yield reader


def late_tool() -> str:
    return "late"


# -- the standalone (GET) stream ------------------------------------------------------------------
async def test_the_get_stream_receives_list_changed_when_a_tool_is_added(http: httpx.AsyncClient) -> None:
    server = build_server()
    async with serving(McpHttpApp(server)) as base:
        url = base + "/mcp"
        session_id = await open_session(http, url)
        with anyio.fail_after(TIMEOUT):
            async with standalone(http, url, session_id) as reader:
                server.add_tool("late", late_tool)
                event, message = await reader.message()
    assert message == {"jsonrpc": "2.0", "method": TOOLS_CHANGED}
    assert event.id


async def test_idle_sessions_hold_no_task_and_a_burst_of_changes_is_one_notification(
    http: httpx.AsyncClient,
) -> None:
    server = build_server()
    server.add_prompt("early_prompt", late_tool)  # so that the sessions have prompts' listChanged
    app = McpHttpApp(server)
    async with serving(app) as base:
        url = base + "/mcp"
        first = await open_session(http, url)
        tasks_with_one = len(asyncio.all_tasks())
        for _ in range(20):
            await open_session(http, url)
        # list_changed is sent by a task made per burst of changes, not by one per session
        assert len(asyncio.all_tasks()) <= tasks_with_one + 2
        with anyio.fail_after(TIMEOUT):
            async with standalone(http, url, first) as reader:
                for name in ("late1", "late2", "late3"):  # in one turn of the loop
                    server.add_tool(name, late_tool)
                _, changed = await reader.message()
                server.add_prompt("late_prompt", late_tool)
                _, then = await reader.message()
    assert changed["method"] == TOOLS_CHANGED
    assert then["method"] == "notifications/prompts/list_changed"


async def test_each_message_goes_on_exactly_one_stream(http: httpx.AsyncClient, controls: Controls) -> None:
    server = build_server(controls)
    async with serving(McpHttpApp(server)) as base:
        url = base + "/mcp"
        session_id = await open_session(http, url)
        body = orjson.dumps(call(1, "gated", {"gate": "g"}, progress_token="g"))
        with anyio.fail_after(TIMEOUT):
            async with (
                standalone(http, url, session_id) as get_stream,
                http.stream("POST", url, content=body, headers=session_headers(session_id)) as posted,
            ):
                post_stream = SseReader(posted)
                _, first = await post_stream.message()
                assert first["method"] == "notifications/progress"
                server.add_tool("late", late_tool)  # not related to the request: the GET stream's
                _, changed = await get_stream.message()
                assert changed["method"] == TOOLS_CHANGED
                controls.gates["g"].set()
                rest = messages(await post_stream.rest())
                server.remove_tool("late")  # a second change: the next thing on the GET stream
                _, changed_again = await get_stream.message()
    assert [m.get("method") for m in rest] == ["notifications/progress", None]
    assert rest[-1]["id"] == 1
    assert changed_again["method"] == TOOLS_CHANGED


async def test_a_second_concurrent_get_stream_is_409(http: httpx.AsyncClient) -> None:
    async with serving(McpHttpApp(build_server())) as base:
        url = base + "/mcp"
        session_id = await open_session(http, url)
        with anyio.fail_after(TIMEOUT):
            async with standalone(http, url, session_id):
                second = await http.get(url, headers=stream_headers(session_id))
                assert_error_body(second, 409)


async def test_a_new_get_stream_may_be_opened_once_the_first_one_is_gone(http: httpx.AsyncClient) -> None:
    app = McpHttpApp(build_server())
    async with serving(app) as base:
        url = base + "/mcp"
        session_id = await open_session(http, url)
        with anyio.fail_after(TIMEOUT):
            async with standalone(http, url, session_id):
                pass
            # the server learns of the disconnect when it reads it: wait for that, not for a time
            while app.sessions[session_id].standalone.attached:
                await anyio.lowlevel.checkpoint()
            async with standalone(http, url, session_id) as reader:
                assert not reader.ended


# -- DELETE ---------------------------------------------------------------------------------------
async def test_delete_frees_the_session_and_ends_its_get_stream(http: httpx.AsyncClient) -> None:
    server = build_server()
    app = McpHttpApp(server)
    async with serving(app) as base:
        url = base + "/mcp"
        session_id = await open_session(http, url)
        session = app.sessions[session_id]
        with anyio.fail_after(TIMEOUT):
            async with standalone(http, url, session_id) as reader:
                assert (await delete_session(http, url, session_id)).status_code == 200
                assert await reader.rest() == []  # ends without another event
        assert app.sessions == {}
        assert session.closed and session.streams == {}
        assert session.mcp not in server._sessions


async def test_delete_cancels_a_request_in_flight_and_its_post_gets_404(
    http: httpx.AsyncClient, controls: Controls
) -> None:
    app = McpHttpApp(build_server(controls))
    async with serving(app) as base:
        url = base + "/mcp"
        session_id = await open_session(http, url)
        answers: list[httpx.Response] = []
        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:

                async def blocked_call() -> None:
                    answers.append(
                        await post(http, url, call(1, "block", {"name": "b"}), session_headers(session_id))
                    )

                tg.start_soon(blocked_call)
                await controls.started["b"].wait()
                assert (await delete_session(http, url, session_id)).status_code == 200
                await controls.cancelled["b"].wait()
    assert_error_body(answers[0], 404)


# -- idle expiry ----------------------------------------------------------------------------------
class FakeClock:
    """Stands in for the ``time`` module inside jsonrpc_mcp.http._sessions: time moves when told to."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def monotonic(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(app_module, "time", fake)
    return fake


async def test_an_idle_session_is_reaped(http: httpx.AsyncClient, clock: FakeClock) -> None:
    server = build_server()
    app = McpHttpApp(server, session_idle_timeout=10)
    async with serving(app) as base:
        url = base + "/mcp"
        idle_id = await open_session(http, url)
        idle = app.sessions[idle_id]
        clock.advance(11)
        other_id = await open_session(http, url)  # any request lets the reaper look
        assert set(app.sessions) == {other_id}
        assert idle.closed and idle.mcp not in server._sessions
        after = await post(http, url, request(1, "ping"), session_headers(idle_id))
        assert_error_body(after, 404)


async def test_idle_sessions_are_reaped_without_any_traffic(http: httpx.AsyncClient) -> None:
    # served with lifespan, the app reaps on its own schedule, not only when a request comes
    app = McpHttpApp(build_server(), session_idle_timeout=0.2)
    async with serving(app) as base:
        session_id = await open_session(http, base + "/mcp")
        session = app.sessions[session_id]
        with anyio.fail_after(TIMEOUT):
            await session.standalone.closed.wait()  # closing a session ends its streams
    assert session.closed
    assert not app.sessions


async def test_a_session_used_recently_is_not_reaped(http: httpx.AsyncClient, clock: FakeClock) -> None:
    app = McpHttpApp(build_server(), session_idle_timeout=10)
    async with serving(app) as base:
        url = base + "/mcp"
        session_id = await open_session(http, url)
        clock.advance(8)
        assert (await post(http, url, request(1, "ping"), session_headers(session_id))).status_code == 200
        clock.advance(8)  # 16 s since initialize, 8 s since the ping
        assert (await post(http, url, request(2, "ping"), session_headers(session_id))).status_code == 200
        assert session_id in app.sessions


async def test_a_session_with_a_request_in_flight_is_not_reaped(
    http: httpx.AsyncClient, clock: FakeClock, controls: Controls
) -> None:
    app = McpHttpApp(build_server(controls), session_idle_timeout=10)
    async with serving(app) as base:
        url = base + "/mcp"
        busy_id = await open_session(http, url)
        answers: list[httpx.Response] = []
        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:

                async def blocked_call() -> None:
                    answers.append(
                        await post(http, url, call(7, "block", {"name": "busy"}), session_headers(busy_id))
                    )

                tg.start_soon(blocked_call)
                await controls.started["busy"].wait()
                clock.advance(1000)
                await open_session(http, url)  # the reaper looks, and must leave the busy session alone
                assert busy_id in app.sessions
                assert not controls.cancelled["busy"].is_set()
                cancel = notification("notifications/cancelled", {"requestId": 7})
                assert (await post(http, url, cancel, session_headers(busy_id))).status_code == 202
        clock.advance(6)  # past the reaper's throttle, within the idle timeout of the request's end
        await open_session(http, url)
        assert busy_id in app.sessions  # the request's end counted as activity


async def test_a_session_with_an_open_get_stream_is_not_reaped(
    http: httpx.AsyncClient, clock: FakeClock
) -> None:
    app = McpHttpApp(build_server(), session_idle_timeout=10)
    async with serving(app) as base:
        url = base + "/mcp"
        listening_id = await open_session(http, url)
        with anyio.fail_after(TIMEOUT):
            async with standalone(http, url, listening_id):
                clock.advance(1000)
                await open_session(http, url)
                assert listening_id in app.sessions


# -- shutdown -------------------------------------------------------------------------------------
async def test_aclose_frees_every_session_and_ends_every_stream(
    http: httpx.AsyncClient, controls: Controls
) -> None:
    server = build_server(controls)
    app = McpHttpApp(server)
    async with serving(app) as base:
        url = base + "/mcp"
        ids = [await open_session(http, url) for _ in range(3)]
        answers: list[httpx.Response] = []
        with anyio.fail_after(TIMEOUT):
            async with standalone(http, url, ids[0]) as reader, anyio.create_task_group() as tg:

                async def blocked_call() -> None:
                    answers.append(
                        await post(http, url, call(1, "block", {"name": "s"}), session_headers(ids[1]))
                    )

                tg.start_soon(blocked_call)
                await controls.started["s"].wait()
                await app.aclose()
                assert await reader.rest() == []
                await controls.cancelled["s"].wait()
        assert app.sessions == {}
        assert len(server._sessions) == 0
    assert answers[0].status_code == 404


async def test_lifespan_shutdown_frees_every_session(http: httpx.AsyncClient) -> None:
    server = build_server()
    app = McpHttpApp(server)
    async with serving(app) as base:
        url = base + "/mcp"
        for _ in range(3):
            await open_session(http, url)
        assert len(app.sessions) == 3
    assert app.sessions == {}
    assert len(server._sessions) == 0


async def test_shutdown_ends_an_open_get_stream_promptly(http: httpx.AsyncClient) -> None:
    app = McpHttpApp(build_server())
    ended = anyio.Event()
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg, serving(app) as base:
            url = base + "/mcp"
            session_id = await open_session(http, url)
            opened = anyio.Event()

            async def listen() -> None:
                async with standalone(http, url, session_id) as reader:
                    opened.set()
                    await reader.rest()
                ended.set()

            tg.start_soon(listen)
            await opened.wait()
        # leaving serving() shut uvicorn down (bounded inside): the stream did not hold it up
    assert ended.is_set()


async def test_beginning_shutdown_ends_the_get_stream_but_still_delivers_streamed_results(
    http: httpx.AsyncClient, controls: Controls
) -> None:
    app = McpHttpApp(build_server(controls))
    async with serving(app) as base:
        url = base + "/mcp"
        session_id = await open_session(http, url)
        body = orjson.dumps(call(5, "gated", {"gate": "late"}, progress_token="late"))
        with anyio.fail_after(TIMEOUT):
            async with (
                standalone(http, url, session_id) as get_stream,
                http.stream("POST", url, content=body, headers=session_headers(session_id)) as posted,
            ):
                post_stream = SseReader(posted)
                await post_stream.message()
                app.begin_shutdown()  # what serve --http does on SIGINT/SIGTERM
                final = await get_stream.rest()  # a final event, no message: reconnect (elsewhere)
                assert [(e.data, e.retry) for e in final] == [("", app.retry_ms)]
                controls.gates["late"].set()  # the request finishes during the graceful shutdown
                rest = messages(await post_stream.rest())
    assert [m.get("method") for m in rest] == ["notifications/progress", None]
    assert rest[-1]["id"] == 5


async def test_an_idle_get_stream_carries_keepalive_comments(http: httpx.AsyncClient) -> None:
    app = McpHttpApp(build_server(), keepalive=0.01)
    async with serving(app) as base:
        url = base + "/mcp"
        session_id = await open_session(http, url)
        received = b""
        with anyio.fail_after(TIMEOUT):
            async with http.stream("GET", url, headers=stream_headers(session_id)) as response:
                async for chunk in response.aiter_raw():
                    received += chunk
                    if b": keep-alive" in received:
                        break
    assert b"\n\n: keep-alive\n\n" in received  # a comment, after the priming event


# -- stateless mode -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
async def stateless() -> AsyncIterator[tuple[str, McpHttpApp]]:
    app = McpHttpApp(build_server(), stateless=True)
    async with serving(app) as base:
        yield base + "/mcp", app


async def test_stateless_initialize_mints_no_session(
    http: httpx.AsyncClient, stateless: tuple[str, McpHttpApp]
) -> None:
    url, app = stateless
    response = await post(http, url, initialize(), JSON_HEADERS)
    assert response.status_code == 200
    assert response.json()["result"]["protocolVersion"] == LATEST
    assert "mcp-session-id" not in response.headers
    assert app.sessions == {}


@pytest.mark.parametrize("version", [None, "2025-03-26", "2025-06-18", LATEST])
async def test_stateless_requests_work_without_initialize_on_a_fresh_connection(
    stateless: tuple[str, McpHttpApp], version: str | None
) -> None:
    url, app = stateless
    async with httpx.AsyncClient(timeout=TIMEOUT) as fresh:
        response = await post(fresh, url, call(3, "add", {"a": 1, "b": 2}), session_headers(None, version))
    assert response.status_code == 200
    assert response.json()["result"]["content"][0]["text"] == "3"
    assert "mcp-session-id" not in response.headers
    assert app.sessions == {}


async def test_stateless_progress_still_streams(
    http: httpx.AsyncClient, stateless: tuple[str, McpHttpApp]
) -> None:
    url, _ = stateless
    body = orjson.dumps(call(4, "progress", {"steps": 2}, progress_token="s"))
    with anyio.fail_after(TIMEOUT):
        async with http.stream("POST", url, content=body, headers=session_headers(None)) as response:
            assert response.headers["content-type"] == "text/event-stream"
            received = messages(await SseReader(response).rest())
    assert [m.get("method") for m in received] == ["notifications/progress", "notifications/progress", None]


async def test_stateless_notifications_are_202(
    http: httpx.AsyncClient, stateless: tuple[str, McpHttpApp]
) -> None:
    url, _ = stateless
    response = await post(http, url, INITIALIZED, session_headers(None))
    assert response.status_code == 202 and response.content == b""


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_stateless_get_and_delete_are_405(
    http: httpx.AsyncClient, stateless: tuple[str, McpHttpApp], method: str
) -> None:
    url, _ = stateless
    with anyio.fail_after(TIMEOUT):
        response = await http.request(method, url, headers={"accept": "text/event-stream"})
    assert_error_body(response, 405)
    assert "POST" in response.headers["allow"]


async def test_stateless_bad_protocol_version_is_400(
    http: httpx.AsyncClient, stateless: tuple[str, McpHttpApp]
) -> None:
    url, _ = stateless
    response = await post(http, url, request(1, "ping"), session_headers(None, "2099-01-01"))
    assert_error_body(response, 400)


# -- the session limit ----------------------------------------------------------------------------
async def test_past_max_sessions_an_initialize_is_503_and_the_others_keep_working(
    http: httpx.AsyncClient,
) -> None:
    app = McpHttpApp(build_server(), max_sessions=2)
    async with serving(app) as base:
        url = base + "/mcp"
        first, second = await open_session(http, url), await open_session(http, url)
        refused = await post(http, url, initialize(), JSON_HEADERS)
        error = assert_error_body(refused, 503)
        assert error["code"] == -32000 and "max_sessions=2" in error["message"]
        assert refused.headers["retry-after"] == "5" and "mcp-session-id" not in refused.headers
        assert len(app.sessions) == 2
        for session_id in (first, second):  # the open ones are served as before
            ok = await post(http, url, request(3, "ping"), session_headers(session_id))
            assert ok.status_code == 200
        await delete_session(http, url, first)
        assert (await open_session(http, url)) not in (first, second)  # room again


async def test_an_idle_session_past_its_timeout_makes_room_at_once(
    http: httpx.AsyncClient, clock: FakeClock
) -> None:
    app = McpHttpApp(build_server(), max_sessions=2, session_idle_timeout=10)  # the reaper looks every 2.5 s
    async with serving(app) as base:
        url = base + "/mcp"
        idle = await open_session(http, url)
        clock.advance(9)
        busy = await open_session(http, url)  # the reaper looked: `idle` is 9 s idle, not yet expired
        clock.advance(1.5)  # now it is, but the reaper's next look is not due for another second
        fresh = await open_session(http, url)  # full: the expired one is ended there and then
        assert set(app.sessions) == {busy, fresh} and idle not in app.sessions


def test_max_sessions_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_sessions"):
        McpHttpApp(build_server(), max_sessions=0)
