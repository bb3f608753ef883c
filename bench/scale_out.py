"""What scaling out on Redis costs and gives: calls/s and latency through a round-robin proxy.

    python bench/scale_out.py [--calls 1000] [--concurrency 8] [--out bench/results/scale_out.json]

For each configuration, the echo server (``bench/servers/echo.py``) is served by
``jsonrpc-mcp serve --http`` instances behind the round-robin proxy with no affinity of
``conformance/jsonrpc_mcp_conformance/official/proxy.py`` (one connection per request: every call may land on
any instance):

- ``memory x1``: one instance, sessions and events in memory (the baseline: same proxy, no Redis);
- ``redis x1``, ``redis x2``, ``redis x4``: that many instances with ``--redis`` on one
  ``redis-server`` (started here, on a free port, in a temporary directory, nothing saved).

In each era, ``--concurrency`` clients each open their own session (handshake era: ``initialize``
+ ``notifications/initialized``, then ``tools/call`` with the session id; 2026-07-28: no session,
the envelope in ``params._meta`` and the required headers) and call ``echo`` until ``--calls``
calls (after a warm-up) are answered; every answer is checked as the other benches check theirs
(``http_loadclient.check_call``). Printed: a table of calls/s, p50 and p99 per configuration and
era, and the cost Redis adds per call (p50 of ``redis x1`` minus ``memory x1``). The figures go to
``bench/results/scale_out.json``::

    {"configs": [...], "handshake": {"instances": [...], "backend": [...], "calls_per_s": [...],
     "p50_ms": [...], "p99_ms": [...]}, "modern": {...}, "redis_cost_p50_ms": {...}, ...}

A benchmark, not a test: on a shared machine the instances, Redis, the proxy and the client share
the cores, so more instances need not mean more calls/s there.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from http_loadclient import HttpResponse, _Tally, check_call, parse_response
from loadclient import (
    ENVELOPE,
    INITIALIZE_REQUEST,
    INITIALIZED_NOTIFICATION,
    MODERN_VERSION,
    PROTOCOL_VERSION,
    Era,
)

REPO = Path(__file__).resolve().parents[1]
TARGET = "bench/servers/echo.py"
CONFIGS: tuple[tuple[str, int, bool], ...] = (
    ("memory x1", 1, False),
    ("redis x1", 1, True),
    ("redis x2", 2, True),
    ("redis x4", 4, True),
)
START_TIMEOUT = 30.0
READ_TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(process: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"scale_out: {process.args!r} exited early ({process.returncode})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.02)  # polling a port a child binds: nothing else to wait on
    raise SystemExit(f"scale_out: nothing listens on port {port} after {START_TIMEOUT:.0f} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@contextlib.contextmanager
def deployed(instances: int, redis: bool) -> Iterator[int]:
    """``instances`` servers (on a Redis of their own when ``redis``) behind the proxy: its port."""
    processes: list[subprocess.Popen[bytes]] = []
    null = subprocess.DEVNULL
    with tempfile.TemporaryDirectory(prefix="scale-out-bench-") as directory:
        try:
            extra: list[str] = []
            if redis:
                executable = shutil.which("redis-server")
                if executable is None:
                    raise SystemExit("scale_out: redis-server is not on PATH")
                port = free_port()
                command = [executable, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
                processes.append(
                    subprocess.Popen(
                        [*command, "--appendonly", "no", "--dir", directory],
                        stdin=null,
                        stdout=null,
                        stderr=null,
                    )
                )
                wait_listening(processes[-1], port)
                extra = ["--redis", f"redis://127.0.0.1:{port}/0"]
            ports = [free_port() for _ in range(instances)]
            for port in ports:
                command = [
                    sys.executable,
                    "-m",
                    "jsonrpc_mcp",
                    "serve",
                    TARGET,
                    "--http",
                    "--port",
                    str(port),
                ]
                processes.append(
                    subprocess.Popen([*command, *extra], cwd=REPO, stdin=null, stdout=null, stderr=null)
                )
            for process, port in zip(processes[-instances:], ports, strict=True):
                wait_listening(process, port)
            proxy_port = free_port()
            upstreams = [f"127.0.0.1:{port}" for port in ports]
            command = [
                sys.executable,
                "-m",
                "jsonrpc_mcp_conformance.official.proxy",
                "--port",
                str(proxy_port),
            ]
            processes.append(
                subprocess.Popen([*command, *upstreams], cwd=REPO, stdin=null, stdout=null, stderr=null)
            )
            wait_listening(processes[-1], proxy_port)
            yield proxy_port
        finally:
            for process in reversed(processes):
                stop(process)


class Client:
    """One simulated client: its session (handshake era), a request per connection (the proxy's)."""

    def __init__(self, port: int, era: Era) -> None:
        self.port = port
        self.era = era
        self.session: bytes | None = None
        self.next_id = 1

    async def post(self, body: bytes, extra: list[bytes]) -> HttpResponse:
        head = [
            b"POST /mcp HTTP/1.1",
            b"Host: 127.0.0.1:%d" % self.port,
            b"Accept: application/json, text/event-stream",
            b"Content-Type: application/json",
            b"Content-Length: %d" % len(body),
            *extra,
        ]
        if self.session is not None:
            head += [
                b"Mcp-Session-Id: " + self.session,
                b"MCP-Protocol-Version: " + PROTOCOL_VERSION.encode(),
            ]
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        try:
            writer.write(b"\r\n".join(head) + b"\r\n\r\n" + body)
            await writer.drain()
            data = await asyncio.wait_for(reader.read(-1), READ_TIMEOUT)  # the proxy closes after it
        finally:
            writer.close()
        parsed = parse_response(data)
        if parsed is None:
            raise SystemExit(f"scale_out: an incomplete response: {data[:200]!r}")
        return parsed[0]

    async def open(self) -> None:
        if self.era == "modern":
            return
        response = await self.post(INITIALIZE_REQUEST, [])
        session = response.headers.get(b"mcp-session-id")
        if response.status != 200 or session is None:
            raise SystemExit(f"scale_out: initialize failed: HTTP {response.status} {response.body[:200]!r}")
        self.session = session
        if (await self.post(INITIALIZED_NOTIFICATION, [])).status != 202:
            raise SystemExit("scale_out: notifications/initialized was not accepted")

    async def call(self, tally: _Tally) -> float:
        """One echo call, checked; its latency in seconds."""
        rid = self.next_id
        self.next_id += 1
        params: dict[str, Any] = {"name": "echo", "arguments": {"message": "hello"}}
        extra: list[bytes] = []
        if self.era == "modern":
            params["_meta"] = ENVELOPE
            extra = [
                b"MCP-Protocol-Version: " + MODERN_VERSION.encode(),
                b"Mcp-Method: tools/call",
                b"Mcp-Name: echo",
            ]
        body = orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
        started = time.perf_counter()
        response = await self.post(body, extra)
        elapsed = time.perf_counter() - started
        check_call(response, rid, tally, self.era)
        return elapsed


async def measure(port: int, era: Era, calls: int, concurrency: int) -> dict[str, float]:
    clients = [Client(port, era) for _ in range(concurrency)]
    await asyncio.gather(*(c.open() for c in clients))
    tally = _Tally()
    await asyncio.gather(
        *(c.call(tally) for c in clients for _ in range(max(1, 50 // concurrency)))
    )  # warm-up
    latencies: list[float] = []
    remaining = calls

    async def run(client: Client) -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            latencies.append(await client.call(tally))

    started = time.perf_counter()
    await asyncio.gather(*(run(c) for c in clients))
    seconds = time.perf_counter() - started
    if tally.errors:
        raise SystemExit(f"scale_out: {tally.errors} calls failed, first: {tally.first_error}")
    latencies.sort()
    return {
        "calls_per_s": round(len(latencies) / seconds, 1),
        "p50_ms": round(latencies[len(latencies) // 2] * 1000, 2),
        "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=1000, help="measured calls per configuration and era")
    parser.add_argument("--concurrency", type=int, default=8, help="clients calling at once")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "scale_out.json")
    options = parser.parse_args(argv)
    eras: tuple[Era, ...] = ("handshake", "modern")
    figures: dict[Era, list[dict[str, float]]] = {era: [] for era in eras}
    for label, instances, redis in CONFIGS:
        with deployed(instances, redis) as port:
            for era in eras:
                figures[era].append(asyncio.run(measure(port, era, options.calls, options.concurrency)))
                row = figures[era][-1]
                rate, p50, p99 = row["calls_per_s"], row["p50_ms"], row["p99_ms"]
                print(
                    f"{label:10} {era:9} {rate:8.1f} calls/s  p50 {p50:6.2f} ms  p99 {p99:6.2f} ms",
                    flush=True,
                )
    labels = [label for label, _, _ in CONFIGS]
    result: dict[str, Any] = {
        "configs": labels,
        "calls": options.calls,
        "concurrency": options.concurrency,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }
    for era in eras:
        result[era] = {
            "instances": [n for _, n, _ in CONFIGS],
            "backend": ["redis" if redis else "memory" for _, _, redis in CONFIGS],
            **{key: [row[key] for row in figures[era]] for key in ("calls_per_s", "p50_ms", "p99_ms")},
        }
    result["redis_cost_p50_ms"] = {
        era: round(figures[era][1]["p50_ms"] - figures[era][0]["p50_ms"], 2) for era in eras
    }
    print()
    print(f"{'config':10} | {'era':9} | {'calls/s':>8} | {'p50 ms':>7} | {'p99 ms':>7}")
    print(f"{'-' * 10}-+-{'-' * 9}-+-{'-' * 8}-+-{'-' * 7}-+-{'-' * 7}")
    for era in eras:
        for label, row in zip(labels, figures[era], strict=True):
            rate, p50, p99 = row["calls_per_s"], row["p50_ms"], row["p99_ms"]
            print(f"{label:10} | {era:9} | {rate:8.1f} | {p50:7.2f} | {p99:7.2f}")
    for era in eras:
        print(f"Redis adds {result['redis_cost_p50_ms'][era]:.2f} ms per call at p50 ({era}, one instance)")
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {options.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
