"""``jsonrpc-mcp conformance replay``: a recorded session replays green against the server it came
from and red against a faulty one (real subprocesses: the client, the tap, the server)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from jsonrpc_mcp.client import Client
from jsonrpc_mcp_conformance.trace.replay import compare, load_recording
from tests import timeouts
from tests.announced import FAULTSERVER_LINE, Output

pytestmark = pytest.mark.anyio

TIMEOUT = timeouts.STARTUP
FAULT_SERVER = [sys.executable, "-m", "jsonrpc_mcp_conformance.faultserver"]


async def _record(path: Path, mode: str) -> None:
    tap = [
        sys.executable,
        "-m",
        "jsonrpc_mcp",
        "trace",
        "--format",
        "jsonl",
        "--out",
        str(path),
        "--",
        *FAULT_SERVER,
    ]
    with anyio.fail_after(TIMEOUT):
        async with Client.stdio(tap, mode=mode) as client:
            await client.list_tools()
            await client.call_tool("echo", {"text": "recorded"})
            await client.list_prompts()


def _replay(path: Path, *faults: str) -> subprocess.CompletedProcess[str]:
    server = [*FAULT_SERVER, *(f"--fault={fault}" for fault in faults)]
    command = [
        sys.executable,
        "-m",
        "jsonrpc_mcp",
        "conformance",
        "replay",
        str(path),
        "stdio",
        "--timeout",
        "5",
    ]
    return subprocess.run(
        [*command, "--", *server], capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_recording_replays_green_against_its_server(tmp_path: Path, mode: str) -> None:
    recording = tmp_path / "session.jsonl"
    await _record(recording, mode)
    frames = load_recording(recording)
    assert sum(f["from"] == "server" and f["kind"] == "result" for f in frames) >= 3
    done = _replay(recording)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "answers compared, they agree" in done.stdout


async def test_a_recording_replays_red_against_a_faulty_server(tmp_path: Path) -> None:
    recording = tmp_path / "session.jsonl"
    await _record(recording, "2026-07-28")
    done = _replay(recording, "omits-result-type")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DIFF line" in done.stdout and "/result/resultType: recorded, now missing" in done.stdout
    assert "Traceback" not in done.stderr


def test_shapes_are_compared_and_volatile_values_are_not() -> None:
    recorded = {"result": {"tools": [{"name": "a"}], "nextCursor": "x", "_meta": {"k": 1}, "isError": False}}
    same_shape = {"result": {"tools": [{"name": "b"}], "nextCursor": "y", "_meta": {}, "isError": False}}
    assert compare(recorded, same_shape) == []
    changed = {"result": {"tools": [], "isError": True, "extra": 1}}
    assert compare(recorded, changed) == [
        "/result/extra: new, not in the recording",
        "/result/isError: false recorded, true now",
        "/result/tools: 1 items recorded, 0 now",
    ]
    assert compare({"error": {"code": -32602}}, {"error": {"code": -32601}}) == [
        "/error/code: -32602 recorded, -32601 now"
    ]


def test_an_unreadable_recording_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"not": "a frame"}\n')
    done = _replay(bad)
    assert done.returncode == 2 and "not a frame of a trace recording" in done.stderr


EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything" / "server.py"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_stdio_recording_replays_over_http_green_and_red_against_another_server(
    tmp_path: Path, mode: str
) -> None:
    from ..http.support import spawned, stop

    recording = tmp_path / "session.jsonl"
    anyio.run(_record, recording, mode)
    fault_server = subprocess.Popen(
        [*FAULT_SERVER, "--port", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    output = Output(fault_server.stderr)
    try:
        url = output.wait_for(FAULTSERVER_LINE, fault_server).group("url").decode()
        green = _replay_http(recording, url)
    finally:
        stop(fault_server)
        output.close()
    assert green.returncode == 0, green.stdout + green.stderr
    with spawned(EVERYTHING) as other:
        red = _replay_http(recording, f"{other.url}/mcp")
    assert red.returncode == 1 and "DIFF line" in red.stdout, red.stdout + red.stderr


def _replay_http(path: Path, url: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "jsonrpc_mcp", "conformance", "replay", str(path), "http", url]
    return subprocess.run(
        [*command, "--timeout", "5"], capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


@pytest.mark.parametrize("server", [["false"], [sys.executable, "-c", "import sys; sys.stdin.readline()"]])
def test_a_server_that_cannot_start_is_one_line_and_exit_3(tmp_path: Path, server: list[str]) -> None:
    # one exits before it reads anything (its input is closed under the replay), one after reading
    # the first frame, answering nothing: neither is a traceback nor a list of differences
    recording = tmp_path / "session.jsonl"
    frames = [
        {"from": "client", "kind": "request", "message": {"jsonrpc": "2.0", "id": i, "method": "ping"}}
        for i in range(1, 4)
    ]
    answers = [
        {"from": "server", "kind": "result", "message": {"jsonrpc": "2.0", "id": i, "result": {}}}
        for i in range(1, 4)
    ]
    lines = [json.dumps(frame) for pair in zip(frames, answers, strict=True) for frame in pair]
    recording.write_text("\n".join(lines) + "\n")
    command = [sys.executable, "-m", "jsonrpc_mcp", "conformance", "replay", str(recording), "stdio"]
    done = subprocess.run(
        [*command, "--", *server], capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
    assert "cannot start" in done.stderr and "exited with status" in done.stderr
