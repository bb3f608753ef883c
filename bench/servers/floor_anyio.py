"""The floor of an anyio-on-asyncio stdio server: what any such server costs before it does anything.

``anyio.run`` on the asyncio backend; stdin is set non-blocking and read on the event loop
(``anyio.wait_readable``, as ours reads a pipe: no thread); each line is parsed with orjson and
``initialize``, ``ping`` and ``tools/call`` of ``echo`` are answered with one blocking write, as
``raw_echo.py`` does. Nothing else: no framework, no validation, no tools/list. The benchmark uses
it for the cold start floor only (``run.py`` targets: "floor: X ms; ours adds Y").
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import orjson

SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = "2025-06-18"


def answer(msg: dict[str, Any]) -> dict[str, Any]:
    """The reply to one request."""
    msg_id, method, params = msg["id"], msg.get("method"), msg.get("params") or {}
    if method == "tools/call" and params.get("name") == "echo":
        text = (params.get("arguments") or {}).get("message", "")
        return {"jsonrpc": "2.0", "id": msg_id, "result": {"content": [{"type": "text", "text": text}]}}
    if method == "initialize":
        requested = params.get("protocolVersion")
        result: dict[str, Any] = {
            "protocolVersion": requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench-floor-anyio", "version": "0.1.0"},
        }
        return {"jsonrpc": "2.0", "id": msg_id, "result": result}
    if method == "ping":
        return {"jsonrpc": "2.0", "id": msg_id, "result": {}}
    error = {"code": -32601, "message": f"Method not found: {method}"}
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


async def serve() -> None:
    rfd, wfd = sys.stdin.fileno(), sys.stdout.fileno()
    os.set_blocking(rfd, False)
    buffer = b""
    while True:
        await anyio.wait_readable(rfd)
        try:
            chunk = os.read(rfd, 256 * 1024)
        except BlockingIOError:
            continue
        if not chunk:
            return
        *lines, buffer = (buffer + chunk).split(b"\n")
        out = []
        for line in lines:
            if line.strip():
                msg = orjson.loads(line)
                if "id" in msg and "method" in msg:  # notifications and responses are not answered
                    out.append(orjson.dumps(answer(msg)))
        if out:
            data = b"\n".join(out) + b"\n"
            while data:  # stdout stays blocking: a full pipe waits here, as raw_echo.py's write does
                data = data[os.write(wfd, data) :]


if __name__ == "__main__":
    anyio.run(serve, backend="asyncio")
