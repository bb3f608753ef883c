"""HTTP/1.1 for the MCP client: h11 over anyio sockets (TLS for ``https://``), as httpcore does it.

The pieces: :func:`split_url` (origin and request target), :class:`Connection` (one keep-alive
connection: an h11 state machine over a byte stream), :class:`Pool` (idle connections to one
origin; :meth:`Pool.request` sends a request and waits for the head of its answer, retrying once on
a stale kept-alive connection) and :class:`Response` (the body, read chunk by chunk).

Errors: everything that touches the network runs under :func:`map_exceptions`, which turns the
low-level exceptions (``OSError``, ``ssl.SSLError``, anyio's ``EndOfStream`` /
``BrokenResourceError`` / ``ClosedResourceError``, ``h11.ProtocolError``, ``TimeoutError``) into
this module's :class:`HttpTransportError` tree, so the layers above catch one family. Each keeps
the description of what went wrong (``ConnectionRefusedError: [Errno 111] ...``) as its text; the
tree derives from ``OSError`` (the timeouts from ``TimeoutError`` too), so code written against the
exceptions this module used to let through keeps catching them.
"""

from __future__ import annotations

import contextlib
import logging
import select
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
import anyio.abc
import h11

__all__ = [
    "ConnectError",
    "ConnectTimeout",
    "Connection",
    "HttpTransportError",
    "LocalProtocolError",
    "Origin",
    "Pool",
    "ReadError",
    "ReadTimeout",
    "RemoteProtocolError",
    "Response",
    "ResponseTooLarge",
    "TimeoutException",
    "WriteError",
    "WriteTimeout",
    "describe",
    "map_exceptions",
    "split_url",
]

logger = logging.getLogger("jsonrpc_mcp.transports.http")

_CHUNK = 65536


# -- the library's exceptions ---------------------------------------------------------------------
class HttpTransportError(OSError):
    """An HTTP exchange failed below HTTP semantics (the network, TLS, or the HTTP/1.1 framing)."""


class TimeoutException(HttpTransportError, TimeoutError):
    """A network wait ran out."""


class ConnectTimeout(TimeoutException):
    pass


class WriteTimeout(TimeoutException):
    pass


class ReadTimeout(TimeoutException):
    pass


class NetworkError(HttpTransportError):
    """The connection could not be made, or broke."""


class ConnectError(NetworkError):
    pass


class WriteError(NetworkError):
    pass


class ReadError(NetworkError):
    pass


class ProtocolError(HttpTransportError):
    """The HTTP/1.1 framing broke: ours (:class:`LocalProtocolError`) or the server's
    (:class:`RemoteProtocolError`)."""


class LocalProtocolError(ProtocolError):
    pass


class RemoteProtocolError(ProtocolError):
    pass


class ResponseTooLarge(Exception):
    """A response body exceeded the limit its reader set (not a network failure)."""


def describe(exc: BaseException) -> str:
    """``Type: text`` (or ``Type`` alone) of an exception, as messages and logs show it."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_Mapping = tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], type[HttpTransportError]], ...]
_NETWORK: tuple[type[BaseException], ...] = (
    OSError,  # (ssl.SSLError is one)
    anyio.EndOfStream,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
)
_CONNECT: _Mapping = ((TimeoutError, ConnectTimeout), (_NETWORK, ConnectError))
_WRITE: _Mapping = (
    (TimeoutError, WriteTimeout),
    (h11.LocalProtocolError, LocalProtocolError),
    (h11.RemoteProtocolError, RemoteProtocolError),
    (_NETWORK, WriteError),
)
_READ: _Mapping = (
    (TimeoutError, ReadTimeout),
    (h11.RemoteProtocolError, RemoteProtocolError),
    (h11.LocalProtocolError, LocalProtocolError),
    (_NETWORK, ReadError),
)


@contextlib.contextmanager
def map_exceptions(mapping: _Mapping) -> Iterator[None]:
    """Re-raise a low-level exception of the block as the first library exception ``mapping`` pairs
    it with (the order matters: ``TimeoutError`` is an ``OSError``); the library's own exceptions,
    cancellation and anything unlisted pass through untouched."""
    try:
        yield
    except HttpTransportError:
        raise
    except Exception as exc:
        for low, ours in mapping:
            if isinstance(exc, low):
                raise ours(describe(exc)) from exc
        raise


# -- URLs -----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Origin:
    scheme: str
    host: str
    port: int
    host_header: bytes

    @property
    def tls(self) -> bool:
        return self.scheme == "https"

    def same_as(self, other: Origin) -> bool:
        return (self.scheme, self.host, self.port) == (other.scheme, other.host, other.port)


def split_url(url: str) -> tuple[Origin, bytes]:
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
    return Origin(scheme, host, port, host_header.encode("ascii")), target.encode("ascii")


# -- HTTP/1.1 connections -------------------------------------------------------------------------
class Connection:
    """One keep-alive connection: h11 state machine over an anyio byte stream."""

    __slots__ = ("_h11", "_live", "_stream", "received_any", "reused")

    def __init__(self, stream: anyio.abc.ByteStream, live: set[Connection]) -> None:
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
        with map_exceptions(_WRITE):
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
        with map_exceptions(_READ):
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


class Pool:
    """Idle keep-alive connections to one origin. Each exchange takes a connection of its own."""

    def __init__(
        self, origin: Origin, ssl_context: ssl.SSLContext | None, connect_timeout: float, max_idle: int
    ) -> None:
        self._origin = origin
        self._ssl = ssl_context
        self._connect_timeout = connect_timeout
        self._max_idle = max_idle
        self._idle: list[Connection] = []
        self._live: set[Connection] = set()  # every open connection, idle or in use
        self._closed = False

    def is_closed(self) -> bool:
        return self._closed

    async def acquire(self) -> Connection:
        with map_exceptions(_CONNECT):
            if self.is_closed():
                raise anyio.ClosedResourceError("the HTTP client is closed")
            while self._idle:
                conn = self._idle.pop()
                if conn.looks_alive():
                    conn.reused = True
                    return conn
                await conn.aclose()
            return Connection(await self._connect(), self._live)

    async def _connect(self) -> anyio.abc.ByteStream:
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
        return stream

    async def request(
        self,
        method: bytes,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes | None,
        *,
        write_timeout: float,
        head_timeout: float,
        written: anyio.Event | None = None,
    ) -> Response:
        """Send one request and wait for the head of its response (retrying once on a stale
        keep-alive connection that failed before answering anything). ``written`` is set once the
        request's bytes are out."""
        for attempt in (1, 2):
            conn = await self.acquire()
            try:
                await conn.send_request(method, target, headers, body, write_timeout)
                if written is not None:
                    written.set()
                while True:
                    event = await conn.next_event(head_timeout)
                    if isinstance(event, h11.InformationalResponse):
                        continue
                    if isinstance(event, h11.Response):
                        return Response(self, conn, event)
                    with map_exceptions(_READ):
                        raise h11.RemoteProtocolError(f"no response from the server ({event!r})")
            except TimeoutException:
                await conn.aclose()
                raise
            except HttpTransportError:
                await conn.aclose()
                if attempt == 1 and conn.reused and not conn.received_any:
                    logger.debug("a kept-alive connection was stale; retrying on a new one")
                    continue
                raise
            except BaseException:
                await conn.aclose()
                raise
        raise AssertionError("unreachable")

    async def release(self, conn: Connection) -> None:
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


class Response:
    """A response whose head has arrived; read its body, then ``release`` it (always)."""

    __slots__ = ("_complete", "_conn", "_pool", "_released", "head", "headers", "reason", "status")

    def __init__(self, pool: Pool, conn: Connection, head: h11.Response) -> None:
        self._pool = pool
        self._conn = conn
        self.head = head  # (its headers as sent, repeated ones included)
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
            with map_exceptions(_READ):
                raise h11.RemoteProtocolError(
                    f"the connection closed in the middle of a response ({event!r})"
                )

    async def read(self, timeout: float, limit: int) -> bytes:
        """The whole body (each read bounded by ``timeout``); more than ``limit`` bytes is
        :class:`ResponseTooLarge`."""
        parts: list[bytes] = []
        size = 0
        while (chunk := await self.next_chunk(timeout)) is not None:
            size += len(chunk)
            if size > limit:
                raise ResponseTooLarge(f"the HTTP response body exceeded {limit} bytes")
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

    async def drain(self, timeout: float) -> None:
        """Read what is left of the body so that the connection can be reused (bounded; a failure
        only means it will be closed)."""
        with anyio.move_on_after(timeout), contextlib.suppress(HttpTransportError):
            while await self.next_chunk(timeout) is not None:
                pass
