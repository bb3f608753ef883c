"""A request body that does not arrive in time: 408 with a JSON-RPC error, logged, connection closed.

Raw sockets against ``serve --http --body-timeout`` on 127.0.0.1: an HTTP client library would send
the whole body at once, and the point is a client that does not.
"""

from __future__ import annotations

import re
import socket
import time

import orjson
import pytest

from jsonrpc_mcp.http import McpHttpApp
from jsonrpc_mcp.server import Server

from .support import TIMEOUT, TOOLBOX, initialize, spawned

BODY = orjson.dumps(initialize())


def _head(port: int, length: int) -> bytes:
    return (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def _read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (each recv bounded)."""
    sock.settimeout(TIMEOUT)
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:  # it closed with bytes of ours unread: what it sent was read first
        pass
    return received


def _read_response(sock: socket.socket) -> bytes:
    """One response with a Content-Length (each recv bounded)."""
    sock.settimeout(TIMEOUT)
    received = b""
    while b"\r\n\r\n" not in received or len(received.partition(b"\r\n\r\n")[2]) < _length(received):
        chunk = sock.recv(65536)
        assert chunk, received
        received += chunk
    return received


def _length(received: bytes) -> int:
    for line in received.partition(b"\r\n\r\n")[0].lower().split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return int(line.split(b":", 1)[1])
    return 1 << 30


def _connect(url: str) -> tuple[socket.socket, int]:
    port = int(url.rsplit(":", 1)[1])
    return socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT), port


def test_a_body_stopped_midway_is_answered_408_with_a_json_rpc_error_and_logged() -> None:
    with spawned(TOOLBOX, "--body-timeout", "0.5") as server:
        sock, port = _connect(server.url)
        with sock:
            started = time.monotonic()
            sock.sendall(_head(port, len(BODY)) + BODY[:10])  # ... and then nothing more
            answer = _read_all(sock)  # the server closes the connection after its answer
            took = time.monotonic() - started
        logged = server.wait_for(re.compile(rb"408 to .*did not arrive within 0\.5 s"))
        stderr = server.stderr()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 "), answer
    assert b"content-type: application/json" in head.lower()
    error = orjson.loads(body)
    assert error["jsonrpc"] == "2.0" and "id" not in error
    assert error["error"]["code"] == -32600
    assert "did not arrive within 0.5 s" in error["error"]["message"]
    assert took > 0.4  # not before the deadline (a busy machine makes it later, never earlier)
    assert logged.group(0) in stderr
    assert b"Traceback" not in stderr


def test_a_dripped_body_is_cut_off_at_the_deadline_however_often_bytes_come() -> None:
    with spawned(TOOLBOX, "--body-timeout", "0.5") as server:
        sock, port = _connect(server.url)
        with sock:
            sock.sendall(_head(port, len(BODY)))
            status, sent = b"", 0
            sock.settimeout(0.1)  # the drip's pace: a byte every 0.1 s, far below any per-read idle limit
            for byte in BODY:
                try:
                    sock.sendall(bytes([byte]))
                    sent += 1
                    status = sock.recv(65536)
                except TimeoutError:
                    continue
                except OSError:  # the server closed the connection
                    break
                if status:
                    break
            status += _read_all(sock)  # the rest, or all of it when the close came first
    assert status.startswith(b"HTTP/1.1 408 "), status
    # cut off at the deadline (0.5 s, a few bytes), not after the whole body (len(BODY) * 0.1 s)
    assert sent < len(BODY), (sent, len(BODY))


def test_a_body_that_arrives_in_chunks_within_the_deadline_is_served() -> None:
    with spawned(TOOLBOX, "--body-timeout", "5") as server:
        sock, port = _connect(server.url)
        with sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.sendall(_head(port, len(BODY)))
            for start in range(0, len(BODY), 16):  # in pieces, each its own segment
                sock.sendall(BODY[start : start + 16])
            answer = _read_response(sock)
    assert answer.startswith(b"HTTP/1.1 200 "), answer
    assert b'"serverInfo"' in answer


def test_the_option_is_checked() -> None:
    server = Server("t")
    assert McpHttpApp(server).body_timeout == 30.0  # the default
    assert McpHttpApp(server, body_timeout=None).body_timeout is None
    with pytest.raises(ValueError, match="body_timeout"):
        McpHttpApp(server, body_timeout=0)


@pytest.mark.anyio
async def test_the_legacy_message_endpoint_has_the_deadline_too() -> None:
    import anyio
    import httpx

    from .servers.toolbox import build_server
    from .support import serving
    from .test_legacy_sse import legacy_stream

    app = McpHttpApp(build_server(), body_timeout=0.3)
    with anyio.fail_after(TIMEOUT * 2):
        async with serving(app) as base, httpx.AsyncClient() as http, legacy_stream(http, base) as (_, url):
            port = int(base.rsplit(":", 1)[1])
            head = (
                f"POST {url[len(base) :]} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(BODY)}\r\n\r\n"
            ).encode()
            async with await anyio.connect_tcp("127.0.0.1", port) as sock:
                await sock.send(head + BODY[:10])
                answer = b""
                while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
                    answer += await sock.receive()
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert b"did not arrive within 0.3 s" in answer
