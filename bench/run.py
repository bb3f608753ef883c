"""Benchmark MCP servers: ours (jsonrpc_mcp), the official SDK, and a raw limit, over stdio and HTTP.

Run from anywhere (paths resolve from this file; servers run with cwd = repo root)::

    python bench/run.py [--transport stdio|http|both] [--era handshake|modern|both] [--calls N]
                        [--inflight-calls N] [--rounds R] [--only ours,sdk,raw] [--json FILE]

Per transport and protocol era (handshake: ``initialize`` first; modern: 2026-07-28, no
handshake, the envelope on every request), servers are alternated (A B C A B C ...) for R rounds
(3 stdio, 5 HTTP), each round a fresh spawn of every server; the report gives the median of each
metric per server, then ratios of ours against the others, and ours in the modern era against ours
in the handshake era. Progress goes to stderr, the report to stdout. Exit status 1 if any server
failed or was unavailable.
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

import orjson
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


def server_specs(transport: Transport) -> dict[str, ServerSpec]:
    py = sys.executable
    ours = f"jsonrpc_mcp {_version('jsonrpc-mcp')}"
    sdk = f"mcp {_version('mcp')} MCPServer"
    if transport == "stdio":
        specs = [
            ServerSpec("ours", f"ours ({ours})", (py, "-m", "jsonrpc_mcp", "serve", "bench/servers/echo.py")),
            ServerSpec("sdk", f"sdk ({sdk})", (py, "bench/servers/echo_sdk.py")),
            ServerSpec("raw", "raw (orjson readline loop)", (py, "bench/servers/raw_echo.py")),
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
        specs = [
            ServerSpec("ours-json", f"ours ({ours}, --json-response)", (*serve, "--json-response"), "http"),
            ServerSpec("ours-sse", f"ours ({ours}, default: SSE-capable)", serve, "http"),
            ServerSpec(
                "sdk",
                f"sdk ({sdk}, json_response, stateful)",
                (py, "bench/servers/echo_sdk_http.py", PORT_PLACEHOLDER),
                "http",
            ),
            ServerSpec(
                "raw",
                "raw (bare ASGI app + orjson)",
                (py, "bench/servers/raw_asgi.py", PORT_PLACEHOLDER),
                "http",
            ),
        ]
    return {spec.name: spec for spec in specs}


def uvicorn_implementations() -> str:
    """What ``loop="auto"`` and ``http="auto"`` resolve to in this interpreter (as uvicorn decides)."""
    loop = "uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio"
    http = "httptools" if importlib.util.find_spec("httptools") is not None else "h11"
    return f"uvicorn {_version('uvicorn')}, loop={loop}, http={http}, 1 worker"


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


def run_all(
    specs: Sequence[ServerSpec], config: BenchConfig, rounds: int, env: dict[str, str]
) -> list[ServerSummary]:
    """Every round of every server of one transport, in ``config.era``."""
    summaries = [ServerSummary(spec) for spec in specs]
    for round_no in range(1, rounds + 1):
        for summary in summaries:
            if summary.runs and summary.status != "ok":
                continue  # no point spawning again what already failed to start or answer
            spec = summary.spec
            bench = bench_server if spec.transport == "stdio" else bench_http_server
            result = bench(spec.argv, config, cwd=ROOT, env=env)
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
        ]
    target_sdk, target_raw, less_cpu = "(target >= 2x)", "(target >= 70%)", "(below 1: ours uses less)"
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
        "--timeout", type=float, default=120.0, help="seconds allowed per phase (default 120)"
    )
    args = parser.parse_args(argv)
    args.transports = list(TRANSPORTS) if args.transport == "both" else [args.transport]
    args.eras = list(ERAS) if args.era == "both" else [args.era]
    available = [name for t in args.transports for name in server_specs(t)]
    only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(p for p in only if not any(selects(p, name) for name in available))
    if unknown or (args.only and not only):
        parser.error(f"--only takes names from {','.join(available)} (or their prefixes); got {args.only!r}")
    args.only = only
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
            summaries = run_all(selected, era_config, rounds, env)
            definitions = ratio_defs(transport, config.inflight)
            ratios = compute_ratios(definitions, {s.spec.name: s for s in summaries})
            results.setdefault(transport, {})[era] = (summaries, ratios, rounds)
            reports.append(render_report(transport, summaries, ratios, era_config, rounds))
        eras = results.get(transport, {})
        if "modern" in eras and "handshake" in eras:
            definitions_x = cross_era_defs(transport, config.inflight)
            cross_era[transport] = compute_cross_era(definitions_x, eras["modern"][0], eras["handshake"][0])
            reports.append("\n".join(render_cross_era(transport, definitions_x, cross_era[transport])))
    sys.stdout.write("\n\n".join(reports) + "\n")
    if args.json is not None:
        path: Path = args.json
        path.parent.mkdir(parents=True, exist_ok=True)
        document = json_document(results, cross_era, config, args.tools)
        path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    statuses = [s.status for eras in results.values() for summaries, _, _ in eras.values() for s in summaries]
    return 0 if all(status == "ok" for status in statuses) else 1


if __name__ == "__main__":
    sys.exit(main())
