"""The benchmark suite runs end to end on a tiny budget (ours and raw over stdio and HTTP, the extra runs)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import orjson
import pytest

from tests import timeouts

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import extras  # noqa: E402  (bench/ is a folder of scripts, not a package)
from http_loadclient import HttpResponse  # noqa: E402
from loadclient import BenchError  # noqa: E402

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


async def _one_short_round(report: Path, *options: str) -> str:
    """Run ``bench/run.py`` for one short round (handshake era, 30 tools listed) with ``options``;
    its stdout, after checking it exited 0."""
    command = [
        sys.executable,
        "bench/run.py",
        "--era=handshake",
        "--rounds=1",
        "--calls=50",
        "--inflight-calls=64",
        "--warmup=5",
        "--list-tools=30",
        "--list-calls=5",
        "--list-rounds=1",
        "--skip-curves",  # the curves have their own test (test_curves.py)
        *options,
        f"--json={report}",
    ]
    with anyio.fail_after(timeouts.LONG_RUN):
        result = await anyio.run_process(command, cwd=REPO, check=False)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    return result.stdout.decode()


async def test_one_short_round_prints_every_section_and_target(tmp_path: Path) -> None:
    report = tmp_path / "run.json"
    out = await _one_short_round(
        report,
        "--transport=stdio",
        "--only=ours,raw",
        "--import-runs=1",
        "--floor-rounds=1",
        "--memory-calls=1500",
    )
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


async def test_one_short_http_round_lists_tools_beside_the_echo_table(tmp_path: Path) -> None:
    report = tmp_path / "run.json"
    out = await _one_short_round(
        report, "--transport=http", "--only=ours-json,raw", "--skip-import", "--skip-floor", "--skip-memory"
    )
    assert "tools/list over Streamable HTTP (handshake era, one connection) with 30 tools" in out
    assert "ours-json / raw   ms per listing" in out
    document = orjson.loads(report.read_bytes())
    assert document["extras"]["tools_list"] is None  # stdio was not run
    listing = document["extras"]["tools_list_http"]
    ours, raw = listing["servers"]["ours-json"][0], listing["servers"]["raw"][0]
    assert ours["status"] == raw["status"] == "ok"
    # Both send the same 30 tools in one page, the bodies byte for byte the same size.
    assert ours["tool_count"] == raw["tool_count"] == 30 and ours["pages"] == raw["pages"] == 1
    assert ours["response_bytes"] == raw["response_bytes"] > 0 and ours["calls"] == raw["calls"] == 5
    assert ours["ms_per_call"] > 0 and raw["ms_per_call"] > 0
    assert listing["ratio_ours_vs_raw_ms_per_call"] == pytest.approx(ours["ms_per_call"] / raw["ms_per_call"])
    measured = {row["what"]: row for row in document["targets"]}
    http_row = measured["tools/list, 1,000 tools over HTTP, ours-json / raw (ms per listing)"]
    assert http_row["met"] is not None and http_row["measured"].endswith("x")
    assert measured["tools/list, 1,000 tools, ours / raw (ms per listing)"]["met"] is None


PAGED_SERVER = """
from jsonrpc_mcp import Server

server = Server("paged", page_size=10)


async def dummy(x: int = 0) -> str:
    return str(x)


for i in range(25):
    server.add_tool(f"tool_{i:02d}", dummy, description="A dummy.", input_schema={"type": "object"})
"""


async def test_the_http_listing_follows_next_cursor_to_the_end(tmp_path: Path) -> None:
    server_file = tmp_path / "paged.py"
    server_file.write_text(PAGED_SERVER)
    argv = (sys.executable, "-m", "jsonrpc_mcp", "serve", str(server_file), "--http", "--port", "{port}")
    with anyio.fail_after(timeouts.RUN):
        found = await anyio.to_thread.run_sync(
            lambda: extras.bench_tools_list_http(argv, calls=3, warmup=1, cwd=REPO, env=dict(os.environ))
        )
    assert found.status == "ok", found.reason
    # 25 tools at 10 a page: three pages per listing, every one requested and counted.
    assert (found.tool_count, found.pages, found.calls) == (25, 3, 3)
    assert found.response_bytes > 25 * len('{"name":"tool_00"}') and found.ms_per_call > 0


async def test_a_listing_page_is_found_in_json_or_an_event_stream_and_checked() -> None:
    answer = b'{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}'
    json_headers = {b"content-type": b"application/json"}
    assert extras.listing_page(HttpResponse(200, json_headers, answer), 7) == answer
    stream = (
        b"id: 1\ndata:\n\n"  # a priming event, then a notification, then the answer
        b'data: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n'
        b"data: " + answer + b"\n\n"
    )
    sse_headers = {b"content-type": b"text/event-stream"}
    assert orjson.loads(extras.listing_page(HttpResponse(200, sse_headers, stream), 7)) == orjson.loads(
        answer
    )
    for response, request_id in (
        (HttpResponse(200, json_headers, answer), 8),  # the answer to another request
        (HttpResponse(200, sse_headers, stream), 8),
        (HttpResponse(404, json_headers, b"{}"), 7),
        (HttpResponse(200, {b"content-type": b"text/plain"}, answer), 7),
    ):
        with pytest.raises(BenchError):
            extras.listing_page(response, request_id)


async def test_an_http_listing_of_a_server_that_cannot_start_is_unavailable() -> None:
    broken = (sys.executable, "-c", "import sys; sys.exit(3)")
    with anyio.fail_after(timeouts.RUN):
        found = await anyio.to_thread.run_sync(
            lambda: extras.bench_tools_list_http(broken, calls=3, warmup=1, cwd=REPO, env=dict(os.environ))
        )
    assert found.status == "unavailable" and found.reason is not None
    assert "exited with code 3" in found.reason and found.calls == 0


async def test_http_sessions_opened_and_closed_leave_rss_measured() -> None:
    env = {**os.environ, "MCPBENCH_TOOLS": "0"}
    with anyio.fail_after(timeouts.RUN):
        found = await anyio.to_thread.run_sync(
            lambda: extras.memory_http_sessions(OURS_HTTP, (20, 60), cwd=REPO, env=env)
        )
    assert found.status == "ok", found.reason
    assert [count for count, _ in found.points] == [20, 60]
    assert all(rss > 5 for _, rss in found.points)


async def test_the_floor_server_starts_and_echoes() -> None:
    floor = (sys.executable, "bench/servers/floor_anyio.py")
    with anyio.fail_after(timeouts.RUN):
        found = await anyio.to_thread.run_sync(lambda: extras.cold_starts({"floor": floor}, 1, cwd=REPO))
    assert found.status == "ok", found.reason  # cold_starts also makes one echo call and checks it
    assert len(found.runs_ms["floor"]) == 1 and found.runs_ms["floor"][0] > 0


async def test_a_server_that_cannot_start_fails_the_cold_starts() -> None:
    broken = (sys.executable, "-c", "import sys; sys.exit(3)")
    with anyio.fail_after(timeouts.RUN):
        found = await anyio.to_thread.run_sync(lambda: extras.cold_starts({"broken": broken}, 2, cwd=REPO))
    assert found.status == "unavailable" and found.reason is not None and found.reason.startswith("broken")
