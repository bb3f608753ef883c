"""Draw the curves of ``curves.py`` as PNGs in ``bench/results/`` (matplotlib: the ``bench`` extra).

``python bench/plot.py FILE.json`` redraws them from a ``run.py --json`` document (its ``curves``).
matplotlib is imported only here, lazily: without it the runner says so and draws nothing.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from curves import Curve

RESULTS = Path(__file__).resolve().parent / "results"
DPI = 100
COLORS = {
    "ours": "#d62728",
    "ours-json": "#d62728",
    "ours-fast": "#ff7f0e",
    "sdk": "#1f77b4",
    "fastmcp": "#9467bd",
    "ts": "#2ca02c",
    "raw": "#7f7f7f",
    "raw-fast": "#bcbd22",
    "ours-granian": "#e377c2",
    "raw-granian": "#17becf",
}
LOG_X = {"payload_stdio", "payload_http", "tools", "concurrency", "sessions"}


def matplotlib_missing() -> str | None:
    try:
        importlib.import_module("matplotlib")
    except ImportError:
        return "matplotlib is not installed (pip install -e '.[bench]'; make bench does it)"
    return None


def _pyplot() -> Any:
    matplotlib = importlib.import_module("matplotlib")
    matplotlib.use("Agg")
    return importlib.import_module("matplotlib.pyplot")


def _tick(x: float, key: str) -> str:
    if key.startswith("payload"):
        for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
            if x >= scale:
                return f"{x / scale:.0f}{unit}"
        return f"{x:.0f}"
    return f"{x / 1000:.0f}k" if x >= 10_000 else f"{x:,.0f}"


def draw_curve(curve: Curve, metrics: Sequence[str], path: Path, log_y: Sequence[bool] = ()) -> Path:
    """One PNG: a panel per metric, a line per server."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.6 * len(metrics), 3.8), squeeze=False)
    for i, metric in enumerate(metrics):
        ax = axes[0][i]
        for name, series in curve.series.items():
            values = series.get(metric)
            if not values:
                continue
            xs = [x for x, v in zip(curve.x, values, strict=True) if v is not None]
            ys = [v for v in values if v is not None]
            if not xs:
                continue
            style = "--" if name.startswith("raw") else "-"
            width = 2.4 if name.startswith("ours") else 1.4
            ax.plot(
                xs, ys, style, marker="o", markersize=3, label=name, color=COLORS.get(name), linewidth=width
            )
        if curve.key in LOG_X:
            ax.set_xscale("log")
            ax.set_xticks(curve.x)
            ax.set_xticklabels([_tick(x, curve.key) for x in curve.x], fontsize=7)
            ax.minorticks_off()
        if i < len(log_y) and log_y[i]:
            ax.set_yscale("log")
            ticker = importlib.import_module("matplotlib.ticker")
            ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel(curve.x_label)
        ax.set_ylabel(curve.metrics[metric])
        ax.grid(True, which="major", alpha=0.3)
        if i == 0:
            ax.legend(fontsize=8)
    fig.suptitle(curve.title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def draw_bars(title: str, groups: Mapping[str, Mapping[str, float | None]], y_label: str, path: Path) -> Path:
    """Grouped bars: ``groups`` is group -> bar -> value (None: not measured, not drawn)."""
    plt = _pyplot()
    bars = list(dict.fromkeys(bar for group in groups.values() for bar in group))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(groups) * max(1, len(bars)) / 2), 4.0))
    width = 0.8 / max(1, len(bars))
    for j, bar in enumerate(bars):
        xs = [i + j * width for i, group in enumerate(groups.values()) if group.get(bar) is not None]
        ys = [group[bar] for group in groups.values() if group.get(bar) is not None]
        ax.bar(xs, ys, width, label=bar, color=COLORS.get(bar))
    ax.set_xticks([i + width * (len(bars) - 1) / 2 for i in range(len(groups))])
    ax.set_xticklabels(list(groups), fontsize=8)
    ax.set_ylabel(y_label)
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def draw_all(document: Mapping[str, Any], out: Path = RESULTS) -> list[Path]:
    """Every PNG of a run's ``curves`` section (and its ``fast_stack`` and ``scale_out`` bars)."""
    section = document.get("curves") or {}
    curves = {key: Curve.from_json(data) for key, data in (section.get("curves") or {}).items()}
    drawn: list[Path] = []
    plans: dict[str, tuple[list[str], list[bool]]] = {
        "payload_stdio": (["ms_per_call", "mib_per_s"], [True, False]),
        "payload_http": (["ms_per_call", "mib_per_s"], [True, False]),
        "tools": (["list_ms", "call_cpu_us", "cold_start_ms"], [True, True, False]),
        "concurrency": (["calls_per_s", "p50_ms", "p99_ms"], [False, True, True]),
        "sessions": (["rss_mib", "kib_per_session"], [True, False]),
    }
    for key, (metrics, log_y) in plans.items():
        if key in curves:
            drawn.append(draw_curve(curves[key], metrics, out / f"curve_{key}.png", log_y))
    fast = section.get("fast_stack")
    if fast:
        drawn.append(
            draw_bars(
                "the fast stack: calls/s over HTTP, default (asyncio + h11) and fast (uvloop + httptools)",
                fast,
                "calls/s",
                out / "fast_stack.png",
            )
        )
    scale = section.get("scale_out")
    if scale:
        drawn.append(
            draw_bars(
                "scale-out on Redis: calls/s through N instances behind the test proxy"
                " (scale_out.py: 8 clients),\nbeside each server alone, direct (32 in flight)",
                scale,
                "calls/s",
                out / "scale_out.png",
            )
        )
    return drawn


def main(argv: list[str]) -> int:
    import orjson

    if len(argv) != 1:
        sys.stderr.write("usage: python bench/plot.py RUN.json\n")
        return 2
    problem = matplotlib_missing()
    if problem:
        sys.stderr.write(f"plot: {problem}\n")
        return 1
    for path in draw_all(orjson.loads(Path(argv[0]).read_bytes())):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
