"""The official MCP Python SDK's client, unchanged, through ``jsonrpc-mcp trace`` to the memory
example: it works, and the trace shows every frame with its specification link."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from .interop_support import CALL_TIMEOUT, CONNECT_TIMEOUT, REPO, sdk_params, text_blocks

pytestmark = pytest.mark.anyio

MEMORY_SERVER = REPO / "examples" / "memory" / "server.py"


async def test_the_sdk_client_works_through_the_tap_and_every_frame_is_traced(tmp_path: Path) -> None:
    data_dir, out = tmp_path / "memory-data", tmp_path / "trace.jsonl"
    serve = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(MEMORY_SERVER), "--data-dir", str(data_dir)]
    tap = [sys.executable, "-m", "jsonrpc_mcp", "trace", "--format", "jsonl", "--out", str(out), "--", *serve]
    params = sdk_params(tap, env={"JSONRPC_MCP_MEMORY_DIR": str(data_dir)})
    with anyio.fail_after(CONNECT_TIMEOUT + 2 * CALL_TIMEOUT):
        async with Client(params, read_timeout_seconds=CALL_TIMEOUT) as sdk:
            await sdk.call_tool("remember", {"text": "traced through the tap"})
            recalled = await sdk.call_tool("recall", {"keyword": "traced"})
    assert any("traced through the tap" in block for block in text_blocks(recalled.content))
    import json

    frames = [json.loads(line) for line in out.read_text().splitlines()]
    methods = [f.get("method") for f in frames if f["from"] == "client"]
    assert "tools/call" in methods and ("initialize" in methods or "server/discover" in methods)
    assert all(f["spec"].startswith("https://modelcontextprotocol.io/specification/") for f in frames)
    answers = [f for f in frames if f["kind"] in ("result", "error")]
    assert answers and all("latencyMs" in f for f in answers)  # every answer paired with its request
    assert [f for f in frames if f.get("violations")] == []
