"""The curves of the benchmark: how each server scales, ours against the peers and the raw limit.

Four curves, each measured in one run with the servers alternated (every round spawns each server
afresh, in the same order; a point is the median over the rounds):

- **payload**: ``tools/call`` of ``echo`` with a message from 100 B to 4 MiB (the largest request
  stays under ours' 4 MiB line and body limit), sequential, over stdio and over HTTP (handshake
  era); milliseconds per call. Big messages get fewer calls (a byte budget per point, at least 3);
- **tools**: servers started with 10 to 10,000 tools (``echo``, ``complex`` and dummies), over
  stdio: ``tools/list`` (following ``nextCursor``: ours pages at 1,000) and a call of ``complex``,
  whose arguments every server but raw validates against a nested schema, ms per listing and per
  call; also the cold start with that many tools;
- **concurrency**: 1 to 256 HTTP clients (one keep-alive connection each, one request outstanding
  on each), throughput and the p50 / p99 latency of a call;
- **sessions**: HTTP sessions opened (``initialize``, never closed) from 100 to 100,000 (the peers
  to 10,000: their sessions cost tens of KiB each), RSS of the server at each checkpoint and KiB
  per session; then, for ours, the idle reaping: a server with a short ``--session-timeout`` fills
  up, is left idle until the first session is gone (404), and is filled again: RSS at each step.

Every point is time-bounded (a phase stops early after its time budget, with at least a few calls),
so a slow peer shortens its curve rather than the run. Measurements never raise for a server's
faults: a failed server gets ``None`` points and its reason in ``problems``.

The data is plain JSON (``Curve.to_json``): ``x`` values and, per server, one list per metric
aligned with ``x`` (``None`` where not measured); ``plot.py`` draws them.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import os
import select
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson
from extras import read_rss_kib, tree_rss_kib
from http_loadclient import Connection, HttpResponse, HttpServer, check_call, parse_response
from http_loadclient import _Tally as HttpTally
from loadclient import ENVELOPE, ERAS, BenchError, Era, StdioServer, read_cpu_seconds, result_problem

KIB = 1024
MIB = 1024 * 1024
BODY_LIMIT = 4 * MIB  # ours refuses a line / body above it; the largest point stays just under
PAYLOAD_SIZES = (100, 1 * KIB, 10 * KIB, 100 * KIB, 1 * MIB, BODY_LIMIT - 512)
PAYLOAD_SIZES_QUICK = (100, 10 * KIB, 1 * MIB)
TOOL_COUNTS = (10, 100, 1000, 10_000)
TOOL_COUNTS_QUICK = (10, 1000, 10_000)
CONCURRENCY = (1, 4, 16, 64, 256)
CONCURRENCY_QUICK = (1, 16, 128)
SESSIONS = (100, 1000, 10_000, 100_000)
SESSIONS_QUICK = (100, 1000, 10_000)
PEER_SESSIONS_CAP = 10_000  # the peers' sessions cost 10-100x ours: 100,000 would take GiBs and minutes
PEER_SESSIONS_CAP_QUICK = 1000
RSS_CAP_MIB = 3072.0  # a server past this stops its sessions curve
COMPLEX_ARGUMENTS: dict[str, Any] = {
    "name": "bench",
    "count": 3,
    "mode": "safe",
    "tags": ["a", "b", "c"],
    "items": [{"id": i, "label": f"item {i}", "weight": i / 2} for i in range(5)],
    "options": {"dry_run": True, "depth": 2},
}


class Spec(Protocol):
    """What a curve needs of a server (``run.ServerSpec``)."""

    @property
    def name(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def argv(self) -> tuple[str, ...]: ...
    @property
    def env(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def missing(self) -> str | None: ...


@dataclass
class Curve:
    """One curve: ``x`` values and, per server, ``metric -> values`` aligned with ``x``."""

    key: str
    title: str
    x_label: str
    x: list[float]
    metrics: dict[str, str]  # metric -> its axis label
    series: dict[str, dict[str, list[float | None]]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)  # server -> label
    problems: dict[str, str] = field(default_factory=dict)  # server -> why points are missing
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # figures beside the points (JSON values)

    def value(self, server: str, metric: str, x: float) -> float | None:
        values = self.series.get(server, {}).get(metric)
        if values is None or x not in self.x:
            return None
        return values[self.x.index(x)]

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "x_label": self.x_label,
            "x": self.x,
            "metrics": self.metrics,
            "series": self.series,
            "labels": self.labels,
            "problems": self.problems,
            "notes": self.notes,
            "extra": self.extra,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Curve:
        return cls(
            key=data["key"],
            title=data["title"],
            x_label=data["x_label"],
            x=list(data["x"]),
            metrics=dict(data["metrics"]),
            series={name: {m: list(v) for m, v in s.items()} for name, s in data["series"].items()},
            labels=dict(data.get("labels", {})),
            problems=dict(data.get("problems", {})),
            notes=list(data.get("notes", [])),
            extra=dict(data.get("extra", {})),
        )


# -- pure logic: shaping the rounds into curves, percentiles, per-session memory -----------------


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) of ``values``, nearest rank; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


Rounds = list[dict[float, dict[str, float]]]  # per round: x -> metric -> value


def median_points(
    rounds: Rounds, xs: Sequence[float], metrics: Sequence[str]
) -> dict[str, list[float | None]]:
    """Per metric, the median over the rounds at each ``x`` (None where no round measured it)."""
    out: dict[str, list[float | None]] = {}
    for metric in metrics:
        values: list[float | None] = []
        for x in xs:
            found = [r[x][metric] for r in rounds if x in r and metric in r[x]]
            values.append(statistics.median(found) if found else None)
        out[metric] = values
    return out


def per_session_kib(points: Sequence[tuple[int, float]], base_mib: float) -> list[float | None]:
    """KiB per session at each checkpoint ``(sessions, RSS MiB)``: (RSS - the base) / sessions."""
    return [(rss - base_mib) * KIB / count if count else None for count, rss in points]


def marginal_kib(points: Sequence[tuple[int, float]]) -> float | None:
    """KiB per session between the last two checkpoints: what one more session costs, without the
    fixed start-up memory and the allocator's first arenas that the small counts are made of."""
    if len(points) < 2:
        return None
    (n0, rss0), (n1, rss1) = points[-2], points[-1]
    return (rss1 - rss0) * KIB / (n1 - n0) if n1 > n0 else None


def calls_for(size: int, budget_bytes: int, least: int = 3, most: int = 300) -> int:
    """Calls at one payload size: the byte budget split into requests, within [least, most]."""
    return max(least, min(most, budget_bytes // max(size, 1)))


def echo_request(request_id: int, message: str, era: Era = "handshake") -> bytes:
    params: dict[str, Any] = {"name": "echo", "arguments": {"message": message}}
    if era == "modern":
        params["_meta"] = ENVELOPE
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


def complex_request(request_id: int) -> bytes:
    params = {"name": "complex", "arguments": COMPLEX_ARGUMENTS}
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


def list_request(request_id: int, cursor: str | None) -> bytes:
    params = {} if cursor is None else {"cursor": cursor}
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": params})


def response_problem(msg: Any, request_id: int) -> str | None:
    """Why a decoded response does not answer ``request_id`` with a result that counts."""
    if not isinstance(msg, dict) or msg.get("id") != request_id:
        return f"not the response to {request_id}"
    return result_problem(msg.get("result"), "handshake")


# -- stdio: a reader for large lines (the load client's suits small ones) -------------------------


class BigStdio:
    """A spawned stdio server read in 1 MiB chunks, a line assembled once (no quadratic copies)."""

    def __init__(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> None:
        self.server = StdioServer(argv, cwd=cwd, env=env, read_timeout=60.0)
        self._pending: list[bytes] = []
        self._lines: list[bytes] = []

    def __enter__(self) -> BigStdio:
        self.server.spawn()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.close_stderr()

    @property
    def pid(self) -> int:
        return self.server.pid

    def line(self, deadline: float) -> bytes:
        fd = self.server._out_fd
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while not self._lines:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise BenchError("timed out waiting for the server")
            if not poller.poll(min(remaining, 60.0) * 1000):
                continue
            chunk = os.read(fd, MIB)
            if not chunk:
                raise BenchError(f"server closed its stdout: {self.server.stderr_tail()[-300:]}")
            if b"\n" not in chunk:
                self._pending.append(chunk)
                continue
            head, *complete, rest = chunk.split(b"\n")
            self._lines.append(b"".join([*self._pending, head]))
            self._lines.extend(complete)
            self._pending = [rest] if rest else []
        return self._lines.pop(0)

    def request(self, data: bytes, request_id: int, deadline: float) -> Any:
        """Send one request line, return the decoded response to it (skipping notifications)."""
        self.server.send(data + b"\n")
        while True:
            line = self.line(deadline)
            if not line.strip():
                continue
            msg = orjson.loads(line)
            if isinstance(msg, dict) and "method" in msg:
                continue
            problem = response_problem(msg, request_id)
            if problem is not None:
                raise BenchError(f"{problem}: {line[:200]!r}")
            return msg

    def open(self, deadline: float) -> None:
        self.server.open(deadline)


# -- HTTP: a connection that reads a large body into one buffer ----------------------------------


def read_response(connection: Connection, deadline: float) -> HttpResponse:
    """One response on ``connection``: with ``Content-Length``, the body is received into a buffer
    of that size; otherwise (chunked) the parser of the load client is used."""
    sock = connection.sock
    head = connection.buffer
    connection.buffer = b""
    while b"\r\n\r\n" not in head:
        if time.perf_counter() > deadline:
            raise BenchError("timed out")
        chunk = sock.recv(1 << 16)
        if not chunk:
            raise BenchError("the server closed the connection")
        head += chunk
    end = head.index(b"\r\n\r\n") + 4
    length: int | None = None
    for line in head[:end].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if length is None:
        buf = head
        while (parsed := parse_response(buf)) is None:
            chunk = sock.recv(MIB)
            if not chunk:
                raise BenchError("the server closed the connection")
            buf += chunk
        return parsed[0]
    body = bytearray(length)
    have = min(length, len(head) - end)
    body[:have] = head[end : end + have]
    view = memoryview(body)
    while have < length:
        got = sock.recv_into(view[have:], min(MIB, length - have))
        if not got:
            raise BenchError("the server closed the connection")
        have += got
    parsed = parse_response(head[:end] + bytes(body))
    if parsed is None:
        raise BenchError("could not parse a response")
    return parsed[0]


def http_call(
    server: HttpServer, connection: Connection, body: bytes, request_id: int, deadline: float
) -> Any:
    connection.send(server.post(body))
    response = read_response(connection, deadline)
    tally = HttpTally()
    result = check_call(response, request_id, tally)
    if tally.errors:
        raise BenchError(tally.first_error or "error")
    return result


def _start_http(spec: Spec, cwd: Path, env: Mapping[str, str]) -> tuple[HttpServer, Connection]:
    server = HttpServer(spec.argv, cwd=cwd, env={**env, **dict(spec.env)}, era="handshake", read_timeout=60.0)
    server.spawn()
    try:
        connection = server.wait_for_port(time.perf_counter() + 60.0)
        server.open(connection)
    except BaseException:
        server.shutdown()
        server.close_output()
        raise
    return server, connection


def _stop_http(server: HttpServer) -> None:
    server.shutdown()
    server.close_output()


# -- the curves ------------------------------------------------------------------------------------


@dataclass
class CurveOptions:
    cwd: Path
    env: dict[str, str]
    rounds: int = 2
    quick: bool = False
    point_seconds: float = 2.0  # time budget of one point's measured phase
    progress: Callable[[str], None] = lambda line: None


def _timed_calls(do: Callable[[int], None], first_id: int, calls: int, seconds: float) -> tuple[int, float]:
    """Run ``do(id)`` up to ``calls`` times, stopping after ``seconds`` (at least 2 calls)."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        done = 0
        while done < calls:
            do(first_id + done)
            done += 1
            if done >= 2 and time.perf_counter() - start > seconds:
                break
        return done, time.perf_counter() - start
    finally:
        gc.enable()


def _run_rounds(
    curve: Curve,
    specs: Sequence[Spec],
    options: CurveOptions,
    measure: Callable[[Spec], dict[float, dict[str, float]]],
) -> None:
    """Alternate the servers over the rounds; medians into ``curve.series``."""
    rounds: dict[str, Rounds] = {spec.name: [] for spec in specs}
    curve.extra["rounds"] = options.rounds
    for spec in specs:
        curve.labels[spec.name] = spec.label
        if spec.missing is not None:
            curve.problems[spec.name] = spec.missing
    for round_no in range(1, options.rounds + 1):
        for spec in specs:
            if spec.name in curve.problems:
                continue
            start = time.perf_counter()
            try:
                rounds[spec.name].append(measure(spec))
                status = "ok"
            except (BenchError, OSError, ValueError, KeyError, orjson.JSONDecodeError) as exc:
                curve.problems[spec.name] = f"{type(exc).__name__}: {exc}"[:400]
                status = f"FAILED: {curve.problems[spec.name]}"
            options.progress(
                f"[curve {curve.key} round {round_no}/{options.rounds}] {spec.name}: {status} "
                f"in {time.perf_counter() - start:.1f} s"
            )
    for spec in specs:
        if rounds[spec.name]:
            curve.series[spec.name] = median_points(rounds[spec.name], curve.x, list(curve.metrics))


def payload_curve(transport: str, specs: Sequence[Spec], options: CurveOptions) -> Curve:
    sizes = PAYLOAD_SIZES_QUICK if options.quick else PAYLOAD_SIZES
    curve = Curve(
        f"payload_{transport}",
        f"tools/call echo over {transport}: payload size (sequential)",
        "message bytes",
        [float(size) for size in sizes],
        {"ms_per_call": "ms per call", "mib_per_s": "MiB/s echoed"},
    )
    budget = (8 if options.quick else 24) * MIB

    def measure(spec: Spec) -> dict[float, dict[str, float]]:
        points: dict[float, dict[str, float]] = {}
        if transport == "stdio":
            with BigStdio(spec.argv, options.cwd, {**options.env, **dict(spec.env)}) as server:
                server.open(time.perf_counter() + 60.0)
                next_id = 1
                for size in sizes:
                    message = "x" * size
                    deadline = time.perf_counter() + 120.0
                    server.request(echo_request(next_id, message), next_id, deadline)  # warm-up
                    next_id += 1
                    requests: dict[int, bytes] = {}
                    calls = calls_for(size, budget)
                    for i in range(next_id, next_id + calls):
                        requests[i] = echo_request(i, message)

                    def do(
                        i: int,
                        server: BigStdio = server,
                        deadline: float = deadline,
                        sent: dict[int, bytes] = requests,
                    ) -> None:
                        server.request(sent[i], i, deadline)

                    done, seconds = _timed_calls(do, next_id, calls, options.point_seconds)
                    next_id += calls
                    points[float(size)] = _payload_point(done, seconds, size)
            return points
        server_h, connection = _start_http(spec, options.cwd, options.env)
        try:
            next_id = 1
            for size in sizes:
                message = "x" * size
                deadline = time.perf_counter() + 120.0
                http_call(server_h, connection, echo_request(next_id, message), next_id, deadline)
                next_id += 1
                calls = calls_for(size, budget)
                bodies = {i: echo_request(i, message) for i in range(next_id, next_id + calls)}

                def do_http(i: int, deadline: float = deadline, sent: dict[int, bytes] = bodies) -> None:
                    http_call(server_h, connection, sent[i], i, deadline)

                done, seconds = _timed_calls(do_http, next_id, calls, options.point_seconds)
                next_id += calls
                points[float(size)] = _payload_point(done, seconds, size)
        finally:
            _stop_http(server_h)
        return points

    _run_rounds(curve, specs, options, measure)
    return curve


def _payload_point(calls: int, seconds: float, size: int) -> dict[str, float]:
    return {"ms_per_call": seconds / calls * 1000, "mib_per_s": calls * size / seconds / MIB}


def tools_curve(specs: Sequence[Spec], options: CurveOptions) -> Curve:
    """Over stdio: each server started with ``count`` tools (echo, complex, dummies)."""
    counts = TOOL_COUNTS_QUICK if options.quick else TOOL_COUNTS
    curve = Curve(
        "tools",
        "tool count over stdio: tools/list, and a validated call of a complex-schema tool",
        "registered tools",
        [float(count) for count in counts],
        {
            "list_ms": "ms per tools/list (all pages)",
            "call_ms": "ms per call of 'complex'",
            "call_cpu_us": "server CPU µs per call of 'complex'",
            "cold_start_ms": "cold start ms",
            "list_bytes": "bytes of one listing",
        },
    )
    curve.notes.append(
        "ours pages tools/list at 1,000 tools: 10,000 tools are 10 round trips, the others one"
    )

    def measure(spec: Spec) -> dict[float, dict[str, float]]:
        points: dict[float, dict[str, float]] = {}
        for count in counts:
            env = {**options.env, **dict(spec.env), "MCPBENCH_TOOLS": str(count - 2), "MCPBENCH_COMPLEX": "1"}
            with BigStdio(spec.argv, options.cwd, env) as server:
                start = time.perf_counter()
                server.open(start + 120.0)
                cold = (time.perf_counter() - start) * 1000
                deadline = time.perf_counter() + 120.0
                ids = iter(range(1, 1_000_000))
                listed: list[int] = []

                def listing(
                    _: int,
                    server: BigStdio = server,
                    deadline: float = deadline,
                    ids: Iterator[int] = ids,
                    listed: list[int] = listed,
                ) -> None:
                    cursor: str | None = None
                    size = tools = 0
                    while True:
                        request_id = next(ids)
                        msg = server.request(list_request(request_id, cursor), request_id, deadline)
                        result = msg["result"]
                        tools += len(result["tools"])
                        size += len(orjson.dumps(msg))
                        cursor = result.get("nextCursor")
                        if not cursor:
                            break
                    listed[:] = [tools, size]

                listing(0)  # warm-up, and the size of a listing
                if listed[0] != count:
                    raise BenchError(f"tools/list gave {listed[0]} tools, not {count}")
                done, seconds = _timed_calls(listing, 0, 50, options.point_seconds)
                list_ms = seconds / done * 1000

                def call(
                    _: int, server: BigStdio = server, deadline: float = deadline, ids: Iterator[int] = ids
                ) -> None:
                    request_id = next(ids)
                    msg = server.request(complex_request(request_id), request_id, deadline)
                    if msg["result"]["content"][0]["text"] not in ("bench:3:5", "0"):  # raw: no tool body
                        raise BenchError(f"complex answered {msg['result']}")

                call(0)
                cpu = read_cpu_seconds(server.pid)
                done, seconds = _timed_calls(call, 0, 100_000, options.point_seconds)
                cpu = read_cpu_seconds(server.pid) - cpu
                points[float(count)] = {
                    "list_ms": list_ms,
                    "call_ms": seconds / done * 1000,
                    "call_cpu_us": cpu / done * 1e6,
                    "cold_start_ms": cold,
                    "list_bytes": float(listed[1]),
                }
        return points

    _run_rounds(curve, specs, options, measure)
    return curve


def concurrency_curve(specs: Sequence[Spec], options: CurveOptions) -> Curve:
    """Over HTTP (handshake era): N connections, one request outstanding on each."""
    levels = CONCURRENCY_QUICK if options.quick else CONCURRENCY
    curve = Curve(
        "concurrency",
        "HTTP clients (one keep-alive connection each, one call outstanding on each)",
        "concurrent clients",
        [float(level) for level in levels],
        {"calls_per_s": "calls/s", "p50_ms": "p50 latency ms", "p99_ms": "p99 latency ms"},
    )

    def measure(spec: Spec) -> dict[float, dict[str, float]]:
        points: dict[float, dict[str, float]] = {}
        server, first = _start_http(spec, options.cwd, options.env)
        try:
            connections = [first]
            next_id = 1
            for level in levels:
                while len(connections) < level:
                    connections.append(server.connect())
                warm = [(i, server.post(echo_request(i, "hello"))) for i in range(next_id, next_id + level)]
                next_id += level
                latencies, _ = _concurrent(server, connections, warm, 60.0)  # one unmeasured call each
                calls = max(4 * level, 200_000)
                requests = (
                    (i, server.post(echo_request(i, "hello"))) for i in range(next_id, next_id + calls)
                )
                latencies, seconds = _concurrent(server, connections, requests, options.point_seconds)
                next_id += calls
                points[float(level)] = {
                    "calls_per_s": len(latencies) / seconds,
                    "p50_ms": (percentile(latencies, 50) or 0.0) * 1000,
                    "p99_ms": (percentile(latencies, 99) or 0.0) * 1000,
                }
        finally:
            _stop_http(server)
        return points

    _run_rounds(curve, specs, options, measure)
    return curve


def _concurrent(
    server: HttpServer, connections: Sequence[Connection], requests: Any, seconds: float
) -> tuple[list[float], float]:
    """Keep one request outstanding on each connection until ``requests`` run out or ``seconds``
    pass (then the outstanding ones are drained); the latency of each call and the elapsed time."""
    tally = HttpTally()
    by_fd = {c.fd: c for c in connections}
    sent_at: dict[int, tuple[int, float]] = {}
    latencies: list[float] = []
    poller = select.epoll()
    clock = time.perf_counter
    start = clock()
    stop_sending = start + seconds
    hard = start + seconds + 60.0
    gc.collect()
    gc.disable()
    try:
        for connection in connections:
            nxt = (
                next(requests, None)
                if not isinstance(requests, list)
                else (requests.pop(0) if requests else None)
            )
            if nxt is None:
                break
            poller.register(connection.fd, select.EPOLLIN)
            sent_at[connection.fd] = (nxt[0], clock())
            connection.send(nxt[1])
        while sent_at:
            if clock() > hard:
                raise BenchError(f"timed out with {len(sent_at)} calls outstanding")
            for fd, _ in poller.poll(1.0):
                connection = by_fd[fd]
                response = connection.feed()
                if response is None:
                    continue
                request_id, at = sent_at.pop(fd)
                now = clock()
                latencies.append(now - at)
                check_call(response, request_id, tally)
                if now < stop_sending:
                    if isinstance(requests, list):
                        nxt = requests.pop(0) if requests else None
                    else:
                        nxt = next(requests, None)
                    if nxt is not None:
                        sent_at[fd] = (nxt[0], clock())
                        connection.send(nxt[1])
        elapsed = clock() - start
    finally:
        gc.enable()
        poller.close()
    if tally.errors:
        raise BenchError(f"{tally.errors} errors, first: {tally.first_error}")
    return latencies, elapsed


@dataclass
class Reaping:
    """Ours with a short idle timeout: RSS full, after the reaper emptied it, and full again."""

    sessions: int = 0
    timeout: float = 0.0
    rss_mib: dict[str, float] = field(default_factory=dict)  # before, full, reaped, refilled
    reaped_after_s: float | None = None
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _open_sessions(server: HttpServer, connection: Connection, count: int, deadline: float) -> list[bytes]:
    """``count`` sessions opened with ``initialize`` (and ``initialized``) and left open."""
    from http_loadclient import encode_post
    from loadclient import INITIALIZE_REQUEST, INITIALIZED_NOTIFICATION

    initialize = encode_post(server.port, INITIALIZE_REQUEST, None, None)
    ids = []
    for _ in range(count):
        response = connection.roundtrip(initialize)
        session_id = response.headers.get(b"mcp-session-id")
        if response.status != 200 or session_id is None:
            raise BenchError(f"initialize: HTTP {response.status}, session id {session_id!r}")
        version = _protocol_version(response)
        ack = connection.roundtrip(encode_post(server.port, INITIALIZED_NOTIFICATION, session_id, version))
        if ack.status != 202:
            raise BenchError(f"notifications/initialized: HTTP {ack.status}")
        ids.append(session_id)
        if time.perf_counter() > deadline:
            raise TimeoutError
    return ids


def _protocol_version(response: HttpResponse) -> bytes:
    from http_loadclient import sse_messages

    if response.content_type == b"text/event-stream":
        msg = next(m for m in sse_messages(response.body) if isinstance(m, dict) and "result" in m)
    else:
        msg = orjson.loads(response.body)
    version: str = msg["result"]["protocolVersion"]
    return version.encode()


def sessions_curve(specs: Sequence[Spec], options: CurveOptions, peer_cap: int | None = None) -> Curve:
    """RSS against open (idle) sessions; ours to 100,000, the peers to ``peer_cap``."""
    levels = SESSIONS_QUICK if options.quick else SESSIONS
    cap = peer_cap or (PEER_SESSIONS_CAP_QUICK if options.quick else PEER_SESSIONS_CAP)
    curve = Curve(
        "sessions",
        "idle HTTP sessions (initialize, then nothing): server memory",
        "open sessions",
        [float(level) for level in levels],
        {"rss_mib": "RSS MiB", "kib_per_session": "KiB per session (RSS over the start)"},
    )
    curve.notes.append(f"the peers stop at {cap:,} sessions (their sessions cost 10-100x ours)")
    seconds_cap = 120.0 if options.quick else 240.0

    def measure(spec: Spec) -> dict[float, dict[str, float]]:
        server, connection = _start_http(spec, options.cwd, options.env)
        points: list[tuple[int, float]] = []
        try:
            base = tree_rss_kib(server.pid) / KIB
            opened = 1  # the session of the opening handshake counts (the SDK's and ours' limit is 10,000)
            deadline = time.perf_counter() + seconds_cap
            limit = levels[-1] if spec.name.startswith("ours") else cap
            for level in levels:
                if level > limit:
                    break
                try:
                    _open_sessions(server, connection, level - opened, deadline)
                except TimeoutError:
                    curve.notes.append(f"{spec.name}: stopped before {level:,} sessions (time budget)")
                    break
                except BenchError as exc:  # e.g. a session limit: the points so far stand
                    curve.notes.append(f"{spec.name}: stopped before {level:,} sessions: {exc}")
                    break
                opened = level
                points.append((level, tree_rss_kib(server.pid) / KIB))
                if points[-1][1] > RSS_CAP_MIB:
                    curve.notes.append(f"{spec.name}: stopped at {level:,} sessions (RSS above the cap)")
                    break
        finally:
            _stop_http(server)
        per = per_session_kib(points, base)
        marginal = marginal_kib(points)
        if marginal is not None:
            marginals.setdefault(spec.name, []).append(marginal)
        return {
            float(count): {"rss_mib": rss, **({"kib_per_session": k} if k is not None else {})}
            for (count, rss), k in zip(points, per, strict=True)
        }

    marginals: dict[str, list[float]] = {}
    # one round: memory moves little from spawn to spawn, and ours' 100,000 sessions take a minute
    _run_rounds(curve, specs, dataclasses.replace(options, rounds=1), measure)
    curve.extra["marginal_kib"] = {name: statistics.median(values) for name, values in marginals.items()}
    return curve


def marginal_of(curve: Curve, server: str) -> float | None:
    """The marginal KiB per session of ``server`` (between its last two checkpoints)."""
    value = curve.extra.get("marginal_kib", {}).get(server)
    return None if value is None else float(value)


def reaping(spec: Spec, options: CurveOptions, sessions: int = 10_000, timeout: float = 10.0) -> Reaping:
    """Ours with ``--session-timeout``: fill, wait until the reaper ends the sessions, fill again."""
    found = Reaping(sessions=sessions, timeout=timeout)
    argv = (*spec.argv, "--max-sessions", "0", "--session-timeout", str(timeout))
    reaper_spec = _Plain(spec.name, spec.label, argv, spec.env)
    try:
        server, connection = _start_http(reaper_spec, options.cwd, options.env)
    except (BenchError, OSError) as exc:
        found.problem = str(exc)
        return found
    try:
        found.rss_mib["before"] = read_rss_kib(server.pid) / KIB
        ids = _open_sessions(server, connection, sessions, time.perf_counter() + 120.0)
        filled = time.perf_counter()
        found.rss_mib["full"] = read_rss_kib(server.pid) / KIB
        from http_loadclient import encode_post

        ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        # a probe is activity: each one asks about another session (the latest first, the last to expire)
        time.sleep(timeout)
        connection.close()  # idle for longer than uvicorn's keep-alive (5 s): it may have been closed
        connection = server.connect()
        for attempt in range(1, len(ids)):
            probe = encode_post(server.port, ping, ids[-attempt], server.protocol_version)
            if connection.roundtrip(probe).status == 404:
                break
            if time.perf_counter() - filled > timeout * 4 + 30:
                raise BenchError("the sessions were not reaped in time")
            time.sleep(0.25)
        found.reaped_after_s = time.perf_counter() - filled
        time.sleep(1.0)  # the reaper closes sessions in tasks: let them finish
        found.rss_mib["reaped"] = read_rss_kib(server.pid) / KIB
        _open_sessions(server, connection, sessions, time.perf_counter() + 120.0)
        found.rss_mib["refilled"] = read_rss_kib(server.pid) / KIB
    except (BenchError, OSError, ValueError, KeyError, TimeoutError) as exc:
        found.problem = f"{type(exc).__name__}: {exc}"
    finally:
        _stop_http(server)
    return found


@dataclass(frozen=True)
class _Plain:
    name: str
    label: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    missing: str | None = None


def with_argv(spec: Spec, *extra: str) -> _Plain:
    """``spec`` with more arguments."""
    return _Plain(spec.name, spec.label, (*spec.argv, *extra), spec.env, spec.missing)


# -- scale-out (bench/scale_out.py writes it; this only reads) -------------------------------------


def load_scale_out(path: Path) -> dict[str, dict[str, float]] | None:
    """``scale_out.json`` (written by ``bench/scale_out.py``) as ``era -> configuration -> calls/s``,
    the configurations labelled ``ours x1 (memory)``, ``ours x2 (Redis)``, ...; None if absent or
    unreadable."""
    if not path.exists():
        return None
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return normalize_scale_out(data)


def normalize_scale_out(data: Any) -> dict[str, dict[str, float]] | None:
    """The file's shape, per era: parallel lists ``instances``, ``backend`` and ``calls_per_s``."""
    if not isinstance(data, dict):
        return None
    out: dict[str, dict[str, float]] = {}
    for era in ERAS:
        table = data.get(era)
        if not isinstance(table, dict):
            continue
        columns = [table.get(key) for key in ("instances", "backend", "calls_per_s")]
        if not all(isinstance(column, list) for column in columns):
            continue
        rates: dict[str, float] = {}
        for instances, backend, rate in zip(*columns, strict=False):
            if type(instances) is int and isinstance(backend, str) and type(rate) in (int, float):
                name = "Redis" if backend == "redis" else backend
                rates[f"ours x{instances} ({name})"] = float(rate)
        if rates:
            out[era] = rates
    return out or None
