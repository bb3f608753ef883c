"""The benchmark's single-server measurements, beside the echo-call table of ``run.py``.

- **tools/list**: a server started with ``MCPBENCH_TOOLS`` dummy tools (1,000 by default) answers
  sequential ``tools/list`` requests over stdio, or over Streamable HTTP (handshake era, one
  keep-alive connection, each POST with the session id and ``MCP-Protocol-Version``); wall time
  and server CPU per listing, and the size of one listing (the response lines over stdio, the
  response bodies over HTTP: so that ours and raw are seen to send the same payload);
- **import time**: ``python -X importtime -c STATEMENT``, the cumulative time of the imports the
  statement makes (``import jsonrpc_mcp``; ``from jsonrpc_mcp import Server``; what ``serve`` loads
  before it answers; and the floor, what any anyio-on-asyncio server imports), fresh each time;
- **cold start against the floor**: spawn to the ``initialize`` answer of ``servers/floor_anyio.py``
  (anyio on asyncio reading stdin, orjson, nothing else) and of ours, alternated, measured by
  ``loadclient.bench_server`` as in the main table; what ours adds is the difference of the medians;
- **memory over stdio**: one process serves N echo calls (32 in flight); ``VmRSS`` is read at each
  checkpoint (1,000 and 100,000 calls by default);
- **memory over HTTP sessions**: one server sees N sessions opened (``initialize``) and closed
  (``DELETE`` with its ``Mcp-Session-Id``) one after the other on a keep-alive connection;
  ``VmRSS`` of the process tree at each checkpoint (1,000 and 10,000 by default).

Every function returns a result with a ``status`` and never raises for a server's faults.
"""

from __future__ import annotations

import contextlib
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import orjson
from http_loadclient import (
    HOST,
    PATH,
    Connection,
    HttpResponse,
    HttpServer,
    _descendants,
    encode_post,
    sse_messages,
    tree_cpu_seconds,
)
from loadclient import (
    INITIALIZE_REQUEST,
    OPENING_ID,
    BenchConfig,
    BenchError,
    Era,
    Status,
    StdioServer,
    _Ids,
    bench_server,
    read_cpu_seconds,
)

_IMPORTTIME_LINE = re.compile(rb"^import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S.*)$")


def read_rss_kib(pid: int) -> int:
    """Current resident set size (VmRSS) of ``pid`` in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise BenchError(f"no VmRSS in /proc/{pid}/status")


def tree_rss_kib(pid: int) -> int:
    total = 0
    for member in _descendants(pid):
        with contextlib.suppress(OSError, ValueError, BenchError):
            total += read_rss_kib(member)
    return total


# -- tools/list ----------------------------------------------------------------------------------


@dataclass
class ToolsListResult:
    status: Status
    reason: str | None = None
    calls: int = 0
    seconds: float = 0.0
    server_cpu_seconds: float = 0.0
    response_bytes: int = 0  # one listing: its response lines (newlines excluded) or HTTP bodies
    tool_count: int = 0
    pages: int = 0

    @property
    def ms_per_call(self) -> float:
        return self.seconds / self.calls * 1000 if self.calls else 0.0

    @property
    def server_cpu_ms_per_call(self) -> float:
        return self.server_cpu_seconds / self.calls * 1000 if self.calls else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reason": self.reason,
            "calls": self.calls,
            "seconds": self.seconds,
            "ms_per_call": self.ms_per_call,
            "server_cpu_ms_per_call": self.server_cpu_ms_per_call,
            "response_bytes": self.response_bytes,
            "tool_count": self.tool_count,
            "pages": self.pages,
        }


def _list_request(request_id: int, cursor: str | None = None) -> bytes:
    if cursor is None:
        return b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n' % request_id
    params = orjson.dumps({"cursor": cursor})
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":%s}\n' % (request_id, params)


def _next_cursor(line: bytes) -> str | None:
    """The ``nextCursor`` of a tools/list response line (parsed only when the bytes say it is there)."""
    if b'"nextCursor"' not in line:
        return None
    cursor = orjson.loads(line).get("result", {}).get("nextCursor")
    return cursor if isinstance(cursor, str) else None


def _tools_of(pages: Sequence[bytes], result: ToolsListResult) -> None:
    """Check that every page of one listing carries tools; record their count, pages and bytes."""
    tools: list[Any] = []
    for page in pages:
        listed = orjson.loads(page).get("result", {}).get("tools")
        if not isinstance(listed, list):
            raise BenchError(f"tools/list gave no tools: {page[:200]!r}")
        tools += listed
    result.tool_count = len(tools)
    result.pages = len(pages)
    result.response_bytes = sum(len(page) for page in pages)


def _listings(fetch: Callable[[bytes, int], bytes], deadline: float) -> Callable[[], list[bytes]]:
    """A function making one whole listing, as a client does: the first page, then every
    ``nextCursor``; ``fetch(request line, id)`` sends a page's request and returns its response."""
    request_id = OPENING_ID + 1

    def list_all() -> list[bytes]:
        nonlocal request_id
        pages, cursor = [], None
        while True:
            pages.append(fetch(_list_request(request_id, cursor), request_id))
            request_id += 1
            if time.perf_counter() > deadline:
                raise BenchError("timed out")
            cursor = _next_cursor(pages[-1])
            if cursor is None:
                return pages

    return list_all


def _time_listings(
    list_all: Callable[[], list[bytes]],
    calls: int,
    warmup: int,
    server_cpu: Callable[[], float],
    result: ToolsListResult,
) -> None:
    """Warm up, check one listing, then time ``calls`` listings (the last one checked again after
    the clock stopped: the same tools)."""
    for _ in range(warmup):
        list_all()
    _tools_of(list_all(), result)
    last: list[bytes] = []
    cpu_before = server_cpu()
    start = time.perf_counter()
    for _ in range(calls):
        last = list_all()
    result.seconds = time.perf_counter() - start
    result.server_cpu_seconds = server_cpu() - cpu_before
    result.calls = calls
    check = ToolsListResult(status="ok")
    _tools_of(last, check)
    if calls and check.tool_count != result.tool_count:
        raise BenchError(f"the last listing had {check.tool_count} tools, the first {result.tool_count}")


def _await_response(server: StdioServer, request_id: int, deadline: float) -> bytes:
    """The line answering ``request_id`` (other lines, notifications say, are skipped)."""
    marker = b'"id":%d' % request_id
    while True:
        for line in server.read_lines(deadline):
            if marker in line and b'"method"' not in line[:40]:
                return line


def bench_tools_list(
    argv: Sequence[str],
    *,
    calls: int,
    warmup: int,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float = 120.0,
) -> ToolsListResult:
    """Spawn ``argv`` (``env`` sets ``MCPBENCH_TOOLS``), shake hands, time ``calls`` whole listings
    (every page: a server that paginates pays for the extra round trips)."""
    server = StdioServer(argv, cwd=cwd, env=env, era="handshake")
    result = ToolsListResult(status="ok")
    try:
        server.spawn()
    except OSError as exc:
        server.close_stderr()
        return ToolsListResult(status="unavailable", reason=f"cannot spawn: {exc}")
    try:
        server.open(time.perf_counter() + 30.0)
        deadline = time.perf_counter() + timeout

        def fetch(line: bytes, request_id: int) -> bytes:
            server.send(line)
            return _await_response(server, request_id, deadline)

        cpu = partial(read_cpu_seconds, server.pid)
        _time_listings(_listings(fetch, deadline), calls, warmup, cpu, result)
    except (BenchError, OSError, ValueError) as exc:
        result.status = "failed"
        result.reason = f"{exc}; stderr: {server.stderr_tail()[-300:]}"
    finally:
        server.shutdown()
        server.close_stderr()
    return result


def listing_page(response: HttpResponse, request_id: int) -> bytes:
    """The JSON-RPC response answering ``request_id`` in ``response``: the body itself when it is
    ``application/json`` (only looked at, not parsed: the client must stay cheap), else the message
    of the event stream that answers it, re-encoded."""
    if response.status != 200:
        raise BenchError(f"tools/list: HTTP {response.status}: {response.body[:200]!r}")
    if response.content_type == b"application/json":
        if b'"id":%d' % request_id not in response.body:
            raise BenchError(f"tools/list: not the answer to id {request_id}: {response.body[:200]!r}")
        return response.body
    if response.content_type == b"text/event-stream":
        for message in sse_messages(response.body):
            if isinstance(message, dict) and "method" not in message and message.get("id") == request_id:
                return orjson.dumps(message)
    raise BenchError(f"tools/list: no answer to id {request_id} in {response.body[:200]!r}")


def bench_tools_list_http(
    argv: Sequence[str],
    *,
    calls: int,
    warmup: int,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float = 120.0,
) -> ToolsListResult:
    """:func:`bench_tools_list` over Streamable HTTP: spawn ``argv`` (``{port}`` replaced), shake
    hands (``initialize``, ``notifications/initialized``), then time ``calls`` whole listings, each
    page one POST on the same keep-alive connection with the session id and the negotiated
    ``MCP-Protocol-Version``. ``response_bytes`` counts the bodies (headers excluded)."""
    server = HttpServer(argv, cwd=cwd, env=env, era="handshake")
    result = ToolsListResult(status="ok")
    try:
        server.spawn()
    except OSError as exc:
        server.close_output()
        return ToolsListResult(status="unavailable", reason=f"cannot spawn: {exc}")
    phase = "start"
    try:
        connection = server.wait_for_port(time.perf_counter() + 30.0)
        server.open(connection)
        phase = "listing"

        def fetch(line: bytes, request_id: int) -> bytes:
            body = line[:-1]  # no newline in an HTTP body
            return listing_page(connection.roundtrip(server.post(body, b"tools/list", None)), request_id)

        deadline = time.perf_counter() + timeout
        cpu = partial(tree_cpu_seconds, server.pid)
        _time_listings(_listings(fetch, deadline), calls, warmup, cpu, result)
    except (BenchError, OSError, ValueError) as exc:
        result.status = "failed" if phase == "listing" else "unavailable"
        result.reason = f"{phase}: {exc}; output: {server.output_tail()[-300:]}"
    finally:
        server.shutdown()
        server.close_output()
    return result


# -- import time ---------------------------------------------------------------------------------


@dataclass
class ImportTimeResult:
    status: Status
    statement: str
    runs_ms: list[float] = field(default_factory=list)
    reason: str | None = None

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.runs_ms) if self.runs_ms else None

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "statement": self.statement,
            "runs_ms": self.runs_ms,
            "median_ms": self.median_ms,
            "reason": self.reason,
        }


_MARK = b"@@bench-import-statement@@"


def statement_import_us(stderr: bytes) -> int | None:
    """Cumulative µs of the imports after the marker: the sum over the top-level lines of
    ``-X importtime`` (those not nested under another import: one space after the last ``|``)."""
    _, marked, after = stderr.partition(_MARK)
    if not marked:
        return None
    total = 0
    for line in after.splitlines():
        match = _IMPORTTIME_LINE.match(line)
        if match and not match.group(3):
            total += int(match.group(2))
    return total


def import_time(statement: str, runs: int, *, python: str = sys.executable, cwd: Path) -> ImportTimeResult:
    """What ``statement`` costs in imports, per fresh interpreter, from ``-X importtime``.

    The interpreter's own start-up imports are left out: a marker written to stderr just before
    the statement separates them. A lazy package is charged for whatever the statement pulls in
    (``from jsonrpc_mcp import Server`` loads more than ``import jsonrpc_mcp``)."""
    result = ImportTimeResult(status="ok", statement=statement)
    code = f"import sys; sys.stderr.buffer.write({_MARK!r} + b'\\n'); sys.stderr.flush(); {statement}"
    for _ in range(runs):
        done = subprocess.run(
            [python, "-X", "importtime", "-c", code], capture_output=True, cwd=cwd, timeout=60, check=False
        )
        cumulative = statement_import_us(done.stderr)
        if done.returncode != 0 or cumulative is None:
            result.status = "failed"
            result.reason = f"exit {done.returncode}: {done.stderr[-300:].decode(errors='replace')}"
            return result
        result.runs_ms.append(cumulative / 1000)
    return result


# -- cold start against the floor -----------------------------------------------------------------


@dataclass
class ColdStartResult:
    """Cold starts (ms, spawn to the ``initialize`` answer) per server, the servers alternated."""

    status: Status
    runs_ms: dict[str, list[float]] = field(default_factory=dict)
    reason: str | None = None

    def median_ms(self, name: str) -> float | None:
        runs = self.runs_ms.get(name)
        return statistics.median(runs) if runs else None

    def added_ms(self, name: str, floor: str) -> float | None:
        """What ``name`` adds to ``floor``: the difference of the medians."""
        mine, base = self.median_ms(name), self.median_ms(floor)
        return None if mine is None or base is None else mine - base

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "runs_ms": self.runs_ms,
            "median_ms": {name: self.median_ms(name) for name in self.runs_ms},
            "reason": self.reason,
        }


# One echo call after the opening, so that a server that starts but cannot answer is seen failing.
_COLD_START_CONFIG = BenchConfig(calls=1, inflight_calls=1, inflight=1, warmup=0, phase_timeout=30.0)


def cold_starts(
    servers: Mapping[str, Sequence[str]], rounds: int, *, cwd: Path, env: Mapping[str, str] | None = None
) -> ColdStartResult:
    """Spawn each server ``rounds`` times (A B A B ...), each time measured by ``bench_server``:
    the cold start of the main table, then one echo call, then shutdown."""
    result = ColdStartResult(status="ok", runs_ms={name: [] for name in servers})
    for _ in range(rounds):
        for name, argv in servers.items():
            run = bench_server(argv, _COLD_START_CONFIG, cwd=cwd, env=env)
            if run.status != "ok" or run.cold_start_seconds is None:
                result.status = run.status if run.status != "ok" else "failed"
                result.reason = f"{name}: {run.reason} {run.stderr_tail[-300:]}".strip()
                return result
            result.runs_ms[name].append(run.cold_start_seconds * 1000)
    return result


# -- memory --------------------------------------------------------------------------------------


@dataclass
class MemoryResult:
    status: Status
    what: str  # "calls" or "sessions"
    points: list[tuple[int, float]] = field(default_factory=list)  # (count, RSS MiB)
    seconds: float = 0.0
    reason: str | None = None

    @property
    def delta_mib(self) -> float | None:
        return self.points[-1][1] - self.points[0][1] if len(self.points) >= 2 else None

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "what": self.what,
            "rss_mib": {str(count): rss for count, rss in self.points},
            "delta_mib": self.delta_mib,
            "seconds": self.seconds,
            "reason": self.reason,
        }


def memory_stdio(
    argv: Sequence[str],
    checkpoints: Sequence[int],
    *,
    cwd: Path,
    env: Mapping[str, str],
    inflight: int = 32,
    era: Era = "handshake",
    timeout: float = 300.0,
) -> MemoryResult:
    """One process of ``argv`` serves echo calls; its RSS after each checkpoint's count of calls."""
    server = StdioServer(argv, cwd=cwd, env=env, era=era)
    result = MemoryResult(status="ok", what="calls")
    try:
        server.spawn()
    except OSError as exc:
        server.close_stderr()
        return MemoryResult(status="unavailable", what="calls", reason=f"cannot spawn: {exc}")
    ids = _Ids(era)
    done = 0
    start = time.perf_counter()
    try:
        server.open(start + 30.0)
        deadline = start + timeout
        for checkpoint in sorted(checkpoints):
            while done < checkpoint:
                batch = min(checkpoint - done, 10_000)  # encoded in slices: the client stays small
                tally = server.pipelined(ids.take(batch), inflight, deadline)
                if tally.errors:
                    raise BenchError(f"{tally.errors} errors, first: {tally.first_error}")
                done += batch
            result.points.append((checkpoint, read_rss_kib(server.pid) / 1024))
    except (BenchError, OSError) as exc:
        result.status = "failed"
        result.reason = f"after {done} calls: {exc}"
    finally:
        result.seconds = time.perf_counter() - start
        server.shutdown()
        server.close_stderr()
    return result


def _delete(port: int, session_id: bytes, protocol_version: bytes) -> bytes:
    return (
        b"DELETE %s HTTP/1.1\r\nHost: %s:%d\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: %s\r\n"
        b"Content-Length: 0\r\n\r\n" % (PATH.encode(), HOST.encode(), port, session_id, protocol_version)
    )


def memory_http_sessions(
    argv: Sequence[str],
    checkpoints: Sequence[int],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float = 300.0,
) -> MemoryResult:
    """One HTTP server sees sessions opened (``initialize``) and closed (``DELETE``), one at a time."""
    server = HttpServer(argv, cwd=cwd, env=env, era="handshake")
    result = MemoryResult(status="ok", what="sessions")
    try:
        server.spawn()
    except OSError as exc:
        server.close_output()
        return MemoryResult(status="unavailable", what="sessions", reason=f"cannot spawn: {exc}")
    opened = 0
    start = time.perf_counter()
    initialize = encode_post(server.port, INITIALIZE_REQUEST, None, None)
    try:
        connection: Connection = server.wait_for_port(start + 30.0)
        deadline = start + timeout
        for checkpoint in sorted(checkpoints):
            while opened < checkpoint:
                response = connection.roundtrip(initialize)
                session_id = response.headers.get(b"mcp-session-id")
                if response.status != 200 or session_id is None:
                    raise BenchError(f"initialize: HTTP {response.status}, session id {session_id!r}")
                version = orjson.loads(response.body)["result"]["protocolVersion"].encode()
                closed = connection.roundtrip(_delete(server.port, session_id, version))
                if closed.status not in (200, 202, 204):
                    raise BenchError(f"DELETE: HTTP {closed.status}: {closed.body[:200]!r}")
                opened += 1
                if time.perf_counter() > deadline:
                    raise BenchError("timed out")
            result.points.append((checkpoint, tree_rss_kib(server.pid) / 1024))
    except (BenchError, OSError, ValueError, KeyError) as exc:
        result.status = "failed"
        result.reason = f"after {opened} sessions: {exc}; output: {server.output_tail()[-300:]}"
    finally:
        result.seconds = time.perf_counter() - start
        server.shutdown()
        server.close_output()
    return result
