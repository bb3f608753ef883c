"""A stdio server whose stdout the client closed stops at the next answer it cannot deliver, and says
why on stderr, rather than reading on (until stdin closes) with nobody to answer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

from tests import timeouts

REPO = Path(__file__).resolve().parents[2]
ECHO = REPO / "tests" / "server" / "servers" / "echo_server.py"
TIMEOUT = timeouts.STARTUP
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def test_the_server_stops_when_its_stdout_is_closed() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "jsonrpc_mcp", "serve", str(ECHO)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        process.stdout.close()  # the client stops listening, but keeps stdin open
        process.stdin.write(orjson.dumps(INITIALIZE) + b"\n")
        process.stdin.flush()
        status = process.wait(timeout=TIMEOUT)  # without the fix: alive until stdin closes
        stderr = process.stderr.read().decode()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=TIMEOUT)
    assert status == 0
    assert "the output (stdout) was closed by the other side: stopping" in stderr
    assert "Traceback" not in stderr
