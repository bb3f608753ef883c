"""jsonrpc_mcp's HTTP client drives servers written with the official MCP Python SDK over real HTTP.

The SDK's ASGI apps (servers/sdk_http_server.py) run under uvicorn in a thread, one per kind for the
whole module, behind a recorder that notes each request's method, headers and answer status; one
test runs the server as a subprocess so that it can be killed and restarted on the same socket.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest

from jsonrpc_mcp import Client, JsonRpcError
from jsonrpc_mcp.jsonrpc import RequestTimeout
from jsonrpc_mcp.transports.http import HttpClientStream

from .interop_support import CALL_TIMEOUT, CONNECT_TIMEOUT, REPO
from .servers.sdk_http_server import build
from .servers.sdk_http_serving import ThreadedServer, listening_socket, url_of

pytestmark = pytest.mark.anyio

SERVER_SCRIPT = REPO / "tests" / "interop" / "servers" / "sdk_http_server.py"
REVISIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]


# -- servers --------------------------------------------------------------------------------------
@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    status: int | None = None
    content_type: str | None = None


class Recorder:
    """ASGI middleware keeping what each HTTP request was, and how it was answered."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[Recorded] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {name.decode().lower(): value.decode() for name, value in scope["headers"]}
        entry = Recorded(scope["method"], scope["path"], headers)
        self.requests.append(entry)

        async def noting(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                entry.status = message["status"]
                for name, value in message.get("headers", []):
                    if name.lower() == b"content-type":
                        entry.content_type = value.decode().split(";")[0]
            await send(message)

        await self.app(scope, receive, noting)

    def of_session(self, session: str | None) -> list[Recorded]:
        return [r for r in self.requests if r.headers.get("mcp-session-id") == session]


class Servers:
    """One threaded server per kind, started when first asked for."""

    def __init__(self) -> None:
        self.running: dict[str, tuple[ThreadedServer, Recorder]] = {}

    def get(self, kind: str) -> tuple[str, Recorder]:
        if kind not in self.running:
            recorder = Recorder(build(kind))
            self.running[kind] = (ThreadedServer(recorder).__enter__(), recorder)
        server, recorder = self.running[kind]
        return server.url("/sse" if kind == "legacy" else "/mcp"), recorder

    def close(self) -> None:
        for server, _ in self.running.values():
            server.__exit__(None, None, None)


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    running = Servers()
    try:
        yield running
    finally:
        running.close()


def connect(url: str, **options: Any) -> Any:
    options.setdefault("request_timeout", CALL_TIMEOUT)
    options.setdefault("timeout", CALL_TIMEOUT)
    return Client.http(url, **options)


def session_of(client: Client) -> str | None:
    stream = client._stream
    assert isinstance(stream, HttpClientStream)
    return stream.session_id


def texts(result: dict[str, Any]) -> list[str]:
    return [block["text"] for block in result["content"] if block.get("type") == "text"]


async def roots(params: Any) -> dict[str, Any]:
    return {"roots": [{"uri": "file:///work/a", "name": "a"}, {"uri": "file:///work/b", "name": "b"}]}


# -- the handshake and the session ----------------------------------------------------------------
@pytest.mark.parametrize("kind", ["sse", "json", "resumable"])
async def test_initialize_opens_a_session(servers: Servers, kind: str) -> None:
    url, _ = servers.get(kind)
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url) as client:
            assert client.protocol_version == "2025-11-25"
            assert client.server_info == {"name": "interop-sdk-http", "version": "4.5.6"}
            assert client.instructions == "The SDK, over HTTP."
            session = session_of(client)
    assert session is not None
    assert all(0x21 <= ord(ch) <= 0x7E for ch in session)


@pytest.mark.parametrize("kind", ["sse", "json"])
async def test_every_request_after_initialize_carries_the_session_and_protocol_version(
    servers: Servers, kind: str
) -> None:
    url, recorder = servers.get(kind)
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url) as client:
            await client.list_tools()
            await client.call_tool("multiply", {"a": 2, "b": 3})
            session = session_of(client)
    later = recorder.of_session(session)
    assert [r.method for r in later if r.method != "GET"] == ["POST", "POST", "POST", "DELETE"]
    assert {r.headers.get("mcp-protocol-version") for r in later} == {"2025-11-25"}
    assert all(r.status is not None and r.status < 400 for r in later)


@pytest.mark.parametrize("revision", REVISIONS)
async def test_the_requested_revision_is_negotiated_and_sent_as_the_header(
    servers: Servers, revision: str
) -> None:
    url, recorder = servers.get("sse")
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url, protocol_version=revision) as client:
            assert client.protocol_version == revision
            assert texts(await client.call_tool("multiply", {"a": 4, "b": 5})) == ["20"]
            session = session_of(client)
    assert {r.headers.get("mcp-protocol-version") for r in recorder.of_session(session)} == {revision}


async def test_a_stateless_server_works_without_a_session(servers: Servers) -> None:
    url, recorder = servers.get("stateless")
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url) as client:
            assert session_of(client) is None
            assert texts(await client.call_tool("multiply", {"a": 7, "b": 8})) == ["56"]
    assert all("mcp-session-id" not in r.headers for r in recorder.requests)
    assert [r.method for r in recorder.requests if r.method == "DELETE"] == []


# -- tools ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["sse", "json"])
async def test_tools_are_listed_and_called(servers: Servers, kind: str) -> None:
    url, _ = servers.get(kind)
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url) as client:
            tools = {tool["name"]: tool for tool in await client.list_tools()}
            result = await client.call_tool("multiply", {"a": 6, "b": 7})
    assert {"multiply", "explode", "chatty", "announce", "ask_roots"} <= set(tools)
    assert sorted(tools["multiply"]["inputSchema"]["required"]) == ["a", "b"]
    assert result.get("isError", False) is False
    assert texts(result) == ["42"]


@pytest.mark.parametrize(
    ("kind", "content_type"), [("sse", "text/event-stream"), ("json", "application/json")]
)
async def test_answers_come_as_the_servers_mode_says(servers: Servers, kind: str, content_type: str) -> None:
    url, recorder = servers.get(kind)
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url) as client:
            await client.call_tool("multiply", {"a": 1, "b": 1})
            session = session_of(client)
    (call,) = [r for r in recorder.of_session(session) if r.method == "POST" and r.status == 200]
    assert call.content_type == content_type


@pytest.mark.parametrize("kind", ["sse", "json"])
async def test_a_tool_that_raises_gives_an_error_result(servers: Servers, kind: str) -> None:
    url, _ = servers.get(kind)
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url) as client:
            result = await client.call_tool("explode", {"reason": "on purpose"})
    assert result["isError"] is True
    (text,) = texts(result)
    assert text.endswith("exploded: on purpose")  # the SDK prefixes "Error executing tool explode: "


async def test_an_unknown_tool_is_reported(servers: Servers) -> None:
    url, _ = servers.get("sse")
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url) as client:
            try:
                result = await client.call_tool("no-such-tool", {})
            except JsonRpcError as exc:
                assert exc.code == -32602
            else:
                assert result["isError"] is True


async def test_progress_and_log_notifications_arrive_before_the_result(servers: Servers) -> None:
    url, _ = servers.get("sse")
    seen: list[tuple[str, Any]] = []
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(
            url, on_notification=lambda method, params: seen.append((method, params))
        ) as client:
            params = {"name": "chatty", "arguments": {"steps": 3}, "_meta": {"progressToken": "tok"}}
            result = await client.request("tools/call", params)
            arrived = list(seen)  # everything that had arrived when the result did
    assert texts(result) == ["done after 3 steps"]
    assert [(method, p.get("progress") or p.get("data")) for method, p in arrived] == [
        ("notifications/progress", 1),
        ("notifications/message", "log 1"),
        ("notifications/progress", 2),
        ("notifications/message", "log 2"),
        ("notifications/progress", 3),
        ("notifications/message", "log 3"),
    ]
    assert all(p["progressToken"] == "tok" for method, p in arrived if method == "notifications/progress")


async def test_concurrent_calls_are_answered_each_to_its_caller(servers: Servers) -> None:
    url, _ = servers.get("sse")
    answers: dict[int, list[str]] = {}
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url) as client:

            async def call(n: int) -> None:
                answers[n] = texts(await client.call_tool("multiply", {"a": n, "b": 10}))

            async with anyio.create_task_group() as tg:
                for n in range(12):
                    tg.start_soon(call, n)
    assert answers == {n: [str(n * 10)] for n in range(12)}


async def test_a_timed_out_call_does_not_disturb_the_next(servers: Servers) -> None:
    url, _ = servers.get("sse")
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url) as client:
            with pytest.raises(RequestTimeout):
                await client.call_tool("nap", {"seconds": 5}, timeout=0.2)
            assert texts(await client.call_tool("multiply", {"a": 3, "b": 3})) == ["9"]


# -- the standalone GET stream --------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["sse", "json"])
async def test_a_server_request_travels_on_the_get_stream_and_is_answered(
    servers: Servers, kind: str
) -> None:
    url, recorder = servers.get(kind)
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url, request_handlers={"roots/list": roots}) as client:
            result = await client.call_tool("ask_roots", {})
            session = session_of(client)
    assert texts(result) == ["file:///work/a,file:///work/b"]
    gets = [r for r in recorder.of_session(session) if r.method == "GET"]
    assert gets and gets[0].headers["accept"] == "text/event-stream"
    assert gets[0].content_type == "text/event-stream"


@pytest.mark.parametrize("kind", ["sse", "json"])
async def test_a_list_changed_notification_arrives_on_the_get_stream(servers: Servers, kind: str) -> None:
    url, _ = servers.get(kind)
    changed = anyio.Event()

    def on_notification(method: str, params: Any) -> None:
        if method == "notifications/tools/list_changed":
            changed.set()

    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url, on_notification=on_notification) as client:
            assert texts(await client.call_tool("announce", {})) == ["announced"]
            await changed.wait()


# -- ending and losing sessions -------------------------------------------------------------------
async def test_closing_deletes_the_session(servers: Servers) -> None:
    url, recorder = servers.get("sse")
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url) as client:
            session = session_of(client)
            version = client.protocol_version
        deletes = [r for r in recorder.of_session(session) if r.method == "DELETE"]
        assert [r.status for r in deletes] == [200]
        async with httpx.AsyncClient(timeout=CALL_TIMEOUT) as http:
            after = await http.post(
                url,
                content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                headers={
                    "content-type": "application/json",
                    "accept": "application/json, text/event-stream",
                    "mcp-session-id": session or "",
                    "mcp-protocol-version": version or "",
                },
            )
    assert after.status_code == 404


@pytest.mark.parametrize("kind", ["sse", "json"])
async def test_a_session_ended_behind_the_clients_back_is_reinitialized_transparently(
    servers: Servers, kind: str
) -> None:
    url, recorder = servers.get(kind)
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url) as client:
            first = session_of(client)
            assert texts(await client.call_tool("multiply", {"a": 2, "b": 2})) == ["4"]
            async with httpx.AsyncClient(timeout=CALL_TIMEOUT) as http:
                ended = await http.delete(
                    url, headers={"mcp-session-id": first or "", "mcp-protocol-version": "2025-11-25"}
                )
            assert ended.status_code == 200
            assert texts(await client.call_tool("multiply", {"a": 3, "b": 3})) == ["9"]
            second = session_of(client)
    assert second is not None and second != first
    refused = [r for r in recorder.of_session(first) if r.method == "POST" and r.status == 404]
    assert refused  # the call that found the session gone
    assert [r.method for r in recorder.of_session(second)][:2] == ["POST", "POST"]  # initialized, the call


async def test_a_restarted_server_is_reinitialized_transparently() -> None:
    sock = listening_socket()

    def start() -> subprocess.Popen[bytes]:
        fd = sock.fileno()
        return subprocess.Popen([sys.executable, str(SERVER_SCRIPT), "sse", str(fd)], pass_fds=[fd], cwd=REPO)

    process = start()
    try:
        with anyio.fail_after(CONNECT_TIMEOUT * 2):
            async with connect(url_of(sock)) as client:
                assert texts(await client.call_tool("multiply", {"a": 5, "b": 5})) == ["25"]
                first = session_of(client)
                process.kill()
                process.wait(CALL_TIMEOUT)
                process = start()  # same socket: connections wait in its backlog meanwhile
                assert texts(await client.call_tool("multiply", {"a": 6, "b": 6})) == ["36"]
                assert session_of(client) not in (None, first)
    finally:
        process.kill()
        process.wait(CALL_TIMEOUT)
        sock.close()


async def test_an_unknown_session_without_a_handshake_to_replay_is_an_error(servers: Servers) -> None:
    url, recorder = servers.get("sse")
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(
            url, initialize=False, transport_options={"session_id": "no-such-session"}
        ) as client:
            with pytest.raises(JsonRpcError) as caught:
                await client.request("tools/list")
    assert caught.value.code == -32600
    assert "Session not found" in caught.value.message
    assert [r.status for r in recorder.of_session("no-such-session")] == [404, 404]  # the POST; the DELETE


# -- resumability ---------------------------------------------------------------------------------
async def test_a_stream_the_server_closes_is_resumed_and_the_answer_arrives(servers: Servers) -> None:
    url, recorder = servers.get("resumable")
    progress: list[str] = []
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(
            url, on_notification=lambda method, params: progress.append(params.get("message", ""))
        ) as client:
            params = {"name": "reconnect_me", "arguments": {}, "_meta": {"progressToken": 1}}
            result = await client.request("tools/call", params)
            session = session_of(client)
    assert texts(result) == ["answered after a reconnection"]
    assert progress == ["before the drop", "after the drop"]
    resumed = [r for r in recorder.of_session(session) if r.method == "GET" and "last-event-id" in r.headers]
    assert resumed and resumed[0].status == 200


# -- legacy HTTP+SSE ------------------------------------------------------------------------------
async def test_the_client_falls_back_to_the_sdks_legacy_sse_app(servers: Servers) -> None:
    url, recorder = servers.get("legacy")
    notes: list[str] = []
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url, on_notification=lambda method, params: notes.append(method)) as client:
            stream = client._stream
            assert isinstance(stream, HttpClientStream) and stream.mode == "legacy"
            assert client.server_info["name"] == "interop-sdk-http"
            assert "multiply" in {tool["name"] for tool in await client.list_tools()}
            assert texts(await client.call_tool("multiply", {"a": 9, "b": 9})) == ["81"]
            params = {"name": "chatty", "arguments": {"steps": 1}, "_meta": {"progressToken": "t"}}
            assert texts(await client.request("tools/call", params)) == ["done after 1 steps"]
    assert notes == ["notifications/progress", "notifications/message"]
    first, second, third = recorder.requests[:3]
    assert (first.method, first.path, first.status) == ("POST", "/sse", 405)
    assert (second.method, second.path, second.status) == ("GET", "/sse", 200)
    assert (third.method, third.path, third.status) == ("POST", "/messages/", 202)


async def test_legacy_can_be_asked_for_up_front(servers: Servers) -> None:
    url, _ = servers.get("legacy")
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url, legacy=True, protocol_version="2024-11-05") as client:
            assert client.protocol_version == "2024-11-05"
            assert texts(await client.call_tool("multiply", {"a": 2, "b": 21})) == ["42"]
