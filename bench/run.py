"""Benchmark MCP servers: ours (jsonrpc_mcp), the official SDK, FastMCP, the official TypeScript SDK
and a raw limit, over stdio and HTTP; then tools/list with 1,000 tools, import time, memory; then targets.

Run from anywhere (paths resolve from this file; servers run with cwd = repo root)::

    python bench/run.py [--transport stdio|http|both] [--era handshake|modern|both] [--calls N]
                        [--inflight-calls N] [--rounds R] [--only ours,sdk,raw,...] [--json FILE]
                        [--skip-tools-list] [--skip-import] [--skip-floor] [--skip-memory] [--skip-extras]

The peers (``fastmcp``, ``ts``) are installed by ``python bench/peers.py install`` (``make bench``);
when missing they are reported unavailable and skipped. The single-server measurements are in
``extras.py``; the last section lists each performance target with what was measured.

Per transport and protocol era (handshake: ``initialize`` first; modern: 2026-07-28, no
handshake, the envelope on every request), servers are alternated (A B C A B C ...) for R rounds
(3 stdio, 5 HTTP), each round a fresh spawn of every server; the report gives the median of each
metric per server, then ratios of ours against the others, and ours in the modern era against ours
in the handshake era. Progress goes to stderr, the report to stdout. Exit status 1 if any server
that was run (or a single-server measurement) failed or was unavailable.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

import curves
import extras
import orjson
import peers
import plot
from http_loadclient import PORT_PLACEHOLDER, bench_http_server
from loadclient import ERAS, MODERN_VERSION, BenchConfig, Era, PhaseResult, RunResult, Status, bench_server

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
DISTRIBUTIONS = ("jsonrpc-mcp", "mcp", "orjson", "anyio", "pydantic", "uvicorn", "h11", "starlette")
Transport = Literal["stdio", "http"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "http")
DEFAULT_ROUNDS: dict[Transport, int] = {"stdio": 3, "http": 5}


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


@dataclass(frozen=True)
class ServerSpec:
    name: str
    label: str
    argv: tuple[str, ...]
    transport: Transport = "stdio"
    eras: tuple[Era, ...] = ERAS  # the protocol eras the server speaks
    env: tuple[tuple[str, str], ...] = ()  # added to the environment of its process
    missing: str | None = None  # an optional peer that is not installed: why (never spawned)
    optional: bool = False  # a peer: its absence does not fail the run
    slow: bool = False  # about 10x slower than ours: runs 1/--slow-share of the calls (rates are rates)


def _peer_specs(transport: Transport) -> list[ServerSpec]:
    """FastMCP and the official TypeScript SDK, if installed (see ``peers.py``)."""
    fastmcp, ts = peers.fastmcp_python(), peers.ts_runtime()
    http_args = () if transport == "stdio" else ("--http", PORT_PLACEHOLDER)
    http_note = "" if transport == "stdio" else ", json_response, stateful"
    ts_note = "" if transport == "stdio" else ", node:http, JSON, stateful"
    return [
        ServerSpec(
            "fastmcp",
            f"fastmcp ({fastmcp.detail}{http_note})" if fastmcp.ok else "fastmcp",
            (fastmcp.executable or "python", "bench/servers/echo_fastmcp.py", *http_args),
            transport,
            missing=None if fastmcp.ok else fastmcp.detail,
            optional=True,
            slow=True,
        ),
        ServerSpec(
            "ts",
            f"ts ({ts.detail} McpServer{ts_note})" if ts.ok else "ts",
            (ts.executable or "node", "bench/servers/echo_ts.mjs", *http_args),
            transport,
            eras=("handshake",),  # 1.x answers server/discover with 'Method not found'
            env=(("MCPBENCH_NODE_MODULES", str(peers.ts_node_modules())),),
            missing=None if ts.ok else ts.detail,
            optional=True,
        ),
    ]


BASELINE_ENV = "MCPBENCH_BASELINE"  # a checkout of an earlier commit: "base" serves its jsonrpc_mcp


def _baseline_specs(transport: Transport) -> list[ServerSpec]:
    """Ours as of an earlier commit (``$MCPBENCH_BASELINE``, a checkout), beside ours now: the
    same echo server and options, its package first on the path (``-P``: not the cwd's)."""
    baseline = os.environ.get(BASELINE_ENV)
    if not baseline:
        return []
    argv: tuple[str, ...] = (sys.executable, "-P", "-m", "jsonrpc_mcp", "serve", "bench/servers/echo.py")
    env = (("PYTHONPATH", str(Path(baseline).resolve())),)
    if transport == "stdio":
        return [ServerSpec("base", f"base (jsonrpc_mcp at {baseline})", argv, env=env)]
    http = (*argv, "--http", "--port", PORT_PLACEHOLDER, "--json-response")
    label = f"base (jsonrpc_mcp at {baseline}, --json-response)"
    return [ServerSpec("base-json", label, http, "http", env=env)]


def _baseline_ratio_defs(ours: str, window: int) -> list[RatioDef]:
    """Ours now against ours at the baseline commit (see :func:`_baseline_specs`)."""
    if not os.environ.get(BASELINE_ENV):
        return []
    base = "base" if ours == "ours" else "base-json"
    key, faster = ours.replace("-", "_"), "(above 1: now is faster)"
    return [
        RatioDef(f"{key}_vs_base_seq_calls_per_s", ours, base, "seq_calls_per_s", "seq calls/s", note=faster),
        RatioDef(
            f"{key}_vs_base_inflight_calls_per_s",
            ours,
            base,
            "inflight_calls_per_s",
            f"{window}-inflight calls/s",
            note=faster,
        ),
        RatioDef(
            f"{key}_vs_base_inflight_server_cpu",
            ours,
            base,
            "inflight_server_cpu_us_per_call",
            f"server CPU/call {window}-inflight",
            note="(below 1: less CPU)",
        ),
        RatioDef(
            f"{key}_vs_base_cold_start", ours, base, "cold_start_ms", "cold start", note="(below 1: faster)"
        ),
    ]


def _telemetry_specs() -> list[ServerSpec]:
    """Ours with OpenTelemetry on: on the bare API (``otel-api``) and recording everything with the
    SDK's in-memory exporters (``otel-sdk``); telemetry off is ``ours``. Only where the SDK is
    installed (the dev extra has it)."""
    if importlib.util.find_spec("opentelemetry.sdk") is None:
        return []
    argv = (sys.executable, "-m", "jsonrpc_mcp", "serve", "bench/servers/echo_otel.py")
    return [
        ServerSpec("otel-api", "ours, telemetry on, no SDK", argv, env=(("MCPBENCH_OTEL", "api"),)),
        ServerSpec(
            "otel-sdk", "ours, telemetry on, SDK + in-memory exporter", argv, env=(("MCPBENCH_OTEL", "sdk"),)
        ),
    ]


def _telemetry_ratio_defs(window: int) -> list[RatioDef]:
    if importlib.util.find_spec("opentelemetry.sdk") is None:
        return []
    out = []
    for peer, what in (("otel-api", "no SDK"), ("otel-sdk", "SDK, in-memory exporter")):
        key = peer.replace("-", "_")
        out += [
            RatioDef(
                f"{key}_vs_ours_seq_calls_per_s",
                peer,
                "ours",
                "seq_calls_per_s",
                f"seq calls/s, telemetry on ({what})",
                note="(1: telemetry costs nothing)",
            ),
            RatioDef(
                f"{key}_vs_ours_inflight_server_cpu",
                peer,
                "ours",
                "inflight_server_cpu_us_per_call",
                f"server CPU/call {window}-inflight, telemetry on ({what})",
                note="(1: telemetry costs nothing)",
            ),
        ]
    return out


def server_specs(transport: Transport) -> dict[str, ServerSpec]:
    py = sys.executable
    ours = f"jsonrpc_mcp {_version('jsonrpc-mcp')}"
    sdk = f"mcp {_version('mcp')} MCPServer"
    if transport == "stdio":
        specs = [
            ServerSpec("ours", f"ours ({ours})", (py, "-m", "jsonrpc_mcp", "serve", "bench/servers/echo.py")),
            ServerSpec("sdk", f"sdk ({sdk})", (py, "bench/servers/echo_sdk.py"), slow=True),
            ServerSpec("raw", "raw (orjson readline loop)", (py, "bench/servers/raw_echo.py")),
            *_peer_specs(transport),
            *_baseline_specs(transport),
            *_telemetry_specs(),
        ]
    else:
        serve = (
            py,
            "-m",
            "jsonrpc_mcp",
            "serve",
            "bench/servers/echo.py",
            "--http",
            "--port",
            PORT_PLACEHOLDER,
        )
        default_stack = ("--loop", "asyncio", "--http-parser", "h11")
        specs = [
            ServerSpec(
                "ours-json",
                f"ours ({ours}, --json-response)",
                (*serve, "--json-response", *default_stack),
                "http",
            ),
            ServerSpec("ours-sse", f"ours ({ours}, default: SSE-capable)", (*serve, *default_stack), "http"),
            ServerSpec(
                "sdk",
                f"sdk ({sdk}, json_response, stateful)",
                (py, "bench/servers/echo_sdk_http.py", PORT_PLACEHOLDER),
                "http",
                slow=True,
            ),
            ServerSpec(
                "raw",
                "raw (bare ASGI app + orjson)",
                (py, "bench/servers/raw_asgi.py", PORT_PLACEHOLDER),
                "http",
            ),
            *_peer_specs(transport),
            *_fast_specs(serve),
            *_baseline_specs(transport),
        ]
    return {spec.name: spec for spec in specs}


FAST_STACK = (("MCPBENCH_UVICORN_LOOP", "uvloop"), ("MCPBENCH_UVICORN_HTTP", "httptools"))


def fast_stack_missing() -> str | None:
    """Why the fast stack (the ``fast`` extra: uvloop, httptools) cannot run here, or None."""
    missing = [name for name in ("uvloop", "httptools") if importlib.util.find_spec(name) is None]
    return f"{', '.join(missing)} not installed (pip install -e '.[fast]')" if missing else None


def _fast_specs(serve: tuple[str, ...]) -> list[ServerSpec]:
    """Ours and the raw app on uvloop + httptools (the ``fast`` extra), and both under granian when
    it is installed (bench only: ``pip install granian``; it serves the same ASGI apps unchanged)."""
    missing = fast_stack_missing()
    fast = ("--loop", "uvloop", "--http-parser", "httptools")
    specs = [
        ServerSpec(
            "ours-fast",
            "ours (--json-response, uvloop + httptools)",
            (*serve, "--json-response", *fast),
            "http",
            missing=missing,
            optional=True,
        ),
        ServerSpec(
            "raw-fast",
            "raw (bare ASGI app, uvloop + httptools)",
            (sys.executable, "bench/servers/raw_asgi.py", PORT_PLACEHOLDER),
            "http",
            env=FAST_STACK,
            missing=missing,
            optional=True,
        ),
    ]
    if importlib.util.find_spec("granian") is not None:
        granian: tuple[str, ...] = (
            sys.executable,
            "-m",
            "granian",
            "--interface",
            "asgi",
            "--host",
            "127.0.0.1",
        )
        granian += ("--port", PORT_PLACEHOLDER, "--workers", "1", "--no-ws", "--log-level", "warning")
        granian += ("--working-dir", "bench/servers")
        specs += [
            ServerSpec(
                "ours-granian",
                "ours (McpHttpApp, JSON) under granian",
                (*granian, "echo_granian:app"),
                "http",
                optional=True,
            ),
            ServerSpec(
                "raw-granian",
                "raw (bare ASGI app) under granian",
                (*granian, "raw_asgi:app"),
                "http",
                optional=True,
            ),
        ]
    return specs


def uvicorn_implementations() -> str:
    """The stacks: every server on asyncio + h11 (pinned), the ``-fast`` ones on uvloop + httptools."""
    fast = "unavailable: " + missing if (missing := fast_stack_missing()) else "uvloop + httptools"
    return f"uvicorn {_version('uvicorn')}, loop=asyncio, http=h11 (pinned), 1 worker; -fast: {fast}"


def selects(pattern: str, name: str) -> bool:
    """``--only`` matching: a name selects itself and its variants (``ours`` selects ``ours-json``)."""
    return name == pattern or name.startswith(pattern + "-")


# -- metrics -----------------------------------------------------------------------------------


def _phase(run: RunResult, name: str) -> PhaseResult:
    phase = run.sequential if name == "sequential" else run.inflight
    assert phase is not None
    return phase


def _cold_start_ms(run: RunResult) -> float:
    assert run.cold_start_seconds is not None
    return run.cold_start_seconds * 1000


def _peak_rss(run: RunResult) -> float:
    assert run.peak_rss_mib is not None
    return run.peak_rss_mib


METRICS: dict[str, Callable[[RunResult], float]] = {
    "cold_start_ms": _cold_start_ms,
    "seq_calls_per_s": lambda run: _phase(run, "sequential").calls_per_second,
    "inflight_calls_per_s": lambda run: _phase(run, "inflight").calls_per_second,
    "seq_server_cpu_us_per_call": lambda run: _phase(run, "sequential").server_cpu_us_per_call,
    "inflight_server_cpu_us_per_call": lambda run: _phase(run, "inflight").server_cpu_us_per_call,
    "peak_rss_mib": _peak_rss,
    "seq_client_cpu_us_per_call": lambda run: _phase(run, "sequential").client_cpu_us_per_call,
    "inflight_client_cpu_us_per_call": lambda run: _phase(run, "inflight").client_cpu_us_per_call,
}


@dataclass
class ServerSummary:
    spec: ServerSpec
    runs: list[RunResult] = field(default_factory=list)

    @property
    def status(self) -> Status:
        if not self.runs:
            return "unavailable"
        if any(run.status == "failed" for run in self.runs):
            return "failed"
        if any(run.status == "unavailable" for run in self.runs):
            return "unavailable"
        return "ok"

    @property
    def reason(self) -> str | None:
        return next((run.reason for run in self.runs if run.status != "ok"), None)

    @property
    def stderr_tail(self) -> str:
        return next((run.stderr_tail for run in self.runs if run.status != "ok"), "")

    def medians(self) -> dict[str, float]:
        if self.status != "ok":
            return {}
        return {name: statistics.median(get(run) for run in self.runs) for name, get in METRICS.items()}


# -- running -----------------------------------------------------------------------------------


def slow_config(config: BenchConfig, share: int) -> BenchConfig:
    """The phases of a slow server: 1/``share`` of the calls (at least one window in flight)."""
    if share <= 1:
        return config
    return dataclasses.replace(
        config,
        calls=max(1, config.calls // share),
        inflight_calls=max(config.inflight, config.inflight_calls // share),
    )


def run_all(
    specs: Sequence[ServerSpec], config: BenchConfig, rounds: int, env: dict[str, str], slow_share: int = 1
) -> list[ServerSummary]:
    """Every round of every server of one transport that speaks ``config.era``, in that era.

    A peer that is not installed gets one "unavailable" result and is never spawned. A slow
    server (the Python SDK, FastMCP) runs 1/``slow_share`` of the calls: its rates are the same
    at that size and the run is minutes shorter."""
    summaries = [ServerSummary(spec) for spec in specs if config.era in spec.eras]
    for summary in summaries:
        if summary.spec.missing is not None:
            summary.runs.append(RunResult(status="unavailable", reason=summary.spec.missing))
    for round_no in range(1, rounds + 1):
        for summary in summaries:
            if summary.runs and summary.status != "ok":
                continue  # no point spawning again what already failed to start or answer
            spec = summary.spec
            bench = bench_server if spec.transport == "stdio" else bench_http_server
            spec_config = slow_config(config, slow_share) if spec.slow else config
            result = bench(spec.argv, spec_config, cwd=ROOT, env={**env, **dict(spec.env)})
            summary.runs.append(result)
            note = "" if result.status == "ok" else f": {result.reason}"
            _progress(
                f"[{spec.transport} {config.era} round {round_no}/{rounds}] {spec.name}: {result.status} "
                f"in {result.wall_seconds:.1f} s{note}"
            )
    return summaries


def _progress(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


# -- report ------------------------------------------------------------------------------------


def _fmt(value: float, kind: str, resolution: float = 0.0) -> str:
    if kind == "rate":
        return f"{value:,.0f}"
    if kind == "us":
        if value < resolution:
            return f"<{resolution:.1f}"  # less than one clock tick over the whole phase
        return f"{value:.1f}" if value < 100 else f"{value:.0f}"
    return f"{value:.1f}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows, strict=False)]
    lines = []
    for i, row in enumerate([headers, *rows]):
        cells = [row[0].ljust(widths[0])] + [
            cell.rjust(w) for cell, w in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


@dataclass(frozen=True)
class RatioDef:
    key: str
    numerator: str  # server names
    denominator: str
    metric: str
    what: str
    percent: bool = False
    note: str = ""


def _peer_ratio_defs(ours: str, window: int) -> list[RatioDef]:
    """Ours against each peer (FastMCP, the TypeScript SDK): calls/s both ways, and cold start."""
    key, faster = ours.replace("-", "_"), "(above 1: ours is faster)"
    return [
        definition
        for peer in ("fastmcp", "ts")
        for definition in (
            RatioDef(
                f"{key}_vs_{peer}_seq_calls_per_s", ours, peer, "seq_calls_per_s", "seq calls/s", note=faster
            ),
            RatioDef(
                f"{key}_vs_{peer}_inflight_calls_per_s",
                ours,
                peer,
                "inflight_calls_per_s",
                f"{window}-inflight calls/s",
                note=faster,
            ),
            RatioDef(
                f"{key}_vs_{peer}_cold_start",
                ours,
                peer,
                "cold_start_ms",
                "cold start",
                note="(below 1: faster)",
            ),
        )
    ]


def ratio_defs(transport: Transport, window: int) -> list[RatioDef]:
    inflight = f"{window}-inflight calls/s"
    faster = "(above 1: ours is faster)"
    if transport == "stdio":
        return [
            RatioDef(
                "ours_vs_sdk_seq_calls_per_s", "ours", "sdk", "seq_calls_per_s", "seq calls/s", note=faster
            ),
            RatioDef(
                "ours_vs_sdk_inflight_calls_per_s",
                "ours",
                "sdk",
                "inflight_calls_per_s",
                inflight,
                note=faster,
            ),
            RatioDef(
                "ours_vs_sdk_cold_start",
                "ours",
                "sdk",
                "cold_start_ms",
                "cold start",
                note="(below 1: ours starts faster)",
            ),
            RatioDef(
                "ours_vs_raw_seq_calls_per_s", "ours", "raw", "seq_calls_per_s", "seq calls/s", percent=True
            ),
            RatioDef(
                "ours_vs_raw_peak_rss", "ours", "raw", "peak_rss_mib", "peak RSS", note="(target <= 2x)"
            ),
            *_peer_ratio_defs("ours", window),
            *_baseline_ratio_defs("ours", window),
            *_telemetry_ratio_defs(window),
        ]
    target_sdk, target_raw, less_cpu = "(target >= 2x)", "(target >= 85%)", "(target <= 1.3x)"
    return [
        RatioDef(
            "ours_json_vs_sdk_seq_calls_per_s",
            "ours-json",
            "sdk",
            "seq_calls_per_s",
            "seq calls/s",
            note=target_sdk,
        ),
        RatioDef(
            "ours_json_vs_sdk_inflight_calls_per_s",
            "ours-json",
            "sdk",
            "inflight_calls_per_s",
            inflight,
            note=target_sdk,
        ),
        RatioDef(
            "ours_json_vs_sdk_cold_start",
            "ours-json",
            "sdk",
            "cold_start_ms",
            "cold start",
            note="(below 1: faster)",
        ),
        RatioDef(
            "ours_json_vs_raw_seq_calls_per_s",
            "ours-json",
            "raw",
            "seq_calls_per_s",
            "seq calls/s",
            True,
            target_raw,
        ),
        RatioDef(
            "ours_json_vs_raw_inflight_calls_per_s",
            "ours-json",
            "raw",
            "inflight_calls_per_s",
            inflight,
            True,
            target_raw,
        ),
        RatioDef(
            "ours_sse_vs_raw_seq_calls_per_s", "ours-sse", "raw", "seq_calls_per_s", "seq calls/s", True
        ),
        RatioDef(
            "ours_sse_vs_raw_inflight_calls_per_s", "ours-sse", "raw", "inflight_calls_per_s", inflight, True
        ),
        RatioDef(
            "ours_json_vs_raw_seq_server_cpu",
            "ours-json",
            "raw",
            "seq_server_cpu_us_per_call",
            "server CPU/call seq",
            note=less_cpu,
        ),
        RatioDef(
            "ours_json_vs_raw_inflight_server_cpu",
            "ours-json",
            "raw",
            "inflight_server_cpu_us_per_call",
            f"server CPU/call {window}-inflight",
            note=less_cpu,
        ),
        *_peer_ratio_defs("ours-json", window),
        *_baseline_ratio_defs("ours-json", window),
    ]


@dataclass(frozen=True)
class CrossEraDef:
    key: str
    server: str
    metric: str
    what: str
    note: str


def cross_era_defs(transport: Transport, window: int) -> list[CrossEraDef]:
    """Ours in the modern era against ours in the handshake era (same server, same transport)."""
    ours = "ours" if transport == "stdio" else "ours-json"
    key = ours.replace("-", "_")
    faster = "(above 1: the modern era is faster)"
    return [
        CrossEraDef(
            f"{key}_modern_vs_handshake_seq_calls_per_s", ours, "seq_calls_per_s", "seq calls/s", faster
        ),
        CrossEraDef(
            f"{key}_modern_vs_handshake_inflight_calls_per_s",
            ours,
            "inflight_calls_per_s",
            f"{window}-inflight calls/s",
            faster,
        ),
        CrossEraDef(
            f"{key}_modern_vs_handshake_seq_server_cpu",
            ours,
            "seq_server_cpu_us_per_call",
            "server CPU/call seq",
            "(above 1: the modern era costs more)",
        ),
        CrossEraDef(
            f"{key}_modern_vs_handshake_cold_start",
            ours,
            "cold_start_ms",
            "cold start",
            "(discover vs initialize; below 1: faster)",
        ),
    ]


def compute_cross_era(
    definitions: Sequence[CrossEraDef], modern: Sequence[ServerSummary], handshake: Sequence[ServerSummary]
) -> dict[str, float | None]:
    def median_of(summaries: Sequence[ServerSummary], name: str, metric: str) -> float | None:
        found = next((s for s in summaries if s.spec.name == name), None)
        return found.medians().get(metric) if found is not None else None

    ratios: dict[str, float | None] = {}
    for d in definitions:
        a, b = median_of(modern, d.server, d.metric), median_of(handshake, d.server, d.metric)
        ratios[d.key] = a / b if a is not None and b else None
    return ratios


def render_cross_era(
    transport: Transport, definitions: Sequence[CrossEraDef], ratios: dict[str, float | None]
) -> list[str]:
    out = [f"{transport}, ours in the modern era / ours in the handshake era (medians):"]
    what_width = max(len(d.what) for d in definitions)
    for d in definitions:
        value = ratios.get(d.key)
        shown = "n/a (not run in both eras)" if value is None else f"{value:8.2f}x   {d.note}"
        out.append(f"  {d.server}   {d.what.ljust(what_width)}  {shown}".rstrip())
    return out


def compute_ratios(
    definitions: Sequence[RatioDef], by_name: dict[str, ServerSummary]
) -> dict[str, float | None]:
    def median_of(name: str, metric: str) -> float | None:
        summary = by_name.get(name)
        return summary.medians().get(metric) if summary is not None else None

    ratios: dict[str, float | None] = {}
    for d in definitions:
        a, b = median_of(d.numerator, d.metric), median_of(d.denominator, d.metric)
        ratios[d.key] = a / b if a is not None and b else None
    return ratios


ERA_TITLES: dict[Era, str] = {
    "handshake": "handshake era (initialize, then plain requests)",
    "modern": f"{MODERN_VERSION} era (server/discover, then every request carries its envelope)",
}


def _title(transport: Transport, config: BenchConfig, rounds: int) -> str:
    window = config.inflight
    counts = (
        f"median of {rounds} round(s); {config.calls} sequential calls, {config.inflight_calls} calls "
        f"with {window} in flight, after {config.warmup} warm-up calls"
    )
    era = ERA_TITLES[config.era]
    if transport == "stdio":
        return f"MCP over stdio, {era}: {counts}"
    return (
        f"MCP over Streamable HTTP, {era}: {counts}\n"
        f"({uvicorn_implementations()}; HTTP/1.1 keep-alive; {window} in flight = {window} connections "
        "with one request outstanding on each)"
    )


def render_report(
    transport: Transport,
    summaries: Sequence[ServerSummary],
    ratios: dict[str, float | None],
    config: BenchConfig,
    rounds: int,
) -> str:
    window = config.inflight
    out = [_title(transport, config, rounds), ""]
    headers = [
        "server",
        "cold start ms",
        "seq calls/s",
        f"{window}-inflight calls/s",
        "CPU µs/call seq",
        f"CPU µs/call {window}-inflight",
        "peak RSS MiB",
    ]
    tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
    columns = [
        ("cold_start_ms", "ms", 0.0),
        ("seq_calls_per_s", "rate", 0.0),
        ("inflight_calls_per_s", "rate", 0.0),
        ("seq_server_cpu_us_per_call", "us", tick_us / config.calls),
        ("inflight_server_cpu_us_per_call", "us", tick_us / config.inflight_calls),
        ("peak_rss_mib", "mib", 0.0),
    ]
    rows = []
    for summary in summaries:
        medians = summary.medians()
        if medians:
            rows.append([summary.spec.label, *(_fmt(medians[key], kind, res) for key, kind, res in columns)])
        else:
            rows.append([summary.spec.label, summary.status.upper(), *([""] * (len(columns) - 1))])
    out += _table(headers, rows)

    problems = [s for s in summaries if s.status != "ok"]
    if problems:
        out.append("")
        for summary in problems:
            out.append(f"{summary.spec.name} {summary.status}: {summary.reason}")
            tail = summary.stderr_tail.strip().splitlines()[-3:]
            out += [f"    stderr: {line}" for line in tail]

    out += ["", "ratios (medians):"]
    by_name = {s.spec.name: s for s in summaries}

    def unavailable(*names: str) -> str:
        missing = [n for n in names if n not in by_name or by_name[n].status != "ok"]
        what = ", ".join(f"{n} {by_name[n].status}" if n in by_name else f"{n} not run" for n in missing)
        return f"n/a ({what})"

    definitions = ratio_defs(transport, window)
    pair_width = max(len(f"{d.numerator} / {d.denominator}") for d in definitions)
    what_width = max(len(d.what) for d in definitions)
    for d in definitions:
        pair = f"{d.numerator} / {d.denominator}".ljust(pair_width)
        value = ratios[d.key]
        if value is None:
            shown = unavailable(d.numerator, d.denominator)
            out.append(f"  {pair}   {d.what.ljust(what_width)}  {shown}")
        else:
            shown = f"{value:8.1%}" if d.percent else f"{value:8.2f}x"
            out.append(f"  {pair}   {d.what.ljust(what_width)}  {shown}   {d.note}".rstrip())

    client = [
        f"{s.spec.name} {m['seq_client_cpu_us_per_call']:.1f}/{m['inflight_client_cpu_us_per_call']:.1f}"
        for s in summaries
        if (m := s.medians())
    ]
    if client:
        process = "the server process" if transport == "stdio" else "the uvicorn process (and any children)"
        out += [
            "",
            f"load client CPU µs/call (seq/{window}-inflight): " + ", ".join(client),
            f"server CPU is utime+stime of {process} from /proc/<pid>/stat, "
            f"{1000 / os.sysconf('SC_CLK_TCK'):.0f} ms resolution per phase; "
            "peak RSS is VmHWM at the end of the run",
        ]
    return "\n".join(out)


Results = dict[Transport, dict[Era, tuple[list[ServerSummary], dict[str, float | None], int]]]


def _section(summaries: list[ServerSummary], ratios: dict[str, float | None], rounds: int) -> dict[str, Any]:
    return {
        "rounds": rounds,
        "servers": {
            s.spec.name: {
                "label": s.spec.label,
                "argv": list(s.spec.argv),
                "status": s.status,
                "reason": s.reason,
                "median": s.medians(),
                "runs": [run.to_json() for run in s.runs],
            }
            for s in summaries
        },
        "ratios": ratios,
    }


def json_document(
    results: Results,
    cross_era: dict[Transport, dict[str, float | None]],
    config: BenchConfig,
    tools: int,
) -> dict[str, Any]:
    return {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": {
            "calls": config.calls,
            "inflight_calls": config.inflight_calls,
            "inflight": config.inflight,
            "warmup": config.warmup,
            "extra_tools": tools,
            "modern_version": MODERN_VERSION,
        },
        "environment": {
            "python": sys.version,
            "executable": sys.executable,
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "clk_tck": os.sysconf("SC_CLK_TCK"),
            "versions": {dist: _version(dist) for dist in DISTRIBUTIONS},
            "uvicorn": uvicorn_implementations(),
        },
        "transports": {
            transport: {
                **{era: _section(*section) for era, section in eras.items()},
                **({"modern_vs_handshake": cross_era[transport]} if transport in cross_era else {}),
            }
            for transport, eras in results.items()
        },
    }


# -- single-server measurements and the targets -----------------------------------------------------

MEMORY_FIRST = 1000  # the first checkpoint of both memory runs: what "flat" is measured against
# ``import jsonrpc_mcp`` is lazy: the second statement is what a server file (bench/servers/echo.py) loads;
# the third is everything ``python -m jsonrpc_mcp serve FILE`` imports before it answers (the CLI, the
# stdio transport, anyio's asyncio backend, which ``anyio.run`` loads); the last is its floor: what
# any server on anyio and asyncio (and orjson) imports, ours or not.
SERVE_IMPORT = (
    "from jsonrpc_mcp import Server; "
    "import jsonrpc_mcp.cli, jsonrpc_mcp.transports.stdio, anyio._backends._asyncio"
)
FLOOR_IMPORT = "import asyncio, anyio, orjson; import anyio._backends._asyncio"
IMPORT_STATEMENTS = ("import jsonrpc_mcp", "from jsonrpc_mcp import Server", SERVE_IMPORT, FLOOR_IMPORT)
IMPORT_LABELS = {SERVE_IMPORT: "stdio serve path", FLOOR_IMPORT: "floor (anyio on asyncio, orjson)"}
# Ours in the tools/list runs, per transport (raw is "raw" in both).
TOOLS_LIST_OURS: dict[Transport, str] = {"stdio": "ours", "http": "ours-json"}
# The cold-start floor: anyio.run on asyncio reading stdin and answering with orjson, nothing else.
FLOOR_SERVER = (sys.executable, "bench/servers/floor_anyio.py")


@dataclass
class Extras:
    """What ``extras.py`` measured (None: skipped)."""

    tools_list: dict[str, list[extras.ToolsListResult]] | None = None  # ours, raw: one per round
    tools_list_http: dict[str, list[extras.ToolsListResult]] | None = None  # ours-json, raw (HTTP)
    tools_list_total: int = 0
    import_time: list[extras.ImportTimeResult] | None = None
    cold_start: extras.ColdStartResult | None = None  # ours and the floor, alternated
    memory_stdio: extras.MemoryResult | None = None
    memory_http: extras.MemoryResult | None = None

    def listings(self, transport: Transport) -> dict[str, list[extras.ToolsListResult]] | None:
        """The tools/list runs over ``transport``, by server (None: not run)."""
        return self.tools_list if transport == "stdio" else self.tools_list_http

    def tools_list_median(
        self, name: str, get: Callable[[extras.ToolsListResult], float], transport: Transport = "stdio"
    ) -> float | None:
        runs = (self.listings(transport) or {}).get(name, [])
        if not runs or any(run.status != "ok" for run in runs):
            return None
        return statistics.median(get(run) for run in runs)

    def tools_list_ratio(self, transport: Transport = "stdio") -> float | None:
        """Ours (``ours-json`` over HTTP) / raw, median ms per listing."""
        ours = self.tools_list_median(TOOLS_LIST_OURS[transport], lambda run: run.ms_per_call, transport)
        raw = self.tools_list_median("raw", lambda run: run.ms_per_call, transport)
        return ours / raw if ours is not None and raw else None

    def import_ms(self, statement: str) -> float | None:
        found = next((it for it in self.import_time or [] if it.statement == statement), None)
        return None if found is None else found.median_ms

    def failed(self) -> bool:
        runs: list[Any] = [
            run
            for listing in (self.tools_list, self.tools_list_http)
            for rounds in (listing or {}).values()
            for run in rounds
        ]
        runs += [*(self.import_time or []), self.cold_start, self.memory_stdio, self.memory_http]
        return any(run is not None and run.status != "ok" for run in runs)

    def _listing_json(self, transport: Transport) -> dict[str, Any] | None:
        listing = self.listings(transport)
        if listing is None:
            return None
        return {
            "total_tools": self.tools_list_total,
            "ratio_ours_vs_raw_ms_per_call": self.tools_list_ratio(transport),
            "servers": {name: [run.to_json() for run in runs] for name, runs in listing.items()},
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "tools_list": self._listing_json("stdio"),
            "tools_list_http": self._listing_json("http"),
            "import_time": None if self.import_time is None else [it.to_json() for it in self.import_time],
            "cold_start": None if self.cold_start is None else self.cold_start.to_json(),
            "memory_stdio": None if self.memory_stdio is None else self.memory_stdio.to_json(),
            "memory_http": None if self.memory_http is None else self.memory_http.to_json(),
        }


def run_extras(args: argparse.Namespace, env: dict[str, str]) -> Extras:
    """tools/list with many tools (ours vs raw, alternated), import time, and the memory runs."""
    found = Extras()
    stdio, http = server_specs("stdio"), server_specs("http")

    def wanted(name: str) -> bool:
        return not args.only or any(selects(p, name) for p in args.only)

    list_env = {**env, "MCPBENCH_TOOLS": str(max(args.list_tools - 1, 0))}  # echo + the dummies
    for transport in TRANSPORTS:
        ours = TOOLS_LIST_OURS[transport]
        if transport not in args.transports or args.skip_tools_list or not (wanted(ours) and wanted("raw")):
            continue
        found.tools_list_total = args.list_tools
        specs = stdio if transport == "stdio" else http
        bench = extras.bench_tools_list if transport == "stdio" else extras.bench_tools_list_http
        listing: dict[str, list[extras.ToolsListResult]] = {ours: [], "raw": []}
        if transport == "stdio":
            found.tools_list = listing
        else:
            found.tools_list_http = listing
        for round_no in range(1, args.list_rounds + 1):
            for name, runs in listing.items():
                run = bench(specs[name].argv, calls=args.list_calls, warmup=10, cwd=ROOT, env=list_env)
                runs.append(run)
                _progress(
                    f"[tools/list {transport} {args.list_tools} tools round {round_no}/{args.list_rounds}] "
                    f"{name}: {run.status}, {run.ms_per_call:.2f} ms per listing"
                    + (f": {run.reason}" if run.reason else "")
                )
    if not args.skip_import and wanted("ours"):
        found.import_time = []
        for statement in IMPORT_STATEMENTS:
            measured = extras.import_time(statement, args.import_runs, cwd=ROOT)
            found.import_time.append(measured)
            _progress(f"[import time] {statement}: {measured.runs_ms} ms")
    if not args.skip_floor and "stdio" in args.transports and wanted("ours"):
        servers = {"floor": FLOOR_SERVER, "ours": stdio["ours"].argv}
        found.cold_start = extras.cold_starts(servers, args.floor_rounds, cwd=ROOT, env=env)
        _progress(f"[cold start, floor and ours alternated] {found.cold_start.to_json()}")
    if not args.skip_memory and "stdio" in args.transports and wanted("ours"):
        checkpoints = sorted({min(MEMORY_FIRST, args.memory_calls), args.memory_calls})
        found.memory_stdio = extras.memory_stdio(stdio["ours"].argv, checkpoints, cwd=ROOT, env=env)
        _progress(f"[memory stdio] ours: {found.memory_stdio.to_json()}")
    if not args.skip_memory and "http" in args.transports and wanted("ours-json"):
        checkpoints = sorted({min(MEMORY_FIRST, args.memory_sessions), args.memory_sessions})
        found.memory_http = extras.memory_http_sessions(
            http["ours-json"].argv, checkpoints, cwd=ROOT, env=env
        )
        _progress(f"[memory http] ours-json: {found.memory_http.to_json()}")
    return found


def render_extras(found: Extras, args: argparse.Namespace) -> str:
    out: list[str] = []
    for transport in TRANSPORTS:
        out += _render_listing(found, args, transport)
    if found.import_time is not None:
        out.append("import time (python -X importtime, the cumulative time of what the statement imports):")
        for it in found.import_time:
            shown = (
                f"{it.median_ms:6.1f} ms (median of {len(it.runs_ms)}: "
                + ", ".join(f"{ms:.1f}" for ms in it.runs_ms)
                + ")"
                if it.median_ms is not None
                else f"FAILED: {it.reason}"
            )
            out.append(f"  {IMPORT_LABELS.get(it.statement, it.statement):<32} {shown}")
        out += [f"  ({label}: {statement})" for statement, label in IMPORT_LABELS.items()]
        out.append("")
    cold = found.cold_start
    if cold is not None:
        title = "cold start over stdio (spawn to the initialize answer), floor and ours alternated"
        if cold.status != "ok":
            out += [f"{title}: {cold.status.upper()}: {cold.reason}", ""]
        else:
            out.append(f"{title}, {len(cold.runs_ms['ours'])} round(s):")
            for name, what in (("floor", "floor (bench/servers/floor_anyio.py)"), ("ours", "ours")):
                each = ", ".join(f"{ms:.1f}" for ms in cold.runs_ms[name])
                out.append(f"  {what:<38} {cold.median_ms(name) or 0.0:6.1f} ms (median of: {each})")
            out += [f"  ours adds {cold.added_ms('ours', 'floor') or 0.0:+.1f} ms to the floor", ""]
    for memory, what in (
        (found.memory_stdio, "stdio, ours, echo calls"),
        (found.memory_http, "HTTP, ours-json, sessions opened (initialize) and closed (DELETE)"),
    ):
        if memory is None:
            continue
        if memory.status != "ok":
            out += [f"memory ({what}): {memory.status.upper()}: {memory.reason}", ""]
            continue
        points = ", ".join(f"after {count:,} {memory.what}: {rss:.1f} MiB" for count, rss in memory.points)
        delta = memory.delta_mib
        out += [
            f"memory ({what}), VmRSS of one process: {points}"
            + ("" if delta is None else f"; delta {delta:+.2f} MiB")
            + f" ({memory.seconds:.1f} s)",
            "",
        ]
    return "\n".join(out).rstrip()


def _render_listing(found: Extras, args: argparse.Namespace, transport: Transport) -> list[str]:
    """The tools/list table of one transport, its ratio and any failures (nothing if not run)."""
    listing = found.listings(transport)
    if listing is None:
        return []
    how = "over stdio" if transport == "stdio" else "over Streamable HTTP (handshake era, one connection)"
    out = [
        f"tools/list {how} with {found.tools_list_total:,} tools "
        f"(echo + {found.tools_list_total - 1:,} dummies): {args.list_calls} sequential listings "
        f"per round, median of {args.list_rounds} round(s); a listing follows nextCursor to the end",
        "",
    ]
    rows, problems = [], []
    for name, runs in listing.items():
        bad = next((run for run in runs if run.status != "ok"), None)
        if bad is not None:
            rows.append([name, bad.status.upper(), "", "", "", ""])
            problems.append(f"  {name} {bad.status}: {bad.reason}")
            continue
        rows.append(
            [
                f"{name} ({spec_label(transport, name)})",
                f"{statistics.median(run.ms_per_call for run in runs):.3f}",
                f"{statistics.median(run.server_cpu_ms_per_call for run in runs):.3f}",
                f"{runs[-1].response_bytes:,}",
                str(runs[-1].tool_count),
                str(runs[-1].pages),
            ]
        )
    size = "bytes" if transport == "stdio" else "body bytes"
    out += _table(["server", "ms/listing", "server CPU ms/listing", size, "tools", "pages"], rows)
    ratio = found.tools_list_ratio(transport)
    pair = f"{TOOLS_LIST_OURS[transport]} / raw"
    out.append("")
    out.append(
        f"  {pair}   ms per listing  " + ("n/a" if ratio is None else f"{ratio:8.2f}x   (target <= 2x)")
    )
    return [*out, *problems, ""]


def spec_label(transport: Transport, name: str) -> str:
    label = server_specs(transport)[name].label
    return label[label.find("(") + 1 : -1] if "(" in label else label


@dataclass(frozen=True)
class Target:
    what: str
    target: str
    measured: str
    met: bool | None  # None: not measured in this run


def memory_noise_mib(first_mib: float) -> float:
    """What "flat" allows: 2 MiB or 5% of the RSS at the first checkpoint, whichever is more."""
    return max(2.0, 0.05 * first_mib)


def targets(results: Results, found: Extras, scaled: CurvesRun | None = None) -> list[Target]:
    """The performance issue's targets, each with what this run measured (per era for the rates)."""

    def median(transport: Transport, era: Era, server: str, metric: str) -> float | None:
        section = results.get(transport, {}).get(era)
        summary = next((x for x in section[0] if x.spec.name == server), None) if section else None
        return None if summary is None else summary.medians().get(metric)

    def of(transport: Transport, era: Era, server: str, metric: str, peer: str) -> float | None:
        mine, theirs = median(transport, era, server, metric), median(transport, era, peer, metric)
        return None if mine is None or not theirs else mine / theirs

    def ratio(transport: Transport, key: str) -> float | None:
        eras = results.get(transport, {})
        section = eras.get("handshake") or eras.get("modern")
        return None if section is None else section[1].get(key)

    def at_least(value: float | None, bound: float, shown: str) -> tuple[str, bool | None]:
        return ("not measured", None) if value is None else (shown.format(value), value >= bound)

    def at_most(value: float | None, bound: float, shown: str) -> tuple[str, bool | None]:
        return ("not measured", None) if value is None else (shown.format(value), value <= bound)

    rows: list[Target] = []
    for era in ERAS:
        if era not in results.get("stdio", {}) and era not in results.get("http", {}):
            continue
        cpu = median("stdio", era, "ours", "inflight_server_cpu_us_per_call")
        rows.append(
            Target(
                f"[{era}] stdio server CPU/call, 32 in flight", "<= 40 us", *at_most(cpu, 40.0, "{:.1f} us")
            )
        )
        seq = of("stdio", era, "ours", "seq_calls_per_s", "raw")
        rows.append(
            Target(f"[{era}] stdio seq calls/s, ours / raw", ">= 75%", *at_least(seq, 0.75, "{:.1%}"))
        )
        for server, raw in (("ours-json", "raw"), ("ours-sse", "raw"), ("ours-fast", "raw-fast")):
            for phase, label in (("seq", "seq"), ("inflight", "32 in flight")):
                rate = of("http", era, server, f"{phase}_calls_per_s", raw)
                rows.append(
                    Target(
                        f"[{era}] HTTP {label} calls/s, {server} / {raw} (same stack)",
                        ">= 85%",
                        *at_least(rate, 0.85, "{:.1%}"),
                    )
                )
                if server == "ours-fast":
                    faster = of("http", era, "ours-fast", f"{phase}_calls_per_s", "ours-json")
                    rows.append(
                        Target(
                            f"[{era}] HTTP {label} calls/s, fast stack / default (ours-fast / ours-json)",
                            ">= 1.5x",
                            *at_least(faster, 1.5, "{:.2f}x"),
                        )
                    )
                    continue
                used = of("http", era, server, f"{phase}_server_cpu_us_per_call", "raw")
                rows.append(
                    Target(
                        f"[{era}] HTTP server CPU/call {label}, {server} / raw",
                        "<= 1.3x",
                        *at_most(used, 1.3, "{:.2f}x"),
                    )
                )
    listing_targets: tuple[tuple[Transport, str], ...] = (
        ("stdio", ", ours"),
        ("http", " over HTTP, ours-json"),
    )
    for transport, what in listing_targets:
        rows.append(
            Target(
                f"tools/list, 1,000 tools{what} / raw (ms per listing)",
                "<= 2x",
                *at_most(found.tools_list_ratio(transport), 2.0, "{:.2f}x"),
            )
        )
    rows += curve_targets(scaled)
    floor_import = found.import_ms(FLOOR_IMPORT)
    for it in found.import_time or []:
        if it.statement == FLOOR_IMPORT:
            continue  # not a target: shown with the serve path it is the floor of
        measured, met = at_most(it.median_ms, 60.0, "{:.1f} ms")
        if it.statement == SERVE_IMPORT and it.median_ms is not None and floor_import is not None:
            measured += f" (floor: {floor_import:.1f} ms; ours adds {it.median_ms - floor_import:.1f})"
        rows.append(
            Target(
                f"{IMPORT_LABELS.get(it.statement, it.statement)} (-X importtime)", "<= 60 ms", measured, met
            )
        )
    cold, cold_note = median("stdio", "handshake", "ours", "cold_start_ms"), ""
    if found.cold_start is not None:
        floor_ms, added = found.cold_start.median_ms("floor"), found.cold_start.added_ms("ours", "floor")
        if floor_ms is not None and added is not None:
            cold_note = f" (floor: {floor_ms:.1f} ms; ours adds {added:.1f}, alternated)"
    measured, met = at_most(cold, 80.0, "{:.1f} ms")
    rows.append(
        Target(
            "cold start, ours over stdio (to the initialize answer)",
            "<= 80 ms",
            measured + (cold_note if cold is not None else ""),
            met,
        )
    )
    rows.append(
        Target(
            "peak RSS, ours / raw (stdio echo run)",
            "<= 2x",
            *at_most(ratio("stdio", "ours_vs_raw_peak_rss"), 2.0, "{:.2f}x"),
        )
    )
    for memory, what in ((found.memory_stdio, "stdio, echo calls"), (found.memory_http, "HTTP, sessions")):
        label = f"memory flat ({what}): RSS after the last vs the first 1,000"
        if memory is None or memory.status != "ok" or memory.delta_mib is None:
            rows.append(
                Target(label, "within noise", "not measured" if memory is None else memory.status, None)
            )
            continue
        first, last = memory.points[0], memory.points[-1]
        noise = memory_noise_mib(first[1])
        measured = f"{first[1]:.1f} -> {last[1]:.1f} MiB after {last[0]:,} ({memory.delta_mib:+.2f})"
        rows.append(Target(label, f"delta <= {noise:.1f} MiB", measured, memory.delta_mib <= noise))
    return rows


FLAT_CALL = 1.2  # "flat in the number of tools": the call at the most tools within 20% of the fewest


def curve_targets(scaled: CurvesRun | None) -> list[Target]:
    """The targets read off the curves: memory per idle session, tools/list of 10,000 tools against
    raw, and the cost of a validated call as the tools grow."""
    found = scaled.by_key if scaled is not None else {}
    sessions, tools = found.get("sessions"), found.get("tools")
    kib = curves.marginal_of(sessions, "ours-json") if sessions is not None else None
    rows = [
        Target(
            "memory per idle handshake session, ours-json (KiB, between the last two checkpoints)",
            "<= 2 KiB",
            "not measured" if kib is None else f"{kib:.2f} KiB",
            None if kib is None else kib <= 2.0,
        )
    ]
    most = max(tools.x) if tools is not None and tools.x else None
    ours = tools.value("ours", "list_ms", most) if tools is not None and most is not None else None
    raw = tools.value("raw", "list_ms", most) if tools is not None and most is not None else None
    ratio = ours / raw if ours is not None and raw else None
    rows.append(
        Target(
            f"tools/list of {most or 10_000:,.0f} tools, ours / raw (the same bytes; ms per listing)",
            "<= 1.5x",
            "not measured" if ratio is None else f"{ratio:.2f}x ({ours:.1f} / {raw:.1f} ms)",
            None if ratio is None else ratio <= 1.5,
        )
    )
    least = min(tools.x) if tools is not None and tools.x else None
    for metric, what in (("call_cpu_us", "server CPU per call"), ("call_ms", "wall time per call")):
        first = tools.value("ours", metric, least) if tools is not None and least is not None else None
        last = tools.value("ours", metric, most) if tools is not None and most is not None else None
        growth = last / first if last is not None and first else None
        scale = 1.0 if metric == "call_cpu_us" else 1000.0  # shown in µs
        rows.append(
            Target(
                f"validated call of 'complex', ours, {what}: "
                f"{most or 10_000:,.0f} tools / {least or 10:,.0f}",
                f"flat (<= {FLAT_CALL}x)",
                "not measured"
                if growth is None or first is None or last is None
                else f"{growth:.2f}x ({first * scale:.0f} -> {last * scale:.0f} µs)",
                None if growth is None else growth <= FLAT_CALL,
            )
        )
    return rows


def render_targets(rows: Sequence[Target]) -> str:
    verdict = {True: "met", False: "MISSED", None: "n/a"}
    table = _table(
        ["target", "wanted", "measured", "verdict"],
        [[row.what, row.target, row.measured, verdict[row.met]] for row in rows],
    )
    met = sum(1 for row in rows if row.met)
    missed = sum(1 for row in rows if row.met is False)
    return "\n".join(
        [
            "targets:",
            "",
            *table,
            "",
            f"{met} met, {missed} missed, {len(rows) - met - missed} not measured",
            "floor: what any stdio server on anyio and asyncio costs (bench/servers/floor_anyio.py; "
            f"the import statement {FLOOR_IMPORT!r}); ours adds: ours minus the floor",
        ]
    )


# -- the curves (curves.py) and their PNGs (plot.py) ------------------------------------------------

SCALE_OUT = BENCH_DIR / "results" / "scale_out.json"  # written by bench/scale_out.py (not by this runner)
CURVE_SERVERS: dict[str, tuple[Transport, tuple[str, ...]]] = {
    "payload_stdio": ("stdio", ("ours", "sdk", "fastmcp", "ts", "raw")),
    "payload_http": ("http", ("ours-json", "sdk", "fastmcp", "ts", "raw")),
    "tools": ("stdio", ("ours", "sdk", "fastmcp", "ts", "raw")),
    "concurrency": ("http", ("ours-json", "ours-fast", "sdk", "fastmcp", "ts", "raw", "raw-fast")),
    "sessions": ("http", ("ours-json", "sdk", "fastmcp", "ts")),
}


@dataclass
class CurvesRun:
    """What the curves measured, and the bars drawn beside them (None: not run)."""

    by_key: dict[str, curves.Curve] = field(default_factory=dict)
    reaping: curves.Reaping | None = None
    fast_stack: dict[str, dict[str, float | None]] = field(default_factory=dict)
    scale_out: dict[str, dict[str, float | None]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    pngs: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "curves": {key: curve.to_json() for key, curve in self.by_key.items()},
            "reaping": None if self.reaping is None else self.reaping.to_json(),
            "fast_stack": self.fast_stack,
            "scale_out": self.scale_out,
            "notes": self.notes,
            "pngs": self.pngs,
        }


def run_curves(args: argparse.Namespace, env: dict[str, str]) -> CurvesRun:
    """Every curve whose transport is selected, the servers alternated round by round."""
    found = CurvesRun()
    if args.skip_curves:
        return found
    options = curves.CurveOptions(
        cwd=ROOT,
        env={**env, "MCPBENCH_TOOLS": "0"},
        rounds=args.curve_rounds,
        quick=args.quick,
        point_seconds=args.curve_seconds,
        progress=_progress,
    )
    for key, (transport, names) in CURVE_SERVERS.items():
        if transport not in args.transports:
            continue
        specs = server_specs(transport)
        chosen: list[curves.Spec] = [
            specs[name]
            for name in names
            if name in specs and (not args.only or any(selects(p, name) for p in args.only))
        ]
        if not chosen:
            continue
        if key.startswith("payload_"):
            found.by_key[key] = curves.payload_curve(transport, chosen, options)
        elif key == "tools":
            found.by_key[key] = curves.tools_curve(chosen, options)
        elif key == "concurrency":
            found.by_key[key] = curves.concurrency_curve(chosen, options)
        else:
            unlimited = [
                curves.with_argv(spec, "--max-sessions", "0") if spec.name.startswith("ours") else spec
                for spec in chosen
            ]
            found.by_key[key] = curves.sessions_curve(unlimited, options)
            ours = specs.get("ours-json")
            if ours is not None and any(spec.name == "ours-json" for spec in chosen):
                sessions = 2000 if args.quick else 10_000
                found.reaping = curves.reaping(ours, options, sessions=sessions, timeout=5.0)
                _progress(f"[reaping] ours-json: {found.reaping.to_json()}")
    return found


def fast_stack_bars(results: Results) -> dict[str, dict[str, float | None]]:
    """calls/s of ours and raw on both stacks (and under granian), per era and phase."""
    groups: dict[str, dict[str, float | None]] = {}
    names = ("ours-json", "ours-fast", "ours-granian", "raw", "raw-fast", "raw-granian")
    for era, (summaries, _, _) in results.get("http", {}).items():
        by_name = {s.spec.name: s.medians() for s in summaries}
        if not by_name.get("ours-fast"):
            continue
        for metric, phase in (("seq_calls_per_s", "seq"), ("inflight_calls_per_s", "32 in flight")):
            groups[f"{era}, {phase}"] = {
                name: by_name[name].get(metric) for name in names if by_name.get(name)
            }
    return groups


def scale_out_bars(
    results: Results, scale: dict[str, dict[str, float]] | None
) -> dict[str, dict[str, float | None]]:
    """Per era: ours through 1, 2, 4 instances on Redis (and one in memory) behind the proxy, beside
    each peer's single instance (32 in flight, from this run's HTTP table)."""
    if not scale:
        return {}
    groups: dict[str, dict[str, float | None]] = {}
    for era, rates in scale.items():
        group: dict[str, float | None] = {f"{label}, via proxy": rate for label, rate in rates.items()}
        section = results.get("http", {}).get(era)  # type: ignore[call-overload]
        for summary in section[0] if section else []:
            if summary.spec.name in ("ours-json", "sdk", "fastmcp", "ts") and summary.medians():
                group[f"{summary.spec.name} x1, direct"] = summary.medians()["inflight_calls_per_s"]
        groups[era] = group
    return groups


def draw_pngs(found: CurvesRun, document: dict[str, Any]) -> None:
    problem = plot.matplotlib_missing()
    if problem:
        found.notes.append(f"no PNGs: {problem}")
        return
    found.pngs = [str(path.relative_to(ROOT)) for path in plot.draw_all(document)]


def _fmt_point(value: float | None, metric: str) -> str:
    if value is None:
        return "-"
    if metric.endswith("_bytes"):
        return f"{value:,.0f}"
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}" if value < 10 else f"{value:.1f}"


def _x_label(x: float, key: str) -> str:
    if key.startswith("payload"):
        size = int(x)
        for unit, scale in (("MiB", curves.MIB), ("KiB", curves.KIB)):
            if size >= scale:
                return f"{size / scale:.4g} {unit}"
        return f"{size} B"
    return f"{int(x):,}"


def render_curves(found: CurvesRun) -> str:
    out: list[str] = []
    for key, curve in found.by_key.items():
        out += [f"curve {key}: {curve.title} (median of {curve.extra.get('rounds', 1)} round(s))", ""]
        for metric, label in curve.metrics.items():
            headers = [label, *(_x_label(x, key) for x in curve.x)]
            rows = [
                [name, *(_fmt_point(v, metric) for v in series.get(metric, [None] * len(curve.x)))]
                for name, series in curve.series.items()
            ]
            if rows:
                out += [*_table(headers, rows), ""]
        for name, why in curve.problems.items():
            out.append(f"  {name}: not measured: {why}")
        marginal = curve.extra.get("marginal_kib", {})
        if marginal:
            out.append(
                "  KiB per session between the last two checkpoints: "
                + ", ".join(f"{name} {kib:.2f}" for name, kib in marginal.items())
            )
        out += [f"  note: {note}" for note in curve.notes]
        out.append("")
    reaping = found.reaping
    if reaping is not None:
        if reaping.problem:
            out.append(f"reaping (ours-json): FAILED: {reaping.problem}")
        else:
            rss = ", ".join(f"{k} {v:.1f} MiB" for k, v in reaping.rss_mib.items())
            out.append(
                f"reaping (ours-json, --session-timeout {reaping.timeout:g}, "
                f"{reaping.sessions:,} idle sessions): "
                f"RSS {rss}; the last session was gone {reaping.reaped_after_s or 0:.1f} s after the fill"
            )
        out.append("")
    if found.fast_stack:
        out.append(
            "the fast stack (calls/s over HTTP; ours and raw on asyncio + h11, uvloop + httptools, granian):"
        )
        for group, bars in found.fast_stack.items():
            shown = ", ".join(f"{name} {value:,.0f}" for name, value in bars.items() if value is not None)
            out.append(f"  {group}: {shown}")
        out.append("")
    if found.scale_out:
        out.append(f"scale-out on Redis ({SCALE_OUT.relative_to(ROOT)}), calls/s:")
        for era, bars in found.scale_out.items():
            out.append(f"  {era}: " + ", ".join(f"{k} {v:,.0f}" for k, v in bars.items() if v is not None))
    else:
        out.append(
            f"scale-out: {SCALE_OUT.relative_to(ROOT)} does not exist (bench/scale_out.py writes it): "
            "no scale-out line drawn"
        )
    out += [f"note: {note}" for note in found.notes]
    if found.pngs:
        out.append("PNGs: " + ", ".join(found.pngs))
    return "\n".join(out).rstrip()


# -- command line ------------------------------------------------------------------------------


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


QUICK: dict[str, Any] = {
    "calls": 500,
    "inflight_calls": 1500,
    "rounds": 1,
    "list_calls": 50,
    "list_rounds": 1,
    "import_runs": 3,
    "floor_rounds": 3,
    "memory_calls": 20_000,
    "memory_sessions": 2000,
    "curve_rounds": 1,
    "curve_seconds": 0.6,
}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    names = list(dict.fromkeys(name for t in TRANSPORTS for name in server_specs(t)))
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--transport", choices=("stdio", "http", "both"), default="both", help="what to run (default both)"
    )
    parser.add_argument(
        "--era",
        choices=("handshake", "modern", "both"),
        default="both",
        help=f"protocol era: initialize first, or {MODERN_VERSION} (default both)",
    )
    parser.add_argument("--calls", type=_positive, default=2000, help="sequential calls (default 2000)")
    parser.add_argument(
        "--inflight-calls", type=_positive, default=5000, help="calls in the in-flight phase (default 5000)"
    )
    parser.add_argument("--inflight", type=_positive, default=32, help="requests kept in flight (default 32)")
    parser.add_argument(
        "--rounds",
        type=_positive,
        default=None,
        help="rounds; medians are reported (default 3 for stdio, 5 for HTTP: noisier)",
    )
    parser.add_argument(
        "--warmup", type=_non_negative, default=100, help="unmeasured calls first (default 100)"
    )
    parser.add_argument(
        "--only",
        default="",
        help=f"servers to run, from {','.join(names)} (a prefix: 'ours' selects ours-json, ours-sse)",
    )
    parser.add_argument(
        "--tools",
        type=_non_negative,
        default=0,
        help="extra dummy tools each server registers (MCPBENCH_TOOLS)",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the raw numbers as JSON")
    parser.add_argument(
        "--list-tools",
        type=_positive,
        default=1000,
        help="tools in all for the tools/list run (default 1000)",
    )
    parser.add_argument(
        "--list-calls", type=_positive, default=200, help="listings per round of the tools/list run (200)"
    )
    parser.add_argument("--list-rounds", type=_positive, default=3, help="rounds of the tools/list run (3)")
    parser.add_argument("--skip-tools-list", action="store_true", help="skip the tools/list run")
    parser.add_argument("--import-runs", type=_positive, default=5, help="import-time runs (default 5)")
    parser.add_argument("--skip-import", action="store_true", help="skip the import-time measurement")
    parser.add_argument(
        "--floor-rounds",
        type=_positive,
        default=5,
        help="cold starts of the floor server and ours, alternated (default 5)",
    )
    parser.add_argument(
        "--skip-floor", action="store_true", help="skip the cold starts of the floor server (and ours)"
    )
    parser.add_argument(
        "--memory-calls",
        type=_positive,
        default=100_000,
        help="echo calls of the stdio memory run (default 100000; RSS also after the first 1000)",
    )
    parser.add_argument(
        "--memory-sessions",
        type=_positive,
        default=10_000,
        help="sessions opened and closed in the HTTP memory run (default 10000; RSS also after 1000)",
    )
    parser.add_argument("--skip-memory", action="store_true", help="skip both memory runs")
    parser.add_argument(
        "--slow-share",
        type=_positive,
        default=4,
        help="the slow servers (sdk, fastmcp) run 1/N of the calls (default 4; 1: as many as the others)",
    )
    parser.add_argument(
        "--skip-extras",
        action="store_true",
        help="only the echo-call tables: same as --skip-tools-list --skip-import --skip-floor --skip-memory",
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds allowed per phase (default 120)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a short run: fewer rounds, calls and curve points (about 5 minutes)",
    )
    parser.add_argument("--skip-curves", action="store_true", help="skip the curves (and their PNGs)")
    parser.add_argument(
        "--curve-rounds", type=_positive, default=2, help="rounds of each curve, servers alternated (2)"
    )
    parser.add_argument(
        "--curve-seconds", type=float, default=1.5, help="time budget of one curve point (1.5 s)"
    )
    args = parser.parse_args(argv)
    if args.quick:  # every count still at its default gets the quick one
        for name, value in QUICK.items():
            if getattr(args, name) == parser.get_default(name):
                setattr(args, name, value)
    args.transports = list(TRANSPORTS) if args.transport == "both" else [args.transport]
    args.eras = list(ERAS) if args.era == "both" else [args.era]
    available = [name for t in args.transports for name in server_specs(t)]
    only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(p for p in only if not any(selects(p, name) for name in available))
    if unknown or (args.only and not only):
        parser.error(f"--only takes names from {','.join(available)} (or their prefixes); got {args.only!r}")
    args.only = only
    if args.skip_extras:
        args.skip_tools_list = args.skip_import = args.skip_floor = args.skip_memory = True
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    config = BenchConfig(
        calls=args.calls,
        inflight_calls=args.inflight_calls,
        inflight=args.inflight,
        warmup=args.warmup,
        phase_timeout=args.timeout,
    )
    env = dict(os.environ)
    env["MCPBENCH_TOOLS"] = str(args.tools)
    results: Results = {}
    cross_era: dict[Transport, dict[str, float | None]] = {}
    reports = []
    for transport in args.transports:
        specs = server_specs(transport)
        selected = [
            spec for name, spec in specs.items() if not args.only or any(selects(p, name) for p in args.only)
        ]
        if not selected:
            continue
        rounds: int = args.rounds or DEFAULT_ROUNDS[transport]
        for era in args.eras:
            era_config = dataclasses.replace(config, era=era)
            summaries = run_all(selected, era_config, rounds, env, args.slow_share)
            definitions = ratio_defs(transport, config.inflight)
            ratios = compute_ratios(definitions, {s.spec.name: s for s in summaries})
            results.setdefault(transport, {})[era] = (summaries, ratios, rounds)
            report = render_report(transport, summaries, ratios, era_config, rounds)
            slow = [s.name for s in selected if s.slow and era in s.eras and s.missing is None]
            if slow and args.slow_share > 1:
                fewer = slow_config(era_config, args.slow_share)
                note = (
                    f"({', '.join(slow)}: {fewer.calls} sequential and {fewer.inflight_calls} in-flight "
                    f"calls, 1/{args.slow_share} of the others' (--slow-share))"
                )
                report = report.replace("\n\n", f"\n{note}\n\n", 1)  # under the title
            skipped = [spec.name for spec in selected if era not in spec.eras]
            if skipped:
                report += f"\nnot run in this era (they do not speak it): {', '.join(skipped)}"
            reports.append(report)
        eras = results.get(transport, {})
        if "modern" in eras and "handshake" in eras:
            definitions_x = cross_era_defs(transport, config.inflight)
            cross_era[transport] = compute_cross_era(definitions_x, eras["modern"][0], eras["handshake"][0])
            reports.append("\n".join(render_cross_era(transport, definitions_x, cross_era[transport])))
    found = run_extras(args, env)
    extra_report = render_extras(found, args)
    if extra_report:
        reports.append(extra_report)
    scaled = run_curves(args, env)
    scaled.fast_stack = fast_stack_bars(results)
    if "http" in args.transports:
        scaled.scale_out = scale_out_bars(results, curves.load_scale_out(SCALE_OUT))
    if not args.skip_curves:
        draw_pngs(scaled, {"curves": scaled.to_json()})
        reports.append(render_curves(scaled))
    target_rows = targets(results, found, scaled)
    reports.append(render_targets(target_rows))
    sys.stdout.write("\n\n".join(reports) + "\n")
    if args.json is not None:
        path: Path = args.json
        path.parent.mkdir(parents=True, exist_ok=True)
        document = json_document(results, cross_era, config, args.tools)
        document["config"]["slow_share"] = args.slow_share
        document["config"]["quick"] = args.quick
        document["extras"] = found.to_json()
        document["curves"] = scaled.to_json()
        document["targets"] = [dataclasses.asdict(row) for row in target_rows]
        path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    # A peer that is not installed is reported but does not fail the run; everything else must be ok.
    statuses = [
        s.status
        for eras in results.values()
        for summaries, _, _ in eras.values()
        for s in summaries
        if s.spec.missing is None
    ]
    curve_failed = any(
        name in ("ours", "ours-json", "raw") for curve in scaled.by_key.values() for name in curve.problems
    )
    ok = all(status == "ok" for status in statuses) and not found.failed() and not curve_failed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
