"""The HTTP client transport against a scripted server (a bare ASGI app under real uvicorn).

The scripted server records every request it gets (method, target, headers, body, the client's port,
the time) and lets each test decide the answers, so the wire behaviour the MCP transport rules ask
of a client can be checked exactly: headers, session handling, event streams and their resumption,
error statuses, the legacy fallback, connection reuse. The interop tests drive the official SDK's
server instead.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import orjson
import pytest

from jsonrpc_mcp import Client, Context, JsonRpcError, Server
from jsonrpc_mcp.jsonrpc import ConnectionClosed, RequestTimeout
from jsonrpc_mcp.transports.http import HttpClientStream, connect_http
from jsonrpc_mcp.transports.http._pool import split_url
from jsonrpc_mcp.transports.sse import encode_event
from tests import timeouts
from tests.interop.servers.sdk_http_serving import ThreadedServer, listening_socket

pytestmark = pytest.mark.anyio

TIMEOUT = timeouts.STEP
Scope = dict[str, Any]
Message = dict[str, Any]


# -- the scripted server --------------------------------------------------------------------------
@dataclass
class Seen:
    """One request as the server saw it."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    port: int  # the client's port: one per connection
    at: float
    disconnected: threading.Event = field(default_factory=threading.Event)

    def message(self) -> Any:
        return orjson.loads(self.body)

    @property
    def rpc_method(self) -> str | None:
        parsed = self.message() if self.body else None
        return parsed.get("method") if isinstance(parsed, dict) else None


class Reply:
    """How a handler answers (ASGI ``send``), and notices the client leaving (ASGI ``receive``)."""

    def __init__(
        self,
        seen: Seen,
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ):
        self.seen = seen
        self._receive = receive
        self._send = send

    async def start(self, status: int, headers: Sequence[tuple[str, str]] = ()) -> None:
        await self._send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(name.encode(), value.encode()) for name, value in headers],
            }
        )

    async def body(self, data: bytes, *, more: bool = False) -> None:
        await self._send({"type": "http.response.body", "body": data, "more_body": more})

    async def json(self, payload: Any, status: int = 200, headers: Sequence[tuple[str, str]] = ()) -> None:
        data = payload if isinstance(payload, bytes) else orjson.dumps(payload)
        await self.start(status, [("content-type", "application/json"), *headers])
        await self.body(data)

    async def empty(self, status: int = 202, headers: Sequence[tuple[str, str]] = ()) -> None:
        await self.start(status, headers)
        await self.body(b"")

    async def text(self, status: int, text: str) -> None:
        await self.start(status, [("content-type", "text/plain")])
        await self.body(text.encode())

    async def open_stream(self, headers: Sequence[tuple[str, str]] = ()) -> None:
        await self.start(
            200, [("content-type", "text/event-stream"), ("cache-control", "no-cache"), *headers]
        )

    async def event(self, payload: Any = None, *, raw: bytes | None = None, **fields: Any) -> None:
        data = (
            raw
            if raw is not None
            else encode_event(orjson.dumps(payload) if payload is not None else b"", **fields)
        )
        await self.body(data, more=True)

    async def wait_disconnect(self) -> None:
        while (await self._receive())["type"] != "http.disconnect":
            pass
        self.seen.disconnected.set()


Handler = Callable[[Seen, Reply], Awaitable[None]]


class Script:
    """The ASGI app: records each request, then hands it to ``handler``."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.seen: list[Seen] = []
        self.handler: Handler | None = None

    def reset(self, handler: Handler) -> None:
        with self.cond:
            self.seen = []
        self.handler = handler

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Message]], send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        target = scope["path"] + ("?" + scope["query_string"].decode() if scope["query_string"] else "")
        headers = {name.decode().lower(): value.decode() for name, value in scope["headers"]}
        seen = Seen(scope["method"], target, headers, body, scope["client"][1], time.monotonic())
        with self.cond:
            self.seen.append(seen)
            self.cond.notify_all()
        assert self.handler is not None
        await self.handler(seen, Reply(seen, receive, send))

    def requests(self, method: str | None = None, rpc: str | None = None) -> list[Seen]:
        with self.cond:
            return [
                s
                for s in self.seen
                if (method is None or s.method == method) and (rpc is None or s.rpc_method == rpc)
            ]

    async def wait_for(self, predicate: Callable[[Seen], bool], timeout: float = TIMEOUT) -> Seen:
        """The first request matching ``predicate``, waiting (bounded) for it to arrive."""

        def wait() -> Seen | None:
            with self.cond:
                self.cond.wait_for(lambda: any(predicate(s) for s in self.seen), timeout)
                return next((s for s in self.seen if predicate(s)), None)

        found = await anyio.to_thread.run_sync(wait)
        assert found is not None, "the server never saw the expected request"
        return found


class FakeMcp:
    """A scripted Streamable HTTP server: ``initialize`` mints a session (``s1``, ``s2``, ...);
    notifications and responses get 202; requests are answered by ``on_request`` (default: JSON
    ``{"echo": params}``); unknown sessions get 404; GET is ``on_get`` (default 405); DELETE ends
    the session. Tests replace the hooks."""

    def __init__(self, *, version: str | None = None) -> None:
        self.version = version
        self.live: set[str] = set()
        self.minted = 0
        self.state: dict[str, Any] = {}  # for handlers (lives on the server's loop)
        self.on_request: Callable[[Seen, dict[str, Any], Reply], Awaitable[None]] = self.echo
        self.on_get: Handler = self.no_get
        self.on_initialize: Callable[[Seen, dict[str, Any], Reply], Awaitable[None]] = self.initialize

    async def __call__(self, seen: Seen, reply: Reply) -> None:
        if seen.method == "GET":
            await self.on_get(seen, reply)
            return
        session = seen.headers.get("mcp-session-id", "")
        if seen.method == "DELETE":
            self.live.discard(session)
            await reply.empty(200)
            return
        message = seen.message()
        if isinstance(message, dict) and message.get("method") == "initialize":
            await self.on_initialize(seen, message, reply)
            return
        if session not in self.live:
            error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}
            await reply.json(error, status=404)
            return
        items = message if isinstance(message, list) else [message]
        if not any("method" in item and "id" in item for item in items):
            await reply.empty(202)
            return
        await self.on_request(seen, message, reply)

    async def initialize(self, seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        self.minted += 1
        session = f"s{self.minted}"
        self.live.add(session)
        await reply.json(self.init_response(message), headers=[("mcp-session-id", session)])

    def init_response(self, message: dict[str, Any]) -> dict[str, Any]:
        result = {
            "protocolVersion": self.version or message["params"]["protocolVersion"],
            "capabilities": {},
            "serverInfo": {"name": "scripted", "version": str(self.minted)},
        }
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    async def echo(self, seen: Seen, message: Any, reply: Reply) -> None:
        if isinstance(message, list):
            await reply.json(
                [{"jsonrpc": "2.0", "id": m["id"], "result": {"echo": m.get("params")}} for m in message]
            )
        else:
            await reply.json(
                {"jsonrpc": "2.0", "id": message["id"], "result": {"echo": message.get("params")}}
            )

    async def no_get(self, seen: Seen, reply: Reply) -> None:
        await reply.empty(405, [("allow", "POST, DELETE")])


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[ThreadedServer, Script]]:
    script = Script()
    with ThreadedServer(script) as running:
        yield running, script


@pytest.fixture
def fake(server: tuple[ThreadedServer, Script]) -> FakeMcp:
    fake = FakeMcp()
    server[1].reset(fake)
    return fake


@pytest.fixture
def script(server: tuple[ThreadedServer, Script], fake: FakeMcp) -> Script:
    return server[1]


@pytest.fixture
def url(server: tuple[ThreadedServer, Script]) -> str:
    return server[0].url("/mcp")


def connect(url: str, **options: Any) -> Any:
    options.setdefault("request_timeout", TIMEOUT)
    options.setdefault("timeout", TIMEOUT)
    return Client.http(url, **options)


@pytest.fixture
async def client(url: str, fake: FakeMcp) -> AsyncIterator[Client]:
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as connected:
            yield connected


# -- URLs -----------------------------------------------------------------------------------------
def test_urls_give_origin_host_header_and_target() -> None:
    origin, target = split_url("https://Example.com/a/b?x=1")
    assert (origin.scheme, origin.host, origin.port, origin.host_header) == (
        "https",
        "example.com",
        443,
        b"example.com",
    )
    assert target == b"/a/b?x=1"
    origin, target = split_url("http://[::1]:8080")
    assert (origin.host, origin.port, origin.host_header, target) == ("::1", 8080, b"[::1]:8080", b"/")


def test_a_non_http_url_is_refused() -> None:
    with pytest.raises(ValueError):
        HttpClientStream("ws://127.0.0.1/mcp")


# -- headers and the session ----------------------------------------------------------------------
async def test_posts_accept_json_and_event_streams_and_carry_json(client: Client, script: Script) -> None:
    with anyio.fail_after(TIMEOUT):
        await client.request("echo", {"x": 1})
    posts = script.requests("POST")
    assert [post.rpc_method for post in posts] == ["initialize", "notifications/initialized", "echo"]
    for post in posts:
        accepted = {part.strip() for part in post.headers["accept"].split(",")}
        assert {"application/json", "text/event-stream"} <= accepted
        assert post.headers["content-type"] == "application/json"


async def test_the_session_id_is_sent_on_every_request_after_initialize(
    client: Client, script: Script
) -> None:
    with anyio.fail_after(TIMEOUT):
        await client.request("echo")
    init, *later = script.requests()
    assert "mcp-session-id" not in init.headers
    assert later
    assert all(request.headers.get("mcp-session-id") == "s1" for request in later)


async def test_the_negotiated_protocol_version_is_sent_after_initialize(
    url: str, fake: FakeMcp, script: Script
) -> None:
    fake.version = "2025-06-18"  # the server picks an older revision than the client asked for
    with anyio.fail_after(TIMEOUT):
        async with connect(url, protocol_version="2025-11-25") as client:
            await client.request("echo")
    init, *later = script.requests()
    assert "mcp-protocol-version" not in init.headers
    assert [request.headers.get("mcp-protocol-version") for request in later] == ["2025-06-18"] * len(later)


async def test_custom_headers_go_on_every_request(url: str, fake: FakeMcp, script: Script) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url, headers={"Authorization": "Bearer t0k3n"}) as client:
            await client.request("echo")
    assert {request.headers.get("authorization") for request in script.requests()} == {"Bearer t0k3n"}


async def test_closing_deletes_the_session(url: str, fake: FakeMcp, script: Script) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url):
            pass
    last = script.requests()[-1]
    assert (last.method, last.target, last.headers.get("mcp-session-id")) == ("DELETE", "/mcp", "s1")
    assert fake.live == set()


async def test_nothing_of_a_session_reaches_the_server_after_its_delete(
    url: str, fake: FakeMcp, script: Script
) -> None:
    """Closing stops the GET stream before it sends DELETE: a GET racing the DELETE would meet a
    deleted session (repeated: the race, when there was one, lost only now and then)."""
    with anyio.fail_after(TIMEOUT):
        for _ in range(20):
            async with connect(url):
                pass
    methods: dict[str, list[str]] = {}
    for request in script.requests():
        session = request.headers.get("mcp-session-id")
        if session is not None:
            methods.setdefault(session, []).append(request.method)
    assert len(methods) == 20
    for session, sent in methods.items():
        assert sent[-1] == "DELETE" and sent.count("DELETE") == 1, (session, sent)
    assert fake.live == set()


async def test_a_refused_delete_does_not_disturb_closing(url: str, fake: FakeMcp, script: Script) -> None:
    async def refuse(seen: Seen, reply: Reply) -> None:
        if seen.method == "DELETE":
            await reply.empty(405)
        else:
            await fake(seen, reply)

    script.handler = refuse
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            assert await client.request("echo", [1]) == {"echo": [1]}
    assert script.requests()[-1].method == "DELETE"


async def test_an_invalid_session_id_fails_the_handshake(url: str, fake: FakeMcp) -> None:
    async def bad_session(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        await reply.json(fake.init_response(message), headers=[("mcp-session-id", "has space")])

    fake.on_initialize = bad_session
    with anyio.fail_after(TIMEOUT), pytest.raises(JsonRpcError, match="Mcp-Session-Id"):
        async with connect(url):
            pass


async def test_a_server_without_sessions_gets_no_session_header_or_delete(
    url: str, fake: FakeMcp, script: Script
) -> None:
    async def sessionless(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        fake.live.add("")  # requests without a session are fine
        await reply.json(fake.init_response(message))

    fake.on_initialize = sessionless
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            await client.request("echo")
    assert all("mcp-session-id" not in request.headers for request in script.requests())
    assert script.requests("DELETE") == []


# -- answers --------------------------------------------------------------------------------------
async def test_a_json_answer_is_the_result(client: Client) -> None:
    with anyio.fail_after(TIMEOUT):
        assert await client.request("echo", {"a": [1, 2]}) == {"echo": {"a": [1, 2]}}


async def test_a_json_array_answer_to_a_batch_is_split_into_messages(url: str, fake: FakeMcp) -> None:
    fake.live.add("")
    with anyio.fail_after(TIMEOUT):
        async with connect_http(url, get_stream=False) as stream:
            await stream.send(
                b'[{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]},'
                b'{"jsonrpc":"2.0","id":2,"method":"echo","params":[2]}]'
            )
            answers = [orjson.loads(await stream.receive()) for _ in range(2)]
    assert sorted((a["id"], a["result"]) for a in answers) == [(1, {"echo": [1]}), (2, {"echo": [2]})]


async def test_an_event_stream_answer_delivers_notifications_before_the_result(
    url: str, fake: FakeMcp
) -> None:
    async def streamed(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        await reply.open_stream()
        await reply.event(raw=b": a comment\r\n\r\n")
        for step in (1, 2):
            note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": step}}
            await reply.event(raw=b"event: message\r\ndata: " + orjson.dumps(note) + b"\r\n\r\n")
        # a message split over two data lines (the newline is JSON whitespace) and two chunks
        await reply.event(raw=b'data: {"jsonrpc":"2.0",\rdata: "id":' + str(message["id"]).encode())
        await reply.event(raw=b',"result":{"done":true}}\r\r')
        await reply.body(b"")

    fake.on_request = streamed
    received: list[tuple[str, Any]] = []
    with anyio.fail_after(TIMEOUT):
        async with connect(
            url, on_notification=lambda method, params: received.append((method, params))
        ) as client:
            assert await client.request("work") == {"done": True}
            assert received == [
                ("notifications/progress", {"progress": 1}),
                ("notifications/progress", {"progress": 2}),
            ]


async def test_a_server_request_on_a_post_stream_is_answered_by_post(
    url: str, fake: FakeMcp, script: Script
) -> None:
    async def asks_back(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        await reply.open_stream()
        await reply.event({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
        await script.wait_for(lambda s: s.body.startswith(b'{"jsonrpc":"2.0","id":"srv-1"'))
        await reply.event({"jsonrpc": "2.0", "id": message["id"], "result": {"pinged": True}})
        await reply.body(b"")

    fake.on_request = asks_back
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            assert await client.request("work") == {"pinged": True}
    (answer,) = [s for s in script.requests("POST") if s.body.startswith(b'{"jsonrpc":"2.0","id":"srv-1"')]
    assert answer.message() == {"jsonrpc": "2.0", "id": "srv-1", "result": {}}
    assert answer.headers["mcp-session-id"] == "s1"


async def test_a_notification_is_sent_and_acknowledged_with_202(client: Client, script: Script) -> None:
    with anyio.fail_after(TIMEOUT):
        await client.notify("notifications/roots/list_changed")
    assert script.requests("POST")[-1].rpc_method == "notifications/roots/list_changed"


# -- errors ---------------------------------------------------------------------------------------
async def test_a_jsonrpc_error_body_with_a_null_id_becomes_that_error_for_the_request(
    url: str, fake: FakeMcp
) -> None:
    async def refuse(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        error = {"code": -32001, "message": "Not today", "data": {"why": "tired"}}
        await reply.json({"jsonrpc": "2.0", "id": None, "error": error}, status=400)

    fake.on_request = refuse
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            with pytest.raises(JsonRpcError) as caught:
                await client.request("work")
    assert (caught.value.code, caught.value.message, caught.value.data) == (
        -32001,
        "Not today",
        {"why": "tired"},
    )


@pytest.mark.parametrize(("status", "code"), [(500, -32603), (503, -32603), (403, -32600), (422, -32600)])
async def test_an_error_status_without_a_jsonrpc_body_names_the_status(
    url: str, fake: FakeMcp, status: int, code: int
) -> None:
    async def fail(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        await reply.text(status, "it broke")

    fake.on_request = fail
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            with pytest.raises(JsonRpcError) as caught:
                await client.request("work")
    assert caught.value.code == code
    assert caught.value.message.startswith(f"HTTP {status}")
    assert "it broke" in caught.value.message
    assert caught.value.data == {"httpStatus": status}


async def test_a_202_for_a_request_is_an_error_not_a_hang(url: str, fake: FakeMcp) -> None:
    async def accept_only(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        await reply.empty(202)

    fake.on_request = accept_only
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            with pytest.raises(JsonRpcError, match="HTTP 202"):
                await client.request("work")


async def test_an_event_stream_that_ends_without_the_response_fails_the_request(
    url: str, fake: FakeMcp
) -> None:
    async def hang_up(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        if message["method"] != "work":
            await fake.echo(seen, message, reply)
            return
        await reply.open_stream()
        await reply.event({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "bye"}})
        await reply.body(b"")

    fake.on_request = hang_up
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            with pytest.raises(JsonRpcError, match="ended before"):
                await client.request("work")
            assert await client.request("echo") == {"echo": None}  # the connection is still good


async def test_an_unreachable_server_fails_the_handshake_promptly() -> None:
    sock = listening_socket()
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    with anyio.fail_after(TIMEOUT), pytest.raises(JsonRpcError, match="HTTP transport error"):
        async with connect(f"http://127.0.0.1:{port}/mcp", timeout=2):
            pass


async def test_a_request_without_an_answer_fails_after_the_read_timeout(url: str, fake: FakeMcp) -> None:
    async def never(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        await reply.wait_disconnect()

    fake.on_request = never
    with anyio.fail_after(TIMEOUT):
        async with connect(url, read_timeout=0.3) as client:
            with pytest.raises(JsonRpcError, match="TimeoutError"):
                await client.request("work")


async def test_a_cancelled_request_abandons_its_http_exchange(
    url: str, fake: FakeMcp, script: Script
) -> None:
    async def never(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        await reply.wait_disconnect()

    fake.on_request = never
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            with pytest.raises(RequestTimeout):
                await client.request("work", timeout=0.2)
            hung = script.requests("POST", rpc="work")[0]
            assert await anyio.to_thread.run_sync(hung.disconnected.wait, TIMEOUT)
            cancel = script.requests("POST", rpc="notifications/cancelled")[0]
            assert cancel.message()["params"]["requestId"] == hung.message()["id"]


# -- connections ----------------------------------------------------------------------------------
async def test_sequential_requests_reuse_one_keep_alive_connection(
    url: str, fake: FakeMcp, script: Script
) -> None:
    # (no GET stream: it would borrow a pooled connection concurrently, legitimately adding one)
    with anyio.fail_after(TIMEOUT):
        async with connect(url, transport_options={"get_stream": False}) as client:
            for n in range(5):
                await client.request("echo", [n])
    assert len(script.requests("POST")) == 7
    assert len({request.port for request in script.requests()}) == 1  # the DELETE too


async def test_concurrent_requests_are_in_flight_together_on_separate_connections(
    url: str, fake: FakeMcp, script: Script
) -> None:
    async def rendezvous(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        # Nobody is answered until all three requests have arrived: a client that sent them one
        # at a time would never finish.
        await script.wait_for(lambda s: len([r for r in script.seen if r.rpc_method == "meet"]) == 3)
        await fake.echo(seen, message, reply)

    fake.on_request = rendezvous
    results: list[Any] = []
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:

            async def meet(n: int) -> None:
                results.append(await client.request("meet", [n]))

            async with anyio.create_task_group() as tg:
                for n in range(3):
                    tg.start_soon(meet, n)
    assert sorted(result["echo"][0] for result in results) == [0, 1, 2]
    assert len({post.port for post in script.requests("POST", rpc="meet")}) == 3


async def test_connections_the_server_closed_while_idle_are_replaced() -> None:
    # This server closes every kept-alive connection as soon as it is idle: each pooled connection
    # is found dead (closed while idle, or failing on first use, then retried on a new one).
    script, fake = Script(), FakeMcp()
    script.reset(fake)
    with ThreadedServer(script, timeout_keep_alive=0) as server:
        with anyio.fail_after(TIMEOUT):
            async with connect(server.url(), transport_options={"get_stream": False}) as client:
                for n in range(20):
                    assert await client.request("echo", [n]) == {"echo": [n]}
    assert len(script.requests("POST", rpc="echo")) == 20  # each sent once: no duplicates
    assert len({request.port for request in script.requests()}) > 1


# -- re-initialization ----------------------------------------------------------------------------
async def test_an_expired_session_is_reinitialized_and_the_request_resent(
    url: str, fake: FakeMcp, script: Script
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            assert await client.request("echo", [1]) == {"echo": [1]}
            fake.live.clear()  # the server forgets the session
            assert await client.request("echo", [2]) == {"echo": [2]}
            assert await client.request("echo", [3]) == {"echo": [3]}
    inits = script.requests("POST", rpc="initialize")
    assert len(inits) == 2
    assert inits[1].body == inits[0].body  # the stored handshake, replayed verbatim
    assert "mcp-session-id" not in inits[1].headers
    assert len(script.requests("POST", rpc="notifications/initialized")) == 2
    echoes = [
        (s.message()["params"], s.headers["mcp-session-id"]) for s in script.requests("POST", rpc="echo")
    ]
    assert echoes == [([1], "s1"), ([2], "s1"), ([2], "s2"), ([3], "s2")]
    assert script.requests()[-1].headers.get("mcp-session-id") == "s2"  # the DELETE


async def test_concurrent_requests_that_hit_an_expired_session_reinitialize_once(
    url: str, fake: FakeMcp, script: Script
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            fake.live.clear()
            async with anyio.create_task_group() as tg:
                for n in range(4):
                    tg.start_soon(client.request, "echo", [n])
    assert len(script.requests("POST", rpc="initialize")) == 2


async def test_when_reinitialization_fails_the_request_gets_the_404_error(
    url: str, fake: FakeMcp, script: Script
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:

            async def refuse(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
                await reply.text(503, "maintenance")

            fake.on_initialize = refuse
            fake.live.clear()
            with pytest.raises(JsonRpcError) as caught:
                await client.request("echo")
    assert (caught.value.code, caught.value.message) == (-32600, "Session not found")


async def test_a_failed_reinitialization_is_tried_again_by_the_next_request(
    url: str, fake: FakeMcp, script: Script
) -> None:
    down = {"yes": True}

    async def flaky(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        if down["yes"]:
            await reply.text(503, "restarting")
        else:
            await fake.initialize(seen, message, reply)

    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            fake.on_initialize = flaky
            fake.live.clear()
            with pytest.raises(JsonRpcError):
                await client.request("echo", [1])
            down["yes"] = False
            assert await client.request("echo", [2]) == {"echo": [2]}
    assert [s.headers.get("mcp-session-id") for s in script.requests("POST", rpc="echo")] == [
        "s1",
        "s1",
        "s2",
    ]


async def test_a_session_given_up_front_is_used_and_a_404_without_a_handshake_is_an_error(
    url: str, fake: FakeMcp, script: Script
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url, initialize=False, transport_options={"session_id": "unknown"}) as client:
            with pytest.raises(JsonRpcError, match="Session not found"):
                await client.request("echo")
    assert script.requests("POST")[0].headers["mcp-session-id"] == "unknown"
    assert script.requests("POST", rpc="initialize") == []


# -- resumability ---------------------------------------------------------------------------------
def resumable_handler(
    fake: FakeMcp, *, abrupt: bool, retry: int = 300
) -> Callable[[Seen, dict[str, Any], Reply], Awaitable[None]]:
    async def drop_then_resume(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        fake.state["request"] = message
        await reply.open_stream()
        await reply.event(id="e1", retry=retry)  # the priming event
        await reply.event(
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}, id="e2"
        )
        fake.state["dropped_at"] = time.monotonic()
        if abrupt:
            raise RuntimeError("the scripted server drops the connection")
        await reply.body(b"")

    return drop_then_resume


async def resume_on_get(fake: FakeMcp, seen: Seen, reply: Reply) -> None:
    if seen.headers.get("last-event-id") != "e2":
        await reply.empty(405)
        return
    await reply.open_stream()
    await reply.event(
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 2}}, id="e3"
    )
    await reply.event(
        {"jsonrpc": "2.0", "id": fake.state["request"]["id"], "result": {"resumed": True}}, id="e4"
    )
    await reply.body(b"")


@pytest.mark.parametrize("abrupt", [False, True], ids=["server-closed", "connection-dropped"])
async def test_a_post_stream_that_drops_is_resumed_with_last_event_id_after_retry(
    url: str, fake: FakeMcp, script: Script, abrupt: bool
) -> None:
    fake.on_request = resumable_handler(fake, abrupt=abrupt, retry=300)
    fake.on_get = lambda seen, reply: resume_on_get(fake, seen, reply)
    progress: list[Any] = []
    with anyio.fail_after(TIMEOUT):
        async with connect(
            url, on_notification=lambda method, params: progress.append(params["progress"])
        ) as client:
            assert await client.request("work") == {"resumed": True}
    assert progress == [1, 2]
    resume = [s for s in script.requests("GET") if "last-event-id" in s.headers]
    assert [s.headers["last-event-id"] for s in resume] == ["e2"]
    assert resume[0].headers["mcp-session-id"] == "s1"
    assert resume[0].at - fake.state["dropped_at"] >= 0.25  # the server's retry (300 ms) was honoured


async def test_a_post_stream_is_resumed_again_when_the_resumed_stream_drops(
    url: str, fake: FakeMcp, script: Script
) -> None:
    fake.on_request = resumable_handler(fake, abrupt=False, retry=10)

    async def resume_in_two_steps(seen: Seen, reply: Reply) -> None:
        last = seen.headers.get("last-event-id")
        if last is None:  # the standalone GET stream: none here (else it might carry the answer)
            await reply.empty(405)
            return
        await reply.open_stream()
        if last == "e2":
            await reply.event(
                {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 2}}, id="e3"
            )
        else:
            await reply.event(
                {"jsonrpc": "2.0", "id": fake.state["request"]["id"], "result": "finally"}, id="e4"
            )
        await reply.body(b"")

    fake.on_get = resume_in_two_steps
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            assert await client.request("work") == "finally"
    assert [
        s.headers.get("last-event-id") for s in script.requests("GET") if "last-event-id" in s.headers
    ] == ["e2", "e3"]


async def test_a_refused_resumption_fails_the_request(url: str, fake: FakeMcp) -> None:
    fake.on_request = resumable_handler(fake, abrupt=True, retry=10)  # and GET is always 405
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            with pytest.raises(JsonRpcError, match="would not resume"):
                await client.request("work")


# -- the standalone GET stream --------------------------------------------------------------------
async def test_the_get_stream_is_opened_after_initialization_and_delivers_server_messages(
    url: str, fake: FakeMcp, script: Script
) -> None:
    async def notifying(seen: Seen, reply: Reply) -> None:
        await reply.open_stream()
        await reply.event({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}, id="g1")
        await reply.wait_disconnect()

    fake.on_get = notifying
    got = anyio.Event()
    with anyio.fail_after(TIMEOUT):
        async with connect(url, on_notification=lambda method, params: got.set()):
            await got.wait()
    (get,) = script.requests("GET")
    assert get.headers["accept"] == "text/event-stream"
    assert get.headers["mcp-session-id"] == "s1"
    assert get.headers["mcp-protocol-version"] == "2025-11-25"
    assert get.at > script.requests("POST", rpc="notifications/initialized")[0].at
    assert get.disconnected.is_set() or await anyio.to_thread.run_sync(get.disconnected.wait, TIMEOUT)


async def test_a_get_stream_answered_405_is_not_retried(url: str, fake: FakeMcp, script: Script) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            await script.wait_for(lambda s: s.method == "GET")
            await client.request("echo")  # (later traffic does not reopen it)
    assert len(script.requests("GET")) == 1


async def test_a_dropped_get_stream_is_resumed_with_last_event_id(
    url: str, fake: FakeMcp, script: Script
) -> None:
    async def two_part_stream(seen: Seen, reply: Reply) -> None:
        await reply.open_stream()
        if "last-event-id" not in seen.headers:
            await reply.event(retry=20)
            await reply.event({"jsonrpc": "2.0", "method": "notifications/first"}, id="g1")
            raise RuntimeError("the scripted server drops the GET stream")
        await reply.event({"jsonrpc": "2.0", "method": "notifications/second"}, id="g2")
        await reply.wait_disconnect()

    fake.on_get = two_part_stream
    methods: list[str] = []
    second = anyio.Event()

    def on_notification(method: str, params: Any) -> None:
        methods.append(method)
        if method == "notifications/second":
            second.set()

    with anyio.fail_after(TIMEOUT):
        async with connect(url, on_notification=on_notification):
            await second.wait()
    assert methods == ["notifications/first", "notifications/second"]
    assert [s.headers.get("last-event-id") for s in script.requests("GET")] == [None, "g1"]


async def test_a_server_request_on_the_get_stream_is_answered(
    url: str, fake: FakeMcp, script: Script
) -> None:
    async def asking(seen: Seen, reply: Reply) -> None:
        await reply.open_stream()
        await reply.event({"jsonrpc": "2.0", "id": 77, "method": "roots/list"})
        await reply.wait_disconnect()

    async def roots(params: Any) -> dict[str, Any]:
        return {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}

    fake.on_get = asking
    with anyio.fail_after(TIMEOUT):
        async with connect(url, request_handlers={"roots/list": roots}):
            answer = await script.wait_for(
                lambda s: s.method == "POST" and s.body.startswith(b'{"jsonrpc":"2.0","id":77')
            )
    assert answer.message()["result"] == {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}


# -- legacy HTTP+SSE ------------------------------------------------------------------------------
def legacy_server(fake: FakeMcp, endpoint: str = "messages?sid=7") -> Handler:
    """A 2024-11-05 server at the same URL: POST there is 405; GET is the event stream whose first
    event names the message endpoint; replies to POSTed messages travel on that stream."""

    async def handler(seen: Seen, reply: Reply) -> None:
        if seen.method == "GET" and seen.target == "/mcp":
            send, receive = anyio.create_memory_object_stream[bytes](math.inf)
            fake.state["stream"] = send
            await reply.open_stream()
            await reply.event(raw=b"event: endpoint\ndata: " + endpoint.encode() + b"\n\n")
            async with anyio.create_task_group() as tg:

                async def forward() -> None:
                    async for data in receive:
                        await reply.event(raw=b"event: message\ndata: " + data + b"\n\n")
                    await reply.body(b"")  # the server ends the stream

                tg.start_soon(forward)
                await reply.wait_disconnect()
                tg.cancel_scope.cancel()
        elif seen.method == "POST" and seen.target == "/messages?sid=7":
            await reply.text(202, "Accepted")
            message = seen.message()
            if message.get("method") == "initialize":
                answer = fake.init_response(message)
            elif "id" in message and "method" in message:
                answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"legacy": message.get("params")}}
            else:
                return
            if message.get("method") == "bye":
                await fake.state["stream"].aclose()
            else:
                await fake.state["stream"].send(orjson.dumps(answer))
        else:
            await reply.empty(405)

    return handler


async def test_a_405_to_initialize_falls_back_to_legacy_http_sse(
    url: str, fake: FakeMcp, script: Script
) -> None:
    script.handler = legacy_server(fake)
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            assert client.server_info["name"] == "scripted"
            assert await client.request("echo", [5]) == {"legacy": [5]}
            assert isinstance(client._stream, HttpClientStream)
            assert client._stream.mode == "legacy"
    first_post, get, *posts = script.requests()
    assert (first_post.method, first_post.target, first_post.rpc_method) == ("POST", "/mcp", "initialize")
    assert (get.method, get.headers["accept"]) == ("GET", "text/event-stream")
    assert [(p.method, p.target, p.rpc_method) for p in posts] == [
        ("POST", "/messages?sid=7", "initialize"),
        ("POST", "/messages?sid=7", "notifications/initialized"),
        ("POST", "/messages?sid=7", "echo"),
    ]
    assert all("mcp-protocol-version" not in p.headers and "mcp-session-id" not in p.headers for p in posts)
    assert script.requests("DELETE") == []


async def test_legacy_can_be_chosen_up_front(url: str, fake: FakeMcp, script: Script) -> None:
    script.handler = legacy_server(fake)
    with anyio.fail_after(TIMEOUT):
        async with connect(url, legacy=True) as client:
            assert await client.request("echo") == {"legacy": None}
    assert script.requests()[0].method == "GET"


async def test_a_legacy_endpoint_on_another_origin_is_refused(
    url: str, fake: FakeMcp, script: Script
) -> None:
    script.handler = legacy_server(fake, endpoint="http://evil.example/messages?sid=7")
    with anyio.fail_after(TIMEOUT), pytest.raises(JsonRpcError, match="HTTP 405"):
        async with connect(url):
            pass
    assert [s.target for s in script.requests()] == ["/mcp", "/mcp"]  # the POST, the GET; nothing else


async def test_no_fallback_when_it_is_turned_off(url: str, fake: FakeMcp, script: Script) -> None:
    script.handler = legacy_server(fake)
    with anyio.fail_after(TIMEOUT), pytest.raises(JsonRpcError, match="HTTP 405"):
        async with connect(url, fallback=False):
            pass
    assert [s.method for s in script.requests()] == ["POST"]


async def test_the_end_of_the_legacy_stream_ends_the_connection(
    url: str, fake: FakeMcp, script: Script
) -> None:
    script.handler = legacy_server(fake)
    with anyio.fail_after(TIMEOUT):
        async with connect(url, legacy=True) as client:
            with pytest.raises(ConnectionClosed):
                await client.request("bye")  # the server ends the event stream instead of answering


# -- our client against our own server (jsonrpc_mcp.http.McpHttpApp) -----------------------------
def our_server() -> Server:
    server = Server("ours-over-http", "1.2.3")

    @server.tool()
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    @server.tool()
    async def count(steps: int, ctx: Context) -> str:
        """Report progress per step, then answer."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps)
        return f"counted {steps}"

    @server.tool()
    async def ask_roots(ctx: Context) -> Any:
        """Ask the client for its roots."""
        return await ctx.send_request("roots/list", {}, timeout=TIMEOUT)

    return server


@pytest.fixture(scope="module")
def ours() -> Iterator[dict[str, str]]:
    """Our server in three modes: SSE answers, JSON answers, stateless (each under uvicorn)."""
    apps = {
        "sse": our_server().http_app(),
        "json": our_server().http_app(json_response=True),
        "stateless": our_server().http_app(stateless=True),
    }
    with contextlib.ExitStack() as stack:
        yield {kind: stack.enter_context(ThreadedServer(app)).url("/mcp") for kind, app in apps.items()}


async def test_ours_handshake_tools_and_session_end(ours: dict[str, str]) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(ours["sse"]) as client:
            assert client.server_info == {"name": "ours-over-http", "version": "1.2.3"}
            assert [tool["name"] for tool in await client.list_tools()] == ["add", "count", "ask_roots"]
            assert (await client.call_tool("add", {"a": 2, "b": 3}))["content"] == [
                {"type": "text", "text": "5"}
            ]
            stream = client._stream
            assert isinstance(stream, HttpClientStream)
            session = stream.session_id
        assert session is not None
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            gone = await http.post(
                ours["sse"],
                content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                headers={
                    "content-type": "application/json",
                    "accept": "application/json, text/event-stream",
                    "mcp-session-id": session,
                    "mcp-protocol-version": "2025-11-25",
                },
            )
    assert gone.status_code == 404  # the client ended it with DELETE


async def test_ours_progress_arrives_before_the_result(ours: dict[str, str]) -> None:
    progress: list[Any] = []
    with anyio.fail_after(TIMEOUT):
        async with connect(
            ours["sse"], on_notification=lambda method, params: progress.append(params["progress"])
        ) as client:
            result = await client.request(
                "tools/call", {"name": "count", "arguments": {"steps": 3}, "_meta": {"progressToken": 9}}
            )
            assert progress == [1, 2, 3]
    assert result["content"] == [{"type": "text", "text": "counted 3"}]


@pytest.mark.parametrize("kind", ["sse", "json"])
async def test_ours_server_request_is_answered(ours: dict[str, str], kind: str) -> None:
    async def roots(params: Any) -> dict[str, Any]:
        return {"roots": [{"uri": "file:///x", "name": "x"}]}

    with anyio.fail_after(TIMEOUT):
        async with connect(ours[kind], request_handlers={"roots/list": roots}) as client:
            result = await client.call_tool("ask_roots", {})
    assert orjson.loads(result["content"][0]["text"]) == {"roots": [{"uri": "file:///x", "name": "x"}]}


@pytest.mark.parametrize("kind", ["sse", "json"])
async def test_ours_session_deleted_behind_the_clients_back_is_reinitialized(
    ours: dict[str, str], kind: str
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(ours[kind]) as client:
            stream = client._stream
            assert isinstance(stream, HttpClientStream)
            first = stream.session_id
            async with httpx.AsyncClient(timeout=TIMEOUT) as http:
                ended = await http.delete(
                    ours[kind], headers={"mcp-session-id": first or "", "mcp-protocol-version": "2025-11-25"}
                )
            assert ended.status_code < 300
            assert (await client.call_tool("add", {"a": 1, "b": 1}))["content"][0]["text"] == "2"
            assert stream.session_id not in (None, first)


async def test_ours_stateless_mode_needs_no_session(ours: dict[str, str]) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(ours["stateless"]) as client:
            stream = client._stream
            assert isinstance(stream, HttpClientStream)
            assert stream.session_id is None
            assert (await client.call_tool("add", {"a": 20, "b": 22}))["content"][0]["text"] == "42"


@pytest.mark.parametrize("legacy", [False, True], ids=["fallback", "up-front"])
async def test_ours_legacy_sse_endpoint(ours: dict[str, str], legacy: bool) -> None:
    url = ours["sse"].removesuffix("/mcp") + "/sse"
    with anyio.fail_after(TIMEOUT):
        async with connect(url, legacy=legacy) as client:
            stream = client._stream
            assert isinstance(stream, HttpClientStream) and stream.mode == "legacy"
            assert (await client.call_tool("add", {"a": 4, "b": 4}))["content"][0]["text"] == "8"
