"""MCP over HTTP, client side: Streamable HTTP (2025-03-26 and later), with fallback to the
deprecated HTTP+SSE transport (2024-11-05).

The transport is a :class:`~jsonrpc_mcp.transports.base.MessageStream`, so :class:`Client` runs over
it unchanged::

    async with connect_http("http://127.0.0.1:8000/mcp") as stream, Client(stream) as client:
        await client.initialize()

Theory of operation
-------------------
``send(message)`` POSTs the message. Every JSON-RPC message that comes back (a JSON body, possibly a
batch array, split into its messages; the ``message`` events of a POST's event stream; the events of
the standalone GET stream) is queued for ``receive()``. A POST that carries requests runs in a
background task (``send`` returns once its bytes are written, so several requests can be in flight,
one keep-alive connection each); a POST of notifications or responses is awaited to its ``202``.

HTTP is kept below the JSON-RPC layer: whatever goes wrong with a POST that carried requests (an
error status, a dropped connection, a timeout) is turned into a JSON-RPC error response for each
request still unanswered, so the caller's ``request`` raises :class:`JsonRpcError` instead of hanging.
A JSON-RPC error body is delivered as is (given the request's id when it had none); anything else
becomes ``-32600`` (4xx) or ``-32603`` naming the HTTP status.

Sessions: the ``Mcp-Session-Id`` of the initialize response is sent on every later request, and the
negotiated revision (read from the initialize result as it passes through) as ``MCP-Protocol-Version``.
A ``404`` to a request carrying the session id means the session is gone: the stored ``initialize``
request and ``notifications/initialized`` are replayed (without the old id), and the failed message is
sent again in the new session. After the handshake the standalone GET stream is opened (``405``: the
server offers none). Closing sends ``DELETE`` with the session id.

Resumability: each event stream's last event id and ``retry`` are tracked; a stream that drops before
it delivered what it owes (a POST stream: its responses; the GET stream: always) is resumed with a
GET carrying ``Last-Event-ID`` after ``retry`` ms.

Fallback: when ``fallback`` is on and the initialize POST is answered ``400``, ``404`` or ``405``,
the URL is fetched with GET expecting the legacy ``endpoint`` event; from then on messages are POSTed
to that endpoint and every reply arrives on the event stream.

The stateless revisions (2026-07-28): a request whose ``params._meta`` names a protocol version is
*modern* and stands alone: it is POSTed without a session id, with ``MCP-Protocol-Version`` (the
version in its envelope), ``Mcp-Method``, ``Mcp-Name`` (``params.name`` of ``tools/call`` and
``prompts/get``, ``params.uri`` of ``resources/read``) and, for ``tools/call``, an ``Mcp-Param-{Name}``
header per argument whose property schema says ``"x-mcp-header": "{Name}"`` (known from the
``tools/list`` results that passed through this transport). Values that are not plain visible
ASCII, have surrounding whitespace or look like the sentinel are sent as ``=?base64?...?=``. A
modern request is cancelled by closing its response stream: ``notifications/cancelled`` for it is
not POSTed. The server's 4xx answers (``-32020``, ``-32021``, ``-32022``, ``-32601`` ...) reach the
caller as the JSON-RPC errors in their bodies.

HTTP/1.1 is spoken with h11 over anyio sockets (TLS for ``https://``); no HTTP library is needed.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import math
import re
import select
import ssl
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit

import anyio
import anyio.abc
import h11
import orjson
from anyio.abc import TaskGroup

from .. import __version__
from .sse import SseParser

__all__ = [
    "DEFAULT_MAX_MESSAGE",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "HttpClientStream",
    "connect_http",
    "encode_header_value",
    "header_parameters",
    "legacy_sse",
    "modern_headers",
    "streamable_http",
]

logger = logging.getLogger("jsonrpc_mcp.transports.http_client")

DEFAULT_TIMEOUT = 30.0  # connecting, writing, status of notifications, error bodies, DELETE, endpoint event
DEFAULT_READ_TIMEOUT = 300.0  # waiting for the answer to a request; silence on an event stream
DEFAULT_MAX_MESSAGE = 64 * 1024 * 1024
DEFAULT_RETRY_MS = 1000  # reconnection delay when the server gave no ``retry``
MAX_ERROR_BODY = 64 * 1024
_CHUNK = 65536

_JSON = "application/json"
_SSE = "text/event-stream"
_ACCEPT_BOTH = b"application/json, text/event-stream"

INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603

Mode = Literal["streamable", "legacy"]
_RequestId = str | int


class _TransportFailure(Exception):
    """Why a message could not be exchanged (carried to the caller as a JSON-RPC error)."""

    def __init__(self, message: str, code: int = INTERNAL_ERROR, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.data = data


# Exceptions that mean "this connection failed" (as opposed to bugs).
_NET_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    TimeoutError,
    anyio.EndOfStream,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    h11.ProtocolError,
    ssl.SSLError,
)
_NET_OR_REFUSED: tuple[type[BaseException], ...] = (*_NET_ERRORS, _TransportFailure)
_NET_OR_BAD_EVENT: tuple[type[BaseException], ...] = (*_NET_ERRORS, ValueError)


# -- URLs -----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Origin:
    scheme: str
    host: str
    port: int
    host_header: bytes

    @property
    def tls(self) -> bool:
        return self.scheme == "https"


def _split_url(url: str) -> tuple[_Origin, bytes]:
    """The origin of an http(s) URL and its request target (path and query)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ValueError(f"not an http(s) URL: {url!r}")
    host = parts.hostname
    if not host:
        raise ValueError(f"no host in URL: {url!r}")
    default = 443 if scheme == "https" else 80
    port = parts.port or default
    name = host if host.isascii() else host.encode("idna").decode("ascii")
    shown = f"[{name}]" if ":" in name else name
    host_header = shown if port == default else f"{shown}:{port}"
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    return _Origin(scheme, host, port, host_header.encode("ascii")), target.encode("ascii")


# -- HTTP/1.1 connections -------------------------------------------------------------------------
class _Connection:
    """One keep-alive connection: h11 state machine over an anyio byte stream."""

    __slots__ = ("_h11", "_live", "_stream", "received_any", "reused")

    def __init__(self, stream: anyio.abc.ByteStream, live: set[_Connection]) -> None:
        self._stream = stream
        self._live = live  # the pool's record of open connections
        live.add(self)
        self._h11 = h11.Connection(h11.CLIENT)
        self.reused = False
        self.received_any = False

    async def send_request(
        self,
        method: bytes,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes | None,
        timeout: float,
    ) -> None:
        h = self._h11
        if body is not None:
            headers = [*headers, (b"content-length", str(len(body)).encode())]
        data = h.send(h11.Request(method=method, target=target, headers=headers))
        if body:
            data += h.send(h11.Data(data=body))
        data += h.send(h11.EndOfMessage())
        self.received_any = False
        with anyio.fail_after(timeout):
            await self._stream.send(data)

    async def next_event(self, timeout: float) -> h11.Event:
        h = self._h11
        while True:
            event = h.next_event()
            if event is h11.NEED_DATA:
                with anyio.fail_after(timeout):
                    try:
                        chunk = await self._stream.receive(_CHUNK)
                    except anyio.EndOfStream:
                        chunk = b""
                if chunk:
                    self.received_any = True
                h.receive_data(chunk)
                continue
            if event is h11.PAUSED:  # cannot happen before our request is answered
                raise h11.RemoteProtocolError("unexpected pipelined data from the server")
            assert isinstance(event, h11.Event)
            return event

    def recycle(self) -> bool:
        """After a complete exchange: ready the connection for the next one (False: must close)."""
        h = self._h11
        if h.our_state is h11.DONE and h.their_state is h11.DONE:
            h.start_next_cycle()
            return True
        return False

    def looks_alive(self) -> bool:
        """An idle connection with something to read (data, or the server's close) is not reusable."""
        sock = self._stream.extra(anyio.abc.SocketAttribute.raw_socket, None)
        if sock is None:
            return True
        try:
            readable, _, _ = select.select([sock], [], [], 0)
        except (OSError, ValueError):
            return False
        return not readable

    async def aclose(self) -> None:
        self._live.discard(self)
        with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
            await self._stream.aclose()


class _Pool:
    """Idle keep-alive connections to one origin. Each exchange takes a connection of its own."""

    def __init__(
        self, origin: _Origin, ssl_context: ssl.SSLContext | None, connect_timeout: float, max_idle: int
    ) -> None:
        self._origin = origin
        self._ssl = ssl_context
        self._connect_timeout = connect_timeout
        self._max_idle = max_idle
        self._idle: list[_Connection] = []
        self._live: set[_Connection] = set()  # every open connection, idle or in use
        self._closed = False

    def is_closed(self) -> bool:
        return self._closed

    async def acquire(self) -> _Connection:
        if self.is_closed():
            raise anyio.ClosedResourceError("the HTTP client is closed")
        while self._idle:
            conn = self._idle.pop()
            if conn.looks_alive():
                conn.reused = True
                return conn
            await conn.aclose()
        origin = self._origin
        with anyio.fail_after(self._connect_timeout):
            if origin.tls:
                context = self._ssl if self._ssl is not None else ssl.create_default_context()
                stream: anyio.abc.ByteStream = await anyio.connect_tcp(
                    origin.host,
                    origin.port,
                    tls=True,
                    ssl_context=context,
                    tls_hostname=origin.host,
                    tls_standard_compatible=False,
                )
            else:
                stream = await anyio.connect_tcp(origin.host, origin.port)
        if self.is_closed():  # closed while connecting
            with anyio.CancelScope(shield=True):
                await stream.aclose()
            raise anyio.ClosedResourceError("the HTTP client is closed")
        return _Connection(stream, self._live)

    async def release(self, conn: _Connection) -> None:
        if not self._closed and len(self._idle) < self._max_idle and conn.recycle():
            self._idle.append(conn)
        else:
            await conn.aclose()

    async def aclose(self) -> None:
        """Close every connection, including those still in use (their readers then fail)."""
        self._closed = True
        self._idle = []
        for conn in list(self._live):
            await conn.aclose()


class _Response:
    """A response whose head has arrived; read its body, then ``release`` it (always)."""

    __slots__ = ("_complete", "_conn", "_pool", "_released", "headers", "reason", "status")

    def __init__(self, pool: _Pool, conn: _Connection, head: h11.Response) -> None:
        self._pool = pool
        self._conn = conn
        self.status: int = head.status_code
        self.reason = head.reason.decode("latin-1", errors="replace")
        self.headers: dict[str, str] = {
            name.decode("latin-1").lower(): value.decode("latin-1") for name, value in head.headers
        }
        self._complete = False
        self._released = False

    def header(self, name: str) -> str | None:
        return self.headers.get(name)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    async def next_chunk(self, timeout: float) -> bytes | None:
        """The next piece of the body; None at its end. Raises if the connection drops first."""
        if self._complete:
            return None
        while True:
            event = await self._conn.next_event(timeout)
            if isinstance(event, h11.Data):
                if event.data:
                    return bytes(event.data)
                continue
            if isinstance(event, h11.EndOfMessage):
                self._complete = True
                return None
            raise h11.RemoteProtocolError(f"the connection closed in the middle of a response ({event!r})")

    async def read(self, timeout: float, limit: int) -> bytes:
        """The whole body (each read bounded by ``timeout``); more than ``limit`` bytes is an error."""
        parts: list[bytes] = []
        size = 0
        while (chunk := await self.next_chunk(timeout)) is not None:
            size += len(chunk)
            if size > limit:
                raise _TransportFailure(f"the HTTP response body exceeded {limit} bytes")
            parts.append(chunk)
        return b"".join(parts)

    async def release(self) -> None:
        """Give the connection back when the body was read to its end; otherwise close it."""
        if self._released:
            return
        self._released = True
        if self._complete:
            await self._pool.release(self._conn)
        else:
            await self._conn.aclose()


# -- the stateless revisions' request headers ------------------------------------------------------
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
_NAME_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_SENTINEL = re.compile(r"=\?base64\?.*\?=\Z", re.DOTALL)
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")  # an RFC 9110 field name
_MAX_SCHEMA_DEPTH = 32


def encode_header_value(value: str) -> str:
    """A value as the stateless revisions put it in a header: as it is when it is plain visible ASCII
    without surrounding whitespace that does not look like the sentinel, else ``=?base64?...?=``."""
    if value.isascii() and value.isprintable() and value == value.strip() and not _SENTINEL.match(value):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def header_parameters(input_schema: Any) -> list[tuple[tuple[str, ...], str]]:
    """``(property path, header name)`` of every ``x-mcp-header`` annotation of a tool's input schema
    reachable from the root through ``properties`` alone."""
    found: list[tuple[tuple[str, ...], str]] = []

    def walk(schema: Any, path: tuple[str, ...]) -> None:
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(properties, dict) or len(path) >= _MAX_SCHEMA_DEPTH:
            return
        for name, sub in properties.items():
            if not isinstance(sub, dict):
                continue
            token = sub.get("x-mcp-header")
            if isinstance(token, str) and _TOKEN.match(token):
                found.append(((*path, name), token))
            walk(sub, (*path, name))

    walk(input_schema, ())
    return found


def _header_scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return value
    return None  # null, objects and arrays are not mirrored


def modern_headers(
    message: Any, parameters: Iterable[tuple[tuple[str, ...], str]] = ()
) -> list[tuple[bytes, bytes]] | None:
    """The headers a stateless-revision request carries, derived from its body; None when the message
    is not such a request. ``parameters`` are the tool's ``x-mcp-header`` properties (for
    ``tools/call``; see :func:`header_parameters`)."""
    if not isinstance(message, dict) or "id" not in message:
        return None
    method, params = message.get("method"), message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_META) if isinstance(meta, dict) else None
    if not isinstance(method, str) or not isinstance(version, str):
        return None
    assert isinstance(params, dict)
    headers = [(b"mcp-protocol-version", version.encode("utf-8")), (b"mcp-method", method.encode("utf-8"))]
    key = _NAME_PARAMS.get(method)
    name = params.get(key) if key is not None else None
    if isinstance(name, str):
        headers.append((b"mcp-name", encode_header_value(name).encode("ascii")))
    arguments = params.get("arguments")
    for path, token in parameters:
        value: Any = arguments
        for step in path:
            value = value.get(step) if isinstance(value, dict) else None
        text = _header_scalar(value)
        if text is not None:
            headers.append((b"mcp-param-" + token.encode("ascii"), encode_header_value(text).encode("ascii")))
    # what cannot travel in a header (a version or method with odd characters) is left to the server
    return [(n, v) for n, v in headers if all(0x20 <= b <= 0x7E for b in v)]


# -- messages -------------------------------------------------------------------------------------
@dataclass(slots=True)
class _Outgoing:
    """What the transport needs to know about a message it sends."""

    data: bytes
    ids: list[_RequestId]  # ids of the requests in it (answers are owed for these)
    method: str | None  # of a single request/notification
    is_initialize: bool
    is_response: bool  # only responses (no requests, no notifications)
    parsed: Any = None  # the message, decoded
    modern: list[tuple[bytes, bytes]] | None = None  # a stateless-revision request: its headers


def _inspect(data: bytes) -> _Outgoing:
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _Outgoing(data, [], None, False, False)
    items = parsed if isinstance(parsed, list) else [parsed]
    ids: list[_RequestId] = []
    only_responses = bool(items)
    for item in items:
        if not isinstance(item, dict):
            only_responses = False
            continue
        if "method" in item:
            only_responses = False
            rid = item.get("id")
            if isinstance(rid, (str, int)) and not isinstance(rid, bool):
                ids.append(rid)
        elif "id" not in item:
            only_responses = False
    method = parsed.get("method") if isinstance(parsed, dict) else None
    is_init = method == "initialize" and bool(ids)
    return _Outgoing(data, ids, method if isinstance(method, str) else None, is_init, only_responses, parsed)


def _error_bytes(rid: _RequestId | None, code: int, message: str, data: Any = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "error": error})


def _status_failure(status: int, reason: str, body: bytes) -> _TransportFailure:
    text = body[:200].decode("utf-8", errors="replace").strip()
    message = f"HTTP {status} {reason}".rstrip() + (f": {text}" if text else "")
    code = INVALID_REQUEST if 400 <= status < 500 else INTERNAL_ERROR
    return _TransportFailure(message, code, {"httpStatus": status})


@dataclass(slots=True)
class _StreamState:
    """A reader's cursor on one logical event stream, kept across reconnections."""

    last_event_id: str | None = None
    retry_ms: int | None = None


class HttpClientStream:
    """A :class:`MessageStream` over Streamable HTTP (or legacy HTTP+SSE). Open it with
    :func:`connect_http` (or :func:`streamable_http` / :func:`legacy_sse`), which own its tasks."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        ssl_context: ssl.SSLContext | None = None,
        fallback: bool = True,
        mode: Mode = "streamable",
        session_id: str | None = None,
        get_stream: bool = True,
        terminate_on_close: bool = True,
        max_message_size: int = DEFAULT_MAX_MESSAGE,
        max_idle_connections: int = 8,
        max_reconnects: int = 3,
    ) -> None:
        self.url = url
        self._origin, self._target = _split_url(url)
        self._post_target = self._target
        self._user_headers = [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in (headers or {}).items()
        ]
        self._user_header_names = {name for name, _ in self._user_headers}
        self._timeout = timeout
        self._read_timeout = read_timeout
        self._fallback = fallback
        self.mode: Mode = mode
        self.session_id: str | None = session_id
        self.protocol_version: str | None = None
        self._want_get_stream = get_stream
        self._terminate_on_close = terminate_on_close
        self._max_message = max_message_size
        self._max_reconnects = max_reconnects
        self._pool = _Pool(self._origin, ssl_context, timeout, max_idle_connections)
        self._incoming_send, self._incoming = anyio.create_memory_object_stream[bytes](math.inf)
        self._bg: TaskGroup | None = None
        self._bg_done = anyio.Event()  # set once the background tasks (GET stream, POSTs) have ended
        self._closed = False
        # the handshake, kept for re-initialization
        self._init_message: _Outgoing | None = None
        self._initialized_message: bytes | None = None
        self._init_result_pending = False
        self._reinit_lock = anyio.Lock()
        self._gate = anyio.Event()  # closed (unset) while the handshake decides the mode/session
        self._gate.set()
        self._get_running = False
        self._get_supported: bool | None = None
        self._legacy_response: _Response | None = None
        self._established = False  # an initialize POST succeeded (no more fallback)
        self._inflight: dict[_RequestId, anyio.CancelScope] = {}
        self._modern_ids: set[_RequestId] = set()  # stateless requests in flight
        self._listings: set[_RequestId] = set()  # tools/list requests in flight
        self.tool_headers: dict[str, list[tuple[tuple[str, ...], str]]] = {}  # from tools/list results

    # -- MessageStream --------------------------------------------------------------------------
    async def receive(self) -> bytes:
        try:
            return await self._incoming.receive()
        except anyio.ClosedResourceError:
            raise anyio.EndOfStream from None

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise anyio.ClosedResourceError("the HTTP transport is closed")
        out = _inspect(message)
        if out.method == "notifications/cancelled" and self._modern_ids:
            rid = _cancelled_id(out.parsed)
            if rid is not None and rid in self._modern_ids:
                # a stateless request is cancelled by closing its response stream, nothing is POSTed
                self._abandon(out.data)
                return
        out.modern = self._modern_headers(out)
        if out.modern is not None:
            self._modern_ids.update(out.ids)
        if out.method == "tools/list":
            self._listings.update(out.ids)
        if out.is_initialize:
            self._init_message = out
            self._init_result_pending = True
            if self.mode == "streamable":
                await self._wait_gate()
                self._gate = anyio.Event()  # until the server answered the initialize POST
        elif out.method == "notifications/initialized":
            self._initialized_message = message
        if not out.is_initialize and not await self._wait_gate():
            await self._fail(out, _TransportFailure("timed out waiting for the session to be established"))
            return
        if self.mode == "legacy":
            await self._post_legacy(out)
            return
        if out.ids:
            written = anyio.Event()
            assert self._bg is not None
            self._bg.start_soon(self._post_task, out, written)
            await written.wait()
            return
        await self._post_task(out, None)
        if out.method == "notifications/cancelled":
            self._abandon(out.data)

    def _abandon(self, data: bytes) -> None:
        """After ``notifications/cancelled`` went out: stop waiting for the cancelled request's answer."""
        try:
            rid = _cancelled_id(orjson.loads(data))
        except orjson.JSONDecodeError:
            return
        scope = self._inflight.get(rid) if rid is not None else None
        if scope is not None:
            scope.cancel()

    def _modern_headers(self, out: _Outgoing) -> list[tuple[bytes, bytes]] | None:
        parsed = out.parsed
        parameters: list[tuple[tuple[str, ...], str]] = []
        if out.method == "tools/call" and isinstance(parsed, dict):
            params = parsed.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            if isinstance(name, str):
                parameters = self.tool_headers.get(name, [])
        return modern_headers(parsed, parameters)

    def _learn_tools(self, result: Any) -> None:
        """Note the ``x-mcp-header`` parameters of each tool a ``tools/list`` result describes."""
        tools = result.get("tools") if isinstance(result, dict) else None
        for tool in tools if isinstance(tools, list) else []:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                self.tool_headers[tool["name"]] = header_parameters(tool.get("inputSchema"))

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            if self._bg is not None:
                # The GET stream and the POSTs end first: nothing of this session may reach the
                # server after its DELETE (a GET racing it would meet a deleted session).
                self._bg.cancel_scope.cancel()
                with anyio.move_on_after(self._timeout):
                    await self._bg_done.wait()
            if self.mode == "streamable" and self.session_id is not None and self._terminate_on_close:
                await self._delete_session()
            if self._legacy_response is not None:
                await self._legacy_response.release()
            await self._pool.aclose()
            await self._incoming_send.aclose()
            await self._incoming.aclose()

    # -- plumbing ---------------------------------------------------------------------------------
    async def _run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Host the background tasks until :meth:`aclose` cancels them."""
        try:
            async with anyio.create_task_group() as bg:
                self._bg = bg
                task_status.started()
                await anyio.sleep_forever()
        finally:
            self._bg_done.set()

    async def _wait_gate(self) -> bool:
        with anyio.move_on_after(self._timeout):
            await self._gate.wait()
            return True
        return False

    def _headers(
        self,
        *,
        accept: bytes,
        json_body: bool = False,
        session: str | None = None,
        version: bool = True,
        extra: Iterable[tuple[bytes, bytes]] = (),
    ) -> list[tuple[bytes, bytes]]:
        headers: list[tuple[bytes, bytes]] = []
        own = [
            (b"host", self._origin.host_header),
            (b"user-agent", b"jsonrpc-mcp/" + __version__.encode()),
            (b"accept", accept),
        ]
        if json_body:
            own.append((b"content-type", b"application/json"))
        if session is not None:
            own.append((b"mcp-session-id", session.encode("latin-1")))
        if version and self.protocol_version is not None and self.mode == "streamable":
            own.append((b"mcp-protocol-version", self.protocol_version.encode("latin-1")))
        own.extend(extra)
        headers.extend(item for item in own if item[0] not in self._user_header_names)
        headers.extend(self._user_headers)
        return headers

    async def _request(
        self,
        method: bytes,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes | None,
        *,
        head_timeout: float,
        written: anyio.Event | None = None,
    ) -> _Response:
        """Send one request and wait for the head of its response (retrying once on a stale
        keep-alive connection that failed before answering anything)."""
        for attempt in (1, 2):
            conn = await self._pool.acquire()
            try:
                await conn.send_request(method, target, headers, body, self._timeout)
                if written is not None:
                    written.set()
                while True:
                    event = await conn.next_event(head_timeout)
                    if isinstance(event, h11.InformationalResponse):
                        continue
                    if isinstance(event, h11.Response):
                        return _Response(self._pool, conn, event)
                    raise h11.RemoteProtocolError(f"no response from the server ({event!r})")
            except TimeoutError:
                await conn.aclose()
                raise
            except _NET_ERRORS:
                await conn.aclose()
                if attempt == 1 and conn.reused and not conn.received_any:
                    logger.debug("a kept-alive connection was stale; retrying on a new one")
                    continue
                raise
            except BaseException:
                await conn.aclose()
                raise
        raise AssertionError("unreachable")

    async def _deliver(
        self,
        data: bytes,
        pending: set[_RequestId] | None = None,
        capture: dict[_RequestId, dict[str, Any]] | None = None,
    ) -> None:
        """Queue the message(s) in ``data`` for receive(); note which responses arrived.

        A response whose id is a key of ``capture`` is kept there instead of being delivered.
        """
        try:
            parsed = orjson.loads(data)
        except orjson.JSONDecodeError:
            await self._incoming_send.send(data)  # let the endpoint answer the parse error
            return
        items = parsed if isinstance(parsed, list) else None
        for item in items if items is not None else [parsed]:
            raw = orjson.dumps(item) if items is not None else data
            if isinstance(item, dict) and "method" not in item and "id" in item:
                rid = item["id"]
                if isinstance(rid, (str, int)) and not isinstance(rid, bool):
                    if rid in self._listings:
                        self._listings.discard(rid)
                        self._learn_tools(item.get("result"))
                    if pending is not None:
                        pending.discard(rid)
                    if capture is not None and rid in capture:
                        capture[rid] = item
                        continue
                    self._sniff_initialize(rid, item)
            await self._incoming_send.send(raw)

    def _sniff_initialize(self, rid: _RequestId, item: dict[str, Any]) -> None:
        init = self._init_message
        if not self._init_result_pending or init is None or rid != init.ids[0]:
            return
        self._init_result_pending = False
        result = item.get("result")
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if isinstance(version, str):
            self.protocol_version = version

    async def _fail(self, out: _Outgoing, failure: _TransportFailure, ids: Iterable[_RequestId] = ()) -> None:
        """Answer the given (default: all) requests of ``out`` with ``failure``; log it otherwise."""
        targets = list(ids) or out.ids
        if not targets:
            logger.warning("%s could not be delivered: %s", out.method or "a message", failure.message)
            return
        for rid in targets:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._incoming_send.send(_error_bytes(rid, failure.code, failure.message, failure.data))

    async def _fail_from_body(
        self, out: _Outgoing, pending: set[_RequestId], status: int, reason: str, body: bytes
    ) -> None:
        """Pass a JSON-RPC error body on for the pending requests, or synthesise one from the status."""
        if not pending:
            failure = _status_failure(status, reason, body)
            logger.warning("%s was refused: %s", out.method or "a message", failure.message)
            return
        try:
            parsed = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            rid = parsed.get("id")
            if rid in pending:
                pending.discard(rid)
                await self._incoming_send.send(body)
                return
            for rid in sorted(pending, key=str):
                await self._incoming_send.send(orjson.dumps({**parsed, "jsonrpc": "2.0", "id": rid}))
            pending.clear()
            return
        await self._fail(out, _status_failure(status, reason, body), sorted(pending, key=str))
        pending.clear()

    # -- Streamable HTTP: POST --------------------------------------------------------------------
    async def _post_task(self, out: _Outgoing, written: anyio.Event | None) -> None:
        pending = set(out.ids)
        scope = anyio.CancelScope()
        for rid in out.ids:
            self._inflight[rid] = scope
        try:
            with scope:
                await self._post(out, pending, written, may_reinitialize=True)
            if scope.cancelled_caught:
                pending.clear()  # the caller cancelled the request: nobody waits for an answer
        except _TransportFailure as refused:
            await self._fail(out, refused, sorted(pending, key=str))
            if not out.ids and not out.is_response and not self._closed:
                raise anyio.BrokenResourceError(refused.message) from None
        except _NET_ERRORS as exc:
            if self._closed:
                return
            broken = _TransportFailure(f"HTTP transport error: {_describe(exc)}")
            await self._fail(out, broken, sorted(pending, key=str))
            if not out.ids and not out.is_response:
                raise anyio.BrokenResourceError(broken.message) from None
        except Exception:
            logger.exception("unexpected error while POSTing a message")
            await self._fail(
                out, _TransportFailure("internal error in the HTTP transport"), sorted(pending, key=str)
            )
        else:
            if pending and not self._closed:
                ended = _TransportFailure("the HTTP response ended before the JSON-RPC response arrived")
                await self._fail(out, ended, sorted(pending, key=str))
        finally:
            for rid in out.ids:
                self._modern_ids.discard(rid)
                self._listings.discard(rid)
                if self._inflight.get(rid) is scope:
                    del self._inflight[rid]
            if written is not None:
                written.set()
            if out.is_initialize:
                self._gate.set()

    async def _post(
        self, out: _Outgoing, pending: set[_RequestId], written: anyio.Event | None, *, may_reinitialize: bool
    ) -> None:
        if out.modern is not None:  # stands alone: no session, its own version and routing headers
            session = None
            headers = self._headers(accept=_ACCEPT_BOTH, json_body=True, version=False, extra=out.modern)
        else:
            session = None if out.is_initialize else self.session_id
            headers = self._headers(
                accept=_ACCEPT_BOTH, json_body=True, session=session, version=not out.is_initialize
            )
        head_timeout = self._read_timeout if out.ids else self._timeout
        response = await self._request(
            b"POST", self._post_target, headers, out.data, head_timeout=head_timeout, written=written
        )
        try:
            status = response.status
            if out.is_initialize and 200 <= status < 300:
                new_session = response.header("mcp-session-id")
                if new_session is not None and not _valid_session_id(new_session):
                    raise _TransportFailure(f"the server sent an invalid Mcp-Session-Id: {new_session!r}")
                self.session_id = new_session
                self._established = True
                self._gate.set()
            if status == 404 and session is not None and may_reinitialize and not out.is_response:
                body = await _read_quietly(response, self._timeout)
                await response.release()
                if await self._reinitialize(session):
                    await self._post(out, pending, None, may_reinitialize=False)
                    return
                await self._fail_from_body(out, pending, status, response.reason, body)
                return
            if out.is_initialize and status in (400, 404, 405) and self._fallback and not self._established:
                body = await _read_quietly(response, self._timeout)
                await response.release()
                if await self._fall_back(out, pending):
                    return
                await self._fail_from_body(out, pending, status, response.reason, body)
                return
            if not 200 <= status < 300:
                body = await _read_quietly(response, self._timeout)
                await self._fail_from_body(out, pending, status, response.reason, body)
                return
            if out.method == "notifications/initialized":
                self._start_get_stream()
            await self._read_answer(response, out, pending)
        finally:
            await response.release()

    async def _read_answer(self, response: _Response, out: _Outgoing, pending: set[_RequestId]) -> None:
        ctype = response.content_type
        if ctype == _SSE:
            await self._follow_post_stream(response, pending)
            return
        body = await response.read(self._read_timeout if pending else self._timeout, self._max_message)
        if not body.strip():
            if pending:
                raise _TransportFailure(
                    f"HTTP {response.status} without a body in answer to a request",
                    INTERNAL_ERROR,
                    {"httpStatus": response.status},
                )
            return
        if ctype == _JSON or ctype == "" or ctype.endswith("+json"):
            await self._deliver(body, pending)
            return
        raise _TransportFailure(f"unexpected Content-Type {ctype!r} in an HTTP answer", INTERNAL_ERROR)

    async def _follow_post_stream(
        self,
        response: _Response,
        pending: set[_RequestId],
        capture: dict[_RequestId, dict[str, Any]] | None = None,
    ) -> None:
        """Read a POST's event stream until the responses it owes arrived, resuming it when it drops."""
        state = _StreamState()
        progress = await self._consume_events(response, state, pending, capture)
        await response.release()
        failures = 0 if progress else 1
        while pending and not self._closed:
            if not state.last_event_id:
                return  # nothing to resume from: the caller reports the missing responses
            if failures > self._max_reconnects:
                raise _TransportFailure("the event stream kept dropping before the response arrived")
            await _sleep_ms(state.retry_ms)
            try:
                resumed = await self._resume(state)
            except _NET_ERRORS as exc:
                logger.info("could not resume an event stream: %s", _describe(exc))
                failures += 1
                continue
            if resumed is None:
                raise _TransportFailure("the event stream dropped and the server would not resume it")
            progress = await self._consume_events(resumed, state, pending, capture)
            await resumed.release()
            failures = 0 if progress else failures + 1

    async def _resume(self, state: _StreamState) -> _Response | None:
        """GET with Last-Event-ID; the response if it is an event stream (None otherwise)."""
        assert state.last_event_id is not None
        headers = self._headers(
            accept=_SSE.encode(),
            session=self.session_id,
            extra=[(b"last-event-id", state.last_event_id.encode("utf-8"))],
        )
        response = await self._request(b"GET", self._target, headers, None, head_timeout=self._timeout)
        if 200 <= response.status < 300 and response.content_type == _SSE:
            return response
        logger.info("the server refused to resume an event stream: HTTP %d", response.status)
        await _drain(response, self._timeout)
        await response.release()
        return None

    async def _consume_events(
        self,
        response: _Response,
        state: _StreamState,
        pending: set[_RequestId] | None,
        capture: dict[_RequestId, dict[str, Any]] | None = None,
    ) -> bool:
        """Deliver a stream's message events until it ends, drops, goes silent for ``read_timeout``,
        or (when ``pending`` is given) every pending response arrived.

        True if the stream was worth having: an event arrived, or it was healthy but silent.
        """
        parser = SseParser(self._max_message)
        progress = False
        try:
            while not (pending is not None and not pending):
                chunk = await response.next_chunk(self._read_timeout)
                for event in parser.feed(chunk) if chunk is not None else parser.end():
                    progress = True
                    if event.retry is not None:
                        state.retry_ms = event.retry
                    if event.id is not None:
                        state.last_event_id = event.id
                    if event.event == "message" and event.data:
                        await self._deliver(event.data.encode("utf-8"), pending, capture)
                if chunk is None:
                    break
        except TimeoutError:
            logger.debug("an event stream was silent for %s s; reconnecting", self._read_timeout)
            return True
        except _NET_ERRORS as exc:
            if not self._closed:
                logger.debug("an event stream dropped: %s", _describe(exc))
            return progress
        except ValueError as exc:  # an oversized event
            logger.warning("abandoning an event stream: %s", exc)
            return progress
        if pending is not None and not pending:
            await _drain(response, min(self._timeout, 1.0))  # the server ends the stream right after
        return progress

    # -- Streamable HTTP: the standalone GET stream ------------------------------------------------
    def _start_get_stream(self) -> None:
        if (
            self._want_get_stream
            and not self._get_running
            and self._get_supported is not False
            and self.mode == "streamable"
            and self._bg is not None
            and not self._closed
        ):
            self._get_running = True
            self._bg.start_soon(self._get_stream)

    async def _get_stream(self) -> None:
        state = _StreamState()
        failures = 0
        try:
            while not self._closed:
                extra = [(b"last-event-id", state.last_event_id.encode())] if state.last_event_id else []
                headers = self._headers(accept=_SSE.encode(), session=self.session_id, extra=extra)
                try:
                    response = await self._request(
                        b"GET", self._target, headers, None, head_timeout=self._timeout
                    )
                except _NET_ERRORS as exc:
                    logger.debug("the GET stream could not be opened: %s", _describe(exc))
                    response = None
                if response is not None:
                    if response.status == 405:
                        self._get_supported = False
                    if not 200 <= response.status < 300 or response.content_type != _SSE:
                        logger.debug("no GET stream: HTTP %d", response.status)
                        await _drain(response, self._timeout)
                        await response.release()
                        return  # 405: not offered; 404: session gone (re-initialization reopens it)
                    self._get_supported = True
                    progress = await self._consume_events(response, state, None)
                    await response.release()
                    failures = 0 if progress else failures + 1
                else:
                    failures += 1
                if failures > self._max_reconnects:
                    logger.info("giving up on the GET stream after %d failed attempts", failures)
                    return
                await _sleep_ms(state.retry_ms)
        except Exception:
            if not self._closed:
                logger.exception("the GET stream failed")
        finally:
            self._get_running = False

    # -- sessions ---------------------------------------------------------------------------------
    async def _reinitialize(self, expired: str) -> bool:
        """Replay the handshake after ``expired`` got a 404. True when a session is established."""
        async with self._reinit_lock:
            if self.session_id != expired:
                return self.session_id is not None  # another task already did it
            init = self._init_message
            if init is None:
                return False
            logger.info("session %s expired; re-initializing", expired)
            self._gate = gate = anyio.Event()
            try:
                return await self._replay_handshake(init)
            except _NET_OR_REFUSED as exc:
                logger.warning("re-initialization failed: %s", _describe(exc))
                return False
            finally:
                gate.set()

    async def _replay_handshake(self, init: _Outgoing) -> bool:
        """POST the stored initialize (no session id), then notifications/initialized in the new
        session. Until it succeeds the expired id stays, so a later request tries again."""
        headers = self._headers(accept=_ACCEPT_BOTH, json_body=True, version=False)
        response = await self._request(
            b"POST", self._post_target, headers, init.data, head_timeout=self._timeout
        )
        try:
            if not 200 <= response.status < 300:
                logger.warning("re-initialization refused: HTTP %d", response.status)
                return False
            new_session = response.header("mcp-session-id")
            if new_session is None or not _valid_session_id(new_session):
                return False
            rid = init.ids[0]
            capture: dict[_RequestId, dict[str, Any]] = {rid: {}}
            pending = {rid}
            if response.content_type == _SSE:
                await self._follow_post_stream(response, pending, capture)
            else:
                await self._deliver(await response.read(self._timeout, self._max_message), pending, capture)
        finally:
            await response.release()
        result = capture[rid].get("result")
        if not isinstance(result, dict):
            logger.warning("re-initialization failed: %r", capture[rid].get("error"))
            return False
        version = result.get("protocolVersion")
        if isinstance(version, str):
            self.protocol_version = version
        self.session_id = new_session
        if self._initialized_message is not None:
            headers = self._headers(accept=_ACCEPT_BOTH, json_body=True, session=new_session)
            response = await self._request(
                b"POST", self._post_target, headers, self._initialized_message, head_timeout=self._timeout
            )
            await _drain(response, self._timeout)
            await response.release()
            if not 200 <= response.status < 300:
                logger.warning(
                    "notifications/initialized refused on re-initialization: HTTP %d", response.status
                )
                return False
        self._start_get_stream()
        return True

    async def _delete_session(self) -> None:
        headers = self._headers(accept=_ACCEPT_BOTH, session=self.session_id)
        with anyio.move_on_after(self._timeout):
            try:
                response = await self._request(
                    b"DELETE", self._target, headers, None, head_timeout=self._timeout
                )
                await _drain(response, self._timeout)
                await response.release()
                if response.status >= 400 and response.status != 405:
                    logger.info("DELETE of the session answered HTTP %d", response.status)
            except _NET_ERRORS as exc:
                logger.debug("DELETE of the session failed: %s", _describe(exc))

    # -- legacy HTTP+SSE (2024-11-05) -------------------------------------------------------------
    async def _open_legacy(self) -> None:
        """GET the event stream, wait for the ``endpoint`` event, and keep reading in the background."""
        headers = self._headers(accept=_SSE.encode(), version=False)
        with anyio.fail_after(self._timeout):
            response = await self._request(b"GET", self._target, headers, None, head_timeout=self._timeout)
            try:
                if not 200 <= response.status < 300 or response.content_type != _SSE:
                    body = await _read_quietly(response, self._timeout)
                    raise _status_failure(response.status, response.reason, body)
                parser = SseParser(self._max_message)
                endpoint: str | None = None
                early: list[bytes] = []
                while endpoint is None:
                    chunk = await response.next_chunk(self._timeout)
                    if chunk is None:
                        raise _TransportFailure("the event stream ended before the endpoint event")
                    for event in parser.feed(chunk):
                        if event.event == "endpoint" and endpoint is None:
                            endpoint = event.data.strip()
                        elif event.event == "message" and event.data:
                            early.append(event.data.encode("utf-8"))
            except BaseException:
                await response.release()
                raise
        origin, target = _split_url(urljoin(self.url, endpoint))
        if (origin.scheme, origin.host, origin.port) != (
            self._origin.scheme,
            self._origin.host,
            self._origin.port,
        ):
            await response.release()
            raise _TransportFailure(f"the endpoint event points to another origin: {endpoint!r}")
        self._post_target = target
        self.mode = "legacy"
        self._legacy_response = response
        for data in early:
            await self._deliver(data)
        assert self._bg is not None
        self._bg.start_soon(self._legacy_reader, response, parser)

    async def _legacy_reader(self, response: _Response, parser: SseParser) -> None:
        try:
            while True:
                chunk = await response.next_chunk(self._read_timeout)
                for event in parser.feed(chunk) if chunk is not None else parser.end():
                    if event.event == "message" and event.data:
                        await self._deliver(event.data.encode("utf-8"))
                if chunk is None:
                    break
        except _NET_OR_BAD_EVENT as exc:
            if not self._closed:
                logger.info("the legacy event stream dropped: %s", _describe(exc))
        finally:
            await response.release()
            # No resumption in 2024-11-05: the connection is over.
            await self._incoming_send.aclose()

    async def _fall_back(self, out: _Outgoing, pending: set[_RequestId]) -> bool:
        try:
            await self._open_legacy()
        except _NET_OR_REFUSED as exc:
            logger.info("no legacy HTTP+SSE endpoint either: %s", _describe(exc))
            return False
        logger.info("the server speaks the legacy HTTP+SSE transport; falling back")
        pending.clear()  # the replies now travel on the event stream
        await self._post_legacy(out)
        return True

    async def _post_legacy(self, out: _Outgoing) -> None:
        headers = self._headers(accept=_ACCEPT_BOTH, json_body=True, version=False)
        pending = set(out.ids)
        try:
            response = await self._request(
                b"POST", self._post_target, headers, out.data, head_timeout=self._timeout
            )
            try:
                body = await _read_quietly(response, self._timeout)
            finally:
                await response.release()
        except _NET_ERRORS as exc:
            if self._closed:
                return
            failure = _TransportFailure(f"HTTP transport error: {_describe(exc)}")
            await self._fail(out, failure)
            if not out.ids and not out.is_response:
                raise anyio.BrokenResourceError(failure.message) from None
            return
        if not 200 <= response.status < 300:
            await self._fail_from_body(out, pending, response.status, response.reason, body)


def _cancelled_id(message: Any) -> _RequestId | None:
    """The ``requestId`` a ``notifications/cancelled`` message names."""
    params = message.get("params") if isinstance(message, dict) else None
    rid = params.get("requestId") if isinstance(params, dict) else None
    return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None


def _valid_session_id(value: str) -> bool:
    return bool(value) and all(0x21 <= ord(ch) <= 0x7E for ch in value)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _sleep_ms(retry_ms: int | None) -> None:
    await anyio.sleep((DEFAULT_RETRY_MS if retry_ms is None else retry_ms) / 1000)


async def _read_quietly(response: _Response, timeout: float) -> bytes:
    """A (bounded) body for an error message; b"" if it cannot be read."""
    try:
        return await response.read(timeout, MAX_ERROR_BODY)
    except _NET_OR_REFUSED:
        return b""


async def _drain(response: _Response, timeout: float) -> None:
    """Read what is left of a body so that the connection can be reused (bounded; else it is closed)."""
    with anyio.move_on_after(timeout), contextlib.suppress(*_NET_ERRORS):
        while await response.next_chunk(timeout) is not None:
            pass


# -- openers --------------------------------------------------------------------------------------
@contextlib.asynccontextmanager
async def connect_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    read_timeout: float = DEFAULT_READ_TIMEOUT,
    ssl_context: ssl.SSLContext | None = None,
    fallback: bool = True,
    legacy: bool = False,
    session_id: str | None = None,
    get_stream: bool = True,
    terminate_on_close: bool = True,
    max_message_size: int = DEFAULT_MAX_MESSAGE,
    max_idle_connections: int = 8,
    max_reconnects: int = 3,
) -> AsyncIterator[HttpClientStream]:
    """An MCP connection over HTTP to ``url``: Streamable HTTP, falling back to legacy HTTP+SSE when
    the server refuses the initialize POST (``fallback``), or legacy from the start (``legacy``).

    ``headers`` go on every request (e.g. ``Authorization``). ``timeout`` bounds connecting, writing
    and short exchanges; ``read_timeout`` bounds waiting for the answer to a request and silence on
    an event stream. ``session_id`` resumes an existing session. On exit the session is ended
    (``DELETE``) unless ``terminate_on_close`` is off.
    """
    stream = HttpClientStream(
        url,
        headers=headers,
        timeout=timeout,
        read_timeout=read_timeout,
        ssl_context=ssl_context,
        fallback=fallback,
        mode="streamable",
        session_id=session_id,
        get_stream=get_stream,
        terminate_on_close=terminate_on_close,
        max_message_size=max_message_size,
        max_idle_connections=max_idle_connections,
        max_reconnects=max_reconnects,
    )
    # The task group is entered and left by hand (as Client does) so that an exception from the body
    # propagates as itself rather than wrapped in an ExceptionGroup.
    stack = contextlib.AsyncExitStack()
    await stack.__aenter__()
    try:
        tg = await stack.enter_async_context(anyio.create_task_group())
        await tg.start(stream._run)
        if legacy:
            try:
                await stream._open_legacy()
            except _TransportFailure as failure:
                raise ConnectionError(f"{url}: {failure.message}") from None
    except BaseException:
        await stream.aclose()
        await stack.__aexit__(None, None, None)
        raise
    try:
        yield stream
    finally:
        await stream.aclose()
        await stack.__aexit__(None, None, None)


def streamable_http(url: str, **options: Any) -> contextlib.AbstractAsyncContextManager[HttpClientStream]:
    """:func:`connect_http` without the legacy fallback."""
    return connect_http(url, fallback=False, **options)


def legacy_sse(url: str, **options: Any) -> contextlib.AbstractAsyncContextManager[HttpClientStream]:
    """:func:`connect_http` speaking the 2024-11-05 HTTP+SSE transport from the start (``url`` is the
    event stream's URL)."""
    return connect_http(url, legacy=True, **options)
