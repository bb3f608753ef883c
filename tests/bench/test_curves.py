"""The curves' pure logic (shaping rounds into curves, per-session memory, scale-out files, the
targets read off the curves), the PNGs, one tiny curve run end to end, and the HTTP stack choice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests import timeouts

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import curves  # noqa: E402  (bench/ is a folder of scripts, not a package)
import plot  # noqa: E402
import run  # noqa: E402

from jsonrpc_mcp.http._serve import LOOP_ENV, PARSER_ENV, http_stack  # noqa: E402


def test_percentile_is_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert curves.percentile(values, 50) == 50.0
    assert curves.percentile(values, 99) == 99.0
    assert curves.percentile(values, 100) == 100.0
    assert curves.percentile([3.0, 1.0, 2.0], 0) == 1.0
    assert curves.percentile([], 50) is None


def test_rounds_become_medians_aligned_with_x_and_missing_points_none() -> None:
    rounds: curves.Rounds = [
        {10.0: {"ms": 1.0}, 100.0: {"ms": 4.0}},
        {10.0: {"ms": 3.0}, 100.0: {"ms": 6.0}},
        {10.0: {"ms": 2.0}},  # this round did not reach 100
    ]
    shaped = curves.median_points(rounds, [10.0, 100.0, 1000.0], ["ms", "other"])
    assert shaped == {"ms": [2.0, 5.0, None], "other": [None, None, None]}


def test_memory_per_session_over_the_start_and_between_the_last_two_points() -> None:
    points = [(100, 31.0), (1000, 34.0), (10_000, 64.0)]
    per = curves.per_session_kib(points, base_mib=30.0)
    assert per == pytest.approx([10.24, 4.096, 3.4816])
    # 30 MiB for 9,000 more sessions: what one more costs, without the start-up memory
    assert curves.marginal_kib(points) == pytest.approx(30 * 1024 / 9000)
    assert curves.marginal_kib(points[:1]) is None


def test_calls_per_payload_size_split_a_byte_budget_within_bounds() -> None:
    assert curves.calls_for(100, 1 << 20) == 300
    assert curves.calls_for(100_000, 1 << 20) == 10
    assert curves.calls_for(4 << 20, 1 << 20) == 3


def test_an_echo_request_of_the_largest_point_stays_under_the_body_limit() -> None:
    body = curves.echo_request(123_456, "x" * curves.PAYLOAD_SIZES[-1], "modern")
    assert len(body) + 1 <= curves.BODY_LIMIT  # + the newline of a stdio frame


def test_the_scale_out_file_reads_as_labelled_rates_per_era() -> None:
    document = {
        "configs": ["memory x1", "redis x1", "redis x2", "redis x4"],
        "handshake": {
            "instances": [1, 1, 2, 4],
            "backend": ["memory", "redis", "redis", "redis"],
            "calls_per_s": [2016.4, 1458, 1473.8, 1522.0],
            "p50_ms": [4.0, 5.11, 5.09, 4.71],
        },
        "modern": {"instances": [1], "backend": ["memory"], "calls_per_s": [1759.0]},
        "redis_cost_p50_ms": {"handshake": 1.11},
    }
    assert curves.normalize_scale_out(document) == {
        "handshake": {
            "ours x1 (memory)": 2016.4,
            "ours x1 (Redis)": 1458.0,
            "ours x2 (Redis)": 1473.8,
            "ours x4 (Redis)": 1522.0,
        },
        "modern": {"ours x1 (memory)": 1759.0},
    }


def test_a_scale_out_file_that_is_absent_or_unreadable_is_none(tmp_path: Path) -> None:
    assert curves.load_scale_out(tmp_path / "scale_out.json") is None
    (tmp_path / "bad.json").write_text("{not json")
    assert curves.load_scale_out(tmp_path / "bad.json") is None
    assert curves.normalize_scale_out({"handshake": "fast"}) is None


def _scaled(list_ms: tuple[float, float], call_ms: tuple[float, float], kib: float | None) -> run.CurvesRun:
    tools = curves.Curve("tools", "t", "tools", [10.0, 10_000.0], {"list_ms": "", "call_ms": ""})
    tools.series["ours"] = {
        "list_ms": [0.1, list_ms[0]],
        "call_ms": [call_ms[0], call_ms[1]],
        "call_cpu_us": [call_ms[0] * 200, call_ms[1] * 200],
    }
    tools.series["raw"] = {"list_ms": [0.05, list_ms[1]], "call_ms": [0.01, 0.01]}
    sessions = curves.Curve("sessions", "s", "sessions", [100.0], {"rss_mib": ""})
    if kib is not None:
        sessions.extra["marginal_kib"] = {"ours-json": kib}
    return run.CurvesRun(by_key={"tools": tools, "sessions": sessions})


def test_the_curve_targets_are_met_or_missed_by_their_ratios() -> None:
    rows = {
        row.what.split(",")[0]: row for row in run.curve_targets(_scaled((12.0, 10.0), (0.20, 0.22), 1.5))
    }
    assert rows["memory per idle handshake session"].met is True
    assert rows["memory per idle handshake session"].measured == "1.50 KiB"
    listing = rows["tools/list of 10"]
    assert listing.met is True and listing.measured.startswith("1.20x")
    cpu, wall = run.curve_targets(_scaled((12.0, 10.0), (0.20, 0.22), 1.5))[2:]
    assert "server CPU per call: 10,000 tools / 10" in cpu.what and "wall time" in wall.what
    assert cpu.met is True and cpu.measured == "1.10x (40 -> 44 µs)"
    assert wall.met is True and wall.measured == "1.10x (200 -> 220 µs)"
    missed = run.curve_targets(_scaled((20.0, 10.0), (0.20, 0.30), 7.0))
    assert [row.met for row in missed] == [False, False, False, False]


def test_curve_targets_not_run_are_not_measured() -> None:
    rows = run.curve_targets(None)
    assert [row.met for row in rows] == [None, None, None, None]
    assert all(row.measured == "not measured" for row in rows)


def test_a_curve_survives_its_json_form() -> None:
    curve = curves.Curve("concurrency", "c", "clients", [1.0, 4.0], {"calls_per_s": "calls/s"})
    curve.series["ours-json"] = {"calls_per_s": [100.0, None]}
    curve.problems["sdk"] = "not installed"
    curve.extra["rounds"] = 2
    again = curves.Curve.from_json(curve.to_json())
    assert again == curve and again.value("ours-json", "calls_per_s", 1.0) == 100.0
    assert (
        again.value("ours-json", "calls_per_s", 4.0) is None and again.value("x", "calls_per_s", 1.0) is None
    )


@pytest.mark.skipif(
    plot.matplotlib_missing() is not None, reason="matplotlib (the bench extra) not installed"
)
def test_the_pngs_are_drawn_from_a_run_document(tmp_path: Path) -> None:
    curve = curves.Curve(
        "payload_stdio", "p", "bytes", [100.0, 1000.0], {"ms_per_call": "ms", "mib_per_s": "MiB/s"}
    )
    curve.series = {
        "ours": {"ms_per_call": [0.1, 0.2], "mib_per_s": [1.0, None]},
        "raw": {"ms_per_call": [0.05, 0.1]},
    }
    document = {
        "curves": {
            "curves": {"payload_stdio": curve.to_json()},
            "fast_stack": {"handshake, seq": {"ours-json": 3000.0, "ours-fast": 5000.0}},
            "scale_out": {
                "handshake": {"ours x1 (Redis)": 6000.0, "ours x2 (Redis)": 11000.0, "sdk x1": 1700.0}
            },
        }
    }
    drawn = plot.draw_all(document, tmp_path)
    assert sorted(path.name for path in drawn) == [
        "curve_payload_stdio.png",
        "fast_stack.png",
        "scale_out.png",
    ]
    assert all(path.read_bytes().startswith(b"\x89PNG") for path in drawn)


def test_a_tiny_payload_curve_runs_ours_and_raw_over_stdio_alternated() -> None:
    specs = run.server_specs("stdio")
    lines: list[str] = []
    options = curves.CurveOptions(
        cwd=REPO, env=dict(os.environ), rounds=2, quick=True, point_seconds=0.01, progress=lines.append
    )
    curve = curves.payload_curve("stdio", [specs["ours"], specs["raw"]], options)
    assert curve.problems == {}
    assert set(curve.series) == {"ours", "raw"}
    assert all(v is not None and v > 0 for s in curve.series.values() for v in s["ms_per_call"])
    # alternated: ours, raw, ours, raw
    assert [line.split("] ")[1].split(":")[0] for line in lines] == ["ours", "raw", "ours", "raw"]


def test_the_http_stack_is_the_option_else_the_environment_else_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOOP_ENV, raising=False)
    monkeypatch.delenv(PARSER_ENV, raising=False)
    assert http_stack("asyncio", "h11") == ("asyncio", "h11")
    monkeypatch.setenv(LOOP_ENV, "asyncio")
    monkeypatch.setenv(PARSER_ENV, "h11")
    assert http_stack() == ("asyncio", "h11")
    monkeypatch.setenv(LOOP_ENV, "trio")
    with pytest.raises(ValueError, match="JSONRPC_MCP_LOOP must be auto, asyncio or uvloop"):
        http_stack()
    monkeypatch.delenv(LOOP_ENV)
    monkeypatch.delenv(PARSER_ENV)
    loop, parser = http_stack()
    fast = run.fast_stack_missing() is None
    assert (loop, parser) == (("uvloop", "httptools") if fast else ("asyncio", "h11"))


@pytest.mark.anyio
async def test_serve_http_logs_the_stack_it_picked_at_startup() -> None:
    wanted = ("uvloop", "httptools") if run.fast_stack_missing() is None else ("asyncio", "h11")
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", "bench/servers/echo.py", "--http", "--port", "0"]
    env = {k: v for k, v in os.environ.items() if k not in (LOOP_ENV, PARSER_ENV)}
    process = await anyio.open_process(command, cwd=REPO, env=env, stdin=subprocess.DEVNULL)
    try:
        assert process.stderr is not None
        seen = b""
        with anyio.fail_after(timeouts.STARTUP):
            while b"HTTP parser" not in seen or not seen.endswith(b"\n"):
                seen += await process.stderr.receive()
        line = next(x for x in seen.decode().splitlines() if "event loop" in x)
        assert line == f"jsonrpc-mcp: event loop {wanted[0]}, HTTP parser {wanted[1]}"
    finally:
        process.terminate()
        with anyio.fail_after(timeouts.STEP):
            await process.wait()
        await process.aclose()


@pytest.mark.anyio
async def test_serve_http_refuses_an_unknown_stack_from_the_environment() -> None:
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", "bench/servers/echo.py", "--http", "--port", "0"]
    env = {**os.environ, PARSER_ENV: "picohttp"}
    with anyio.fail_after(timeouts.STARTUP):
        done = await anyio.run_process(command, cwd=REPO, env=env, check=False)
    assert done.returncode == 2
    assert "JSONRPC_MCP_HTTP_PARSER must be auto, h11 or httptools, not 'picohttp'" in done.stderr.decode()


def _summary(name: str, seq: float, inflight: float) -> run.ServerSummary:
    from loadclient import PhaseResult, RunResult

    spec = run.ServerSpec(name, name, ("true",), "http")
    phase = {"server_cpu_seconds": 0.1, "client_cpu_seconds": 0.1, "errors": 0}
    result = RunResult(
        status="ok",
        cold_start_seconds=0.1,
        sequential=PhaseResult(calls=int(seq), seconds=1.0, **phase),  # type: ignore[arg-type]
        inflight=PhaseResult(calls=int(inflight), seconds=1.0, **phase),  # type: ignore[arg-type]
        peak_rss_mib=30.0,
    )
    return run.ServerSummary(spec, [result])


def test_the_fast_stack_and_scale_out_bars_are_shaped_from_the_http_table() -> None:
    summaries = [
        _summary("ours-json", 5000, 6000),
        _summary("ours-fast", 13000, 15000),
        _summary("sdk", 1800, 1700),
    ]
    results: run.Results = {"http": {"handshake": (summaries, {}, 1)}}
    bars = run.fast_stack_bars(results)
    assert bars == {
        "handshake, seq": {"ours-json": 5000.0, "ours-fast": 13000.0},
        "handshake, 32 in flight": {"ours-json": 6000.0, "ours-fast": 15000.0},
    }
    assert run.fast_stack_bars({"http": {"handshake": (summaries[:1], {}, 1)}}) == {}  # no fast stack run
    scale = {
        "handshake": {"ours x1 (Redis)": 6000.0, "ours x2 (Redis)": 11000.0, "ours x4 (Redis)": 20000.0},
        "modern": {"ours x1 (Redis)": 5000.0},
    }
    shaped = run.scale_out_bars(results, scale)
    assert shaped["handshake"] == {
        "ours x1 (Redis), via proxy": 6000.0,
        "ours x2 (Redis), via proxy": 11000.0,
        "ours x4 (Redis), via proxy": 20000.0,
        "ours-json x1, direct": 6000.0,
        "sdk x1, direct": 1700.0,
    }
    assert shaped["modern"] == {
        "ours x1 (Redis), via proxy": 5000.0
    }  # no HTTP table in that era: no peers beside
    assert run.scale_out_bars(results, None) == {}


def test_curve_points_are_rendered_with_their_x_in_bytes_or_counts() -> None:
    curve = curves.Curve("payload_http", "p", "bytes", [100.0, 1024.0, 4 * 1024 * 1024 - 512], {"ms": "ms"})
    curve.series = {"ours-json": {"ms": [0.2, None, 19.4]}}
    found = run.CurvesRun(by_key={"payload_http": curve})
    text = run.render_curves(found)
    assert "100 B" in text and "1 KiB" in text and "4 MiB" in text
    assert "ours-json" in text and "0.2" in text and "19.4" in text and " - " in text
    assert "scale_out.json does not exist" in text
