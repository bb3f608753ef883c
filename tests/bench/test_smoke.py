"""The benchmark suite runs end to end on a tiny budget (ours and raw over stdio, the extra runs)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import orjson
import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import extras  # noqa: E402  (bench/ is a folder of scripts, not a package)

pytestmark = pytest.mark.anyio

OURS_HTTP = (
    sys.executable,
    "-m",
    "jsonrpc_mcp",
    "serve",
    "bench/servers/echo.py",
    "--http",
    "--port",
    "{port}",
    "--json-response",
)


async def test_one_short_round_prints_every_section_and_target(tmp_path: Path) -> None:
    report = tmp_path / "run.json"
    command = [
        sys.executable,
        "bench/run.py",
        "--transport=stdio",
        "--era=handshake",
        "--only=ours,raw",
        "--rounds=1",
        "--calls=50",
        "--inflight-calls=64",
        "--warmup=5",
        "--list-tools=30",
        "--list-calls=5",
        "--list-rounds=1",
        "--import-runs=1",
        "--floor-rounds=1",
        "--memory-calls=1500",
        f"--json={report}",
    ]
    with anyio.fail_after(120):
        result = await anyio.run_process(command, cwd=REPO, check=False)
    out = result.stdout.decode()
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    for heading in (
        "MCP over stdio, handshake era",
        "tools/list over stdio with 30 tools",
        "import time (python -X importtime",
    ):
        assert heading in out
    assert "targets:" in out and "peak RSS, ours / raw" in out
    document = orjson.loads(report.read_bytes())
    listing = document["extras"]["tools_list"]["servers"]
    # Ours and raw send the same 30 tools, byte for byte the same size.
    assert listing["ours"][0]["tool_count"] == listing["raw"][0]["tool_count"] == 30
    assert listing["ours"][0]["response_bytes"] == listing["raw"][0]["response_bytes"]
    memory = document["extras"]["memory_stdio"]
    assert memory["status"] == "ok" and set(memory["rss_mib"]) == {"1000", "1500"}
    measured = {row["what"]: row for row in document["targets"]}
    assert measured["from jsonrpc_mcp import Server (-X importtime)"]["met"] is not None
    # The floors: beside the serve path's import time and the cold start, with what ours adds.
    assert "floor: " in measured["stdio serve path (-X importtime)"]["measured"]
    assert "ours adds" in measured["cold start, ours over stdio (to the initialize answer)"]["measured"]
    cold = document["extras"]["cold_start"]
    assert cold["status"] == "ok" and set(cold["median_ms"]) == {"floor", "ours"}
    assert "ours adds" in out and "floor (bench/servers/floor_anyio.py)" in out


async def test_http_sessions_opened_and_closed_leave_rss_measured() -> None:
    env = {**os.environ, "MCPBENCH_TOOLS": "0"}
    with anyio.fail_after(60):
        found = await anyio.to_thread.run_sync(
            lambda: extras.memory_http_sessions(OURS_HTTP, (20, 60), cwd=REPO, env=env)
        )
    assert found.status == "ok", found.reason
    assert [count for count, _ in found.points] == [20, 60]
    assert all(rss > 5 for _, rss in found.points)


async def test_the_floor_server_starts_and_echoes() -> None:
    floor = (sys.executable, "bench/servers/floor_anyio.py")
    with anyio.fail_after(60):
        found = await anyio.to_thread.run_sync(lambda: extras.cold_starts({"floor": floor}, 1, cwd=REPO))
    assert found.status == "ok", found.reason  # cold_starts also makes one echo call and checks it
    assert len(found.runs_ms["floor"]) == 1 and found.runs_ms["floor"][0] > 0


async def test_a_server_that_cannot_start_fails_the_cold_starts() -> None:
    broken = (sys.executable, "-c", "import sys; sys.exit(3)")
    with anyio.fail_after(60):
        found = await anyio.to_thread.run_sync(lambda: extras.cold_starts({"broken": broken}, 2, cwd=REPO))
    assert found.status == "unavailable" and found.reason is not None and found.reason.startswith("broken")
