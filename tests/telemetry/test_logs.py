"""``serve --log-format json``: stderr carries one JSON object per record, with one access record
per request (real subprocesses: stdio, and HTTP on 127.0.0.1); stdout stays the protocol's."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client, JsonRpcError
from tests import timeouts

from ..http.support import spawned, stop

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
EVERYTHING = REPO / "examples" / "everything" / "server.py"
TIMEOUT = timeouts.STARTUP


def _records(stderr: str) -> list[dict[str, Any]]:
    lines = [line for line in stderr.splitlines() if line.strip()]
    records = [json.loads(line) for line in lines if line.startswith("{")]
    return records


async def test_over_stdio_every_request_has_an_access_record_and_stderr_is_json_lines(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", "--log-format", "json", str(EVERYTHING)]
    with (tmp_path / "stderr").open("w+b") as log:
        with anyio.fail_after(TIMEOUT):
            async with Client.stdio(command, cwd=REPO, stderr=log) as client:
                await client.call_tool("test_simple_text", {})
                with pytest.raises(JsonRpcError):
                    await client.request("prompts/get", {"name": "no-such-prompt"})
        log.seek(0)
        stderr = log.read().decode()
    access = [r for r in _records(stderr) if r["logger"] == "jsonrpc_mcp.access"]
    assert [(r["method"], r["outcome"]) for r in access] == [
        ("initialize", "ok"),
        ("tools/call", "ok"),
        ("prompts/get", "-32602"),
    ]
    assert all(r["transport"] == "stdio" and r["duration_ms"] >= 0 and r["level"] == "info" for r in access)
    assert access[1]["revision"] == "2025-11-25" and access[1]["request_id"] == 2
    assert all(line.startswith("{") for line in stderr.splitlines() if line.strip())  # nothing but JSON


async def test_over_http_records_name_the_session_and_are_json() -> None:
    with spawned(EVERYTHING, "--log-format", "json") as server:
        with anyio.fail_after(TIMEOUT):
            async with Client.http(f"{server.url}/mcp") as client:
                await client.call_tool("test_simple_text", {})
        stop(server.process)  # (its last records are written on the way out)
        stderr = server.stderr().decode()
    access = [r for r in _records(stderr) if r["logger"] == "jsonrpc_mcp.access"]
    call = next(r for r in access if r["method"] == "tools/call")
    assert call["transport"] == "http" and isinstance(call["session"], str) and call["outcome"] == "ok"
