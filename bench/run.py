"""Benchmark MCP servers over stdio: ours (jsonrpc_mcp), the official SDK, and a raw orjson loop.

Run from anywhere (paths resolve from this file; servers run with cwd = repo root)::

    python bench/run.py [--calls N] [--inflight-calls N] [--rounds R] [--only ours,sdk,raw] [--json FILE]

Servers are alternated (A B C A B C ...) for R rounds, each round a fresh spawn of every server;
the report gives the median of each metric per server, then ratios of ours against the others.
Progress goes to stderr, the report to stdout. Exit status 1 if any server failed or was unavailable.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson
from loadclient import BenchConfig, PhaseResult, RunResult, Status, bench_server

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
DISTRIBUTIONS = ("jsonrpc-mcp", "mcp", "orjson", "anyio", "pydantic")


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


def server_specs() -> dict[str, ServerSpec]:
    py = sys.executable
    specs = [
        ServerSpec(
            "ours",
            f"ours (jsonrpc_mcp {_version('jsonrpc-mcp')})",
            (py, "-m", "jsonrpc_mcp", "serve", "bench/servers/echo.py"),
        ),
        ServerSpec("sdk", f"sdk (mcp {_version('mcp')} MCPServer)", (py, "bench/servers/echo_sdk.py")),
        ServerSpec("raw", "raw (orjson readline loop)", (py, "bench/servers/raw_echo.py")),
    ]
    return {spec.name: spec for spec in specs}


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
    summaries = [ServerSummary(spec) for spec in specs]
    for round_no in range(1, rounds + 1):
        for summary in summaries:
            if summary.runs and summary.status != "ok":
                continue  # no point spawning again what already failed to start or answer
            result = bench_server(summary.spec.argv, config, cwd=ROOT, env=env)
            summary.runs.append(result)
            note = "" if result.status == "ok" else f": {result.reason}"
            _progress(
                f"[round {round_no}/{rounds}] {summary.spec.name}: {result.status} "
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


def compute_ratios(by_name: dict[str, ServerSummary]) -> dict[str, float | None]:
    def median_of(name: str, metric: str) -> float | None:
        summary = by_name.get(name)
        return summary.medians().get(metric) if summary is not None else None

    def ratio(a: float | None, b: float | None) -> float | None:
        return a / b if a is not None and b else None

    def ours_over(other: str, metric: str) -> float | None:
        return ratio(median_of("ours", metric), median_of(other, metric))

    return {
        "ours_vs_sdk_seq_calls_per_s": ours_over("sdk", "seq_calls_per_s"),
        "ours_vs_sdk_inflight_calls_per_s": ours_over("sdk", "inflight_calls_per_s"),
        "ours_vs_sdk_cold_start": ours_over("sdk", "cold_start_ms"),
        "ours_vs_raw_seq_calls_per_s": ours_over("raw", "seq_calls_per_s"),
    }


def render_report(
    summaries: Sequence[ServerSummary], ratios: dict[str, float | None], config: BenchConfig, rounds: int
) -> str:
    window = config.inflight
    out = [
        f"MCP over stdio: median of {rounds} round(s); {config.calls} sequential calls, "
        f"{config.inflight_calls} calls with {window} in flight, after {config.warmup} warm-up calls",
        "",
    ]
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

    seq, inflight = ratios["ours_vs_sdk_seq_calls_per_s"], ratios["ours_vs_sdk_inflight_calls_per_s"]
    cold, raw = ratios["ours_vs_sdk_cold_start"], ratios["ours_vs_raw_seq_calls_per_s"]
    if seq is not None and inflight is not None and cold is not None:
        out += [
            f"  ours / sdk   seq calls/s          {seq:8.2f}x   (above 1: ours is faster)",
            f"  ours / sdk   {window:>2}-inflight calls/s  {inflight:8.2f}x   (above 1: ours is faster)",
            f"  ours / sdk   cold start           {cold:8.2f}x   (below 1: ours starts faster)",
        ]
    else:
        out.append(f"  ours vs sdk: {unavailable('ours', 'sdk')}")
    if raw is not None:
        out.append(f"  ours / raw   seq calls/s          {raw:8.1%}")
    else:
        out.append(f"  ours vs raw: {unavailable('ours', 'raw')}")

    client = [
        f"{s.spec.name} {m['seq_client_cpu_us_per_call']:.1f}/{m['inflight_client_cpu_us_per_call']:.1f}"
        for s in summaries
        if (m := s.medians())
    ]
    if client:
        out += [
            "",
            f"load client CPU µs/call (seq/{window}-inflight): " + ", ".join(client),
            f"server CPU is utime+stime from /proc/<pid>/stat, {1000 / os.sysconf('SC_CLK_TCK'):.0f} ms "
            "resolution per phase; peak RSS is VmHWM at the end of the run",
        ]
    return "\n".join(out)


def json_document(
    summaries: Sequence[ServerSummary],
    ratios: dict[str, float | None],
    config: BenchConfig,
    rounds: int,
    tools: int,
) -> dict[str, Any]:
    return {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": {
            "calls": config.calls,
            "inflight_calls": config.inflight_calls,
            "inflight": config.inflight,
            "warmup": config.warmup,
            "rounds": rounds,
            "extra_tools": tools,
        },
        "environment": {
            "python": sys.version,
            "executable": sys.executable,
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "clk_tck": os.sysconf("SC_CLK_TCK"),
            "versions": {dist: _version(dist) for dist in DISTRIBUTIONS},
        },
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


def parse_args(argv: Sequence[str] | None, names: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=_positive, default=2000, help="sequential calls (default 2000)")
    parser.add_argument(
        "--inflight-calls", type=_positive, default=5000, help="calls in the in-flight phase (default 5000)"
    )
    parser.add_argument("--inflight", type=_positive, default=32, help="requests kept in flight (default 32)")
    parser.add_argument(
        "--rounds", type=_positive, default=3, help="rounds; medians are reported (default 3)"
    )
    parser.add_argument(
        "--warmup", type=_non_negative, default=100, help="unmeasured calls first (default 100)"
    )
    parser.add_argument("--only", default=",".join(names), help=f"servers to run, from {','.join(names)}")
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
    only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(only) - set(names))
    if unknown or not only:
        parser.error(f"--only takes names from {','.join(names)}; got {args.only!r}")
    args.only = [name for name in names if name in only]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    specs = server_specs()
    args = parse_args(argv, list(specs))
    config = BenchConfig(
        calls=args.calls,
        inflight_calls=args.inflight_calls,
        inflight=args.inflight,
        warmup=args.warmup,
        phase_timeout=args.timeout,
    )
    env = dict(os.environ)
    env["MCPBENCH_TOOLS"] = str(args.tools)
    selected = [specs[name] for name in args.only]
    summaries = run_all(selected, config, args.rounds, env)
    ratios = compute_ratios({s.spec.name: s for s in summaries})
    sys.stdout.write(render_report(summaries, ratios, config, args.rounds) + "\n")
    if args.json is not None:
        path: Path = args.json
        path.parent.mkdir(parents=True, exist_ok=True)
        document = json_document(summaries, ratios, config, args.rounds, args.tools)
        path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    return 0 if all(s.status == "ok" for s in summaries) else 1


if __name__ == "__main__":
    sys.exit(main())
