"""The client's unauthenticated path, A/B against another commit in the same run.

    python bench/client_ab.py [--base REF] [--calls N] [--rounds R] [--mode legacy|2026-07-28]

One server (``bench/servers/echo.py`` under ``serve --http``, from this checkout) on a free loopback
port; then, alternately, a client process importing jsonrpc_mcp from this checkout ("new") and one
importing it from ``git archive REF`` ("base", default the main before the OAuth client), each
making ``--calls`` sequential ``tools/call`` requests through ``Client.http`` with no ``auth``.
Reported: calls per second and the client process's CPU time per call (less sensitive to a busy
machine than wall time) of each round, their medians, and new/base (1.00 = no change). The server
is the same process for both, so only the client's cost differs.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_BASE = "41329a2"  # main before issue 24 (the client had no authorization)

CLIENT = r"""
import sys, time, anyio
from jsonrpc_mcp import Client

async def main(url: str, calls: int, mode: str) -> None:
    async with Client.http(url, mode=mode) as client:
        for _ in range(50):  # warm-up
            await client.call_tool("echo", {"message": "hi"})
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(calls):
            await client.call_tool("echo", {"message": "hi"})
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        print(calls / wall, cpu / calls * 1e6)

anyio.run(main, sys.argv[1], int(sys.argv[2]), sys.argv[3])
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _export(ref: str, into: Path) -> Path:
    archive = into / "base.tar"
    subprocess.run(["git", "-C", str(REPO), "archive", "-o", str(archive), ref, "jsonrpc_mcp"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "base", filter="data")
    return into / "base"


def _wait_for(port: int, server: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("the benchmark server exited at start-up")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit("the benchmark server did not start")


def _round(code_dir: Path, url: str, calls: int, mode: str) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(code_dir)}
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, url, str(calls), mode],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"a client round failed:\n{done.stderr}")
    rate, cpu = done.stdout.split()
    return float(rate), float(cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=DEFAULT_BASE, help="the commit to compare with")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--mode", default="legacy", choices=["legacy", "2026-07-28"])
    args = parser.parse_args()
    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jsonrpc_mcp",
            "serve",
            str(REPO / "bench/servers/echo.py"),
            "--http",
            "--port",
            str(port),
            "--json-response",
            "--log-level",
            "warning",
        ],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL,
    )
    try:
        _wait_for(port, server)
        url = f"http://127.0.0.1:{port}/mcp"
        with tempfile.TemporaryDirectory() as tmp:
            base_dir = _export(args.base, Path(tmp))
            new: list[tuple[float, float]] = []
            base: list[tuple[float, float]] = []
            for number in range(1, args.rounds + 1):  # interleaved, so drift hits both alike
                base.append(_round(base_dir, url, args.calls, args.mode))
                new.append(_round(REPO, url, args.calls, args.mode))
                print(
                    f"round {number}: base {base[-1][0]:,.0f} calls/s ({base[-1][1]:.0f} µs CPU a call), "
                    f"new {new[-1][0]:,.0f} calls/s ({new[-1][1]:.0f} µs)",
                    flush=True,
                )
        rate = [statistics.median(r for r, _ in runs) for runs in (base, new)]
        cpu = [statistics.median(c for _, c in runs) for runs in (base, new)]
        print(
            f"client, {args.mode}, sequential tools/call over HTTP, no auth: base ({args.base}) "
            f"{rate[0]:,.0f} calls/s and {cpu[0]:.1f} µs of client CPU a call, new {rate[1]:,.0f} calls/s "
            f"and {cpu[1]:.1f} µs; new/base: calls/s {rate[1] / rate[0]:.3f}, "
            f"CPU a call {cpu[1] / cpu[0]:.3f}"
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
