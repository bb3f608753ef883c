"""The HTTP client's pool: every low-level network failure reaches the layers above as one of the
library's own exceptions (``map_exceptions``), carrying the description of what went wrong."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio
import anyio.abc
import h11
import pytest

from jsonrpc_mcp.transports.http import legacy_sse
from jsonrpc_mcp.transports.http._pool import (
    _CONNECT,
    _READ,
    _WRITE,
    ConnectError,
    ConnectTimeout,
    HttpTransportError,
    LocalProtocolError,
    Pool,
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    ResponseTooLarge,
    TimeoutException,
    WriteError,
    WriteTimeout,
    describe,
    map_exceptions,
    split_url,
)
from tests import timeouts

pytestmark = pytest.mark.anyio

TIMEOUT = timeouts.STEP


# -- the mapping ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mapping", "low", "expected"),
    [
        (_CONNECT, ConnectionRefusedError(111, "Connection refused"), ConnectError),
        (_CONNECT, TimeoutError(), ConnectTimeout),
        (_CONNECT, ssl.SSLError("certificate verify failed"), ConnectError),
        (_CONNECT, anyio.ClosedResourceError("the HTTP client is closed"), ConnectError),
        (_WRITE, BrokenPipeError(32, "Broken pipe"), WriteError),
        (_WRITE, anyio.BrokenResourceError(), WriteError),
        (_WRITE, TimeoutError(), WriteTimeout),
        (_WRITE, h11.LocalProtocolError("Illegal header value"), LocalProtocolError),
        (_READ, ConnectionResetError(104, "Connection reset by peer"), ReadError),
        (_READ, anyio.EndOfStream(), ReadError),
        (_READ, TimeoutError(), ReadTimeout),
        (_READ, h11.RemoteProtocolError("illegal status line"), RemoteProtocolError),
    ],
)
def test_a_low_level_error_becomes_the_librarys_own(
    mapping: object, low: Exception, expected: type[HttpTransportError]
) -> None:
    with pytest.raises(expected) as caught, map_exceptions(mapping):  # type: ignore[arg-type]
        raise low
    assert type(caught.value) is expected
    assert str(caught.value) == describe(low)  # what the caller's message is made of
    assert caught.value.__cause__ is low


def test_timeouts_stay_timeout_errors_and_everything_stays_an_os_error() -> None:
    # code written against what the transport used to let through keeps catching it
    for timeout in (ConnectTimeout, WriteTimeout, ReadTimeout):
        assert issubclass(timeout, TimeoutException) and issubclass(timeout, TimeoutError)
    for other in (ConnectError, WriteError, ReadError, LocalProtocolError, RemoteProtocolError):
        assert issubclass(other, HttpTransportError) and issubclass(other, OSError)
        assert not issubclass(other, TimeoutError)


def test_the_description_names_the_original_type() -> None:
    assert describe(TimeoutError()) == "TimeoutError"
    assert describe(ConnectionRefusedError(111, "refused")) == "ConnectionRefusedError: [Errno 111] refused"


def test_a_library_error_passes_through_unchanged() -> None:
    original = ReadError("ConnectionResetError: reset")
    with pytest.raises(ReadError) as caught, map_exceptions(_CONNECT):
        raise original
    assert caught.value is original


def test_what_is_not_a_network_failure_passes_through() -> None:
    with pytest.raises(ValueError, match="a bug"), map_exceptions(_READ):
        raise ValueError("a bug")
    with pytest.raises(ResponseTooLarge), map_exceptions(_READ):
        raise ResponseTooLarge("too big")


async def test_cancellation_passes_through() -> None:
    with anyio.fail_after(TIMEOUT):
        with anyio.CancelScope() as scope:
            with map_exceptions(_READ):
                scope.cancel()
                await anyio.sleep(TIMEOUT)
        assert scope.cancelled_caught


# -- over real sockets ----------------------------------------------------------------------------
Handler = Callable[[anyio.abc.SocketStream], Awaitable[None]]


@contextlib.asynccontextmanager
async def _serve(handler: Handler) -> AsyncIterator[str]:
    """A TCP server on 127.0.0.1 running ``handler`` per connection; yields its base URL."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tg:  # (the listener closes after its task ended)
        tg.start_soon(listener.serve, handler)
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            tg.cancel_scope.cancel()


def _pool(url: str, connect_timeout: float = TIMEOUT) -> tuple[Pool, bytes]:
    origin, target = split_url(url)
    return Pool(origin, None, connect_timeout, max_idle=4), target


async def _get(pool: Pool, target: bytes, head_timeout: float = TIMEOUT) -> bytes:
    response = await pool.request(
        b"GET", target, [(b"host", b"x")], None, write_timeout=TIMEOUT, head_timeout=head_timeout
    )
    try:
        return await response.read(TIMEOUT, 1 << 20)
    finally:
        await response.release()


async def _read_request(stream: anyio.abc.SocketStream) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        data += await stream.receive()


async def test_a_refused_connection_is_a_connect_error() -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    await listener.aclose()  # nothing listens there now
    pool, target = _pool(f"http://127.0.0.1:{port}/mcp")
    with anyio.fail_after(TIMEOUT), pytest.raises(ConnectError) as caught:
        await _get(pool, target)
    assert isinstance(caught.value.__cause__, OSError)
    await pool.aclose()


async def test_a_closed_pool_refuses_with_a_connect_error() -> None:
    pool, target = _pool("http://127.0.0.1:9/mcp")
    await pool.aclose()
    with anyio.fail_after(TIMEOUT), pytest.raises(ConnectError, match="ClosedResourceError"):
        await _get(pool, target)


async def test_a_server_that_never_answers_is_a_read_timeout() -> None:
    async def silent(stream: anyio.abc.SocketStream) -> None:
        await _read_request(stream)
        await anyio.sleep_forever()

    async with _serve(silent) as url:
        pool, target = _pool(url)
        with anyio.fail_after(TIMEOUT), pytest.raises(ReadTimeout, match="TimeoutError"):
            await _get(pool, target, head_timeout=0.2)
        await pool.aclose()


async def test_a_connection_closed_mid_body_is_a_remote_protocol_error() -> None:
    async def truncated(stream: anyio.abc.SocketStream) -> None:
        await _read_request(stream)
        await stream.send(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly a part")
        await stream.aclose()

    async with _serve(truncated) as url:
        pool, target = _pool(url)
        with anyio.fail_after(TIMEOUT), pytest.raises(RemoteProtocolError):
            await _get(pool, target)
        await pool.aclose()


async def test_garbage_instead_of_a_status_line_is_a_remote_protocol_error() -> None:
    async def garbage(stream: anyio.abc.SocketStream) -> None:
        await _read_request(stream)
        await stream.send(b"SPDY/9 nonsense\r\n\r\n")
        await stream.aclose()

    async with _serve(garbage) as url:
        pool, target = _pool(url)
        with anyio.fail_after(TIMEOUT), pytest.raises(RemoteProtocolError, match="RemoteProtocolError"):
            await _get(pool, target)
        await pool.aclose()


async def test_an_illegal_header_of_ours_is_a_local_protocol_error() -> None:
    async def unused(stream: anyio.abc.SocketStream) -> None:
        await stream.aclose()

    async with _serve(unused) as url:
        pool, target = _pool(url)
        with anyio.fail_after(TIMEOUT), pytest.raises(LocalProtocolError):
            await pool.request(
                b"GET",
                target,
                [(b"host", b"x"), (b"x-bad", b"a\r\nb")],
                None,
                write_timeout=1,
                head_timeout=1,
            )
        await pool.aclose()


async def test_a_connection_the_server_closed_after_answering_does_not_fail_the_next_request() -> None:
    served = 0

    async def once_per_connection(stream: anyio.abc.SocketStream) -> None:
        nonlocal served
        await _read_request(stream)
        served += 1
        # keep-alive implied (HTTP/1.1), then the connection is closed: the idle one in the pool is dead
        await stream.send(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await stream.aclose()

    async with _serve(once_per_connection) as url:
        pool, target = _pool(url)
        with anyio.fail_after(TIMEOUT):
            assert await _get(pool, target) == b"ok"
            assert await _get(pool, target) == b"ok"
        assert served == 2
        await pool.aclose()


async def test_a_legacy_connection_that_cannot_be_made_still_raises_an_os_error() -> None:
    # what callers of legacy_sse caught before the mapping (a raw OSError) still catches it
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    await listener.aclose()
    with anyio.fail_after(TIMEOUT), pytest.raises(OSError) as caught:
        async with legacy_sse(f"http://127.0.0.1:{port}/sse", timeout=2):
            pass
    assert isinstance(caught.value, ConnectError)
