"""MCP over HTTP: an ASGI 3 application serving Streamable HTTP and the legacy HTTP+SSE transport.

Theory of operation
-------------------
Each POST body is decoded once and handed to the session's JSON-RPC :class:`Endpoint` with
:meth:`Endpoint.process`, which runs its requests in the POST's own task (each under its own cancel
scope, registered with the peer, so ``notifications/cancelled`` on another POST still cancels it).

How a request is answered is decided lazily by its :class:`_PostChannel`: if the handler only
returns, the result goes back as ``application/json``; the first notification or server-to-client
request the handler sends before its result turns the response into a ``text/event-stream`` scoped
to that request, and the result becomes its last event. Messages not tied to a request (list_changed,
a ping from the server) go to the session's standalone stream, opened by GET.

Every SSE stream of a session is an :class:`EventStream` backed by the session's event store, so a
dropped connection can be resumed with GET + ``Last-Event-ID`` on the same stream only.

Sessions are minted by a successful ``initialize`` (``Mcp-Session-Id``), end on DELETE, on idle
expiry (never while a request is in flight) and on shutdown. In stateless mode there are no sessions:
each POST is served by a fresh session put directly in the ready state for the revision named by
``MCP-Protocol-Version``.

Modern traffic (the stateless revisions, 2026-07-28 on) shares the endpoint: a POST whose
``MCP-Protocol-Version`` names a stateless revision, or whose body's ``_meta`` names a protocol
version, is served on its own: no ``Mcp-Session-Id`` is minted, echoed or required (one sent is
ignored, as is ``Last-Event-ID``), and there are no event ids to resume from. Its metadata headers
are checked against the body first (:mod:`.modern`: 400 and -32020 on any disagreement), then the
request is handed straight to :func:`~jsonrpc_mcp.server.modern.serve_checked` under its own cancel
scope, with a :class:`_ModernCall` as its outbound (no HTTP session, no JSON-RPC endpoint: the hot
path of stateless serving builds one ServerSession and nothing else, and leaves no reference cycle
for the GC). The lazy JSON-vs-SSE choice is the same as above, with three differences: closing the
response (SSE or not) cancels the request; ``subscriptions/listen`` is always answered with SSE,
kept alive with comment lines and ended gracefully (its final result) when the app shuts down; an
error answered as JSON gets the status the revision assigns to its code (-32601: 404; -32020,
-32021, -32022: 400). GET and DELETE naming a stateless revision get 405.

The legacy HTTP+SSE transport (2024-11-05) is a stream transport: GET on the SSE path runs
:meth:`Server.serve` over an in-memory pair whose other end writes SSE events, and POSTs to the message
path push their bodies into it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import anyio
import orjson

from ..errors import CapabilityError
from ..jsonrpc import codec
from ..jsonrpc.endpoint import Endpoint, RequestContext
from ..jsonrpc.errors import InternalError, InvalidParams, JsonRpcError
from ..jsonrpc.messages import ErrorResponse, Incoming, Invalid, Notification, Request, Response
from ..revisions import REVISIONS, Revision
from ..server.modern import CLIENT_CAPABILITIES, MODERN_ONLY, PROTOCOL_VERSION, serve_checked
from ..server.session import MCP_CANCEL, ServerSession, State
from ..transports.http import security
from ..transports.http.auth import AuthSettings, authenticate, prm_paths, protected_resource_metadata
from ..transports.http.security import Decision, TransportSecurity
from ..transports.memory import memory_pair
from ..transports.sse import KEEPALIVE, encode_event
from .events import EventStore, EventStream, InMemoryEventStore
from .modern import HEADER_MISMATCH, check_notification, check_request, mcp_headers

if TYPE_CHECKING:
    from ..server.server import Server

__all__ = ["McpHttpApp"]

logger = logging.getLogger("jsonrpc_mcp.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

JSON = b"application/json"
EVENT_STREAM = b"text/event-stream"
SESSION_HEADER = b"mcp-session-id"
VERSION_HEADER = b"mcp-protocol-version"
DEFAULT_VERSION = "2025-03-26"  # what a request without MCP-Protocol-Version is taken to speak
_BAD_REQUEST = -32600
_WATCH_AFTER = 0.02  # seconds before a modern request's connection is watched for the client leaving
_PARSE_ERROR = -32700
_INTERNAL_ERROR = -32603
LISTEN = "subscriptions/listen"
# the HTTP status of a modern request answered with an error (2026-07-28); other codes: 200
_MODERN_STATUS = {-32700: 400, -32600: 400, -32601: 404, -32020: 400, -32021: 400, -32022: 400}


class _Disconnected(Exception):
    """The client went away while the body was being read."""


def error_body(code: int, message: str) -> bytes:
    """An id-less JSON-RPC error object (the form HTTP errors without a readable request use)."""
    return orjson.dumps({"jsonrpc": "2.0", "error": {"code": code, "message": message}})


_HEADERS_KEY = "jsonrpc_mcp.headers"


def _headers(scope: Scope) -> dict[bytes, bytes]:
    """The request headers by name (the last value of a repeated one), indexed once per request."""
    index: dict[bytes, bytes] | None = scope.get(_HEADERS_KEY)
    if index is None:
        index = scope[_HEADERS_KEY] = dict(scope["headers"])
    return index


def _header(scope: Scope, name: bytes) -> bytes | None:
    """A request header's value (the last one, if repeated)."""
    index: dict[bytes, bytes] | None = scope.get(_HEADERS_KEY)
    value = (_headers(scope) if index is None else index).get(name)
    return value if value is None or type(value) is bytes else bytes(value)


async def _respond(
    send: Send,
    status: int,
    body: bytes = b"",
    headers: Iterable[tuple[bytes, bytes]] = (),
    *,
    json: bool = True,
) -> None:
    out = [(b"content-type", JSON)] if body and json else []
    out.extend(headers)
    out.append((b"content-length", b"%d" % len(body)))
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": body})


async def _error(
    send: Send, status: int, code: int, message: str, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    await _respond(send, status, error_body(code, message), headers)


async def _reject(send: Send, status: int, rid: Any, error: JsonRpcError) -> None:
    """A JSON-RPC error answering request ``rid`` (id-less when None) with an HTTP error status."""
    await _respond(send, status, codec.encode_error(rid, error, omit_null_id=True))


async def _read_body(scope: Scope, receive: Receive, limit: int) -> bytes | None:
    """The request body, or None when it is over ``limit`` bytes."""
    declared = _header(scope, b"content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


_ACCEPTS: dict[tuple[bytes, bytes], bool] = {}


def _accepts(scope: Scope, media: bytes) -> bool:
    accept = _header(scope, b"accept")
    if accept is None:
        return False
    key = (accept, media)
    verdict = _ACCEPTS.get(key)
    if verdict is None:
        verdict = security.accepts([(b"accept", accept)], media.decode())  # q-values and ranges
        if len(_ACCEPTS) < 256:  # clients send few distinct Accept headers; a flood is not cached
            _ACCEPTS[key] = verdict
    return verdict


_JSON_CONTENT: dict[bytes, bool] = {}


def _is_json_content(scope: Scope) -> bool:
    content_type = _header(scope, b"content-type")
    if content_type is None:
        return False
    verdict = _JSON_CONTENT.get(content_type)
    if verdict is None:
        verdict = security.content_type_is_json([(b"content-type", content_type)])
        if len(_JSON_CONTENT) < 256:
            _JSON_CONTENT[content_type] = verdict
    return verdict


class HttpSession:
    """One Streamable HTTP session: the MCP session, its endpoint, its streams and event store."""

    def __init__(self, app: McpHttpApp, session_id: str | None) -> None:
        self.id = session_id
        self.id_header = session_id.encode() if session_id is not None else None  # Mcp-Session-Id value
        self.app = app
        self.mcp = ServerSession(app.server)
        self.store: EventStore | None = app.event_store_factory() if session_id is not None else None
        self.standalone = EventStream("_", self.store)
        self.endpoint = Endpoint(
            None, self.mcp, channel=self, request_timeout=app.server.request_timeout, cancel=MCP_CANCEL
        )
        self.mcp.outbound = self.endpoint
        self.streams: dict[str, EventStream] = {"_": self.standalone}
        self._stream_ids = 0
        self.in_flight = 0
        self.last_active = time.monotonic()
        self.closed = False
        self._notifier: asyncio.Task[None] | None = None

    # the endpoint's default channel: messages not tied to a request go to the standalone stream
    async def send(self, message: bytes) -> None:
        await self.standalone.emit(message)

    def new_stream(self) -> EventStream:
        self._stream_ids += 1
        stream = EventStream(str(self._stream_ids), self.store)
        self.streams[stream.id] = stream
        return stream

    def start(self) -> None:
        """Start the list_changed notifier (asyncio servers; other loops get no list_changed)."""
        self.app.server.attach(self.mcp)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            logger.warning("not on asyncio: list_changed notifications are not sent over HTTP")
            return
        self._notifier = loop.create_task(self.mcp.run_notifier())

    async def close(self) -> None:
        """Free everything: cancel what is in flight, end every stream, drop the stored events."""
        if self.closed:
            return
        self.closed = True
        self.endpoint.cancel_all_incoming()
        if self._notifier is not None:
            self._notifier.cancel()
        self.app.server.detach(self.mcp)
        for stream in self.streams.values():
            stream.close()
        self.streams.clear()
        if self.store is not None:
            await self.store.close()


class _PostChannel:
    """Where a POST's request sends what comes before its answer; starts SSE on first use.

    ``session`` is None for a modern request: its stream has no store and no session to live in."""

    __slots__ = ("_ended", "_send", "app", "extra_headers", "force_sse", "on_open", "session", "stream")

    def __init__(
        self,
        app: McpHttpApp,
        session: HttpSession | None,
        send: Send,
        extra_headers: list[tuple[bytes, bytes]],
    ) -> None:
        self.app = app
        self.session = session
        self._send = send
        self.extra_headers = extra_headers
        self.stream: EventStream | None = None
        self._ended = False  # the HTTP response ended early (close_connection); the stream lives on
        self.force_sse = False  # SSE even in JSON-only mode (subscriptions/listen)
        self.on_open: Callable[[], None] | None = None  # called once the response became SSE

    async def send(self, message: bytes) -> None:
        if self.app.json_response and not self.force_sse:
            if b'"id"' in message and b'"method"' in message and self.session is not None:
                await self.session.standalone.emit(message)  # a request to the client: use the GET stream
            else:
                logger.debug("JSON-only mode: a message before the result was dropped")
            return
        if self.stream is None:
            await self.open()
        assert self.stream is not None
        await self.stream.emit(message)

    async def open(self, *, prime: bool = False) -> None:
        session = self.session
        stream = self.stream = session.new_stream() if session is not None else EventStream("0", None)
        headers = [
            (b"content-type", EVENT_STREAM),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),
            *self.extra_headers,
        ]
        await self._send({"type": "http.response.start", "status": 200, "headers": headers})

        async def write(data: bytes) -> None:
            await self._send({"type": "http.response.body", "body": data, "more_body": True})

        await stream.attach(write)
        if self.on_open is not None:
            self.on_open()
        if session is None or session.store is None:
            return
        revision = session.mcp.revision
        if prime or (revision is not None and revision.has_sse_priming):
            event_id = await session.store.store_event(stream.id, b"")
            await stream.write_raw(encode_event(b"", id=event_id, retry=self.app.retry_ms))

    async def close_connection(self) -> None:
        """End the HTTP response now but keep the stream: the client resumes it with GET +
        Last-Event-ID (SSE polling, 2025-11-25). Without an event store there is nothing to resume
        from, so the response stays open."""
        if self._ended or self.session is None or self.session.store is None or self.app.json_response:
            return
        if self.stream is None:
            await self.open(prime=True)  # the priming event gives the client an id to resume from
        assert self.stream is not None
        self.stream.detach()
        self._ended = True
        with contextlib.suppress(Exception):
            await self._send({"type": "http.response.body", "body": b"", "more_body": False})

    async def finish(self, answer: bytes | None) -> None:
        stream = self.stream
        assert stream is not None
        if answer is not None:
            await stream.emit(answer)
        stream.close()
        if self.session is not None:
            self.session.streams.pop(stream.id, None)  # a later resume replays it from the store
        if not self._ended:
            with contextlib.suppress(Exception):
                await self._send({"type": "http.response.body", "body": b"", "more_body": False})


class _ModernCall:
    """One modern request served directly (no session, no endpoint): the Outbound its handler talks
    through (what it sends goes to its own response), the owner of a listen subscription it opens,
    and the watcher that cancels it when the client closes the response.

    Made of slots and bound methods, not closures: a request leaves no reference cycle behind
    (``stop`` breaks the one with its channel), so it is freed at once, not by the cyclic GC."""

    __slots__ = (
        "__weakref__",
        "channel",
        "keepalive",
        "listen",
        "loop",
        "receive",
        "scope",
        "since",
        "watcher",
    )

    def __init__(
        self,
        channel: _PostChannel,
        receive: Receive,
        scope: anyio.CancelScope,
        listen: bool,
        keepalive: float,
    ) -> None:
        self.channel = channel
        self.receive = receive
        self.scope = scope
        self.listen = listen  # subscriptions/listen: its stream is kept alive with comment lines
        self.keepalive = keepalive
        self.watcher: asyncio.Task[None] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None  # asyncio: the loop serving it
        self.since = 0.0  # asyncio: when it started (loop time)

    async def notify(self, method: str, params: Any = None) -> None:
        await self.channel.send(codec.encode_notification(method, params))

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        # a Context never gets here (a modern request's asks are multi round-trip); a raw caller does
        raise CapabilityError(f"a modern request sends no requests to the client; {method} cannot be sent")

    def start_watching(self) -> None:
        """Watch the connection from now on (asyncio: a plain task, cheaper than a task group)."""
        if self.watcher is None and self.loop is not None:
            self.watcher = self.loop.create_task(self.watch())

    async def watch(self) -> None:
        """Cancel the request when the client closes the response (which, unlike in the handshake
        era, abandons it); keep a listen stream alive meanwhile."""
        while True:
            with anyio.move_on_after(self.keepalive if self.listen else math.inf):
                while (await self.receive())["type"] != "http.disconnect":
                    pass
                self.scope.cancel()
                return
            stream = self.channel.stream
            if stream is not None:
                await stream.write_raw(KEEPALIVE)

    def stop(self) -> None:
        """The request is over: stop watching, and drop the reference cycle with the channel."""
        self.loop = None
        if self.watcher is not None:
            self.watcher.cancel()
            self.watcher = None
        self.channel.on_open = None


class McpHttpApp:
    """The ASGI application. ``McpHttpApp(server)`` serves ``server`` at ``/mcp``.

    Options: ``path``; ``json_response`` (never answer with SSE); ``stateless`` (no sessions, for
    several workers); ``allowed_hosts`` / ``allowed_origins`` (patterns; default: the loopback names
    when bound to loopback, else the bound host) or a ready ``security`` policy; ``auth`` (bearer
    tokens checked by your verifier, RFC 9728 metadata served at its well-known paths);
    ``max_body`` (bytes, 413 above); ``session_idle_timeout`` (seconds); ``event_store_factory``
    (one store per session); ``legacy_sse`` with ``sse_path`` and ``message_path`` (2024-11-05
    HTTP+SSE); ``retry_ms`` (the SSE retry hint); ``keepalive`` (seconds between SSE comments).
    """

    def __init__(
        self,
        server: Server,
        *,
        path: str = "/mcp",
        json_response: bool = False,
        stateless: bool = False,
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] | None = None,
        security: TransportSecurity | None = None,
        auth: AuthSettings | None = None,
        max_body: int = 4 * 1024 * 1024,
        session_idle_timeout: float = 1800.0,
        event_store_factory: Callable[[], EventStore] = InMemoryEventStore,
        legacy_sse: bool = True,
        sse_path: str = "/sse",
        message_path: str = "/messages/",
        retry_ms: int = 1000,
        keepalive: float = 15.0,
    ) -> None:
        self.server = server
        self.path = path.rstrip("/") or "/"
        self.json_response = json_response
        self.stateless = stateless
        self.max_body = max_body
        self.session_idle_timeout = session_idle_timeout
        self.event_store_factory = event_store_factory
        self.legacy_sse = legacy_sse and not stateless
        self.sse_path = sse_path
        self.message_path = message_path
        self.retry_ms = retry_ms
        self.keepalive = keepalive
        self.allowed_hosts = list(allowed_hosts) if allowed_hosts is not None else None
        self.allowed_origins = list(allowed_origins) if allowed_origins is not None else None
        self.security = security
        self._policies: dict[str, TransportSecurity] = {}
        self._decisions: dict[tuple[Any, ...], Decision] = {}
        self._refusals: dict[tuple[Any, ...] | None, int] = {}  # see _post_refusal
        self.auth = auth
        self.sessions: dict[str, HttpSession] = {}
        self.legacy_sessions: dict[str, anyio.abc.ObjectSendStream[bytes]] = {}
        self._last_reap = time.monotonic()
        self._closing: set[asyncio.Task[None]] = set()  # sessions being closed after expiry
        self._shutting_down = anyio.Event()
        self._modern_posts: set[_ModernCall] = set()  # modern requests being served
        self._sweeping: asyncio.AbstractEventLoop | None = None  # where _sweep_modern is scheduled
        self._scope_type: type[anyio.CancelScope] | None = None  # anyio's CancelScope class on asyncio
        supported = [r.version for r in server.revisions]
        self._supported = {v: REVISIONS[v] for v in supported}
        # by the raw MCP-Protocol-Version value (latin-1 is one-to-one: the same verdicts, no decoding)
        self._supported_raw = {v.encode("latin-1"): REVISIONS[v] for v in supported}

    # -- ASGI entry point -------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            try:
                await self._http(scope, receive, send)
            except _Disconnected:
                logger.debug("client disconnected while sending its request")
            except Exception:
                # a bug or a failing plug-in (event store, ...): answer with a JSON-RPC error, never
                # with the server's bare 500 (if the response had started, this send just fails)
                logger.exception("unhandled error serving %s %s", scope.get("method"), scope.get("path"))
                with contextlib.suppress(Exception):
                    await _error(send, 500, _INTERNAL_ERROR, "Internal error")
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """Served directly (not mounted): also reap idle sessions when no request comes to do it."""
        async with anyio.create_task_group() as tg:
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    tg.start_soon(self._reap_periodically)
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    tg.cancel_scope.cancel()
                    await self.aclose()
                    await send({"type": "lifespan.shutdown.complete"})
                    return

    async def _reap_periodically(self) -> None:
        while True:
            await anyio.sleep(max(1.0, min(60.0, self.session_idle_timeout / 2)))
            self._reap_idle()

    async def aclose(self) -> None:
        """Shut down: end every stream and free every session."""
        self._shutting_down.set()
        self._end_subscriptions()
        for session in list(self.sessions.values()):
            await session.close()
        self.sessions.clear()
        for legacy in list(self.legacy_sessions.values()):
            await legacy.aclose()
        self.legacy_sessions.clear()

    def begin_shutdown(self) -> None:
        """Ask long-lived streams to end now (call from the event loop, e.g. a signal handler).

        Only the standalone (GET) streams, which never end by themselves: a request's stream ends
        with its result, which the graceful shutdown waits for and which must still be delivered.
        """
        self._shutting_down.set()
        for session in self.sessions.values():
            session.standalone.close()
        self._end_subscriptions()

    def _end_subscriptions(self) -> None:
        """End the subscriptions/listen requests served here gracefully (each gets its result)."""
        for call in self._modern_posts:
            self.server.subscriptions.end_all(owner=call)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        method = scope["method"]
        decision = self._check_security(scope)
        if not decision.allowed:
            await _error(send, decision.status, _BAD_REQUEST, decision.reason)
            return
        if self.auth is not None:
            if method == "GET" and path in prm_paths(urlsplit(self.auth.resource_server_url).path):
                document = orjson.dumps(protected_resource_metadata(self.auth))
                await _respond(send, 200, document, [(b"cache-control", b"max-age=3600")])
                return
            verdict = await authenticate(scope["headers"], scope.get("query_string", b""), self.auth)
            if not verdict.ok:
                await _error(
                    send, verdict.status, _BAD_REQUEST, verdict.description or "Unauthorized", verdict.headers
                )
                return
        self._reap_idle()
        if path == self.path or path.rstrip("/") == self.path:
            if method == "POST":
                await self._post(scope, receive, send)
            elif method == "GET":
                await self._get(scope, receive, send)
            elif method == "DELETE":
                await self._delete(scope, send)
            else:
                await _error(
                    send,
                    405,
                    _BAD_REQUEST,
                    f"Method {method} not allowed",
                    [(b"allow", b"GET, POST, DELETE")],
                )
            return
        if self.legacy_sse and path == self.sse_path and method == "GET":
            await self._legacy_get(scope, receive, send)
            return
        if self.legacy_sse and path == self.message_path and method == "POST":
            await self._legacy_post(scope, receive, send)
            return
        if self.legacy_sse and path in (self.sse_path, self.message_path):
            await _error(send, 405, _BAD_REQUEST, f"Method {method} not allowed")
            return
        await _error(send, 404, _BAD_REQUEST, f"Not found: {path}")

    # -- security ---------------------------------------------------------------------------------
    def _check_security(self, scope: Scope) -> Decision:
        """Host and Origin against the policy; decisions are remembered per (Host, Origin) values."""
        headers = scope["headers"]
        server = scope.get("server")
        bound = server[0] if server else None
        index = _headers(scope)
        if len(index) == len(headers):  # no header repeated: at most one Host and one Origin
            key: tuple[Any, ...] = (bound, index.get(b"host"), index.get(b"origin"))
        else:
            key = (bound, None, None, *(h for h in headers if h[0] == b"host" or h[0] == b"origin"))
        decision = self._decisions.get(key)
        if decision is None:
            decision = self._security(scope).check(headers)
            if len(self._decisions) >= 1024:
                self._decisions.clear()
            self._decisions[key] = decision
        return decision

    def _security(self, scope: Scope) -> TransportSecurity:
        """The Host/Origin policy: given, or derived from the address the server is bound to."""
        if self.security is not None:
            return self.security
        server = scope.get("server")
        bound, port = (str(server[0]), server[1]) if server else ("127.0.0.1", None)
        policy = self._policies.get(bound)
        if policy is None:
            policy = TransportSecurity.for_bind(
                bound, port, allowed_hosts=self.allowed_hosts, allowed_origins=self.allowed_origins
            )
            self._policies[bound] = policy
        return policy

    def _header_revision(self, scope: Scope) -> tuple[Revision | None, str | None]:
        """The revision MCP-Protocol-Version names (None when absent), or why it is refused (400)."""
        raw = _header(scope, VERSION_HEADER)
        if raw is None:
            return None, None
        version = self._supported_raw.get(raw)
        if version is None:
            return None, f"Bad Request: unsupported MCP-Protocol-Version {raw.decode('latin-1')!r}"
        return version, None

    # -- POST -------------------------------------------------------------------------------------
    def _post_refusal(self, scope: Scope) -> int:
        """0 when a POST's Content-Type and Accept will do, else the status refusing it (415, 406);
        remembered per pair of values (clients send few distinct ones; a flood is not cached)."""
        index = _headers(scope)
        key: tuple[Any, ...] | None = (index.get(b"content-type"), index.get(b"accept"), self.json_response)
        try:
            refusal = self._refusals.get(key)
        except TypeError:  # values that are not bytes (not hashable): decide without caching
            refusal, key = None, None
        if refusal is None:
            if not _is_json_content(scope):
                refusal = 415
            elif not _accepts(scope, JSON) or (not self.json_response and not _accepts(scope, EVENT_STREAM)):
                refusal = 406
            else:
                refusal = 0
            if key is not None and len(self._refusals) < 256:
                self._refusals[key] = refusal
        return refusal

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self._post_refusal(scope)
        if refusal == 415:
            await _error(send, 415, _BAD_REQUEST, "Unsupported Media Type: the body must be application/json")
            return
        if refusal == 406:
            await _error(
                send,
                406,
                _BAD_REQUEST,
                "Not Acceptable: Accept must list application/json and text/event-stream",
            )
            return
        body = await _read_body(scope, receive, self.max_body)
        if body is None:
            await _error(send, 413, _BAD_REQUEST, f"Payload Too Large: the limit is {self.max_body} bytes")
            return
        message = codec.decode(body)
        if type(message) is Invalid:
            await _respond(send, 400, codec.encode_error(None, message.error, omit_null_id=True))
            return
        raw_version = _header(scope, VERSION_HEADER)
        version = self._supported_raw.get(raw_version) if raw_version is not None else None
        if self.server.speaks_modern and self._is_modern(version, message):
            await self._post_modern(scope, receive, send, message)
            return
        if raw_version is not None and version is None:
            value = raw_version.decode("latin-1")
            await _error(send, 400, _BAD_REQUEST, f"Bad Request: unsupported MCP-Protocol-Version {value!r}")
            return
        initialize = type(message) is Request and message.method == "initialize"
        if self.stateless:
            if not initialize and version is None:
                version = self._supported.get(DEFAULT_VERSION) or self.server.revisions[-1]
            session = self._stateless_session(None if initialize else version)
        elif initialize:
            session = HttpSession(self, _new_session_id())
        else:
            raw_id = _header(scope, SESSION_HEADER)
            if raw_id is None:
                await _error(send, 400, _BAD_REQUEST, "Bad Request: missing Mcp-Session-Id header")
                return
            found = self.sessions.get(raw_id.decode("latin-1"))
            if found is None:
                await _error(send, 404, -32001, "Session not found")
                return
            session = found
        await self._serve_post(session, message, initialize, send)

    def _stateless_session(self, revision: Revision | None) -> HttpSession:
        """A throwaway session, already in the ready state (an initialize request starts it afresh)."""
        session = HttpSession(self, None)
        if revision is None:
            return session
        session.mcp.revision = revision
        session.mcp.capabilities = self.server.capabilities(revision)
        session.mcp.state = State.READY
        return session

    async def _serve_post(
        self, session: HttpSession, message: Incoming | list[Incoming], initialize: bool, send: Send
    ) -> None:
        extra: list[tuple[bytes, bytes]] = []
        if session.id_header is not None:
            extra.append((SESSION_HEADER, session.id_header))
        channel = _PostChannel(self, session, send, extra)
        session.in_flight += 1
        try:
            processed = await session.endpoint.process(message, channel)
        finally:
            session.in_flight -= 1
            session.last_active = time.monotonic()
        if initialize and session.id is not None:
            if session.mcp.revision is not None and session.mcp.state is not State.NEW:
                self.sessions[session.id] = session
                session.start()
            else:
                extra.clear()  # the handshake failed: no session was made
        if channel.stream is not None:
            await channel.finish(processed.answer)
        elif processed.invalid:
            await _respond(send, 400, processed.answer or b"", extra)
        elif processed.answer is not None:
            await _respond(send, 200, processed.answer, extra)
        elif processed.has_requests and session.closed:
            # the session ended (DELETE, shutdown) while its request ran: it was cancelled, unanswered
            await _error(send, 404, -32001, "Session not found: it ended while the request was in flight")
        else:
            await _respond(send, 202, b"", extra)

    # -- POST of modern traffic (2026-07-28 on) ----------------------------------------------------
    def _modern_header(self, scope: Scope) -> bool:
        """Whether MCP-Protocol-Version names a stateless revision this server serves."""
        raw = _header(scope, VERSION_HEADER)
        if raw is None:
            return False
        revision = self._supported_raw.get(raw)
        return revision is not None and not revision.has_handshake

    @staticmethod
    def _is_modern(header_revision: Revision | None, message: Incoming | list[Incoming]) -> bool:
        """Modern traffic: the header names a stateless revision (``header_revision``: the supported
        revision MCP-Protocol-Version names), or the body's envelope names a protocol version
        (whatever its value: an unsupported one is answered -32022), or the method exists only in
        the stateless revisions."""
        if header_revision is not None and not header_revision.has_handshake:
            return True
        t = type(message)
        if t is not Request and t is not Notification:
            return False
        params = message.params  # type: ignore[union-attr]
        if type(params) is dict:
            meta = params.get("_meta")
            if type(meta) is dict and PROTOCOL_VERSION in meta:
                return True
        return t is Request and message.method in MODERN_ONLY  # type: ignore[union-attr]

    async def _post_modern(
        self, scope: Scope, receive: Receive, send: Send, message: Incoming | list[Incoming]
    ) -> None:
        if type(message) is list:
            await _error(
                send, 400, _BAD_REQUEST, "Invalid Request: the stateless protocol revisions have no batches"
            )
            return
        if type(message) is Response or type(message) is ErrorResponse:
            await _error(
                send,
                400,
                _BAD_REQUEST,
                "Invalid Request: a client of the stateless protocol revisions sends no responses",
            )
            return
        headers, repeated = mcp_headers(scope["headers"], _headers(scope))
        rid = message.id if type(message) is Request else None
        if repeated is not None:
            await _reject(
                send,
                400,
                rid,
                JsonRpcError(f"Header mismatch: {repeated} appears more than once", code=HEADER_MISMATCH),
            )
            return
        if type(message) is Notification:
            problem = check_notification(message, headers)
            if problem is not None:
                await _reject(send, 400, None, JsonRpcError(problem, code=HEADER_MISMATCH))
            else:
                await _respond(send, 202)  # no client notification means anything here (no sessions)
            return
        assert type(message) is Request
        request: Request = message
        params = request.params
        meta = params.get("_meta") if type(params) is dict else None
        version = meta.get(PROTOCOL_VERSION) if type(meta) is dict else None
        capabilities = meta.get(CLIENT_CAPABILITIES) if type(meta) is dict else None
        if type(meta) is not dict or type(version) is not str or type(capabilities) is not dict:
            error = InvalidParams(
                f"Invalid params: {request.method} needs params._meta with {PROTOCOL_VERSION!r} (a string) "
                f"and {CLIENT_CAPABILITIES!r} (an object)"
            )
            await _reject(send, 400, rid, error)
            return
        tool = None
        if request.method == "tools/call" and type(params) is dict and type(params.get("name")) is str:
            tool = self.server.tools.get(params["name"])
        problem = check_request(request, version, headers, tool)
        if problem is not None:
            await _reject(send, 400, rid, JsonRpcError(problem, code=HEADER_MISMATCH))
            return
        if request.method == LISTEN and not _accepts(scope, EVENT_STREAM):
            await _error(
                send, 406, _BAD_REQUEST, "Not Acceptable: subscriptions/listen answers with text/event-stream"
            )
            return
        await self._serve_modern(request, receive, send, (version, capabilities, meta))

    async def _serve_modern(
        self,
        request: Request,
        receive: Receive,
        send: Send,
        envelope: tuple[str, dict[str, Any], dict[str, Any]],
    ) -> None:
        """Serve a modern request directly: no session, no endpoint, one ServerSession made from its
        envelope (:func:`serve_checked`); answered as JSON with its status, or as the SSE stream its
        handler opened."""
        channel = _PostChannel(self, None, send, [])
        listen = request.method == LISTEN
        channel.force_sse = listen
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        # anyio.CancelScope() looks the backend up each time: on asyncio, make its class directly
        scope = anyio.CancelScope() if loop is None or self._scope_type is None else self._scope_type()
        call = _ModernCall(channel, receive, scope, listen, self.keepalive)
        self._modern_posts.add(call)
        if listen and self._shutting_down.is_set():
            self.server.subscriptions.end_all(owner=call)  # answered at once
        try:
            if loop is not None:
                self._scope_type = type(scope)
                # Closing the response cancels the request, but most requests are answered before a
                # client could close anything: the watcher starts once the request has run for
                # _WATCH_AFTER (one sweep per interval finds those, rather than a timer per request),
                # or at once when the response becomes a stream.
                call.loop = loop
                call.since = loop.time()
                channel.on_open = call.start_watching
                if self._sweeping is not loop:
                    self._sweeping = loop
                    loop.call_later(_WATCH_AFTER, self._sweep_modern, loop)
                try:
                    answer, status = await self._run_modern(request, call, envelope)
                finally:
                    call.stop()
            else:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(call.watch)
                    answer, status = await self._run_modern(request, call, envelope)
                    tg.cancel_scope.cancel()
        finally:
            self._modern_posts.discard(call)
        if channel.stream is not None:
            await channel.finish(answer)
        elif answer is None:  # cancelled: the client is gone, and nobody reads this
            await _respond(send, 202)
        else:
            await _respond(send, status, answer)

    def _sweep_modern(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start watching the modern requests served on ``loop`` for _WATCH_AFTER or longer; again
        after _WATCH_AFTER while any is in flight."""
        if self._sweeping is not loop:
            return
        due = loop.time() - _WATCH_AFTER
        waiting = False
        for call in self._modern_posts:
            if call.loop is loop and call.watcher is None:
                if call.since <= due:
                    call.start_watching()
                else:
                    waiting = True
        if waiting:
            loop.call_later(_WATCH_AFTER, self._sweep_modern, loop)
        else:
            self._sweeping = None  # the next modern request schedules a sweep

    async def _run_modern(
        self, request: Request, call: _ModernCall, envelope: tuple[str, dict[str, Any], dict[str, Any]]
    ) -> tuple[bytes | None, int]:
        """Run the request under ``scope``: its encoded answer and HTTP status (an error gets the
        status the revision assigns to its code); no answer when it was cancelled. ``envelope``:
        the protocol version, client capabilities and ``_meta`` :meth:`_post_modern` checked."""
        answer: bytes | None = None
        status = 200
        scope = call.scope
        with scope:
            try:
                rc = RequestContext(request, call, scope)
                result = await serve_checked(self.server, request, rc, call, *envelope)
            except JsonRpcError as exc:
                answer = codec.encode_error(request.id, exc)
                status = _MODERN_STATUS.get(exc.code, 200)
            except Exception:
                logger.exception("unhandled error while serving %r", request.method)
                answer = codec.encode_error(request.id, InternalError("Internal error"))
            else:
                answer = codec.encode_answer(request, result)
        if scope.cancel_called:
            return None, 202
        return answer, status

    def _stateless_reason(self, scope: Scope) -> str:
        if self._modern_header(scope):
            raw = _header(scope, VERSION_HEADER) or b""
            return f"protocol revision {raw.decode('latin-1')} has no sessions"
        return "the server is stateless"

    # -- GET: the standalone stream, or resuming a stream ------------------------------------------
    async def _get(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.stateless or self._modern_header(scope):
            await _error(
                send,
                405,
                _BAD_REQUEST,
                f"Method GET not allowed: {self._stateless_reason(scope)}",
                [(b"allow", b"POST")],
            )
            return
        if not _accepts(scope, EVENT_STREAM):
            await _error(send, 406, _BAD_REQUEST, "Not Acceptable: Accept must list text/event-stream")
            return
        session = await self._session_of(scope, send)
        if session is None:
            return
        raw_last = _header(scope, b"last-event-id")
        last_event_id = raw_last.decode("latin-1") if raw_last is not None else None
        if last_event_id is not None and session.store is not None:
            found = await session.store.events_after(last_event_id)
            stream = session.streams.get(found[0]) if found is not None else None
            if found is None or (stream is None and not found[1]):
                await _error(send, 404, _BAD_REQUEST, "Not Found: no stream has that Last-Event-ID")
                return
            if stream is None:  # the stream already ended: replay what is left and close
                stream = EventStream(found[0], session.store)
                stream.close()
        else:
            last_event_id = None
            stream = session.standalone
            if stream.attached:
                await _error(send, 409, _BAD_REQUEST, "Conflict: this session already has a GET stream open")
                return
        await self._stream_out(session, stream, last_event_id, receive, send)

    async def _stream_out(
        self,
        session: HttpSession,
        stream: EventStream,
        last_event_id: str | None,
        receive: Receive,
        send: Send,
    ) -> None:
        headers = [
            (b"content-type", EVENT_STREAM),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),
            (SESSION_HEADER, (session.id or "").encode()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})

        async def write(data: bytes) -> None:
            await send({"type": "http.response.body", "body": data, "more_body": True})

        session.in_flight += 1
        try:
            # the replay is looked up as the connection is attached (under the stream's lock), so an
            # event emitted while the response headers were being sent is neither lost nor doubled
            await stream.attach(write, last_event_id)
            revision, store = session.mcp.revision, session.store
            primes = revision is not None and revision.has_sse_priming
            if last_event_id is None and primes and store is not None:
                event_id = await store.store_event(stream.id, b"")
                await stream.write_raw(encode_event(b"", id=event_id, retry=self.retry_ms))
            async with anyio.create_task_group() as tg:

                async def until_disconnect() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    tg.cancel_scope.cancel()

                async def until_closed() -> None:
                    await stream.closed.wait()
                    tg.cancel_scope.cancel()

                async def keepalive() -> None:
                    while True:
                        await anyio.sleep(self.keepalive)
                        await stream.write_raw(KEEPALIVE)

                tg.start_soon(until_disconnect)
                tg.start_soon(until_closed)
                tg.start_soon(keepalive)
        finally:
            stream.detach(write)
            session.in_flight -= 1
            session.last_active = time.monotonic()
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    # -- DELETE -----------------------------------------------------------------------------------
    async def _delete(self, scope: Scope, send: Send) -> None:
        if self.stateless or self._modern_header(scope):
            await _error(
                send,
                405,
                _BAD_REQUEST,
                f"Method DELETE not allowed: {self._stateless_reason(scope)}",
                [(b"allow", b"POST")],
            )
            return
        session = await self._session_of(scope, send)
        if session is None:
            return
        assert session.id is not None
        del self.sessions[session.id]
        await session.close()
        await _respond(send, 200)

    async def _session_of(self, scope: Scope, send: Send) -> HttpSession | None:
        """The session a GET or DELETE names; None once the refusal (400, 404) was answered."""
        _, refused = self._header_revision(scope)
        if refused is not None:
            await _error(send, 400, _BAD_REQUEST, refused)
            return None
        raw_id = _header(scope, SESSION_HEADER)
        if raw_id is None:
            await _error(send, 400, _BAD_REQUEST, "Bad Request: missing Mcp-Session-Id header")
            return None
        session = self.sessions.get(raw_id.decode("latin-1"))
        if session is None:
            await _error(send, 404, -32001, "Session not found")
        return session

    # -- idle sessions ----------------------------------------------------------------------------
    def _reap_idle(self) -> None:
        now = time.monotonic()
        if now - self._last_reap < min(5.0, self.session_idle_timeout / 4):
            return
        self._last_reap = now
        for session_id, session in list(self.sessions.items()):
            if session.in_flight == 0 and now - session.last_active > self.session_idle_timeout:
                logger.info("session %s expired after %.0f s idle", session_id, now - session.last_active)
                del self.sessions[session_id]
                # keep a reference: the loop holds only a weak one to a task and may lose it midway
                task = asyncio.get_running_loop().create_task(session.close())
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)

    # -- legacy HTTP+SSE (2024-11-05) --------------------------------------------------------------
    async def _legacy_get(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = _new_session_id()
        client_end, server_end = memory_pair()
        to_server, from_posts = anyio.create_memory_object_stream[bytes](math.inf)
        self.legacy_sessions[session_id] = to_server
        root = scope.get("root_path", "")
        headers = [
            (b"content-type", EVENT_STREAM),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})

        async def write(data: bytes) -> None:
            await send({"type": "http.response.body", "body": data, "more_body": True})

        endpoint_uri = f"{root}{self.message_path}?session_id={session_id}"
        try:
            await write(encode_event(endpoint_uri.encode(), event="endpoint"))
            async with anyio.create_task_group() as tg:

                async def pump_in() -> None:
                    async with from_posts:
                        async for body in from_posts:
                            await client_end.send(body)
                    tg.cancel_scope.cancel()

                async def pump_out() -> None:
                    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError):
                        while True:
                            await write(encode_event(await client_end.receive(), event="message"))

                async def until_disconnect() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    tg.cancel_scope.cancel()

                async def until_shutdown() -> None:
                    await self._shutting_down.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(self.server.serve, server_end)
                tg.start_soon(pump_in)
                tg.start_soon(pump_out)
                tg.start_soon(until_disconnect)
                tg.start_soon(until_shutdown)
        finally:
            self.legacy_sessions.pop(session_id, None)
            await to_server.aclose()
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _legacy_post(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        session_id = (query.get("session_id") or [""])[0]
        if not session_id:
            await _error(send, 400, _BAD_REQUEST, "Bad Request: missing session_id")
            return
        sink = self.legacy_sessions.get(session_id)
        if sink is None:
            await _error(send, 404, -32001, "Session not found")
            return
        if not _is_json_content(scope):
            await _error(send, 415, _BAD_REQUEST, "Unsupported Media Type: the body must be application/json")
            return
        body = await _read_body(scope, receive, self.max_body)
        if body is None:
            await _error(send, 413, _BAD_REQUEST, f"Payload Too Large: the limit is {self.max_body} bytes")
            return
        try:
            await sink.send(body)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            await _error(send, 404, -32001, "Session not found")
            return
        await _respond(send, 202, b"Accepted", json=False)


def _new_session_id() -> str:
    """128 random bits, URL-safe: visible ASCII only, as the specification requires."""
    return secrets.token_urlsafe(24)
