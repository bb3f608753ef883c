"""examples/memory served over HTTP for the MCP Apps tests: ``jsonrpc-mcp serve ... --http --port 0``
in a subprocess with its own data directory; the URL is read from the line the server prints once it
listens (``jsonrpc-mcp: serving memory at URL``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from anyio.streams.text import TextReceiveStream

REPO = Path(__file__).resolve().parents[2]
MEMORY_SERVER = REPO / "examples" / "memory" / "server.py"
START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
_SERVING = re.compile(r"serving \S+ at (http://127\.0\.0\.1:[0-9]+/mcp)")


@asynccontextmanager
async def memory_over_http(data_dir: Path) -> AsyncIterator[str]:
    """Serve examples/memory on 127.0.0.1 (a port the server picks); yields its MCP URL."""
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(MEMORY_SERVER), "--http", "--port", "0"]
    env = {**os.environ, "JSONRPC_MCP_MEMORY_DIR": str(data_dir)}
    process = await anyio.open_process(
        command, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
    try:
        assert process.stderr is not None
        seen = ""
        with anyio.fail_after(START_TIMEOUT):
            async for chunk in TextReceiveStream(process.stderr):
                seen += chunk
                found = _SERVING.search(seen)
                if found:
                    break
            else:
                raise RuntimeError(f"examples/memory exited before serving: {seen[-2000:]}")
        yield found.group(1)
    finally:
        with anyio.CancelScope(shield=True):
            process.terminate()
            with anyio.move_on_after(STOP_TIMEOUT) as waited:
                await process.wait()
            if waited.cancelled_caught:
                process.kill()
                await process.wait()
            await process.aclose()
