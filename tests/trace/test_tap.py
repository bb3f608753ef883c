"""``jsonrpc-mcp trace -- CMD``: a real client, the tap and a real server, each its own process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp.client import Client
from tests import timeouts

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
MEMORY = REPO / "examples" / "memory" / "server.py"
TIMEOUT = timeouts.STARTUP


def _tap(out: Path, *server: str, fmt: str = "text") -> list[str]:
    return [sys.executable, "-m", "jsonrpc_mcp", "trace", "--out", str(out), "--format", fmt, "--", *server]


async def test_our_client_through_the_tap_works_and_every_frame_is_annotated(tmp_path: Path) -> None:
    out = tmp_path / "trace.txt"
    data = str(tmp_path / "memory-data")
    command = _tap(out, sys.executable, "-m", "jsonrpc_mcp", "serve", str(MEMORY), "--data-dir", data)
    with anyio.fail_after(TIMEOUT):
        async with Client.stdio(
            command, cwd=REPO, env={**os.environ, "JSONRPC_MCP_MEMORY_DIR": data}
        ) as client:
            await client.call_tool("remember", {"text": "the tap passes bytes through"})
            recalled = await client.call_tool("recall", {"keyword": "tap"})
    assert recalled.get("isError") is not True
    assert "the tap passes bytes through" in json.dumps(recalled)
    text = out.read_text()
    for head in (
        "-> client request #1 initialize",
        "<- server result #1 initialize",
        "notifications/initialized",
    ):
        assert head in text
    assert text.count("https://modelcontextprotocol.io/specification/2025-11-25/") >= 7
    assert "tools/call" in text and " ms)" in text
    assert "!" not in "".join(line for line in text.splitlines() if line.lstrip().startswith("!"))


FAULTY = textwrap.dedent(
    """
    import json, sys
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("method") == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {}}
            print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
        elif "id" not in message:  # a notification: answering it is the fault
            print(json.dumps({"jsonrpc": "2.0", "id": 0, "result": {}}), flush=True)
        else:
            error = {"code": 0, "message": "no"}
            print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}), flush=True)
    """
)


def test_a_faulty_server_is_flagged_in_a_jsonl_recording(tmp_path: Path) -> None:
    server = tmp_path / "faulty.py"
    server.write_text(FAULTY)
    out = tmp_path / "trace.jsonl"
    frames = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    ]
    sent = "".join(json.dumps(f) + "\n" for f in frames)
    done = subprocess.run(
        _tap(out, sys.executable, str(server), fmt="jsonl"),
        input=sent,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a.get("id") for a in answers] == [0, 0, 1]  # the bytes went through, as the server wrote them
    recorded: list[dict[str, Any]] = [json.loads(line) for line in out.read_text().splitlines()]
    # the client wrote all three frames at once: the tap sees them in arrival order, per side in order
    from_client = [r["kind"] for r in recorded if r["from"] == "client"]
    from_server = [r for r in recorded if r["from"] == "server"]
    assert from_client == ["request", "notification", "request"]
    assert [r["kind"] for r in from_server] == ["result", "result", "error"]
    stray, coded = from_server[1], from_server[2]
    assert any("answers no pending request" in v for v in stray["violations"])
    assert any("error code 0" in v for v in coded["violations"])
    assert coded["latencyMs"] >= 0 and coded["method"] == "tools/list"


def test_the_servers_exit_status_comes_back_and_a_missing_command_is_127(tmp_path: Path) -> None:
    out = tmp_path / "t.txt"
    failing = subprocess.run(
        _tap(out, sys.executable, "-c", "import sys; sys.exit(3)"),
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert failing.returncode == 3
    missing = subprocess.run(
        _tap(out, str(tmp_path / "no-such-server")),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert missing.returncode == 127 and "cannot start" in out.read_text()
    usage = subprocess.run(
        [sys.executable, "-m", "jsonrpc_mcp", "trace"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert usage.returncode == 2 and "name the server command after --" in usage.stderr
    assert "Traceback" not in usage.stderr + missing.stderr
