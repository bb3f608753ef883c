"""Run the harness against examples/everything over stdio and over HTTP while two CPU-bound
processes saturate the machine: the verdicts must be the same as on a quiet machine (zero failures).
With ``--sdk``, also the official Python SDK's server over stdio, with default options, through
``tests/conformance/test_sdk_server.py``: it must report exactly the documented divergences
(docs/conformance-sdk-divergences.md), as on a quiet machine.

    .venv/bin/python tests/conformance/under_load.py [--burners 2] [--sdk]

Exit status 0 when every run passes (zero failures and errors; for the SDK, exactly its
divergences). The burners are plain
``python -c "while True: pass"`` processes, killed at the end whatever happens; the HTTP server
binds 127.0.0.1 port 0 (a free port it reports) and is stopped at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "everything" / "server.py"
SERVE = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(EXAMPLE)]
HARNESS = [sys.executable, "-m", "jsonrpc_mcp_conformance"]


@contextlib.contextmanager
def burning(count: int) -> Iterator[None]:
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait(timeout=10)


@contextlib.contextmanager
def serving_http() -> Iterator[str]:
    """``serve --http --port 0``: the server binds a free port itself; its URL is read from the line
    it prints once it listens (stderr is read to its end by a thread, so the pipe never fills)."""
    command = [*SERVE, "--http", "--port", "0"]
    server = subprocess.Popen(command, cwd=REPO, stderr=subprocess.PIPE)
    announced: queue.Queue[str | None] = queue.Queue()

    def read(stream: IO[bytes]) -> None:
        for line in iter(stream.readline, b""):
            found = re.search(rb"jsonrpc-mcp: serving .* at (https?://\S+)", line)
            if found is not None:
                announced.put(found.group(1).decode())
        announced.put(None)  # the process ended

    assert server.stderr is not None
    threading.Thread(target=read, args=(server.stderr,), daemon=True).start()
    try:
        try:
            url = announced.get(timeout=60)
        except queue.Empty:
            raise SystemExit("the HTTP server did not start within 60 s") from None
        if url is None:
            raise SystemExit(f"the HTTP server exited with status {server.wait()} before listening")
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()


def run(args: list[str]) -> int:
    started = time.monotonic()
    command = [*HARNESS, *args]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=1200, check=False)
    lines = [line for line in done.stdout.splitlines() if " passed, " in line and not line.startswith("==")]
    took = time.monotonic() - started
    sys.stdout.write(
        f"{args[0]}: exit {done.returncode} in {took:.0f} s: {lines[-1] if lines else done.stdout[-400:]}\n"
    )
    return done.returncode


def sdk_divergences() -> int:
    """The SDK server's run, judged by its test: exactly the documented divergences."""
    started = time.monotonic()
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/conformance/test_sdk_server.py",
    ]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=1200, check=False)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-400:]
    took = time.monotonic() - started
    sys.stdout.write(f"sdk (stdio): exit {done.returncode} in {took:.0f} s: {summary}\n")
    return done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--burners", type=int, default=2)
    parser.add_argument("--sdk", action="store_true", help="also the official SDK's server (its divergences)")
    options = parser.parse_args()
    with burning(options.burners):
        stdio = run(["stdio", "--", *SERVE])
        with serving_http() as url:
            http = run(["http", url])
        sdk = sdk_divergences() if options.sdk else 0
    return 0 if stdio == 0 and http == 0 and sdk == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
