"""A raw JSON-RPC load client for MCP servers over stdio.

Built so that it is never the bottleneck: requests are pre-encoded bytes (an orjson-encoded
template with the id spliced in), written with ``os.write`` straight to the pipe, and responses
are read with ``os.read`` in large chunks and split into lines by hand, so one system call can
collect many responses when the server is fast. No asyncio, no threads: the only waiting is
``poll`` on the server's stdout, with bounded timeouts.

The measured server is the spawned process itself: its CPU time comes from ``/proc/<pid>/stat``
(utime + stime, all threads, children excluded) and its peak RSS from ``VmHWM`` in
``/proc/<pid>/status``.

Two protocol eras: ``handshake`` opens with ``initialize`` (then ``notifications/initialized``) and
sends plain ``tools/call`` requests; ``modern`` (2026-07-28) opens with ``server/discover`` (cold
start is the time to its answer) and every ``tools/call`` carries the request envelope in
``params._meta``, with no initialize at all; its results must say ``resultType: "complete"``.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, Protocol

import orjson

PROTOCOL_VERSION = "2025-06-18"
MODERN_VERSION = "2026-07-28"
INITIALIZE_ID = 0
OPENING_ID = INITIALIZE_ID  # the id of the opening request of either era

Era = Literal["handshake", "modern"]
ERAS: tuple[Era, ...] = ("handshake", "modern")
ENVELOPE: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}

INITIALIZE_REQUEST = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": INITIALIZE_ID,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }
)
INITIALIZED_NOTIFICATION = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
DISCOVER_REQUEST = orjson.dumps(
    {"jsonrpc": "2.0", "id": OPENING_ID, "method": "server/discover", "params": {"_meta": ENVELOPE}}
)
OPENING_REQUEST: dict[Era, bytes] = {"handshake": INITIALIZE_REQUEST, "modern": DISCOVER_REQUEST}

_CALL_PREFIX = b'{"jsonrpc":"2.0","id":'
_CALL_ARGUMENTS = {"name": "echo", "arguments": {"message": "hello"}}
_CALL_PARAMS: dict[Era, dict[str, Any]] = {
    "handshake": _CALL_ARGUMENTS,
    "modern": {**_CALL_ARGUMENTS, "_meta": ENVELOPE},
}
_CALL_SUFFIX: dict[Era, bytes] = {
    era: b',"method":"tools/call","params":' + orjson.dumps(params) + b"}"
    for era, params in _CALL_PARAMS.items()
}

_CLK_TCK = os.sysconf("SC_CLK_TCK")
_READ_SIZE = 1 << 16  # larger reads cost a fresh mmap per call; lines may span reads anyway
_STDERR_TAIL_BYTES = 4000

Status = Literal["ok", "failed", "unavailable"]
ShutdownHow = Literal["eof", "sigterm", "sigkill", "already-exited", "unknown"]


class BenchError(Exception):
    """The server misbehaved in a way that ends the run (exit, silence, broken pipe)."""


def call_body(request_id: int, era: Era = "handshake") -> bytes:
    """One ``tools/call`` request for the echo tool, compact JSON (with the envelope when modern)."""
    return b"%s%d%s" % (_CALL_PREFIX, request_id, _CALL_SUFFIX[era])


def encode_call(request_id: int, era: Era = "handshake") -> bytes:
    """:func:`call_body`, newline-terminated (a stdio frame)."""
    return call_body(request_id, era) + b"\n"


def result_problem(result: Any, era: Era) -> str | None:
    """Why a call's ``result`` does not count (None: it does)."""
    if not isinstance(result, dict):
        return "error response"
    if result.get("isError"):
        return "tool error result"
    if era == "modern" and result.get("resultType") != "complete":
        return "no resultType 'complete' (not served in the 2026-07-28 era)"
    return None


def opening_problem(result: Any, era: Era) -> str | None:
    """Why the answer to the opening request (``initialize`` / ``server/discover``) does not do."""
    if not isinstance(result, dict):
        return "error response"
    if era == "modern":
        versions = result.get("supportedVersions")
        if not isinstance(versions, list) or MODERN_VERSION not in versions:
            return f"server/discover does not offer {MODERN_VERSION}"
    return None


def read_cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` (summed over its threads) in seconds, from /proc/<pid>/stat."""
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    # The command name (field 2) is parenthesised and may contain spaces: split after it.
    fields = stat[stat.rindex(b")") + 2 :].split()
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5)
    return (utime + stime) / _CLK_TCK


def read_peak_rss_kib(pid: int) -> int:
    """Peak resident set size (VmHWM) of ``pid`` in KiB, from /proc/<pid>/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise BenchError(f"no VmHWM in /proc/{pid}/status")


@dataclass
class PhaseResult:
    """One measured phase: ``calls`` round trips of the echo tool."""

    calls: int
    errors: int
    seconds: float
    server_cpu_seconds: float
    client_cpu_seconds: float
    first_error: str | None = None

    @property
    def calls_per_second(self) -> float:
        return self.calls / self.seconds if self.seconds > 0 else 0.0

    @property
    def server_cpu_us_per_call(self) -> float:
        return self.server_cpu_seconds / self.calls * 1e6 if self.calls else 0.0

    @property
    def client_cpu_us_per_call(self) -> float:
        return self.client_cpu_seconds / self.calls * 1e6 if self.calls else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "errors": self.errors,
            "seconds": self.seconds,
            "calls_per_second": self.calls_per_second,
            "server_cpu_seconds": self.server_cpu_seconds,
            "server_cpu_us_per_call": self.server_cpu_us_per_call,
            "client_cpu_seconds": self.client_cpu_seconds,
            "client_cpu_us_per_call": self.client_cpu_us_per_call,
            "first_error": self.first_error,
        }


@dataclass
class RunResult:
    """Everything measured in one spawn of one server."""

    status: Status
    cold_start_seconds: float | None = None
    sequential: PhaseResult | None = None
    inflight: PhaseResult | None = None
    peak_rss_mib: float | None = None
    reason: str | None = None
    stderr_tail: str = ""
    exit_code: int | None = None
    shutdown: ShutdownHow = "unknown"
    shutdown_seconds: float | None = None
    wall_seconds: float = 0.0
    server_output_bytes: int | None = None  # what the server wrote to stdout/stderr (HTTP runs)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "cold_start_seconds": self.cold_start_seconds,
            "sequential": None if self.sequential is None else self.sequential.to_json(),
            "inflight": None if self.inflight is None else self.inflight.to_json(),
            "peak_rss_mib": self.peak_rss_mib,
            "reason": self.reason,
            "stderr_tail": self.stderr_tail,
            "exit_code": self.exit_code,
            "shutdown": self.shutdown,
            "shutdown_seconds": self.shutdown_seconds,
            "wall_seconds": self.wall_seconds,
            "server_output_bytes": self.server_output_bytes,
        }


@dataclass
class _Tally:
    """Outstanding request ids and the error count of one phase."""

    outstanding: set[int] = field(default_factory=set)
    errors: int = 0
    first_error: str | None = None

    def error(self, what: str) -> None:
        self.errors += 1
        if self.first_error is None:
            self.first_error = what[:500]


def read_tail(output: IO[bytes] | None) -> str:
    """The last bytes a server wrote to ``output`` (a temporary file), for error reports."""
    if output is None:
        return ""
    try:
        size = output.seek(0, os.SEEK_END)
        output.seek(max(0, size - _STDERR_TAIL_BYTES))
        return output.read().decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""


class StdioServer:
    """A spawned server process spoken to with newline-delimited JSON over its stdin/stdout."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        read_timeout: float = 30.0,
        era: Era = "handshake",
    ) -> None:
        self.argv = list(argv)
        self.era = era
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.read_timeout = read_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._in_fd = -1
        self._out_fd = -1
        self._poll = select.poll()
        self._buffer = b""

    @property
    def pid(self) -> int:
        if self._proc is None:
            raise BenchError("server not started")
        return self._proc.pid

    # -- process lifecycle -------------------------------------------------------------------

    def spawn(self) -> None:
        # Kept open for the server's lifetime (a pipe could fill and stall it); see close_stderr().
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        self._proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=self.cwd,
            env=self.env,
            bufsize=0,
            close_fds=True,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in_fd = self._proc.stdin.fileno()
        self._out_fd = self._proc.stdout.fileno()
        self._poll.register(self._out_fd, select.POLLIN)

    def shutdown(self, grace: float = 3.0) -> tuple[ShutdownHow, float]:
        """Close stdin, then SIGTERM, then SIGKILL, each with a bounded wait; returns how it ended."""
        proc = self._proc
        if proc is None:
            return "unknown", 0.0
        start = time.perf_counter()
        how: ShutdownHow = "already-exited" if proc.poll() is not None else "eof"
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            how = "sigterm"
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                how = "sigkill"
                proc.kill()
                proc.wait(timeout=grace)
        elapsed = time.perf_counter() - start
        if proc.stdout is not None:
            proc.stdout.close()
        return how, elapsed

    @property
    def exit_code(self) -> int | None:
        return None if self._proc is None else self._proc.poll()

    def stderr_tail(self) -> str:
        return read_tail(self._stderr)

    def close_stderr(self) -> None:
        if self._stderr is not None:
            self._stderr.close()

    # -- wire --------------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._in_fd, view) :]
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise BenchError(f"server closed its stdin ({self._exit_hint()})") from exc

    def read_lines(self, deadline: float) -> list[bytes]:
        """Block until at least one complete line has arrived (or raise); returns all complete lines."""
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise BenchError("timed out waiting for the server's output")
            if not self._poll.poll(min(remaining, self.read_timeout) * 1000):
                if remaining > self.read_timeout:
                    raise BenchError(f"no output from the server for {self.read_timeout:.0f} s")
                continue
            chunk = os.read(self._out_fd, _READ_SIZE)
            if not chunk:
                raise BenchError(f"server closed its stdout ({self._exit_hint()})")
            if b"\n" not in chunk:
                self._buffer += chunk
                continue
            lines = (self._buffer + chunk).split(b"\n")
            self._buffer = lines.pop()
            return lines

    def _exit_hint(self) -> str:
        if self._proc is None:
            return "not started"
        try:
            code = self._proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return "still running"
        return f"exit code {code}"

    # -- protocol ----------------------------------------------------------------------------

    def _handle_line(self, line: bytes, tally: _Tally) -> bool:
        """Account for one incoming line; True if it was a response to one of our requests."""
        if not line.strip():
            return False
        try:
            msg = orjson.loads(line)
        except orjson.JSONDecodeError:
            tally.error(f"invalid JSON from server: {line[:200]!r}")
            return False
        if not isinstance(msg, dict):
            tally.error(f"non-object message from server: {line[:200]!r}")
            return False
        if "method" in msg:
            # A notification (logging, progress...) or a server-to-client request: refuse the latter.
            if "id" in msg:
                reply = {
                    "jsonrpc": "2.0",
                    "id": msg["id"],
                    "error": {"code": -32601, "message": "bench client supports no requests"},
                }
                self.send(orjson.dumps(reply) + b"\n")
            return False
        msg_id = msg.get("id")
        if not isinstance(msg_id, int) or msg_id not in tally.outstanding:
            tally.error(f"response with unexpected id: {line[:200]!r}")
            return False
        tally.outstanding.discard(msg_id)
        problem = result_problem(msg.get("result"), self.era)
        if problem is not None:
            tally.error(f"{problem}: {line[:300]!r}")
        return True

    def open(self, deadline: float) -> None:
        """Send the era's opening request and wait for its answer (then ``initialized``, if any)."""
        self.send(OPENING_REQUEST[self.era] + b"\n")
        answer: Any = None
        while answer is None:
            for line in self.read_lines(deadline):
                try:
                    msg = orjson.loads(line) if line.strip() else None
                except orjson.JSONDecodeError:
                    raise BenchError(f"invalid JSON from server: {line[:200]!r}") from None
                if isinstance(msg, dict) and msg.get("id") == OPENING_ID and "method" not in msg:
                    answer = msg
        problem = opening_problem(answer.get("result"), self.era)
        if problem is not None:
            raise BenchError(f"opening failed ({problem}): {orjson.dumps(answer)[:300]!r}")
        if self.era == "handshake":
            self.send(INITIALIZED_NOTIFICATION + b"\n")

    def sequential(self, requests: Sequence[tuple[int, bytes]], deadline: float) -> _Tally:
        tally = _Tally()
        outstanding = tally.outstanding
        for request_id, data in requests:
            outstanding.add(request_id)
            self.send(data)
            while outstanding:
                for line in self.read_lines(deadline):
                    self._handle_line(line, tally)
        return tally

    def pipelined(self, requests: Sequence[tuple[int, bytes]], window: int, deadline: float) -> _Tally:
        """Keep ``window`` requests outstanding: each batch of responses is refilled with one write."""
        tally = _Tally()
        outstanding = tally.outstanding
        pending: Iterator[tuple[int, bytes]] = iter(requests)
        refill = window
        while True:
            if refill:
                batch: list[bytes] = []
                for request_id, data in itertools.islice(pending, refill):
                    outstanding.add(request_id)
                    batch.append(data)
                if batch:
                    self.send(b"".join(batch))
            if not outstanding:
                return tally
            refill = 0
            for line in self.read_lines(deadline):
                if self._handle_line(line, tally):
                    refill += 1


@dataclass
class BenchConfig:
    calls: int = 2000
    inflight_calls: int = 5000
    inflight: int = 32
    warmup: int = 100
    era: Era = "handshake"
    start_timeout: float = 30.0
    phase_timeout: float = 120.0
    read_timeout: float = 30.0


class _Ids:
    def __init__(self, era: Era) -> None:
        self._next = OPENING_ID + 1
        self._era = era

    def take(self, count: int) -> list[tuple[int, bytes]]:
        first = self._next
        self._next += count
        return [(i, encode_call(i, self._era)) for i in range(first, first + count)]


class Counted(Protocol):
    """What a phase's tally reports."""

    errors: int
    first_error: str | None


def measure_phase(run: Callable[[], Counted], calls: int, server_cpu: Callable[[], float]) -> PhaseResult:
    """Time ``run`` (garbage collection off), with the server's CPU seconds read before and after."""
    gc.collect()
    gc.disable()
    try:
        cpu_before = server_cpu()
        client_before = time.process_time()
        start = time.perf_counter()
        tally = run()
        seconds = time.perf_counter() - start
        client_cpu = time.process_time() - client_before
        cpu_used = server_cpu() - cpu_before
    finally:
        gc.enable()
    return PhaseResult(
        calls=calls,
        errors=tally.errors,
        seconds=seconds,
        server_cpu_seconds=cpu_used,
        client_cpu_seconds=client_cpu,
        first_error=tally.first_error,
    )


def _measure(
    server: StdioServer, config: BenchConfig, requests: Sequence[tuple[int, bytes]], window: int
) -> PhaseResult:
    deadline = time.perf_counter() + config.phase_timeout

    def run() -> Counted:
        if window <= 1:
            return server.sequential(requests, deadline)
        return server.pipelined(requests, window, deadline)

    return measure_phase(run, len(requests), lambda: read_cpu_seconds(server.pid))


def bench_server(
    argv: Sequence[str],
    config: BenchConfig,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> RunResult:
    """Spawn ``argv``, run every phase against it, shut it down; never raises for server faults."""
    ids = _Ids(config.era)
    warmup = ids.take(config.warmup)
    seq_requests = ids.take(config.calls)
    inflight_requests = ids.take(config.inflight_calls)
    server = StdioServer(argv, cwd=cwd, env=env, read_timeout=config.read_timeout, era=config.era)
    result = RunResult(status="ok")
    wall_start = start = time.perf_counter()
    try:
        server.spawn()
    except OSError as exc:
        server.close_stderr()
        return RunResult(status="unavailable", reason=f"cannot spawn: {exc}")
    phase = "start"
    try:
        server.open(start + config.start_timeout)
        result.cold_start_seconds = time.perf_counter() - start
        phase = "warm-up"
        if warmup:
            tally = server.sequential(warmup, time.perf_counter() + config.phase_timeout)
            if tally.errors:
                result.status = "failed"
                result.reason = f"warm-up: {tally.errors} errors, first: {tally.first_error}"
        phase = "sequential"
        result.sequential = _measure(server, config, seq_requests, 1)
        phase = "inflight"
        result.inflight = _measure(server, config, inflight_requests, config.inflight)
        phase = "peak RSS"
        result.peak_rss_mib = read_peak_rss_kib(server.pid) / 1024
        for name, measured in (("sequential", result.sequential), ("inflight", result.inflight)):
            if measured.errors and result.status == "ok":
                result.status = "failed"
                result.reason = f"{name}: {measured.errors} errors, first: {measured.first_error}"
    except (BenchError, OSError) as exc:
        result.status = "unavailable" if result.cold_start_seconds is None else "failed"
        result.reason = f"{phase}: {exc}"
    finally:
        result.shutdown, result.shutdown_seconds = server.shutdown()
        result.exit_code = server.exit_code
        if result.status != "ok":
            result.stderr_tail = server.stderr_tail()
        server.close_stderr()
        result.wall_seconds = time.perf_counter() - wall_start
    return result
