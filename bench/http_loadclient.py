"""A raw HTTP/1.1 load client for MCP servers over Streamable HTTP.

Built, like ``loadclient.py`` for stdio, so that it is never the bottleneck: plain blocking
sockets (``TCP_NODELAY``) on keep-alive connections, requests pre-encoded before each phase (an
orjson-encoded ``tools/call`` template with the id spliced in, headers included), responses read
with ``recv`` in 64 KiB chunks and parsed by hand. No asyncio, no threads, no HTTP library.

- sequential: one connection, one request at a time;
- in flight: N keep-alive connections, each with exactly one request outstanding; ``epoll`` says
  which have data, and each completed response is replaced at once by the next request on the
  same connection.

A response may be framed by ``Content-Length`` or chunked, and be ``application/json`` or a
``text/event-stream`` (the ``data:`` of the event that carries the JSON-RPC response counts;
priming events, notifications and comments are skipped).

The MCP handshake: ``initialize`` POSTed with ``Accept: application/json, text/event-stream``,
the ``Mcp-Session-Id`` kept if the server minted one and sent on every later request together
with ``MCP-Protocol-Version`` (the negotiated revision), then ``notifications/initialized``,
which must get 202. Cold start is the time from just before the spawn to the ``initialize``
response, connecting every few milliseconds until the port accepts.

The 2026-07-28 era (``modern``): no handshake and no session. The opening request is
``server/discover`` (cold start is the time to its answer), and every POST carries the envelope in
``params._meta`` and the headers the stateless revision requires: ``MCP-Protocol-Version``,
``Mcp-Method`` and, for ``tools/call``, ``Mcp-Name`` (the tool's name); results must say
``resultType: "complete"``.

The measured server is the spawned process and any descendants (uvicorn with ``--workers`` > 1):
CPU is their utime + stime from ``/proc/<pid>/stat``, peak RSS the sum of their ``VmHWM``.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import struct
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson
from loadclient import (
    INITIALIZED_NOTIFICATION,
    MODERN_VERSION,
    OPENING_ID,
    OPENING_REQUEST,
    BenchConfig,
    BenchError,
    Era,
    PhaseResult,
    RunResult,
    ShutdownHow,
    call_body,
    measure_phase,
    opening_problem,
    read_cpu_seconds,
    read_peak_rss_kib,
    read_tail,
    result_problem,
)

HOST = "127.0.0.1"
PATH = "/mcp"
PORT_PLACEHOLDER = "{port}"
"""Replaced in a server's argv by the port chosen for it (also passed as ``MCPBENCH_PORT``)."""

_READ_SIZE = 1 << 16
_CONNECT_POLL_SECONDS = 0.005


# -- process metrics ------------------------------------------------------------------------------


def _descendants(pid: int) -> list[int]:
    """``pid`` and every live process below it (by scanning /proc for parent pids)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, ()))
    return found


def tree_cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` and its live descendants (a process that vanished counts 0)."""
    total = 0.0
    for member in _descendants(pid):
        with contextlib.suppress(OSError, ValueError):
            total += read_cpu_seconds(member)
    return total


def tree_peak_rss_kib(pid: int) -> int:
    total = 0
    for member in _descendants(pid):
        with contextlib.suppress(OSError, ValueError, BenchError):
            total += read_peak_rss_kib(member)
    return total


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


# -- HTTP -----------------------------------------------------------------------------------------


@dataclass
class HttpResponse:
    status: int
    headers: dict[bytes, bytes]  # lower-cased names
    body: bytes

    @property
    def content_type(self) -> bytes:
        return self.headers.get(b"content-type", b"").split(b";", 1)[0].strip().lower()


def parse_response(buf: bytes) -> tuple[HttpResponse, int] | None:
    """One complete HTTP/1.1 response from the start of ``buf`` and the bytes it used, else None."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = buf[:end].split(b"\r\n")
    status_line = lines[0]
    if not status_line.startswith(b"HTTP/1.") or len(status_line) < 12:
        raise BenchError(f"bad status line: {status_line[:100]!r}")
    status = int(status_line[9:12])
    headers: dict[bytes, bytes] = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip()
    pos = end + 4
    if status < 200 or status in (204, 304):
        return HttpResponse(status, headers, b""), pos
    if b"chunked" in headers.get(b"transfer-encoding", b"").lower():
        parts: list[bytes] = []
        while True:
            line_end = buf.find(b"\r\n", pos)
            if line_end < 0:
                return None
            size = int(buf[pos:line_end].split(b";", 1)[0], 16)
            pos = line_end + 2
            if size == 0:  # last chunk, then optional trailers, then an empty line
                if buf.startswith(b"\r\n", pos):
                    return HttpResponse(status, headers, b"".join(parts)), pos + 2
                trailers_end = buf.find(b"\r\n\r\n", pos)
                if trailers_end < 0:
                    return None
                return HttpResponse(status, headers, b"".join(parts)), trailers_end + 4
            if len(buf) < pos + size + 2:
                return None
            parts.append(buf[pos : pos + size])
            pos += size + 2
    length = headers.get(b"content-length")
    if length is None:
        raise BenchError(f"HTTP {status} response without Content-Length or chunked framing")
    stop = pos + int(length)
    if len(buf) < stop:
        return None
    return HttpResponse(status, headers, buf[pos:stop]), stop


def sse_messages(body: bytes) -> list[Any]:
    """The JSON values carried by the ``data`` of each event of a text/event-stream body."""
    messages = []
    text = body.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    for block in text.split(b"\n\n"):
        data = [
            line[5:].removeprefix(b" ")
            for line in block.split(b"\n")
            if line.startswith(b"data:") or line == b"data"
        ]
        payload = b"\n".join(data)
        if payload.strip():  # priming events (2025-11-25) carry an empty data field
            messages.append(orjson.loads(payload))
    return messages


def encode_post(
    port: int,
    body: bytes,
    session_id: bytes | None,
    protocol_version: bytes | None,
    extra: Sequence[bytes] = (),
) -> bytes:
    """A POST of ``body``; ``extra`` are more header lines (``b"Name: value"``)."""
    head = [
        b"POST " + PATH.encode() + b" HTTP/1.1",
        b"Host: %s:%d" % (HOST.encode(), port),
        b"Accept: application/json, text/event-stream",
        b"Content-Type: application/json",
    ]
    if session_id is not None:
        head.append(b"Mcp-Session-Id: " + session_id)
    if protocol_version is not None:
        head.append(b"MCP-Protocol-Version: " + protocol_version)
    head.extend(extra)
    head.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(head) + b"\r\n\r\n" + body


class _Tally:
    """Error count of one phase (every call gets exactly one verdict)."""

    __slots__ = ("errors", "first_error")

    def __init__(self) -> None:
        self.errors = 0
        self.first_error: str | None = None

    def error(self, what: str) -> None:
        self.errors += 1
        if self.first_error is None:
            self.first_error = what[:500]


def check_call(response: HttpResponse, request_id: int, tally: _Tally, era: Era = "handshake") -> Any:
    """Record an error unless ``response`` answers ``request_id`` with a result that counts (see
    :func:`loadclient.result_problem`); returns the result."""
    if response.status != 200:
        tally.error(f"HTTP {response.status}: {response.body[:300]!r}")
        return None
    content_type = response.content_type
    try:
        if content_type == b"application/json":
            candidates = [orjson.loads(response.body)]
        elif content_type == b"text/event-stream":
            candidates = sse_messages(response.body)
        else:
            tally.error(f"unexpected content type {content_type!r}: {response.body[:200]!r}")
            return None
    except orjson.JSONDecodeError:
        tally.error(f"invalid JSON from server: {response.body[:200]!r}")
        return None
    for msg in candidates:
        if not isinstance(msg, dict) or "method" in msg:
            continue  # notifications on the request's stream; server requests are not expected here
        if msg.get("id") != request_id:
            tally.error(f"response with unexpected id (wanted {request_id}): {response.body[:200]!r}")
            return None
        result = msg.get("result")
        problem = result_problem(result, era)
        if problem is not None:
            tally.error(f"{problem}: {response.body[:300]!r}")
        return result
    tally.error(f"no JSON-RPC response in the body: {response.body[:300]!r}")
    return None


class Connection:
    """One keep-alive HTTP/1.1 connection to the server."""

    __slots__ = ("buffer", "fd", "sock")

    def __init__(self, port: int, timeout: float) -> None:
        self.sock = socket.create_connection((HOST, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # A blocking socket with the read timeout in the kernel (SO_RCVTIMEO): one syscall per recv,
        # where Python's own socket timeout would poll() before each.
        self.sock.settimeout(None)
        seconds = int(timeout)
        timeval = struct.pack("ll", seconds, int((timeout - seconds) * 1e6))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeval)
        self.fd = self.sock.fileno()
        self.buffer = b""

    def send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError as exc:
            raise BenchError(f"sending failed: {exc}") from exc

    def feed(self) -> HttpResponse | None:
        """One ``recv`` (blocking unless the caller knows data is there); a complete response or None."""
        try:
            chunk = self.sock.recv(_READ_SIZE)
        except (BlockingIOError, TimeoutError):  # SO_RCVTIMEO expired
            raise BenchError("no response from the server within the read timeout") from None
        except OSError as exc:
            raise BenchError(f"receiving failed: {exc}") from exc
        if not chunk:
            raise BenchError("the server closed the connection")
        buffer = self.buffer + chunk if self.buffer else chunk
        parsed = parse_response(buffer)
        if parsed is None:
            self.buffer = buffer
            return None
        response, used = parsed
        self.buffer = buffer[used:]
        if self.buffer:
            raise BenchError(f"unexpected bytes after a response: {self.buffer[:100]!r}")
        return response

    def roundtrip(self, data: bytes) -> HttpResponse:
        self.send(data)
        while True:
            response = self.feed()
            if response is not None:
                return response

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class HttpServer:
    """A spawned MCP server listening on 127.0.0.1:``port``, spoken to over HTTP/1.1."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        read_timeout: float = 30.0,
        era: Era = "handshake",
    ) -> None:
        self.era = era
        self.port = free_port()
        self.argv = [arg.replace(PORT_PLACEHOLDER, str(self.port)) for arg in argv]
        self.cwd = cwd
        self.env = dict(env if env is not None else os.environ)
        self.env["MCPBENCH_PORT"] = str(self.port)
        self.read_timeout = read_timeout
        self.session_id: bytes | None = None
        self.protocol_version: bytes | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._output: IO[bytes] | None = None
        self._connections: list[Connection] = []

    @property
    def pid(self) -> int:
        if self._proc is None:
            raise BenchError("server not started")
        return self._proc.pid

    # -- process lifecycle -------------------------------------------------------------------

    def spawn(self) -> None:
        self._output = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close_output)
        self._proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=self._output,
            stderr=subprocess.STDOUT,
            cwd=self.cwd,
            env=self.env,
            close_fds=True,
        )

    def shutdown(self, grace: float = 3.0) -> tuple[ShutdownHow, float]:
        """Close the connections, then SIGTERM (uvicorn's graceful exit), then SIGKILL."""
        for connection in self._connections:
            connection.close()
        self._connections.clear()
        proc = self._proc
        if proc is None:
            return "unknown", 0.0
        start = time.perf_counter()
        if proc.poll() is not None:
            return "already-exited", 0.0
        how: ShutdownHow = "sigterm"
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            how = "sigkill"
            proc.kill()
            proc.wait(timeout=grace)
        return how, time.perf_counter() - start

    @property
    def exit_code(self) -> int | None:
        return None if self._proc is None else self._proc.poll()

    def output_tail(self) -> str:
        return read_tail(self._output)

    def output_size(self) -> int:
        try:
            return 0 if self._output is None else os.fstat(self._output.fileno()).st_size
        except OSError:
            return 0

    def close_output(self) -> None:
        if self._output is not None:
            self._output.close()

    # -- connections -------------------------------------------------------------------------

    def connect(self) -> Connection:
        connection = Connection(self.port, self.read_timeout)
        self._connections.append(connection)
        return connection

    def wait_for_port(self, deadline: float) -> Connection:
        """Connect as soon as the server listens; raises if it exits or the deadline passes."""
        assert self._proc is not None
        while True:
            try:
                return self.connect()
            except (ConnectionRefusedError, ConnectionResetError):
                pass
            code = self._proc.poll()
            if code is not None:
                raise BenchError(f"server exited with code {code} before listening")
            if time.perf_counter() > deadline:
                raise BenchError("server did not listen on its port in time")
            time.sleep(_CONNECT_POLL_SECONDS)

    # -- protocol ----------------------------------------------------------------------------

    def post(self, body: bytes, method: bytes = b"tools/call", name: bytes | None = b"echo") -> bytes:
        """``body`` as a POST: with the session and negotiated revision (handshake era), or with the
        stateless revision's headers (modern era: ``method`` and ``name`` are what the body says)."""
        if self.era == "handshake":
            return encode_post(self.port, body, self.session_id, self.protocol_version)
        extra = [b"Mcp-Method: " + method]
        if name is not None:
            extra.append(b"Mcp-Name: " + name)
        return encode_post(self.port, body, None, MODERN_VERSION.encode(), extra)

    def open(self, connection: Connection) -> None:
        """The opening exchange: ``initialize``, ``initialized`` (handshake); ``server/discover`` (modern)."""
        method = b"initialize" if self.era == "handshake" else b"server/discover"
        response = connection.roundtrip(self.post(OPENING_REQUEST[self.era], method, None))
        tally = _Tally()
        result = check_call(response, OPENING_ID, tally)
        problem = tally.first_error or opening_problem(result, self.era)
        if problem is not None or not isinstance(result, dict):
            raise BenchError(f"{method.decode()} failed: {problem}")
        if self.era == "modern":
            return
        self.session_id = response.headers.get(b"mcp-session-id")
        version = result.get("protocolVersion")
        if not isinstance(version, str):
            raise BenchError(f"initialize result without protocolVersion: {response.body[:200]!r}")
        self.protocol_version = version.encode()
        ack = connection.roundtrip(self.post(INITIALIZED_NOTIFICATION))
        if ack.status != 202:
            raise BenchError(f"notifications/initialized got HTTP {ack.status}, not 202: {ack.body[:200]!r}")

    def encode_calls(self, ids: range) -> list[tuple[int, bytes]]:
        return [(i, self.post(call_body(i, self.era))) for i in ids]

    def sequential(
        self, connection: Connection, requests: Sequence[tuple[int, bytes]], deadline: float
    ) -> _Tally:
        tally = _Tally()
        clock = time.perf_counter
        for request_id, data in requests:
            check_call(connection.roundtrip(data), request_id, tally, self.era)
            if clock() > deadline:
                raise BenchError("timed out")
        return tally

    def inflight(
        self, connections: Sequence[Connection], requests: Sequence[tuple[int, bytes]], deadline: float
    ) -> _Tally:
        """One request outstanding on each connection; a completed one is replaced at once."""
        tally = _Tally()
        pending = iter(requests)
        by_fd: dict[int, Connection] = {}
        waiting_for: dict[int, int] = {}
        poller = select.epoll()
        try:
            for connection in connections:
                nxt = next(pending, None)
                if nxt is None:
                    break
                by_fd[connection.fd] = connection
                poller.register(connection.fd, select.EPOLLIN)
                waiting_for[connection.fd] = nxt[0]
                connection.send(nxt[1])
            while waiting_for:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    raise BenchError(f"timed out with {len(waiting_for)} calls outstanding")
                events = poller.poll(min(remaining, self.read_timeout))
                if not events:
                    if remaining > self.read_timeout:
                        raise BenchError(f"no response from the server for {self.read_timeout:.0f} s")
                    continue
                for fd, _ in events:
                    connection = by_fd[fd]
                    response = connection.feed()
                    if response is None:
                        continue
                    check_call(response, waiting_for[fd], tally, self.era)
                    nxt = next(pending, None)
                    if nxt is None:
                        del waiting_for[fd]
                    else:
                        waiting_for[fd] = nxt[0]
                        connection.send(nxt[1])
        finally:
            poller.close()
        return tally


def _measure(server: HttpServer, run: Callable[[], _Tally], calls: int) -> PhaseResult:
    return measure_phase(run, calls, lambda: tree_cpu_seconds(server.pid))


def bench_http_server(
    argv: Sequence[str],
    config: BenchConfig,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> RunResult:
    """Spawn ``argv`` (``{port}`` replaced), run every phase over HTTP, stop it; never raises for
    server faults.

    Phases: ``config.warmup`` sequential calls, then the measured sequential phase on the same
    connection; then ``config.inflight`` connections are opened and each carries one unmeasured
    call (so connection setup stays out of the figures) before the measured in-flight phase.
    """
    server = HttpServer(argv, cwd=cwd, env=env, read_timeout=config.read_timeout, era=config.era)
    result = RunResult(status="ok")
    wall_start = time.perf_counter()
    try:
        server.spawn()
    except OSError as exc:
        server.close_output()
        return RunResult(status="unavailable", reason=f"cannot spawn: {exc}")
    phase = "start"
    try:
        start = time.perf_counter()
        first = server.wait_for_port(start + config.start_timeout)
        server.open(first)
        result.cold_start_seconds = time.perf_counter() - start
        first_id = OPENING_ID + 1
        ids = range(first_id, first_id + config.warmup)
        warmup = server.encode_calls(ids)
        seq_ids = range(ids.stop, ids.stop + config.calls)
        seq_requests = server.encode_calls(seq_ids)
        opening_ids = range(seq_ids.stop, seq_ids.stop + config.inflight)
        opening = server.encode_calls(opening_ids)
        inflight_ids = range(opening_ids.stop, opening_ids.stop + config.inflight_calls)
        inflight_requests = server.encode_calls(inflight_ids)
        phase = "warm-up"
        tally = server.sequential(first, warmup, time.perf_counter() + config.phase_timeout)
        if tally.errors:
            result.status = "failed"
            result.reason = f"warm-up: {tally.errors} errors, first: {tally.first_error}"
        phase = "sequential"
        deadline = time.perf_counter() + config.phase_timeout
        result.sequential = _measure(
            server, lambda: server.sequential(first, seq_requests, deadline), config.calls
        )
        phase = "opening connections"
        connections = [first] + [server.connect() for _ in range(config.inflight - 1)]
        tally = server.inflight(connections, opening, time.perf_counter() + config.phase_timeout)
        if tally.errors and result.status == "ok":
            result.status = "failed"
            result.reason = f"opening connections: {tally.errors} errors, first: {tally.first_error}"
        phase = "inflight"
        deadline = time.perf_counter() + config.phase_timeout
        result.inflight = _measure(
            server, lambda: server.inflight(connections, inflight_requests, deadline), config.inflight_calls
        )
        phase = "peak RSS"
        result.peak_rss_mib = tree_peak_rss_kib(server.pid) / 1024
        for name, measured in (("sequential", result.sequential), ("inflight", result.inflight)):
            if measured.errors and result.status == "ok":
                result.status = "failed"
                result.reason = f"{name}: {measured.errors} errors, first: {measured.first_error}"
    except (BenchError, OSError, ValueError) as exc:
        result.status = "unavailable" if result.cold_start_seconds is None else "failed"
        result.reason = f"{phase}: {exc}"
    finally:
        result.shutdown, result.shutdown_seconds = server.shutdown()
        result.exit_code = server.exit_code
        result.server_output_bytes = server.output_size()
        if result.status != "ok":
            result.stderr_tail = server.output_tail()
        server.close_output()
        result.wall_seconds = time.perf_counter() - wall_start
    return result
